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
        let center =
            unique
            ? first.value
            : Coordinate(uncheckedLatitude: Double(latitudes) / n / 1e7, longitude: Double(longitudes) / n / 1e7)
        return CellSummary(
            count: inside.count, centerOfMass: center, bounds: Self.bounds(of: Array(inside.values)),
            isSameLocation: unique)
    }

    /// The smallest rectangle of the index's grid (1/16 plane unit) holding every one of `coordinates`.
    static func bounds(of coordinates: [Coordinate]) -> MapRect {
        let grid = coordinates.map { GridPosition($0.mapPoint) }
        let xs = grid.map { Double($0.x) }
        let ys = grid.map { Double($0.y) }
        return MapRect(
            minX: (xs.min() ?? 0) / 16, minY: (ys.min() ?? 0) / 16,
            maxX: ((xs.max() ?? 0) + 1) / 16, maxY: ((ys.max() ?? 0) + 1) / 16)
    }
}
