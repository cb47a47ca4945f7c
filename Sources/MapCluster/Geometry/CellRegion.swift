/// The cells of one grid level that a viewport (plus margin) touches: a range of rows and one or two
/// ranges of columns (two when it crosses the antimeridian).
///
/// It is a small value with no storage of its own, so that making one costs a query nothing.
@usableFromInline
package struct CellRegion: Sendable {
    package let level: Int
    package let rows: ClosedRange<UInt32>
    /// The columns, or the eastern part of them when the region crosses the antimeridian.
    package let columns: ClosedRange<UInt32>
    /// The western part of the columns (from column 0) when the region crosses the antimeridian.
    package let wrappedColumns: ClosedRange<UInt32>?
    /// The Morton codes of the first and last cell of each column range: every cell of the range lies between them in
    /// key order, so a subtree whose keys fall outside both spans holds none of the region's cells.
    let codes: ClosedRange<UInt64>
    let wrappedCodes: ClosedRange<UInt64>?

    package init(
        level: Int, rows: ClosedRange<UInt32>, columns: ClosedRange<UInt32>, wrappedColumns: ClosedRange<UInt32>? = nil
    ) {
        self.level = level
        self.rows = rows
        self.columns = columns
        self.wrappedColumns = wrappedColumns
        func span(_ columns: ClosedRange<UInt32>) -> ClosedRange<UInt64> {
            MortonKey.interleave(
                x: columns.lowerBound, y: rows.lowerBound)...MortonKey.interleave(
                    x: columns.upperBound, y: rows.upperBound)
        }
        codes = span(columns)
        wrappedCodes = wrappedColumns.map(span)
    }

    /// How many cells the region covers.
    var cellCount: Int { rows.count * (columns.count + (wrappedColumns?.count ?? 0)) }

    /// The cells at `level` that intersect `rect`; x wraps around the world, y is clamped to it.
    @usableFromInline
    init(level: Int, covering rect: MapRect) {
        let cellsAcross = Int64(1) << level
        let side = MapSize.worldWidth / Double(cellsAcross)
        let last = UInt32(cellsAcross - 1)
        // Clamped as doubles first: a rectangle far off the world (or not finite) must not overflow the conversions.
        func row(_ y: Double) -> UInt32 {
            let row = (y / side).rounded(.down)
            return row.isNaN ? 0 : UInt32(min(max(row, 0), Double(cellsAcross - 1)))
        }
        let rows = row(rect.minY)...row(max(rect.minY, rect.maxY.nextDown))
        let firstColumn = (rect.minX / side).rounded(.down)
        let lastColumnDouble = (max(rect.minX, rect.maxX.nextDown) / side).rounded(.down)
        guard lastColumnDouble - firstColumn + 1 < Double(cellsAcross), abs(firstColumn) < 0x1p52 else {
            self.init(level: level, rows: rows, columns: 0...last)
            return
        }
        let first = Int64(firstColumn)
        let lastColumn = Int64(lastColumnDouble)
        let start = UInt32(((first % cellsAcross) + cellsAcross) % cellsAcross)
        let end = UInt32(((lastColumn % cellsAcross) + cellsAcross) % cellsAcross)
        if start <= end {
            self.init(level: level, rows: rows, columns: start...end)
        } else {
            self.init(level: level, rows: rows, columns: start...last, wrappedColumns: 0...end)
        }
    }

    /// Every cell of a level.
    init(level: Int) {
        let last = UInt32((UInt64(1) << level) - 1)
        self.init(level: level, rows: 0...last, columns: 0...last)
    }

    /// The region of one cell.
    package init(_ cell: GridCell) {
        self.init(level: cell.level, rows: cell.y...cell.y, columns: cell.x...cell.x)
    }

    /// The cells of a deeper level (or the same) that lie in `cell`.
    package init(_ cell: GridCell, atLevel level: Int) {
        self.init(level: level, under: cell.y...cell.y, cell.x...cell.x, ofLevel: cell.level)
    }

    /// The cells at `level` that lie in the rows and columns of a shallower level (or the same).
    package init(level: Int, under rows: ClosedRange<UInt32>, _ columns: ClosedRange<UInt32>, ofLevel shallower: Int) {
        let shift = level - shallower
        precondition(shift >= 0, "a region lies at its cells' level or deeper")
        let last = UInt32(truncatingIfNeeded: (UInt64(1) << shift) - 1)
        func under(_ range: ClosedRange<UInt32>) -> ClosedRange<UInt32> {
            (range.lowerBound << shift)...(range.upperBound << shift | last)
        }
        self.init(level: level, rows: under(rows), columns: under(columns))
    }

    /// Every cell of the region.
    package var cells: [GridCell] {
        [columns, wrappedColumns].compactMap { $0 }.flatMap { columns in
            rows.flatMap { y in columns.map { x in GridCell(level: level, x: x, y: y) } }
        }
    }

    /// Whether a cell at the region's level is one of its cells.
    package func contains(_ cell: GridCell) -> Bool {
        cell.level == level && rows.contains(cell.y) && containsColumn(cell.x)
    }

    @inline(__always) private func containsColumn(_ x: UInt32) -> Bool {
        columns.contains(x) || wrappedColumns?.contains(x) == true
    }

    /// Whether the cell with a Morton code at the region's level is one of its cells.
    ///
    /// Compared in Morton form: a code's row is its odd bits and its column its even bits, each still spread out, and
    /// spreading keeps the order of numbers, so the bounds are those of the corners' codes under the same masks. No
    /// code is compacted back to a row and a column, which a fold of a small view did for every entry it met.
    @inline(__always) func contains(code: UInt64) -> Bool {
        let (rowBits, columnBits) = (KeyBounds.rowBits, KeyBounds.columnBits)
        let row = code & rowBits
        guard codes.lowerBound & rowBits <= row, row <= codes.upperBound & rowBits else { return false }
        let column = code & columnBits
        if codes.lowerBound & columnBits <= column, column <= codes.upperBound & columnBits { return true }
        guard let wrappedCodes else { return false }
        return wrappedCodes.lowerBound & columnBits <= column && column <= wrappedCodes.upperBound & columnBits
    }

    /// The region's rows and columns as bounds on a key's bits (``keyBounds``).
    struct KeyBounds {
        /// A key's row bits (odd) and column bits (even), still spread out.
        static var rowBits: UInt64 { 0xAAAA_AAAA_AAAA_AAAA }
        static var columnBits: UInt64 { 0x5555_5555_5555_5555 }

        let rows: ClosedRange<UInt64>
        let columns: ClosedRange<UInt64>
        let wrappedColumns: ClosedRange<UInt64>?

        /// Whether a key (on the 32-bit grid) lies in one of the region's cells.
        @inline(__always) func contains(key: UInt64) -> Bool {
            guard rows.contains(key & Self.rowBits) else { return false }
            let column = key & Self.columnBits
            return columns.contains(column) || wrappedColumns?.contains(column) == true
        }
    }

    /// The region as bounds on the spread row and column bits of a key on the 32-bit grid.
    ///
    /// They are the bounds ``contains(code:)`` compares a cell's code with, moved up to the grid's level: a key's bits
    /// below the region's level may be anything, so the upper bounds have them all set. Testing a key is then two
    /// masks and a few comparisons, with no shift to the region's level.
    var keyBounds: KeyBounds {
        // At level 0 the shift is 64, which Swift's `<<` takes to 0: every key is then in the one cell.
        let shift = UInt64(64 - 2 * level)
        let below: UInt64 = (1 << shift) &- 1
        func bounds(_ codes: ClosedRange<UInt64>, _ bits: UInt64) -> ClosedRange<UInt64> {
            ((codes.lowerBound & bits) << shift)...(((codes.upperBound & bits) << shift) | (below & bits))
        }
        return KeyBounds(
            rows: bounds(codes, KeyBounds.rowBits), columns: bounds(codes, KeyBounds.columnBits),
            wrappedColumns: wrappedCodes.map { bounds($0, KeyBounds.columnBits) })
    }

    /// Whether a subtree whose first and last cell codes are these may hold cells of the region.
    @inline(__always) func mayHold(codes first: UInt64, through last: UInt64) -> Bool {
        (first <= codes.upperBound && last >= codes.lowerBound)
            || wrappedCodes.map { first <= $0.upperBound && last >= $0.lowerBound } == true
    }

    /// Whether a box on the 32-bit grid may hold positions in the region's cells.
    @inline(__always) func intersects(_ summary: Summary) -> Bool {
        let minY = summary.minY.shifted(toLevel: level)
        let maxY = summary.maxY.shifted(toLevel: level)
        guard minY <= rows.upperBound && maxY >= rows.lowerBound else { return false }
        let minX = summary.minX.shifted(toLevel: level)
        let maxX = summary.maxX.shifted(toLevel: level)
        func overlaps(_ columns: ClosedRange<UInt32>) -> Bool {
            minX <= columns.upperBound && maxX >= columns.lowerBound
        }
        return overlaps(columns) || wrappedColumns.map(overlaps) == true
    }
}
