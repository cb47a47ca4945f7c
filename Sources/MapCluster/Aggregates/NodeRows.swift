/// The rows of a tree's nodes (``RowLayout``), and what each entry stores for them, kept current through every change
/// of the tree (the coarse cells keep their own rows, ``CoarseCells``).
///
/// They live in a ``NodeStore``, an array per node: a leaf's holds its row, its checkpoints and what its entries store
/// (`entryWidth` doubles each, as bit patterns), a branch's its row.
///
/// The tree tells the rows of each change, bottom-up (``MortonTree/insert(_:)``, ``MortonTree/remove(key:where:)``).
/// An insert adds the entry to two blocks of each node on its path, its category's and that of all: O(1) a level. A
/// removal takes it out of them the same way; only a minimum or a maximum that the entry attained makes the block be
/// recomputed from what lies below, O(*F* + *L*) a level, and a first or last key it was, that key alone. Every section
/// but those subtracts exactly (pairs as double-doubles), so nothing drifts however many changes come.
///
/// A class, so that the tree (and ``NodeAggregates``) holds it by reference; the tree copies it before changing it when
/// another tree shares it (which copies the store's table of arrays, not the arrays), so trees keep their value
/// semantics.
final class NodeRows: AggregateColumn, @unchecked Sendable {
    let layout: RowLayout
    // Changed only by the tree that owns the rows, which copies shared ones first (no access overlaps another): the
    // dynamic exclusivity checks of class properties would cost more than the work of an update.
    /// Each node's row; a leaf's checkpoints from ``checkpointsAt``, and what its entries store.
    @exclusivity(unchecked) var store: NodeStore<UInt64>
    /// What the next inserted entry stores: its weight, when weighted, then a double per numeric reduction (NaN for
    /// none), as bit patterns; one word at least.
    ///
    /// Read at every level of an insert, so kept where lending it costs no reference count.
    let prepared: OwnedWords<UInt64>
    /// What the last removed entry stored, as `prepared`.
    let lastRemoved: OwnedWords<UInt64>
    /// A bulk load's values by slot, until ``build(_:)`` lays them out.
    @exclusivity(unchecked) var input: BulkValues?
    /// What an element without values stores: weight 1, no value.
    let defaults: ContiguousArray<UInt64>
    /// A row of no member, to start a node's row from.
    let emptyRow: ContiguousArray<UInt64>

    /// A leaf's checkpoints: its prefix totals, so that a range that ends inside a leaf is answered from the nearest of
    /// them and a few entries (``AggregateRowsVisitor``): ``checkpointsPerLeaf`` of them, ``checkpointWidth`` words
    /// each, from ``checkpointsAt`` in the leaf's array.
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
    /// Where a leaf's checkpoints start in its array: after its row.
    var checkpointsAt: Int { width }

    init(layout: RowLayout) {
        self.layout = layout
        let keepsCheckpoints = layout.all.width > 0 && layout.all.mins == 0 && layout.all.maxes == 0
        self.keepsCheckpoints = keepsCheckpoints
        var defaults = ContiguousArray<UInt64>(repeating: Double.nan.bitPattern, count: max(1, layout.entryWidth))
        if layout.isWeighted { defaults[0] = (1.0).bitPattern }
        self.defaults = defaults
        prepared = OwnedWords(defaults)
        lastRemoved = OwnedWords(defaults)
        emptyRow = layout.emptyRow
        // A leaf's own words: its row, then its checkpoints (at no bound until the row is computed).
        var head = emptyRow
        let checkpointWords = keepsCheckpoints ? Self.checkpointsPerLeaf * Self.checkpointWidth(layout) : 0
        head.append(contentsOf: repeatElement(0, count: checkpointWords))
        store = NodeStore(
            head: head, entryWidth: layout.entryWidth, filler: Double.nan.bitPattern,
            emptyBranch: emptyRow)
    }

    func copy() -> any AggregateColumn {
        let copy = NodeRows(layout: layout)
        copy.store = store
        copy.prepared.set(prepared)
        copy.lastRemoved.set(lastRemoved)
        copy.input = input
        return copy
    }

    var width: Int { layout.width }
    var entryWidth: Int { layout.entryWidth }

    // MARK: Stored values

    func prepareDefault() { prepared.set(defaults) }

    func prepareLastRemoved() { prepared.set(lastRemoved) }

    /// Makes the next inserted entry store an element's validated values.
    func prepare(_ values: ElementValues) {
        layout.write(values, into: prepared.cursor)
    }

    func inserted(at position: Int, of leaf: Int32, count: Int) {
        let prepared = prepared.cursor
        store.inserted(at: position, of: leaf, count: count) { prepared[$0] }
    }

    func removed(at position: Int, of leaf: Int32, count: Int) {
        let lastRemoved = lastRemoved.cursor
        store.removed(at: position, of: leaf, count: count) { lastRemoved[$0] = $1 }
    }

    func split(_ leaf: Int32, at half: Int, count: Int, into sibling: Int32) {
        guard width > 0 else { return }
        store.split(leaf, at: half, count: count, into: sibling)
    }

