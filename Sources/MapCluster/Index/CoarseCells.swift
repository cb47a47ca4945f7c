/// Every cell of the coarsest grid levels, with its members' totals and, when the tree keeps aggregates, their row
/// (``RowLayout``), kept up to date by each insert and removal, so that a query at one of these levels reads its cells
/// instead of walking the tree: what a world map asks for.
///
/// Levels 0 through ``deepestLevel`` hold 5,461 cells in all, stored densely by Morton code: about half a megabyte
/// (and a row each), whatever the tree holds, so a tree keeps them only from ``keptFrom`` entries on (and drops them
/// below half of that, so that a tree whose size hovers there does not build them again and again).
///
/// One rule keeps a cell current. An insert adds the entry to its cell at each level, in O(1). A removal takes it out
/// the same way, unless it was the first or last of its cell in key order (the keys and the same-location test) or
/// attained a minimum or maximum of its row (a block of it, ``StaleBlocks``): then the cell is added up again, at the
/// deepest level from the tree, above from its four children, which are current. A batch changes the deepest level
/// alone and brings every cell above one it changed up to date once, at its end (``beginBatch()``).
struct CoarseCells: Sendable {
    /// The deepest level kept: 4,096 cells, 5.6° across at the equator (a world map at zoom 3 to 4).
    static var deepestLevel: Int { 6 }

    /// How many entries a tree holds before it keeps coarse cells.
    static var keptFrom: Int { 65_536 }

    /// Every cell's totals, by ``index(level:code:)``; `nil` for an empty cell.
    private var cells: ContiguousArray<CellTotals?>
    /// Every cell's row, by ``index(level:code:)``, in a table of arrays as the tree's nodes keep theirs
    /// (``NodeStore``), so that a change after a copy (a reader's snapshot) copies the rows of the cells it changes, not
    /// all of them; `nil` without aggregates.
    private(set) var rows: ArrayTable<UInt64>?
    /// The layout of `rows` (in ``NodeAggregates/Fixed``): by reference, so that a copy of the cells (a query's)
    /// retains one object, not the layout's arrays; `nil` without aggregates.
    private let fixed: NodeAggregates.Fixed?
    /// The layout of `rows`, when the tree keeps aggregates.
    private var layout: RowLayout? { fixed?.layout }
    /// The deepest cells a batch has changed, while it defers the levels above; `nil` outside a batch.
    private(set) var deferred: DeferredCells?

    /// Where the cells of a level start: those of level *l* from (4^*l* − 1) / 3 on, by Morton code.
    @inline(__always) private static func offset(ofLevel level: Int) -> Int { ((1 << (2 * level)) - 1) / 3 }

    /// How many cells the kept levels hold.
    static var cellCount: Int { offset(ofLevel: deepestLevel + 1) }

    /// Where a cell of a kept level lies among all of them.
    @inline(__always) static func index(level: Int, code: UInt64) -> Int { offset(ofLevel: level) + Int(code) }

    /// The cells of a tree: the deepest level's totals from one fold and their rows from one walk; the levels above add
    /// up their four children.
    /// - Complexity: O(*c* log *n*) for the *c* non-empty cells of the deepest level.
    init(of tree: MortonTree) {
        let deepest = Self.deepestLevel
        var receiver = Filler(
            cells: ContiguousArray(repeating: nil, count: Self.cellCount), offset: Self.offset(ofLevel: deepest))
        tree.forEachCell(in: CellRegion(level: deepest), into: &receiver, usingCoarseCells: false)
        cells = receiver.cells
        let nodeRows = tree.aggregates.flatMap { $0.rows.width > 0 ? $0.rows : nil }
        fixed = nodeRows == nil ? nil : tree.aggregates?.fixed
        if let nodeRows {
            // The deepest level's rows from one walk, into one buffer that is then cut into the cells' rows.
            let (width, deepestCells) = (nodeRows.width, 1 << (2 * deepest))
            var built = ContiguousArray<UInt64>()
            built.reserveCapacity(deepestCells * width)
            for _ in 0..<deepestCells { built.append(contentsOf: nodeRows.emptyRow) }
            built.withMutableCursor { built in
                var builder = RowBuilder(layout: nodeRows.layout, rows: built)
                let codes = 0..<UInt64(deepestCells)
                nodeRows.walk(ranges: codes.map { GridCell(level: deepest, code: $0).keyRange }, tree: tree, &builder)
            }
            let first = Self.index(level: deepest, code: 0)
            rows = ArrayTable(
                empty: nodeRows.emptyRow,
                arrays: ContiguousArray(
                    (0..<Self.cellCount).lazy.map { index in
                        index < first
                            ? nodeRows.emptyRow
                            : ContiguousArray(built[((index - first) * width)..<((index - first + 1) * width)])
                    }))
        }
        for level in (0..<deepest).reversed() {
            for code in 0..<(UInt64(1) << (2 * UInt64(level))) { addUpChildren(level: level, code: code) }
        }
    }

