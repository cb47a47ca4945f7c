/// The cells of one grid level that a viewport (plus margin) touches: a range of rows and one or two
/// ranges of columns (two when it crosses the antimeridian).
package struct CellRegion: Sendable {
    package let level: Int
    let rows: ClosedRange<UInt32>
    let columns: [ClosedRange<UInt32>]

    init(level: Int, rows: ClosedRange<UInt32>, columns: [ClosedRange<UInt32>]) {
        self.level = level
        self.rows = rows
        self.columns = columns
    }

    /// The cells at `level` that intersect `rect`; x wraps around the world, y is clamped to it.
    init(level: Int, covering rect: MapRect) {
        let cellsAcross = Int64(1) << level
        let side = MapSize.worldWidth / Double(cellsAcross)
        let last = UInt32(cellsAcross - 1)
        func row(_ y: Double) -> UInt32 { UInt32(min(max(Int64((y / side).rounded(.down)), 0), cellsAcross - 1)) }
        let rows = row(rect.minY)...row(max(rect.minY, rect.maxY.nextDown))
        let first = Int64((rect.minX / side).rounded(.down))
        let lastColumn = Int64((max(rect.minX, rect.maxX.nextDown) / side).rounded(.down))
        var columns: [ClosedRange<UInt32>]
        if lastColumn - first + 1 >= cellsAcross {
            columns = [0...last]
        } else {
            let start = ((first % cellsAcross) + cellsAcross) % cellsAcross
            let end = ((lastColumn % cellsAcross) + cellsAcross) % cellsAcross
            columns = start <= end ? [UInt32(start)...UInt32(end)] : [UInt32(start)...last, 0...UInt32(end)]
        }
        self.init(level: level, rows: rows, columns: columns)
    }

    /// The region of one cell.
    init(_ cell: GridCell) {
        self.init(level: cell.level, rows: cell.y...cell.y, columns: [cell.x...cell.x])
    }

    /// Every cell of the region.
    package var cells: [GridCell] {
        columns.flatMap { columns in rows.flatMap { y in columns.map { x in GridCell(level: level, x: x, y: y) } } }
    }

    /// Whether a cell at the region's level is one of its cells.
    package func contains(_ cell: GridCell) -> Bool {
        cell.level == level && rows.contains(cell.y) && columns.contains { $0.contains(cell.x) }
    }

    @inline(__always) func contains(code: UInt64) -> Bool {
        let x = MortonKey.compact(code)
        let y = MortonKey.compact(code >> 1)
        return rows.contains(y) && columns.contains { $0.contains(x) }
    }

    /// Whether a box on the 32-bit grid may hold positions in the region's cells.
    @inline(__always) func intersects(_ summary: Summary) -> Bool {
        let minY = summary.minY.shifted(toLevel: level)
        let maxY = summary.maxY.shifted(toLevel: level)
        guard minY <= rows.upperBound && maxY >= rows.lowerBound else { return false }
        let minX = summary.minX.shifted(toLevel: level)
        let maxX = summary.maxX.shifted(toLevel: level)
        return columns.contains { minX <= $0.upperBound && maxX >= $0.lowerBound }
    }
}