    func merged(_ drop: Int32, count dropCount: Int, into keep: Int32, count: Int) {
        guard width > 0 else { return }
        store.merged(drop, count: dropCount, into: keep, count: count)
    }

    /// Moves the checkpoints of a leaf's array whose bounds lie above an entry: adds it (`sign` 1) or takes it out
    /// (-1), which stores `values`.
    private func moveCheckpoints(
        _ entry: IndexEntry, in leaf: MutableCursor<UInt64>, values: Cursor<UInt64>, sign: Int64
    ) {
        guard keepsCheckpoints else { return }
        let width = checkpointWidth
        for k in 0..<Self.checkpointsPerLeaf {
            let checkpoint = leaf + checkpointsAt + k * width
            guard entry.key < checkpoint[0] else { continue }
            checkpoint[1] &+= UInt64(bitPattern: sign)
            _ = layout.addEntry(entry, values, toAll: checkpoint + 2, sign: sign, precise: true)
        }
    }

    // MARK: Node rows

    /// The row of a node whose row is current: its array, whose first words are its row.
    @inline(__always) func row(of node: Int32, isLeaf: Bool) -> ContiguousArray<UInt64> {
        store.node(node, isLeaf: isLeaf)
    }

    func added(_ entry: IndexEntry, to node: Int32, isLeaf: Bool) {
        guard width > 0 else { return }
        let values = prepared.cursor.reading
        store.withNode(node, isLeaf: isLeaf) { row in
            _ = layout.addEntry(entry, values, toRow: row)
            if isLeaf { moveCheckpoints(entry, in: row, values: values, sign: 1) }
        }
    }

    func removed(_ entry: IndexEntry, from node: Int32, height: Int, in tree: MortonTree) {
        guard width > 0 else { return }
        let values = lastRemoved.cursor.reading
        let stale = store.withNode(node, isLeaf: height == 0) { row in
            if height == 0 { moveCheckpoints(entry, in: row, values: values, sign: -1) }
            return layout.addEntry(entry, values, toRow: row, sign: -1)
        }
        if stale.all { recompute(node, height: height, category: nil, in: tree) }
        if stale.categories != 0 { recompute(node, height: height, category: Int(entry.category) - 1, in: tree) }
        if stale.categoryKeys != 0 { refreshKeys(node, height: height, category: Int(entry.category) - 1, in: tree) }
    }

    /// Sets the key span of a node's category block again from what lies below it, whose rows are current.
    ///
    /// What a removal that took out an end of the span leaves stale, when the block's other sections subtract exactly:
    /// a block recomputed whole for its keys alone was 8% of an aggregated removal's instructions. A block left with
    /// no member is cleared, as a recomputation would.
    private func refreshKeys(_ node: Int32, height: Int, category: Int, in tree: MortonTree) {
        let layout = layout
        let block = layout.categoryBlock(category)
        let (minAt, maxAt) = (block + layout.category.keyMinsAt, block + layout.category.keyMaxesAt)
        var span = (first: UInt64.max, last: UInt64(0))
        if height == 0 {
            // In key order: the first and the last of the category's entries.
            let entries = tree.leaves[Int(node)].entries
            let ofCategory = { (entry: IndexEntry) in Int(entry.category) - 1 == category }
            if let first = entries.first(where: ofCategory), let last = entries.last(where: ofCategory) {
                span = (first.key, last.key)
            }
        } else {
            for child in tree.branches[Int(node)].children {
                store.node(child, isLeaf: height == 1).withCursor { row in
                    span = (min(span.first, row[minAt]), max(span.last, row[maxAt]))
                }
            }
        }
        store.withNode(node, isLeaf: height == 0) { row in
            guard row[category] > 0 else { return RowLayout.clear(layout.category, at: row + block) }
            (row[minAt], row[maxAt]) = span
        }
    }

    func rebuild(_ node: Int32, height: Int, in tree: MortonTree) {
        guard width > 0 else { return }
        // One pass over what lies below: each entry into its two blocks, or each child's whole row.
        if height == 0 {
            let (entries, first) = (tree.leaves[Int(node)].entries, store.entryAt(0))
            store.withNode(node, isLeaf: true) { fill($0, entries: entries, values: first) }
            return
        }
        var row = emptyRow
        row.withMutableCursor { row in
            for child in tree.branches[Int(node)].children {
                store.node(child, isLeaf: height == 1).withCursor { layout.mergeRow($0, into: row) }
            }
        }
        store.setBranch(node, to: row)
    }