    /// Stores the cells of the deepest level as the fold hands them out.
    private struct Filler: CellReceiver {
        var cells: ContiguousArray<CellTotals?>
        let offset: Int

        mutating func take(_ code: UInt64, _ totals: CellTotals) {
            var totals = totals
            totals.forgetFirst()
            cells[offset + Int(code)] = totals
        }
    }

    // MARK: Changes

    /// Counts an entry just inserted into the tree, which stores `values` (what the tree's rows prepared, when it keeps
    /// aggregates): at every level, or at the deepest one alone in a batch.
    mutating func insert(_ entry: IndexEntry, values: Cursor<UInt64>?) {
        let latitude = Summary.fixedPoint(entry.coordinate.latitude)
        let longitude = Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        let levels = deferred == nil ? 0...Self.deepestLevel : Self.deepestLevel...Self.deepestLevel
        deferred?.changed(MortonKey.cellCode(entry.key, level: Self.deepestLevel), stale: StaleBlocks())
        for level in levels {
            let index = Self.index(level: level, code: MortonKey.cellCode(entry.key, level: level))
            if cells[index] == nil {
                var totals = CellTotals(entry)
                totals.forgetFirst()
                cells[index] = totals
            } else {
                cells[index]?.insert(entry, latitude: latitude, longitude: longitude)
            }
            // Through `fixed`, the class: binding its layout would copy it (a retain of each of its arrays) for every
            // level of every insert.
            if let fixed, let values { withRow(index) { _ = fixed.layout.addEntry(entry, values, toRow: $0) } }
        }
    }

    /// Takes out an entry just removed from `tree`, which stored `values` (what the tree's rows last removed, when it
    /// keeps aggregates): from the deepest level up, so that a cell added up again from its children adds up current
    /// ones; at the deepest level alone in a batch.
    mutating func remove(_ entry: IndexEntry, values: Cursor<UInt64>?, from tree: MortonTree) {
        let latitude = Summary.fixedPoint(entry.coordinate.latitude)
        let longitude = Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        for level in (0...Self.deepestLevel).reversed() {
            let code = MortonKey.cellCode(entry.key, level: level)
            let index = Self.index(level: level, code: code)
            guard let totals = cells[index] else { preconditionFailure("a removed entry's coarse cells hold it") }
            var stale = StaleBlocks()
            if totals.count == 1 {
                // The cell's last member: nothing to add up, and a row of no member.
                cells[index] = nil
                if let fixed { withRow(index) { fixed.layout.clearRow($0) } }
            } else {
                stale.keys = entry.key == totals.firstKey || entry.key == totals.lastKey
                cells[index]?.count -= 1
                cells[index]?.latitudeSum &-= latitude
                cells[index]?.longitudeSum &-= longitude
                if let fixed, let values {
                    withRow(index) {
                        stale.formUnion(fixed.layout.addEntry(entry, values, toRow: $0, sign: -1).wholeBlocks)
                    }
                }
            }
            if deferred != nil {
                // Added up again with the batch's other stale cells, in one walk at its end.
                deferred?.changed(code, stale: stale)
                return
            }
            guard !stale.isEmpty else { continue }
            if level < Self.deepestLevel {
                addUpChildren(level: level, code: code)
            } else {
                addUp(deepest: [code], stale: [stale], from: tree)
            }
        }
    }

    /// Makes the changes that follow update only the deepest level, until ``finishBatch(_:)`` brings each cell above
    /// one they changed up to date once, from its four children, instead of once per change under it.
    mutating func beginBatch() {
        if deferred == nil { deferred = DeferredCells() }
    }

