/// The rows of a tree's nodes (``RowLayout``), and what each entry stores for them, kept current through every change
/// of the tree (the coarse cells keep their own rows, ``CoarseCells``).
///
/// Each node's storage is an array of its own, by node id, as the tree's nodes are: a leaf's block holds its row, its
/// checkpoints and what its entries store (`entryWidth` doubles each, as bit patterns, a window of ``window`` entries),
/// side by side, so that a change to a leaf reads and writes one allocation; a branch's holds its row. A copy of the
/// rows (a reader's snapshot of the tree) shares every node's array, and a change then copies the arrays of the nodes
/// on its path, not those of every node.
///
/// The tree tells the rows of each change, bottom-up (``MortonTree/insert(_:)``, ``MortonTree/remove(key:where:)``).
/// An insert adds the entry to two blocks of each node on its path, its category's and that of all: O(1) a level. A
/// removal takes it out of them the same way; only a minimum, a maximum or a key that the entry attained makes the
/// block be recomputed from what lies below, O(*F* + *L*) a level. Every section but those subtracts exactly (pairs as
/// double-doubles), so nothing drifts however many changes come.
///
/// A class, so that the tree (and ``NodeAggregates``) holds it by reference; the tree copies it before changing it when
/// another tree shares it, so trees keep their value semantics.
final class NodeRows: AggregateColumn, @unchecked Sendable {
    let layout: RowLayout
    /// The room per leaf for what its entries store: a leaf holds one entry over its capacity before it splits.
    static var window: Int { MortonTree.leafCapacity + 1 }

    // Changed only by the tree that owns the rows, which copies shared ones first (no access overlaps another): the
    // dynamic exclusivity checks of class properties would cost more than the work of an update.
    /// Each leaf's block, by leaf id: its row (``width`` words), its checkpoints from ``checkpointsAt``, and what its
    /// entries store from ``valuesAt``; empty for a leaf id not in use.
    @exclusivity(unchecked) var leafBlocks: ContiguousArray<ContiguousArray<UInt64>> = []
    /// Each branch's row, by branch id.
    @exclusivity(unchecked) var branchRows: ContiguousArray<ContiguousArray<UInt64>> = []
    /// What the next inserted entry stores: its weight, when weighted, then a double per numeric reduction (NaN for
    /// none), as bit patterns; one word at least, so that its base address is never nil.
    @exclusivity(unchecked) var prepared: ContiguousArray<UInt64>
    /// What the last removed entry stored, as `prepared`.
    @exclusivity(unchecked) var lastRemoved: ContiguousArray<UInt64>
    /// A bulk load's values by slot, until ``build(_:)`` lays them out.
    @exclusivity(unchecked) var input: BulkValues?
    /// What an element without values stores: weight 1, no value.
    let defaults: ContiguousArray<UInt64>
    /// A row of no member, to start a node's row from.
    let emptyRow: ContiguousArray<UInt64>

    /// A leaf's checkpoints: its prefix totals, so that a range that ends inside a leaf is answered from the nearest of
    /// them and a few entries (``AggregateRowsVisitor``): ``checkpointsPerLeaf`` of them, ``checkpointWidth`` words
    /// each, from ``checkpointsAt`` in the leaf's block.
    ///
    /// A checkpoint is a bound key, how many of the leaf's entries lie below it (a prefix, entries being in key order),
    /// and their block of all (``RowLayout/all``). Computing a leaf's row sets the bounds at its 16th, 32nd and 48th
    /// entries (past its end, at `UInt64.max`). An insert or a removal below a bound adds or takes out the entry, in
    /// O(1), exactly; the bound stays, so the prefix grows or shrinks with what lies below it until the leaf is next
    /// computed (a split or a merge).
    ///
    /// Kept only when the block of all is sums (``keepsCheckpoints``): a minimum or maximum can't be taken out.
    static var checkpointStride: Int { 16 }
    /// How many checkpoints a leaf keeps, at entries 16, 32 and 48 when its row is computed.
    static var checkpointsPerLeaf: Int { MortonTree.leafCapacity / checkpointStride - 1 }
    /// Words per checkpoint: its bound key, its entry count, its block of all.
    var checkpointWidth: Int { Self.checkpointWidth(layout) }

    /// Words per checkpoint of rows of `layout`: its bound key (word 0), how many entries lie below it (word 1), their
    /// block of all (from word 2).
    static func checkpointWidth(_ layout: RowLayout) -> Int { 2 + layout.all.width }

    /// Whether the rows keep checkpoints: when the block of all has no minimum or maximum.
    let keepsCheckpoints: Bool
    /// Where a leaf's checkpoints start in its block: after its row.
    var checkpointsAt: Int { width }
    /// Where what a leaf's entries store starts in its block: after its checkpoints.
    let valuesAt: Int
    /// Words per leaf block.
    let blockSize: Int

