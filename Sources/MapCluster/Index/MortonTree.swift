/// A B+-tree of entries in Morton-key order whose branches keep a ``Summary`` of every child.
///
/// Because every aligned grid cell is one range of keys, the aggregate of a cell is the combination of at most two
/// root-to-leaf paths: whole subtrees inside the range give their stored summaries. That makes a cell query O(*F* log
/// *n* + *L*) for fan-out *F* and leaf size *L*, whatever the cell holds.
///
/// Storage is flat: leaves and branches sit in two arrays and refer to each other by index, with no class instances.
/// Each node owns its own small array, so a copy of the tree shares every node with the original; a mutation of either
/// copies the two node tables (O(*n* / *L*) references) and then only the nodes on the path it changes.
///
/// Entries with equal keys are kept in insertion order. Nodes that fall under a quarter full after a removal are merged
/// with a neighbour when the two fit in one node; the tree is never rebuilt.
@usableFromInline
struct MortonTree: Sendable {
    @usableFromInline typealias Entry = IndexEntry

    static var leafCapacity: Int { 64 }
    static var branchCapacity: Int { 32 }

    struct Leaf: Sendable {
        var entries: ContiguousArray<Entry>
    }

    struct Branch: Sendable {
        var children: ContiguousArray<Int32>
        var summaries: ContiguousArray<Summary>
    }

    // The storage is internal, not private, so that each operation can live in a file of its own
    // (MortonTree+Insert.swift, +Remove, +Visiting, …); only those extensions change it.
    var leaves: ContiguousArray<Leaf> = []
    var branches: ContiguousArray<Branch> = []
    var freeLeaves: [Int32] = []
    var freeBranches: [Int32] = []
    /// The root node: a leaf when `height` is 0, else a branch.
    var root: Int32 = 0
    var height = 0
    /// The summary of the whole tree; `nil` when it is empty.
    var rootSummary: Summary?
    /// The totals and aggregate rows of the coarsest levels' cells, in a tree of ``CoarseCells/keptFrom`` entries or
    /// more.
    var coarseCells: CoarseCells?
    /// The aggregates of an ``AggregateSchema``, kept for every node; `nil` (the default) keeps none and costs nothing.
    var aggregates: NodeAggregates?

    @usableFromInline var count: Int { rootSummary?.count ?? 0 }

    @usableFromInline
    init() {
        leaves = [Leaf(entries: [])]
    }

    /// The Morton keys of `count` coordinates, by position, projected on all cores; `coordinate` is
    /// called from several threads.
    @usableFromInline
    static func keys(count: Int, coordinate: @Sendable (Int) -> Coordinate) -> ContiguousArray<UInt64> {
        Parallel.map(count: count) { GridPosition(coordinate($0)).key }
    }

    /// Keys and the positions they came from, to be sorted together: the first step of a bulk load.
    @usableFromInline
    struct SortedOrder: Sendable {
        var keys: ContiguousArray<UInt64>
        var positions: ContiguousArray<UInt32>

        /// Pairs each key with its position, unsorted.
        @usableFromInline
        init(unsortedKeys keys: consuming ContiguousArray<UInt64>) {
            self.keys = keys
            positions = ContiguousArray(0..<UInt32(self.keys.count))
        }

        /// Sorts by key, in place.
        /// - Complexity: O(*n*), by ``RadixSort``.
        @usableFromInline
        mutating func sort() {
            RadixSort.sort(keys: &keys, payloads: &positions)
        }

        /// The positions, in key order once sorted; the keys go with the order.
        @usableFromInline
        consuming func sortedPositions() -> ContiguousArray<UInt32> { positions }
    }

    /// Builds the tree of the entries at `positions`, in key order, `entry` making the one at a position (from several
    /// threads).
    ///
    /// The caller reads each entry's key again (from its element store) rather than keeping the sorted keys beside the
    /// positions, and the positions go once the leaves are made, before their summaries: the leaves are the bulk load's
    /// high-water mark, and neither the keys (8 bytes an element) nor the summaries are alive beside them (peak RSS of a
    /// million points 9 + 2 MB lower).
    /// - Complexity: O(*n*); the gathering runs on all cores.
    @usableFromInline
    init(sortedPositions positions: consuming ContiguousArray<UInt32>, entry: @Sendable (Int) -> Entry) {
        let leaves = Self.leaves(sortedPositions: positions, entry: entry)
        _ = consume positions
        self.init(leaves: leaves)
    }

    /// Keeps `aggregates` from now on, computing every node's values from the values its columns hold by slot.
    @usableFromInline
    mutating func attach(_ aggregates: NodeAggregates) {
        aggregates.build(self)
        self.aggregates = aggregates
        // Again, with the cells' rows.
        if coarseCells != nil { coarseCells = CoarseCells(of: self) }
    }

    /// Makes the next inserted entry store the default aggregate values (a new element), or what the last removed one
    /// stored (an element moved); nothing when the tree keeps no aggregates.
    @usableFromInline
    mutating func prepareAggregateValues(moving: Bool) {
        guard aggregates != nil else { return }
        aggregates?.makeUnique()
        if moving { aggregates?.prepareLastRemoved() } else { aggregates?.prepareDefaults() }
    }