    /// Brings the cells a batch left behind up to date: the deepest ones a removal left stale, in one walk of `tree`;
    /// then, level by level, every cell above one the batch changed, from its four children.
    /// - Complexity: O(*c* log *n*) for the *c* deepest cells the batch changed, and a pass over the 4,096 of them.
    mutating func finishBatch(_ tree: MortonTree) {
        guard let batch = deferred else { return }
        deferred = nil
        let changed = batch.changedCodes
        // The stale ones that still hold members: an emptied cell's totals are nil and its row clear.
        let stale = changed.filter {
            !batch.stale($0).isEmpty && cells[Self.index(level: Self.deepestLevel, code: $0)] != nil
        }
        addUp(deepest: stale, stale: stale.map { batch.stale($0) }, from: tree)
        var codes = changed
        for level in (0..<Self.deepestLevel).reversed() {
            // The parents of the level below's changed cells, each once.
            var parents = codes.map { $0 >> 2 }
            parents.sort()
            codes = []
            for code in parents where codes.last != code { codes.append(code) }
            for code in codes { addUpChildren(level: level, code: code) }
        }
    }

    /// Adds up the stale parts of non-empty cells of the deepest level (in key order) again from `tree`: the totals
    /// from its summary of each, the rows' stale blocks in one walk.
    private mutating func addUp(deepest codes: [UInt64], stale: [StaleBlocks], from tree: MortonTree) {
        guard !codes.isEmpty else { return }
        let level = Self.deepestLevel
        for (code, blocks) in zip(codes, stale) where blocks.keys {
            cells[Self.index(level: level, code: code)] = tree.summary(in: GridCell(level: level, code: code).keyRange)
                .map(CellTotals.init)
        }
        let rowStale = stale.map { StaleBlocks(all: $0.all, categories: $0.categories) }
        guard let layout, let nodeRows = tree.aggregates?.rows, rowStale.contains(where: { !$0.isEmpty }) else {
            return
        }
        let width = layout.width
        var fresh = ContiguousArray<UInt64>()
        fresh.reserveCapacity(codes.count * width)
        for _ in codes { fresh.append(contentsOf: nodeRows.emptyRow) }
        fresh.withMutableCursor { fresh in
            // Only the stale blocks: a removal makes one category's block stale far more often than the others.
            var builder = RowBuilder(layout: layout, rows: fresh, blocks: rowStale)
            nodeRows.walk(ranges: codes.map { GridCell(level: level, code: $0).keyRange }, tree: tree, &builder)
            for (position, code) in codes.enumerated() {
                withRow(Self.index(level: level, code: code)) { row in
                    layout.forEachBlock(of: rowStale[position]) { at, block in
                        for i in at..<(at + block.width) { row[i] = fresh[position * width + i] }
                    }
                }
            }
        }
    }

    /// Adds up a cell of a level above the deepest from its four children, totals and row.
    private mutating func addUpChildren(level: Int, code: UInt64) {
        var totals: CellTotals?
        for child in 0..<UInt64(4) {
            if let part = cells[Self.index(level: level + 1, code: 4 * code + child)] { totals.append(part) }
        }
        cells[Self.index(level: level, code: code)] = totals
        guard let fixed, let first = rows?[Self.index(level: level + 1, code: 4 * code)] else { return }
        // The first child's row is what adding it to a row of no member gives: the parent starts as a copy of it and
        // adds the other three (a quarter of the merges at a batch's end, and no clearing).
        var parent = first.isEmpty ? fixed.layout.emptyRow : first
        parent.withMutableCursor { parent in
            for child in 1..<UInt64(4) {
                rows?[Self.index(level: level + 1, code: 4 * code + child)].withCursor {
                    fixed.layout.mergeRow($0, into: parent)
                }
            }
        }
        rows?[Self.index(level: level, code: code)] = parent
    }

    /// Calls `body` with the row of the cell at `index`.
    @inline(__always) private mutating func withRow(_ index: Int, _ body: (MutableCursor<UInt64>) -> Void) {
        rows?.withArray(index, body)
    }

    /// Adds up the rows of the ranges a walk visits, precisely: what the cells' rows are built from; with `blocks`, only
    /// those of each range.
    private struct RowBuilder: RowVisitor {
        let layout: RowLayout
        var rows: MutableCursor<UInt64>!
        var blocks: [StaleBlocks]?

        func takesNodes(in range: Int) -> Bool { true }

        mutating func node(_ row: Cursor<UInt64>, range: Int) {
            let target = rows + range * layout.width
            guard let blocks else { return layout.mergeRow(row, into: target) }
            layout.forEachBlock(of: blocks[range]) { at, block in
                RowLayout.merge(block, row + at, into: block, target + at, precise: true)
            }
        }

        mutating func entry(_ entry: IndexEntry, _ values: Cursor<UInt64>, range: Int) {
            let row = rows + range * layout.width
            if blocks?[range].all ?? true { _ = layout.addEntry(entry, values, toAll: row, precise: true) }
            if let block = layout.categoryBlock(of: entry),
                blocks.map({ $0[range].categories & (1 << (entry.category - 1)) != 0 }) ?? true
            {
                layout.addEntry(entry, values, toCategory: row + block, precise: true)
            }
        }
    }