    init(layout: RowLayout) {
        self.layout = layout
        keepsCheckpoints = layout.all.width > 0 && layout.all.mins == 0 && layout.all.maxes == 0
        var defaults = ContiguousArray<UInt64>(repeating: Double.nan.bitPattern, count: max(1, layout.entryWidth))
        if layout.isWeighted { defaults[0] = (1.0).bitPattern }
        self.defaults = defaults
        prepared = defaults
        lastRemoved = defaults
        emptyRow = layout.emptyRow
        valuesAt = layout.width + (keepsCheckpoints ? Self.checkpointsPerLeaf * Self.checkpointWidth(layout) : 0)
        blockSize = valuesAt + Self.window * layout.entryWidth
    }

    func copy() -> any AggregateColumn {
        let copy = NodeRows(layout: layout)
        copy.leafBlocks = leafBlocks
        copy.branchRows = branchRows
        copy.prepared = prepared
        copy.lastRemoved = lastRemoved
        copy.input = input
        return copy
    }

    var width: Int { layout.width }
    var entryWidth: Int { layout.entryWidth }

    /// Where the values of the entry at `position` start in its leaf's block.
    @inline(__always) func valuesAt(_ position: Int) -> Int { valuesAt + position * entryWidth }

    // MARK: Stored values

    func prepareDefault() { prepared = defaults }

    func prepareLastRemoved() { prepared = lastRemoved }

    /// Makes the next inserted entry store an element's validated values.
    func prepare(_ values: ElementValues) {
        prepared.withMutableCursor { target in
            layout.write(values, into: target)
        }
    }

    /// Calls `body` with a leaf's block, made (a row of no member, no values) when the leaf has none yet.
    @inline(__always) private func withBlock<Result>(
        of leaf: Int32, _ body: (MutableCursor<UInt64>) -> Result
    ) -> Result {
        let n = Int(leaf)
        if leafBlocks.count <= n {
            leafBlocks.append(contentsOf: repeatElement([], count: n + 1 - leafBlocks.count))
        }
        if leafBlocks[n].isEmpty { leafBlocks[n] = newBlock() }
        return leafBlocks[n].withMutableCursor(body)
    }

    /// A leaf's block of no member: its row clear, its checkpoints at no bound, no value stored.
    private func newBlock() -> ContiguousArray<UInt64> {
        var block = ContiguousArray<UInt64>(repeating: Double.nan.bitPattern, count: max(1, blockSize))
        block.withMutableCursor { block in
            for i in 0..<width { block[i] = emptyRow[i] }
            for i in width..<valuesAt { block[i] = 0 }
        }
        return block
    }

    func inserted(at position: Int, of leaf: Int32, count: Int) {
        guard entryWidth > 0 else { return }
        let (prepared, width) = (prepared, entryWidth)
        withBlock(of: leaf) { block in
            let values = block + valuesAt
            var i = count * width - 1
            while i >= (position + 1) * width {
                values[i] = values[i - width]
                i -= 1
            }
            for j in 0..<width { values[position * width + j] = prepared[j] }
        }
    }

    func removed(at position: Int, of leaf: Int32, count: Int) {
        guard entryWidth > 0 else { return }
        let width = entryWidth
        withBlock(of: leaf) { block in
            let values = block + valuesAt
            for j in 0..<width { lastRemoved[j] = values[position * width + j] }
            for i in (position * width)..<((count - 1) * width) { values[i] = values[i + width] }
        }
    }

    func split(_ leaf: Int32, at half: Int, count: Int, into sibling: Int32) {
        guard width > 0 else { return }
        let moved = (count - half) * entryWidth
        var values = ContiguousArray<UInt64>(repeating: 0, count: max(1, moved))
        withBlock(of: leaf) { block in
            values.withMutableCursor { $0.update(from: (block + valuesAt(half)).reading, count: moved) }
        }
        withBlock(of: sibling) { block in
            values.withCursor { (block + valuesAt).update(from: $0, count: moved) }
        }
    }

    func merged(_ drop: Int32, count dropCount: Int, into keep: Int32, count: Int) {
        guard width > 0 else { return }
        let moved = dropCount * entryWidth
        let dropped = leafBlocks[Int(drop)]
        leafBlocks[Int(drop)] = []
        withBlock(of: keep) { block in
            dropped.withCursor { (block + valuesAt(count)).update(from: $0 + valuesAt, count: moved) }
        }
    }

