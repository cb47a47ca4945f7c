import Dispatch

/// The rows of a tree's nodes (``RowLayout``), and what each entry stores for them, kept current through every change
/// of the tree (the coarse cells keep their own rows, ``CoarseCells``).
///
/// A node's row lives at `node * width` in the array of its kind (leaves, branches), so a node keeps its row wherever it
/// sits in its parent. What each entry stores, `entryWidth` doubles, lies beside the leaf's entries (``EntryValues``).
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
    /// The room per leaf in `stored`.
    static var window: Int { EntryValues<Double>.window }

    // Changed only by the tree that owns the rows, which copies shared ones first (no access overlaps another): the
    // dynamic exclusivity checks of class properties would cost more than the work of an update.
    @exclusivity(unchecked) var leafRows: ContiguousArray<UInt64> = []
    @exclusivity(unchecked) var branchRows: ContiguousArray<UInt64> = []
    /// What each entry stores: its weight, when weighted, then a double per numeric reduction (NaN for none).
    @exclusivity(unchecked) var stored: EntryValues<Double>
    /// Each leaf's prefix totals, so that a range that ends inside a leaf is answered from the nearest of them and a
    /// few entries (``AggregateRowsVisitor``): ``checkpointsPerLeaf`` checkpoints a leaf, ``checkpointWidth`` words
    /// each from `(leaf * checkpointsPerLeaf + k) * checkpointWidth`.
    ///
    /// A checkpoint is a bound key, how many of the leaf's entries lie below it (a prefix, entries being in key order),
    /// and their block of all (``RowLayout/all``). Computing a leaf's row sets the bounds at its 16th, 32nd and 48th
    /// entries (past its end, at `UInt64.max`). An insert or a removal below a bound adds or takes out the entry, in
    /// O(1), exactly; the bound stays, so the prefix grows or shrinks with what lies below it until the leaf is next
    /// computed (a split or a merge).
    ///
    /// Kept only when the block of all is sums (``keepsCheckpoints``): a minimum or maximum can't be taken out.
    @exclusivity(unchecked) var checkpoints: ContiguousArray<UInt64> = []
    /// A bulk load's values by slot, until ``build(_:)`` lays them out.
    @exclusivity(unchecked) var input: BulkValues?
    /// What an element without values stores: weight 1, no value.
    let defaults: ContiguousArray<Double>
    /// A row of no member, to grow the row arrays with.
    let emptyRow: ContiguousArray<UInt64>

    /// How many entries lie between a leaf's checkpoints when its row is computed.
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

    init(layout: RowLayout) {
        self.layout = layout
        keepsCheckpoints = layout.all.width > 0 && layout.all.mins == 0 && layout.all.maxes == 0
        // Every array of values holds at least one double, so that its base address is never nil.
        var defaults = ContiguousArray<Double>(repeating: .nan, count: max(1, layout.entryWidth))
        if layout.isWeighted { defaults[0] = 1 }
        self.defaults = defaults
        emptyRow = layout.emptyRow
        stored = EntryValues(width: layout.entryWidth, filler: .nan, defaults: defaults)
    }

    func copy() -> any AggregateColumn {
        let copy = NodeRows(layout: layout)
        copy.leafRows = leafRows
        copy.branchRows = branchRows
        copy.stored = stored
        copy.checkpoints = checkpoints
        copy.input = input
        return copy
    }

    var width: Int { layout.width }
    var entryWidth: Int { layout.entryWidth }

    // MARK: Stored values

    func prepareDefault() { stored.prepare(defaults) }

    func prepareLastRemoved() { stored.prepareLastRemoved() }

    /// Makes the next inserted entry store an element's validated values.
    func prepare(_ values: ElementValues) {
        stored.prepared.withMutableCursor { target in
            layout.write(values, into: target)
        }
    }

    /// Where an entry's stored values start.
    @inline(__always) func storedAt(_ position: Int, of leaf: Int32) -> Int { stored.start(position, of: leaf) }

    func inserted(at position: Int, of leaf: Int32, count: Int) {
        stored.inserted(at: position, of: leaf, count: count)
    }

    func removed(at position: Int, of leaf: Int32, count: Int) { stored.removed(at: position, of: leaf, count: count) }

    /// Adds (`sign` 1) or takes out (-1) an entry, which stores `values`, to or from the checkpoints of its leaf whose
    /// bounds lie above it.
    private func moveCheckpoints(_ entry: IndexEntry, of leaf: Int32, values: Cursor<Double>, sign: Int64) {
        guard keepsCheckpoints else { return }
        let (at, width) = (checkpointsStart(growingToHold: leaf), checkpointWidth)
        checkpoints.withMutableCursor { checkpoints in
            for k in 0..<Self.checkpointsPerLeaf {
                let checkpoint = checkpoints + at + k * width
                guard entry.key < checkpoint[0] else { continue }
                checkpoint[1] &+= UInt64(bitPattern: sign)
                _ = layout.addEntry(entry, values, toAll: checkpoint + 2, sign: sign, precise: true)
            }
        }
    }

    /// Where a leaf's checkpoints start, the array grown to hold them.
    @inline(__always) private func checkpointsStart(growingToHold leaf: Int32) -> Int {
        let size = Self.checkpointsPerLeaf * checkpointWidth
        let needed = (Int(leaf) + 1) * size
        if checkpoints.count < needed {
            checkpoints.append(contentsOf: repeatElement(0, count: needed - checkpoints.count))
        }
        return Int(leaf) * size
    }

    func split(_ leaf: Int32, at half: Int, count: Int, into sibling: Int32) {
        stored.split(leaf, at: half, count: count, into: sibling)
    }

    func merged(_ drop: Int32, count dropCount: Int, into keep: Int32, count: Int) {
        stored.merged(drop, count: dropCount, into: keep, count: count)
    }

    // MARK: Node rows

    /// The rows of the nodes of one kind, grown to hold `node`.
    @inline(__always) private func grow(_ rows: inout ContiguousArray<UInt64>, toHold node: Int32) {
        while rows.count < (Int(node) + 1) * width { rows.append(contentsOf: emptyRow) }
    }

    /// Calls `body` with the row of a node (grown to hold it).
    @inline(__always) private func withRow<Result>(
        of node: Int32, isLeaf: Bool, _ body: (MutableCursor<UInt64>) -> Result
    ) -> Result {
        if isLeaf {
            grow(&leafRows, toHold: node)
            return leafRows.withMutableCursor { body($0 + Int(node) * width) }
        }
        grow(&branchRows, toHold: node)
        return branchRows.withMutableCursor { body($0 + Int(node) * width) }
    }

    func added(_ entry: IndexEntry, to node: Int32, isLeaf: Bool) {
        guard width > 0 else { return }
        stored.prepared.withCursor { values in
            withRow(of: node, isLeaf: isLeaf) { row in _ = layout.addEntry(entry, values, toRow: row) }
            if isLeaf { moveCheckpoints(entry, of: node, values: values, sign: 1) }
        }
    }

    func removed(_ entry: IndexEntry, from node: Int32, height: Int, in tree: MortonTree) {
        guard width > 0 else { return }
        let stale = stored.lastRemoved.withCursor { values in
            if height == 0 { moveCheckpoints(entry, of: node, values: values, sign: -1) }
            return withRow(of: node, isLeaf: height == 0) { layout.addEntry(entry, values, toRow: $0, sign: -1) }
        }
        if stale.all { recompute(node, height: height, category: nil, in: tree) }
        if stale.categories != 0 { recompute(node, height: height, category: Int(entry.category) - 1, in: tree) }
    }

    func rebuild(_ node: Int32, height: Int, in tree: MortonTree) {
        guard width > 0 else { return }
        // One pass over what lies below: each entry into its two blocks, or each child's whole row.
        let layout = layout
        if height == 0 {
            let (entries, entryWidth) = (tree.leaves[Int(node)].entries, entryWidth)
            let checkpointsAt = keepsCheckpoints ? checkpointsStart(growingToHold: node) : nil
            stored.values.withCursor { stored in
                checkpoints.withMutableCursor { checkpoints in
                    withRow(of: node, isLeaf: true) { row in
                        Self.fill(
                            row, checkpoints: checkpointsAt.map { checkpoints + $0 }, layout: layout,
                            entries: entries, values: stored + storedAt(0, of: node), entryWidth: entryWidth)
                    }
                }
            }
            return
        }
        let children = tree.branches[Int(node)].children
        withChildRows(of: node, height: height) { childRows, row in
            layout.clearRow(row)
            for child in children { layout.mergeRow(childRows + Int(child) * width, into: row) }
        }
    }

    /// Calls `body` with the rows of a branch's children and the branch's own row, grown to hold it.
    ///
    /// The branch rows are lent once for both when the children are branches: a second reference to them, held while
    /// they change, would have them copied whole (a megabyte at a million entries) for every branch added up again.
    @inline(__always) private func withChildRows(
        of node: Int32, height: Int, _ body: (Cursor<UInt64>, MutableCursor<UInt64>) -> Void
    ) {
        grow(&branchRows, toHold: node)
        let at = Int(node) * width
        if height == 1 {
            leafRows.withCursor { children in branchRows.withMutableCursor { body(children, $0 + at) } }
        } else {
            branchRows.withMutableCursor { rows in body(rows.reading, rows + at) }
        }
    }

    /// Recomputes one block of a node (a category's, or that of all when `category` is `nil`) from what lies below it,
    /// whose rows are current.
    private func recompute(_ node: Int32, height: Int, category: Int?, in tree: MortonTree) {
        let layout = layout
        let block = category.map { layout.categoryBlock($0) } ?? 0
        let shape = category == nil ? layout.all : layout.category
        if height == 0 {
            let entries = tree.leaves[Int(node)].entries
            stored.values.withCursor { stored in
                withRow(of: node, isLeaf: true) { row in
                    RowLayout.clear(shape, at: row + block)
                    for (position, entry) in entries.enumerated() {
                        let values = stored + storedAt(position, of: node)
                        if let category {
                            guard Int(entry.category) - 1 == category else { continue }
                            _ = layout.addEntry(entry, values, toCategory: row + block, precise: true)
                        } else {
                            _ = layout.addEntry(entry, values, toAll: row, precise: true)
                        }
                    }
                }
            }
            return
        }
        let children = tree.branches[Int(node)].children
        withChildRows(of: node, height: height) { childRows, row in
            RowLayout.clear(shape, at: row + block)
            for child in children {
                RowLayout.merge(shape, childRows + Int(child) * width + block, into: shape, row + block, precise: true)
            }
        }
    }

    func build(_ tree: MortonTree) {
        // A bulk load lays out its input; otherwise (a recomputation to check against) what each entry stores stays.
        if input != nil {
            stored.reset(leaves: tree.leaves.count)
        } else if !tree.leaves.isEmpty {
            stored.grow(toHold: Int32(tree.leaves.count - 1))
        }
        // Reserved to the word: these rows are most of an aggregated index's memory, and growing by doubling would
        // briefly hold half as much again.
        leafRows = ContiguousArray(repeating: 0, count: max(1, tree.leaves.count * width))
        checkpoints = ContiguousArray(
            repeating: 0,
            count: max(1, keepsCheckpoints ? tree.leaves.count * Self.checkpointsPerLeaf * checkpointWidth : 0))
        branchRows = []
        branchRows.reserveCapacity(tree.branches.count * width)
        for _ in 0..<tree.branches.count { branchRows.append(contentsOf: emptyRow) }
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

    /// Lays out what each entry of a bulk load stores and computes every leaf's row, on all cores: each leaf writes its
    /// own window and row.
    private func buildLeaves(_ tree: MortonTree) {
        guard width > 0 || input != nil else { return }
        let (layout, input, leaves) = (layout, input, tree.leaves)
        let (width, entryWidth, window, keepsCheckpoints) = (width, entryWidth, Self.window, keepsCheckpoints)
        let checkpointsSize = Self.checkpointsPerLeaf * checkpointWidth
        stored.values.withMutableCursor { stored in
            leafRows.withMutableCursor { rows in
                checkpoints.withMutableCursor { checkpoints in
                    // Chunks of leaves write disjoint windows, rows and checkpoints of buffers that outlive
                    // `concurrentPerform`.
                    nonisolated(unsafe) let storedBase = stored
                    nonisolated(unsafe) let rowsBase = rows
                    nonisolated(unsafe) let checkpointsBase = keepsCheckpoints ? checkpoints : nil
                    let chunks = min(max(leaves.count / 1_024, 1), 16)
                    DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                        for leaf in (leaves.count * chunk / chunks)..<(leaves.count * (chunk + 1) / chunks) {
                            let entries = leaves[leaf].entries
                            let base = storedBase + leaf * window * entryWidth
                            if let input {
                                for (position, entry) in entries.enumerated() {
                                    input.write(slot: Int(entry.slot), into: base + position * entryWidth)
                                }
                            }
                            guard width > 0 else { continue }
                            Self.fill(
                                rowsBase + leaf * width,
                                checkpoints: checkpointsBase.map { $0 + leaf * checkpointsSize }, layout: layout,
                                entries: entries, values: base.reading, entryWidth: entryWidth)
                        }
                    }
                }
            }
        }
    }

    /// Computes a leaf's row from its entries and what they store (from `values` on), and its checkpoints when given:
    /// each bound at an entry 16, 32 or 48 (`UInt64.max` past the end), with the block of all of the entries below it,
    /// copied from the row as it fills.
    private static func fill(
        _ row: MutableCursor<UInt64>, checkpoints: MutableCursor<UInt64>?, layout: RowLayout,
        entries: ContiguousArray<IndexEntry>, values: Cursor<Double>, entryWidth: Int
    ) {
        let (allWidth, width) = (layout.all.width, checkpointWidth(layout))
        if let checkpoints {
            for k in 0..<checkpointsPerLeaf {
                let end = (k + 1) * checkpointStride
                let bound = end < entries.count ? entries[end].key : .max
                checkpoints[k * width] = bound
                // Entries of one key lie on one side of a bound.
                checkpoints[k * width + 1] = UInt64(entries.lowerBound(of: bound))
            }
        }
        layout.clearRow(row)
        var next = 0
        for (position, entry) in entries.enumerated() {
            while let checkpoints, next < checkpointsPerLeaf, checkpoints[next * width + 1] == UInt64(position) {
                (checkpoints + next * width + 2).update(from: row.reading, count: allWidth)
                next += 1
            }
            _ = layout.addEntry(entry, values + position * entryWidth, toRow: row)
        }
        while let checkpoints, next < checkpointsPerLeaf {
            (checkpoints + next * width + 2).update(from: row.reading, count: allWidth)
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
    @inline(__always) func write(slot: Int, into target: MutableCursor<Double>) {
        var at = 0
        if isWeighted {
            target[0] = weights?[slot] ?? 1
            at = 1
        }
        for (i, column) in columns.enumerated() {
            target[at + i] =
                switch column {
                case .numbers(let numbers)?: numbers[slot] ?? .nan
                case .values(let values)?: RowLayout.number(of: values[slot])
                case nil: .nan
                }
        }
    }
}

extension RowLayout {
    /// Writes what an element with validated `values` stores.
    func write(_ values: ElementValues, into target: MutableCursor<Double>) {
        var at = 0
        if isWeighted {
            target[0] = values.weight
            at = 1
        }
        for field in fields {
            target[at + field.numeric] =
                field.position < values.reductions.count ? Self.number(of: values.reductions[field.position]) : .nan
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