    // MARK: Reading

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

    /// The totals of the members of `categories` in a cell of a kept level; `nil` when the tree keeps no aggregates.
    func categoryTotals(level: Int, code: UInt64, categories: CategorySet) -> CategoryTotals? {
        guard let fixed else { return nil }
        return rows?[Self.index(level: level, code: code)].withCursor { row in
            var totals = CategoryTotals()
            totals.add(row, categories: categories, layout: fixed.layout)
            return totals
        }
    }

    /// Adds the aggregates of a cell of a kept level to an answer's row; false when the tree keeps no aggregates.
    func addAggregates(
        level: Int, code: UInt64, categories: CategorySet?, into target: MutableCursor<UInt64>
    ) -> Bool {
        guard let fixed else { return false }
        rows?[Self.index(level: level, code: code)].withCursor { row in
            fixed.layout.addNode(row, categories: categories, into: target)
        }
        return true
    }

    /// Whether two sets of coarse cells say the same, for the tree's invariant check: the totals exactly (a location
    /// only when the members share one), the rows as ``RowLayout/rowMatches(_:_:)`` compares them.
    func matches(_ other: CoarseCells) -> Bool {
        guard deferred == nil, other.deferred == nil, cells.count == other.cells.count else { return false }
        let totalsMatch = zip(cells, other.cells).allSatisfy { a, b in
            switch (a, b) {
            case (nil, nil): true
            case (let a?, let b?): a.matches(b)
            default: false
            }
        }
        guard totalsMatch else { return false }
        switch (rows, other.rows, layout) {
        case (nil, nil, _): return true
        case (let mine?, let theirs?, let layout?):
            return zip(mine.arrays, theirs.arrays).allSatisfy { mine, theirs in
                mine.withCursor { mine in theirs.withCursor { theirs in layout.rowMatches(mine, theirs) } }
            }
        default: return false
        }
    }
}

/// Which parts of a cell's or node's values must be added up again: a removal took out a minimum, maximum or key they
/// attained.
struct StaleBlocks: Sendable {
    /// The block of all of the row.
    var all = false
    /// The categories' blocks of the row, a bit each by position.
    var categories: UInt64 = 0
    /// The categories' blocks whose key span alone a removal took an end of, their other sections having subtracted
    /// exactly: a node sets the span again from below, a coarse cell adds the block up again (``wholeBlocks``).
    var categoryKeys: UInt64 = 0
    /// A coarse cell's totals' first and last keys and same-location test.
    var keys = false

    var isEmpty: Bool { !all && categories == 0 && categoryKeys == 0 && !keys }

    /// These, a block whose key span alone is stale counted as stale whole.
    var wholeBlocks: StaleBlocks { StaleBlocks(all: all, categories: categories | categoryKeys, keys: keys) }

    mutating func formUnion(_ other: StaleBlocks) {
        all = all || other.all
        categories |= other.categories
        categoryKeys |= other.categoryKeys
        keys = keys || other.keys
    }
}

extension RowLayout {
    /// Calls `body` with where each block of `blocks` starts in a row, and its shape.
    @inline(__always) func forEachBlock(of blocks: StaleBlocks, _ body: (Int, Block) -> Void) {
        if blocks.all { body(0, all) }
        CategorySet(bits: blocks.categories).forEach(below: categoryCount) { body(categoryBlock($0), category) }
    }
}

/// The deepest coarse cells a batch has changed while it defers the levels above (``CoarseCells/beginBatch()``).
///
/// One array, so that the coarse cells, which every query copies with the tree, stay small.
struct DeferredCells: Sendable {
    /// Each deepest cell, by Morton code: whether the batch changed it, and what of it must be added up again.
    private var cells = [(isChanged: Bool, stale: StaleBlocks)](
        repeating: (false, StaleBlocks()), count: 1 << (2 * CoarseCells.deepestLevel))

    /// The codes of the changed cells, in order.
    var changedCodes: [UInt64] { cells.indices.filter { cells[$0].isChanged }.map { UInt64($0) } }

    /// What of a cell must be added up again.
    func stale(_ code: UInt64) -> StaleBlocks { cells[Int(code)].stale }

    mutating func changed(_ code: UInt64, stale blocks: StaleBlocks) {
        cells[Int(code)].isChanged = true
        cells[Int(code)].stale.formUnion(blocks)
    }
}
