@testable import MapCluster

/// The answers the index must give, computed the slow and obvious way.
struct BruteForce<Element: Hashable & Sendable> {
    var points: [Element: Coordinate]

    func members(of cell: GridCell) -> [Element] {
        points.filter { GridCell(containing: $0.value.mapPoint, level: cell.level) == cell }.map(\.key)
    }

    func summary(of cell: GridCell) -> CellSummary? {
        let inside = points.filter { GridCell(containing: $0.value.mapPoint, level: cell.level) == cell }
        guard let first = inside.first else { return nil }
        let latitudes = inside.values.map { Summary.fixedPoint($0.latitude) }.reduce(0, +)
        let longitudes = inside.values.map { Summary.fixedPoint($0.wrappedLongitude) }.reduce(0, +)
        let unique = inside.values.allSatisfy { $0 == first.value }
        let n = Double(inside.count)
        let center = unique
            ? first.value
            : Coordinate(uncheckedLatitude: Double(latitudes) / n / 1e7, longitude: Double(longitudes) / n / 1e7)
        let grid = inside.values.map { QuantizedPoint($0.mapPoint) }
        let bounds = MapRect(
            minX: Double(grid.map(\.x).min()!) / 16, minY: Double(grid.map(\.y).min()!) / 16,
            maxX: (Double(grid.map(\.x).max()!) + 1) / 16, maxY: (Double(grid.map(\.y).max()!) + 1) / 16)
        return CellSummary(count: inside.count, centerOfMass: center, bounds: bounds, isUniqueLocation: unique)
    }
}

