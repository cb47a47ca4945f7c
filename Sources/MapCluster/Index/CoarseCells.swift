/// The totals of every cell of the coarsest grid levels, kept up to date by each insert and removal, so that a query at
/// one of these levels reads its cells instead of walking the tree: what a world map asks for.
///
/// Levels 0 through ``deepestLevel`` hold 5,461 cells in all, stored densely by Morton code: about half a megabyte,
/// whatever the tree holds, so a tree keeps them only from ``keptFrom`` entries on (and drops them below half of that,
/// so that a tree whose size hovers there does not build them again and again).
///
/// An insert updates one cell a level in O(1). A removal does too, unless the entry was the first or last of its cell
/// in key order: the cell's keys and same-location test are then asked of the tree, in O(log *n*).
struct CoarseCells: Sendable {
    /// The deepest level kept: 4,096 cells, 5.6° across at the equator (a world map at zoom 3 to 4).
    static var deepestLevel: Int { 6 }

    /// How many entries a tree holds before it keeps coarse cells.
    static var keptFrom: Int { 65_536 }

    /// Every cell of levels 0...deepestLevel: those of level *l* from (4^*l* − 1) / 3 on, by Morton code; `nil` for
    /// an empty cell.
    private var cells: ContiguousArray<CellTotals?>

    /// Where the cells of a level start in `cells`.
    @inline(__always) private static func offset(ofLevel level: Int) -> Int { ((1 << (2 * level)) - 1) / 3 }

    /// How many cells the kept levels hold.
    static var cellCount: Int { offset(ofLevel: deepestLevel + 1) }

    /// Where a cell of a kept level lies among all of them (and its row among the aggregates' coarse rows).
    @inline(__always) static func index(level: Int, code: UInt64) -> Int { offset(ofLevel: level) + Int(code) }

    /// The cells of a tree, from one fold of its deepest kept level; the levels above add up their four children.
    /// - Complexity: O(*c* log *n*) for the *c* non-empty cells of the deepest level.
    init(of tree: MortonTree) {
        var receiver = Filler(
            cells: ContiguousArray(repeating: nil, count: Self.offset(ofLevel: Self.deepestLevel + 1)),
            offset: Self.offset(ofLevel: Self.deepestLevel))
        tree.forEachCell(in: CellRegion(level: Self.deepestLevel), into: &receiver, usingCoarseCells: false)
        cells = receiver.cells
        for level in (0..<Self.deepestLevel).reversed() {
            let (parents, children) = (Self.offset(ofLevel: level), Self.offset(ofLevel: level + 1))
            for code in 0..<(1 << (2 * level)) {
                var totals: CellTotals?
                for child in 0..<4 {
                    if let part = cells[children + 4 * code + child] { totals.append(part) }
                }
                cells[parents + code] = totals
            }
        }
    }

    /// Stores the cells of the deepest level as the fold hands them out.
    private struct Filler: CellReceiver {
        var cells: ContiguousArray<CellTotals?>
        let offset: Int

        mutating func take(_ code: UInt64, _ totals: CellTotals) {
            var totals = totals
            totals.firstSlot = nil
            cells[offset + Int(code)] = totals
        }
    }

    /// Counts an entry just inserted into the tree.
    mutating func insert(_ entry: IndexEntry) {
        let latitude = Summary.fixedPoint(entry.coordinate.latitude)
        let longitude = Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        cells.withUnsafeMutableBufferPointer { cells in
            for level in 0...Self.deepestLevel {
                let index = Self.offset(ofLevel: level) + Int(MortonKey.cellCode(entry.key, level: level))
                if cells[index] == nil {
                    var totals = CellTotals(entry)
                    totals.firstSlot = nil
                    cells[index] = totals
                } else {
                    cells[index]?.insert(entry, latitude: latitude, longitude: longitude)
                }
            }
        }
    }

    /// Takes out an entry just removed from `tree`.
    mutating func remove(_ entry: IndexEntry, from tree: MortonTree) {
        let latitude = Summary.fixedPoint(entry.coordinate.latitude)
        let longitude = Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        cells.withUnsafeMutableBufferPointer { cells in
            for level in 0...Self.deepestLevel {
                let code = MortonKey.cellCode(entry.key, level: level)
                let index = Self.offset(ofLevel: level) + Int(code)
                guard let totals = cells[index] else { preconditionFailure("a removed entry's coarse cells hold it") }
                if totals.count == 1 {
                    cells[index] = nil
                } else if entry.key == totals.firstKey || entry.key == totals.lastKey {
                    // The first or last member may have gone: the tree has the keys and the same-location test.
                    cells[index] = tree.summary(in: GridCell(level: level, code: code).keyRange).map(CellTotals.init)
                } else {
                    cells[index]?.count -= 1
                    cells[index]?.latitudeSum &-= latitude
                    cells[index]?.longitudeSum &-= longitude
                }
            }
        }
    }

    /// Hands `receiver` the non-empty cells of a region at a kept level, in key order.
    /// - Complexity: O(*s*) for the *s* cells of the region's span of Morton codes: at most 4,096.
    func forEachCell(in region: CellRegion, into receiver: inout some CellReceiver) {
        let offset = Self.offset(ofLevel: region.level)
        let first = min(region.codes.lowerBound, region.wrappedCodes?.lowerBound ?? .max)
        let last = max(region.codes.upperBound, region.wrappedCodes?.upperBound ?? 0)
        for code in first...last {
            if let totals = cells[offset + Int(code)], region.contains(code: code) { receiver.take(code, totals) }
        }
    }

    /// Whether two sets of coarse cells say the same, for the tree's invariant check.
    func matches(_ other: CoarseCells) -> Bool {
        cells.count == other.cells.count
            && zip(cells, other.cells).allSatisfy { a, b in
                switch (a, b) {
                case (nil, nil): true
                case (let a?, let b?): a.matches(b)
                default: false
                }
            }
    }
}