    /// Whether the tree keeps aggregates.
    @usableFromInline var keepsAggregates: Bool { aggregates != nil }

    /// The aggregates of no cluster, made once; `nil` when the tree keeps none.
    @usableFromInline var emptyAggregates: ClusterAggregateTable? {
        aggregates.map { ClusterAggregateTable($0.emptyAnswer) }
    }

    /// The leaves of the entries at `positions`, in key order, `entry` making the one at a position (from several
    /// threads), each filled to 15/16: early inserts rarely split a leaf, and the leaves, which hold almost all the
    /// memory, waste little.
    /// - Complexity: O(*n*).
    private static func leaves(
        sortedPositions positions: ContiguousArray<UInt32>, entry: @Sendable (Int) -> Entry
    ) -> ContiguousArray<Leaf> {
        let (count, leafFill) = (positions.count, leafCapacity * 15 / 16)
        return Parallel.map(count: (count + leafFill - 1) / leafFill, minimumChunk: 512) { leaf in
            let start = leaf * leafFill
            let end = min(start + leafFill, count)
            return Leaf(
                entries: ContiguousArray(unsafeUninitializedCapacity: leafCapacity) { slice, initialized in
                    for i in start..<end { slice.initializeElement(at: i - start, to: entry(Int(positions[i]))) }
                    initialized = end - start
                })
        }
    }

    /// Builds the tree over leaves of entries in key order, each non-empty, its branches filled to 7/8.
    /// - Complexity: O(*n*); the leaves' summaries are added up on all cores.
    private init(leaves: ContiguousArray<Leaf>) {
        self.init()
        guard !leaves.isEmpty else { return }
        let branchFill = Self.branchCapacity * 7 / 8
        var level = Parallel.map(count: leaves.count, minimumChunk: 512) { leaf in
            (node: Int32(leaf), summary: Summary(nonEmpty: leaves[leaf].entries))
        }
        self.leaves = leaves
        var height = 0
        while level.count > 1 {
            var next: ContiguousArray<(node: Int32, summary: Summary)> = []
            next.reserveCapacity((level.count + branchFill - 1) / branchFill)
            var first = 0
            while first < level.count {
                let last = min(first + branchFill, level.count)
                let children = ContiguousArray(level[first..<last].map(\.node))
                let summaries = ContiguousArray(level[first..<last].map(\.summary))
                next.append((Int32(branches.count), Summary(nonEmptyCombining: summaries)))
                branches.append(Branch(children: children, summaries: summaries))
                first = last
            }
            level = next
            height += 1
        }
        root = level[0].node
        rootSummary = level[0].summary
        self.height = height
        if count >= CoarseCells.keptFrom { coarseCells = CoarseCells(of: self) }
    }

    // MARK: - Node allocation

    mutating func allocateLeaf(_ leaf: Leaf) -> Int32 {
        if let index = freeLeaves.popLast() {
            leaves[Int(index)] = leaf
            return index
        }
        leaves.append(leaf)
        return Int32(leaves.count - 1)
    }

    mutating func allocateBranch(_ branch: Branch) -> Int32 {
        if let index = freeBranches.popLast() {
            branches[Int(index)] = branch
            return index
        }
        branches.append(branch)
        return Int32(branches.count - 1)
    }

    mutating func freeLeaf(_ index: Int32) {
        leaves[Int(index)].entries = []
        freeLeaves.append(index)
    }

    mutating func freeBranch(_ index: Int32) {
        branches[Int(index)] = Branch(children: [], summaries: [])
        freeBranches.append(index)
    }
}

extension MortonTree.Branch {
    /// The totals of the children in `slots`, a non-empty run.
    func totals(of slots: Range<Int>) -> CellTotals {
        var totals = CellTotals(summaries[slots.lowerBound])
        for slot in slots.dropFirst() { totals.append(summaries[slot]) }
        return totals
    }

    /// The first child from `slot` on whose last key is above `key`, or the child count when there is none.
    func firstSlot(from slot: Int, passing key: UInt64) -> Int {
        var low = slot
        var high = summaries.count
        while low < high {
            let mid = (low + high) / 2
            if summaries[mid].lastKey <= key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The child to insert `key` into: the last whose first key is not above it.
    @inline(__always) func slot(forInserting key: UInt64) -> Int {
        var low = 1
        var high = summaries.count
        while low < high {
            let mid = (low + high) / 2
            if summaries[mid].firstKey <= key { low = mid + 1 } else { high = mid }
        }
        return low - 1
    }

    /// The first child whose last key is not below `key`, or the child count when there is none.
    @inline(__always) func firstSlot(reaching key: UInt64) -> Int {
        var low = 0
        var high = summaries.count
        while low < high {
            let mid = (low + high) / 2
            if summaries[mid].lastKey < key { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

extension RandomAccessCollection where Element == IndexEntry, Index == Int {
    /// The first position whose key is not below `key`.
    @inline(__always) func lowerBound(of key: UInt64) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let mid = (low + high) / 2
            if self[mid].key < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first position whose key is above `key`.
    @inline(__always) func upperBound(of key: UInt64) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let mid = (low + high) / 2
            if self[mid].key <= key { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