    /// Recomputes one block of a node (a category's, or that of all when `category` is `nil`) from what lies below it,
    /// whose rows are current.
    private func recompute(_ node: Int32, height: Int, category: Int?, in tree: MortonTree) {
        let layout = layout
        let block = category.map { layout.categoryBlock($0) } ?? 0
        let shape = category == nil ? layout.all : layout.category
        if height == 0 {
            let (entries, first, entryWidth) = (tree.leaves[Int(node)].entries, store.entryAt(0), entryWidth)
            store.withNode(node, isLeaf: true) { row in
                RowLayout.clear(shape, at: row + block)
                for (position, entry) in entries.enumerated() {
                    let values = (row + first + position * entryWidth).reading
                    if let category {
                        guard Int(entry.category) - 1 == category else { continue }
                        layout.addEntry(entry, values, toCategory: row + block, precise: true)
                    } else {
                        _ = layout.addEntry(entry, values, toAll: row, precise: true)
                    }
                }
            }
            return
        }
        // Into a copy of the row, set when done: the children's rows are read from the store meanwhile, which a
        // second reference to it, held while the node's row changes, would have copied whole.
        var row = store.node(node, isLeaf: false)
        row.withMutableCursor { row in
            RowLayout.clear(shape, at: row + block)
            for child in tree.branches[Int(node)].children {
                store.node(child, isLeaf: height == 1).withCursor { childRow in
                    RowLayout.merge(shape, childRow + block, into: shape, row + block, precise: true)
                }
            }
        }
        store.setBranch(node, to: row)
    }

    func build(_ tree: MortonTree) {
        guard width > 0 else {
            input = nil
            return
        }
        buildLeaves(tree)
        input = nil
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

    /// Makes every leaf's array, on all cores: what its entries store (laid out from a bulk load's input, or kept, for a
    /// recomputation to check against), its row and its checkpoints.
    private func buildLeaves(_ tree: MortonTree) {
        let (input, leaves, kept, empty) = (input, tree.leaves, store.leaves.arrays, store.emptyLeaf)
        let (entryWidth, first) = (entryWidth, store.entryAt(0))
        // The rows are most of an aggregated index's memory: each array is made at its size, once.
        let arrays = Parallel.map(count: leaves.count, minimumChunk: 1_024) { [self] leaf in
            let entries = leaves[leaf].entries
            var array = input == nil && leaf < kept.count && !kept[leaf].isEmpty ? kept[leaf] : empty
            array.withMutableCursor { array in
                if let input {
                    for (position, entry) in entries.enumerated() {
                        input.write(slot: Int(entry.slot), into: array + first + position * entryWidth)
                    }
                }
                fill(array, entries: entries, values: first)
            }
            return array
        }
        store.reset(leaves: arrays, branchCount: tree.branches.count)
    }

    /// Computes a leaf's row from its entries and what they store (from word `values` of its array on), and its
    /// checkpoints when it keeps them: each bound at an entry 16, 32 or 48 (`UInt64.max` past the end), with the block
    /// of all of the entries below it, copied from the row as it fills.
    private func fill(_ leaf: MutableCursor<UInt64>, entries: ContiguousArray<IndexEntry>, values: Int) {
        let (allWidth, width, entryWidth) = (layout.all.width, checkpointWidth, entryWidth)
        let perLeaf = keepsCheckpoints ? Self.checkpointsPerLeaf : 0
        let checkpoints = leaf + checkpointsAt
        for k in 0..<perLeaf {
            let end = (k + 1) * Self.checkpointStride
            let bound = end < entries.count ? entries[end].key : .max
            checkpoints[k * width] = bound
            // Entries of one key lie on one side of a bound.
            checkpoints[k * width + 1] = UInt64(entries.lowerBound(of: bound))
        }
        layout.clearRow(leaf)
        var next = 0
        for (position, entry) in entries.enumerated() {
            while next < perLeaf, checkpoints[next * width + 1] == UInt64(position) {
                (checkpoints + next * width + 2).update(from: leaf.reading, count: allWidth)
                next += 1
            }
            _ = layout.addEntry(entry, (leaf + values + position * entryWidth).reading, toRow: leaf)
        }
        while next < perLeaf {
            (checkpoints + next * width + 2).update(from: leaf.reading, count: allWidth)
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
                case .values(let values)?: RowLayout.number(of: values[slot]) ?? .nan
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
                field.position < values.reductions.count
                ? Self.number(of: values.reductions[field.position]) ?? .nan : .nan
            target[at + field.numeric] = number.bitPattern
        }
    }

    /// The one number an element's value of a numeric reduction stands for; `nil` for none, or for a value of none of
    /// the four numeric types. (A value stores NaN for none: ``NodeAggregates/validate(_:)`` refuses a NaN.)
    ///
    /// The value's type is opened and compared with each of them, rather than the value cast to each: a cast of an
    /// existential is a call into the runtime, and an aggregated insert made two (a tenth of its instructions).
    static func number(of value: any ClusterAggregate) -> Double? {
        func read<Value: ClusterAggregate>(_ value: Value) -> Double? {
            // `unsafeBitCast` to the very type the value has: a copy.
            if Value.self == Sum.self { return number(of: unsafeBitCast(value, to: Sum.self)) }
            if Value.self == Mean.self { return number(of: unsafeBitCast(value, to: Mean.self).sum) }
            if Value.self == Minimum.self { return unsafeBitCast(value, to: Minimum.self).value }
            if Value.self == Maximum.self { return unsafeBitCast(value, to: Maximum.self).value }
            return nil
        }
        func number(of sum: Sum) -> Double? { sum.count == 0 ? nil : sum.total }
        return read(value)
    }
}