    /// Moves the checkpoints of a leaf's block whose bounds lie above an entry: adds it (`sign` 1) or takes it out
    /// (-1), which stores `values`.
    private func moveCheckpoints(
        _ entry: IndexEntry, in block: MutableCursor<UInt64>, values: Cursor<UInt64>, sign: Int64
    ) {
        guard keepsCheckpoints else { return }
        let width = checkpointWidth
        for k in 0..<Self.checkpointsPerLeaf {
            let checkpoint = block + checkpointsAt + k * width
            guard entry.key < checkpoint[0] else { continue }
            checkpoint[1] &+= UInt64(bitPattern: sign)
            _ = layout.addEntry(entry, values, toAll: checkpoint + 2, sign: sign, precise: true)
        }
    }

    // MARK: Node rows

    /// Calls `body` with the row of a node (its block's first words, for a leaf).
    @inline(__always) private func withRow<Result>(
        of node: Int32, isLeaf: Bool, _ body: (MutableCursor<UInt64>) -> Result
    ) -> Result {
        if isLeaf { return withBlock(of: node, body) }
        growBranchRows(toHold: node)
        if branchRows[Int(node)].isEmpty { branchRows[Int(node)] = emptyRow }
        return branchRows[Int(node)].withMutableCursor(body)
    }

    /// Grows the branches' rows to hold `node`'s.
    @inline(__always) private func growBranchRows(toHold node: Int32) {
        if branchRows.count <= Int(node) {
            branchRows.append(contentsOf: repeatElement([], count: Int(node) + 1 - branchRows.count))
        }
    }

    /// The row of a node whose row is current: its block, for a leaf (the row is its first words).
    @inline(__always) func row(of node: Int32, isLeaf: Bool) -> ContiguousArray<UInt64> {
        isLeaf ? leafBlocks[Int(node)] : branchRows[Int(node)]
    }

    func added(_ entry: IndexEntry, to node: Int32, isLeaf: Bool) {
        guard width > 0 else { return }
        prepared.withCursor { values in
            withRow(of: node, isLeaf: isLeaf) { row in
                _ = layout.addEntry(entry, values, toRow: row)
                if isLeaf { moveCheckpoints(entry, in: row, values: values, sign: 1) }
            }
        }
    }

    func removed(_ entry: IndexEntry, from node: Int32, height: Int, in tree: MortonTree) {
        guard width > 0 else { return }
        let stale = lastRemoved.withCursor { values in
            withRow(of: node, isLeaf: height == 0) { row in
                if height == 0 { moveCheckpoints(entry, in: row, values: values, sign: -1) }
                return layout.addEntry(entry, values, toRow: row, sign: -1)
            }
        }
        if stale.all { recompute(node, height: height, category: nil, in: tree) }
        if stale.categories != 0 { recompute(node, height: height, category: Int(entry.category) - 1, in: tree) }
    }

    func rebuild(_ node: Int32, height: Int, in tree: MortonTree) {
        guard width > 0 else { return }
        // One pass over what lies below: each entry into its two blocks, or each child's whole row.
        if height == 0 {
            let entries = tree.leaves[Int(node)].entries
            withBlock(of: node) { fill($0, entries: entries) }
            return
        }
        var row = emptyRow
        row.withMutableCursor { row in
            for child in tree.branches[Int(node)].children {
                self.row(of: child, isLeaf: height == 1).withCursor { layout.mergeRow($0, into: row) }
            }
        }
        growBranchRows(toHold: node)
        branchRows[Int(node)] = row
    }

    /// Recomputes one block of a node (a category's, or that of all when `category` is `nil`) from what lies below it,
    /// whose rows are current.
    private func recompute(_ node: Int32, height: Int, category: Int?, in tree: MortonTree) {
        let layout = layout
        let block = category.map { layout.categoryBlock($0) } ?? 0
        let shape = category == nil ? layout.all : layout.category
        if height == 0 {
            let entries = tree.leaves[Int(node)].entries
            withBlock(of: node) { row in
                RowLayout.clear(shape, at: row + block)
                for (position, entry) in entries.enumerated() {
                    let values = (row + valuesAt(position)).reading
                    if let category {
                        guard Int(entry.category) - 1 == category else { continue }
                        _ = layout.addEntry(entry, values, toCategory: row + block, precise: true)
                    } else {
                        _ = layout.addEntry(entry, values, toAll: row, precise: true)
                    }
                }
            }
            return
        }
        let children = tree.branches[Int(node)].children
        withRow(of: node, isLeaf: false) { row in
            RowLayout.clear(shape, at: row + block)
            for child in children {
                self.row(of: child, isLeaf: height == 1).withCursor { childRow in
                    RowLayout.merge(shape, childRow + block, into: shape, row + block, precise: true)
                }
            }
        }
    }

    func build(_ tree: MortonTree) {
        guard width > 0 else {
            input = nil
            return
        }
        buildLeaves(tree)
        input = nil
        branchRows = ContiguousArray(repeating: [], count: tree.branches.count)
        if tree.height > 0 {
            func build(_ node: Int32, height: Int) {
                if height > 1 {
                    for child in tree.branches[Int(node)].children { build(child, height: height - 1) }
                }
                rebuild(node, height: height, in: tree)
            }
            build(tree.root, height: tree.height)
        }
    }

    /// Makes every leaf's block, on all cores: what its entries store (laid out from a bulk load's input, or kept, for a
    /// recomputation to check against), its row and its checkpoints.
    private func buildLeaves(_ tree: MortonTree) {
        let (input, leaves, kept) = (input, tree.leaves, leafBlocks)
        let (entryWidth, valuesAt) = (entryWidth, valuesAt)
        // The rows are most of an aggregated index's memory: each block is made at its size, once.
        leafBlocks = Parallel.map(count: leaves.count, minimumChunk: 1_024) { [self] leaf in
            let entries = leaves[leaf].entries
            var block: ContiguousArray<UInt64>
            if input == nil, leaf < kept.count, !kept[leaf].isEmpty {
                block = kept[leaf]
            } else {
                block = newBlock()
            }
            block.withMutableCursor { block in
                if let input {
                    for (position, entry) in entries.enumerated() {
                        input.write(slot: Int(entry.slot), into: block + valuesAt + position * entryWidth)
                    }
                }
                fill(block, entries: entries)
            }
            return block
        }
    }

    /// Computes a leaf's row from its entries and what they store, and its checkpoints when it keeps them: each bound at
    /// an entry 16, 32 or 48 (`UInt64.max` past the end), with the block of all of the entries below it, copied from the
    /// row as it fills.
    private func fill(_ block: MutableCursor<UInt64>, entries: ContiguousArray<IndexEntry>) {
        let (allWidth, width, perLeaf) = (
            layout.all.width, checkpointWidth, keepsCheckpoints ? Self.checkpointsPerLeaf : 0
        )
        let checkpoints = block + checkpointsAt
        for k in 0..<perLeaf {
            let end = (k + 1) * Self.checkpointStride
            let bound = end < entries.count ? entries[end].key : .max
            checkpoints[k * width] = bound
            // Entries of one key lie on one side of a bound.
            checkpoints[k * width + 1] = UInt64(entries.lowerBound(of: bound))
        }
        layout.clearRow(block)
        var next = 0
        for (position, entry) in entries.enumerated() {
            while next < perLeaf, checkpoints[next * width + 1] == UInt64(position) {
                (checkpoints + next * width + 2).update(from: block.reading, count: allWidth)
                next += 1
            }
            _ = layout.addEntry(entry, (block + valuesAt(position)).reading, toRow: block)
        }
        while next < perLeaf {
            (checkpoints + next * width + 2).update(from: block.reading, count: allWidth)
            next += 1
        }
    }
}

/// The values of a bulk load's elements, by slot, as the caller gave them: laid out beside the entries by
/// ``NodeRows/build(_:)``, with no copy by slot on the way.
struct BulkValues: Sendable {
    /// Whether the schema is weighted: then each element stores a weight first.
    var isWeighted: Bool
    /// Each element's weight (1 for all when `nil`).
    var weights: [Double]?
    /// Each numeric reduction's values, in the order of ``RowLayout/fields``; `nil` for none given.
    var columns: [ReductionValues?]

    /// Writes what the element in `slot` stores.
    @inline(__always) func write(slot: Int, into target: MutableCursor<UInt64>) {
        var at = 0
        if isWeighted {
            target[0] = (weights?[slot] ?? 1).bitPattern
            at = 1
        }
        for (i, column) in columns.enumerated() {
            let number =
                switch column {
                case .numbers(let numbers)?: numbers[slot] ?? .nan
                case .values(let values)?: RowLayout.number(of: values[slot])
                case nil: Double.nan
                }
            target[at + i] = number.bitPattern
        }
    }
}

extension RowLayout {
    /// Writes what an element with validated `values` stores.
    func write(_ values: ElementValues, into target: MutableCursor<UInt64>) {
        var at = 0
        if isWeighted {
            target[0] = values.weight.bitPattern
            at = 1
        }
        for field in fields {
            let number =
                field.position < values.reductions.count ? Self.number(of: values.reductions[field.position]) : .nan
            target[at + field.numeric] = number.bitPattern
        }
    }

    /// The one number an element's value of a numeric reduction stands for; NaN for none.
    static func number(of value: any ClusterAggregate) -> Double {
        switch value {
        case let sum as Sum: sum.count == 0 ? .nan : sum.total
        case let mean as Mean: mean.sum.count == 0 ? .nan : mean.sum.total
        case let minimum as Minimum: minimum.value ?? .nan
        case let maximum as Maximum: maximum.value ?? .nan
        default: .nan
        }
    }
}
