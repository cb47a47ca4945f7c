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

    private(set) var leaves: ContiguousArray<Leaf> = []
    private(set) var branches: ContiguousArray<Branch> = []
    private var freeLeaves: [Int32] = []
    private var freeBranches: [Int32] = []
    /// The root node: a leaf when `height` is 0, else a branch.
    private(set) var root: Int32 = 0
    private(set) var height = 0
    /// The summary of the whole tree; `nil` when it is empty.
    private(set) var rootSummary: Summary?

    @usableFromInline var count: Int { rootSummary?.count ?? 0 }

    @usableFromInline
    init() {
        leaves = [Leaf(entries: [])]
    }

    /// The Morton keys of `count` coordinates, by position, projected on all cores; `coordinate` is
    /// called from several threads.
    @usableFromInline
    static func keys(count: Int, coordinate: @Sendable (Int) -> Coordinate) -> ContiguousArray<UInt64> {
        Parallel.map(count: count) { QuantizedPoint(coordinate($0)).key }
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
    }

    /// Builds the tree of points in a sorted order whose slots are their positions, reading the
    /// coordinate at a position with `coordinate` (from several threads).
    /// - Complexity: O(*n*); the gathering runs on all cores.
    @usableFromInline
    init(_ order: SortedOrder, coordinate: @Sendable (Int) -> Coordinate) {
        self.init(sortedCount: order.keys.count) { i in
            IndexEntry(key: order.keys[i], coordinate: coordinate(Int(order.positions[i])), slot: order.positions[i])
        }
    }

    /// Builds the tree from `count` entries in key order, `entry(i)` giving the *i*-th (from several
    /// threads), filling leaves to 15/16 and branches to 7/8:
    /// early inserts rarely split a node, and the leaves, which hold almost all the memory, waste little.
    /// - Complexity: O(*n*).
    init(sortedCount count: Int, entry: @Sendable (Int) -> Entry) {
        self.init()
        guard count > 0 else { return }
        let leafFill = Self.leafCapacity * 15 / 16
        let branchFill = Self.branchCapacity * 7 / 8
        let built = Parallel.map(count: (count + leafFill - 1) / leafFill, minimumChunk: 512) { leaf in
            let start = leaf * leafFill
            let end = min(start + leafFill, count)
            let entries = ContiguousArray<Entry>(unsafeUninitializedCapacity: Self.leafCapacity) { slice, initialized in
                for i in start..<end { slice.initializeElement(at: i - start, to: entry(i)) }
                initialized = end - start
            }
            return (Leaf(entries: entries), Summary(nonEmpty: entries))
        }
        leaves = ContiguousArray(built.lazy.map { $0.0 })
        var level = built.indices.map { (node: Int32($0), summary: built[$0].1) }
        var height = 0
        while level.count > 1 {
            var next: [(node: Int32, summary: Summary)] = []
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
    }

    // MARK: - Insert

    /// Adds an entry after every entry with the same key.
    /// - Complexity: O(*L* + *F* log *n*) for the moves in the nodes; summaries update in O(1) a level.
    @usableFromInline
    mutating func insert(_ entry: Entry) {
        let (summary, split) = insert(entry, into: root, height: height, summary: rootSummary)
        if let split {
            let newRoot = allocateBranch(Branch(children: [root, split.node], summaries: [summary, split.summary]))
            root = newRoot
            height += 1
        }
        rootSummary = rootSummary?.inserting(entry) ?? Summary(entry)
    }

    /// Inserts into the subtree at `node`, whose summary is `summary` (`nil` for an empty root), and
    /// returns the subtree's new summary and, if it split, its new right sibling.
    private mutating func insert(
        _ entry: Entry, into node: Int32, height: Int, summary: Summary?
    ) -> (Summary, (node: Int32, summary: Summary)?) {
        let n = Int(node)
        if height == 0 {
            let position = leaves[n].entries.upperBound(of: entry.key)
            leaves[n].entries.insert(entry, at: position)
            guard leaves[n].entries.count > Self.leafCapacity else {
                return (summary?.inserting(entry) ?? Summary(entry), nil)
            }
            let half = leaves[n].entries.count / 2
            var right = ContiguousArray<Entry>()
            right.reserveCapacity(Self.leafCapacity)
            right.append(contentsOf: leaves[n].entries[half...])
            leaves[n].entries.removeSubrange(half...)
            let sibling = allocateLeaf(Leaf(entries: right))
            return (Summary(nonEmpty: leaves[n].entries), (sibling, Summary(nonEmpty: right)))
        }
        let slot = branches[n].slot(forInserting: entry.key)
        let (childSummary, childSplit) = insert(
            entry, into: branches[n].children[slot], height: height - 1, summary: branches[n].summaries[slot])
        branches[n].summaries[slot] = childSummary
        if let childSplit {
            branches[n].children.insert(childSplit.node, at: slot + 1)
            branches[n].summaries.insert(childSplit.summary, at: slot + 1)
        }
        guard branches[n].children.count > Self.branchCapacity else {
            return (summary?.inserting(entry) ?? Summary(nonEmptyCombining: branches[n].summaries), nil)
        }
        let half = branches[n].children.count / 2
        let right = Branch(
            children: ContiguousArray(branches[n].children[half...]),
            summaries: ContiguousArray(branches[n].summaries[half...]))
        branches[n].children.removeSubrange(half...)
        branches[n].summaries.removeSubrange(half...)
        let sibling = allocateBranch(right)
        return (
            Summary(nonEmptyCombining: branches[n].summaries), (sibling, Summary(nonEmptyCombining: right.summaries))
        )
    }

    // MARK: - Remove

    /// Removes the first entry with `key` that `matches` accepts, and returns it.
    /// - Complexity: O(*L* + *F* log *n* + *d*), where *d* is the number of entries sharing the key.
    @usableFromInline
    mutating func remove(key: UInt64, where matches: (Entry) -> Bool) -> Entry? {
        guard let rootSummary, rootSummary.firstKey <= key, key <= rootSummary.lastKey else { return nil }
        guard
            let (removed, summary) = remove(key: key, where: matches, from: root, height: height, summary: rootSummary)
        else { return nil }
        self.rootSummary = summary
        while height > 0, branches[Int(root)].children.count == 1 {
            let only = branches[Int(root)].children[0]
            freeBranch(root)
            root = only
            height -= 1
        }
        return removed
    }

    /// Removes from the subtree at `node`, whose summary is `summary`; returns the entry and the
    /// subtree's new summary, `nil` if it is now empty.
    private mutating func remove(
        key: UInt64, where matches: (Entry) -> Bool, from node: Int32, height: Int, summary: Summary
    ) -> (Entry, Summary?)? {
        let n = Int(node)
        if height == 0 {
            var position = leaves[n].entries.lowerBound(of: key)
            while position < leaves[n].entries.count, leaves[n].entries[position].key == key {
                if matches(leaves[n].entries[position]) {
                    let removed = leaves[n].entries.remove(at: position)
                    guard let first = leaves[n].entries.first, let last = leaves[n].entries.last else {
                        return (removed, nil)
                    }
                    let remaining = summary.removing(removed, firstKey: first.key, lastKey: last.key) {
                        Summary(nonEmpty: leaves[n].entries)
                    }
                    return (removed, remaining)
                }
                position += 1
            }
            return nil
        }
        var slot = branches[n].firstSlot(reaching: key)
        while slot < branches[n].children.count, branches[n].summaries[slot].firstKey <= key {
            if let (removed, childSummary) = remove(
                key: key, where: matches, from: branches[n].children[slot], height: height - 1,
                summary: branches[n].summaries[slot])
            {
                if let childSummary {
                    branches[n].summaries[slot] = childSummary
                    mergeIfSparse(slot: slot, of: n, childHeight: height - 1)
                } else {
                    let child = branches[n].children.remove(at: slot)
                    branches[n].summaries.remove(at: slot)
                    if height == 1 { freeLeaf(child) } else { freeBranch(child) }
                }
                guard let first = branches[n].summaries.first, let last = branches[n].summaries.last else {
                    return (removed, nil)
                }
                let remaining = summary.removing(removed, firstKey: first.firstKey, lastKey: last.lastKey) {
                    Summary(nonEmptyCombining: branches[n].summaries)
                }
                return (removed, remaining)
            }
            slot += 1
        }
        return nil
    }

    /// Calls `body` with every entry in key order, letting it change the entry's slot (and nothing
    /// else: the summaries do not depend on slots).
    /// - Complexity: O(*n*).
    mutating func renumberSlots(_ body: (inout UInt32, IndexEntry) -> Void) {
        guard height > 0 || !leaves[Int(root)].entries.isEmpty else { return }
        renumber(root, height: height, body)
    }

    private mutating func renumber(_ node: Int32, height: Int, _ body: (inout UInt32, IndexEntry) -> Void) {
        let n = Int(node)
        if height == 0 {
            for i in leaves[n].entries.indices {
                let entry = leaves[n].entries[i]
                body(&leaves[n].entries[i].slot, entry)
            }
            return
        }
        for child in branches[n].children { renumber(child, height: height - 1, body) }
    }

    /// The first entry in key order, if any.
    @usableFromInline var firstEntry: Entry? {
        var node = root
        for _ in 0..<height { node = branches[Int(node)].children[0] }
        return leaves[Int(node)].entries.first
    }

    /// Merges the child at `slot` with a neighbour when it is under a quarter full and the two fit in one node.
    private mutating func mergeIfSparse(slot: Int, of n: Int, childHeight: Int) {
        let children = branches[n].children
        func size(_ child: Int32) -> Int {
            childHeight == 0 ? leaves[Int(child)].entries.count : branches[Int(child)].children.count
        }
        let capacity = childHeight == 0 ? Self.leafCapacity : Self.branchCapacity
        guard size(children[slot]) < capacity / 4 else { return }
        let left: Int
        if slot > 0, size(children[slot - 1]) + size(children[slot]) <= capacity {
            left = slot - 1
        } else if slot + 1 < children.count, size(children[slot]) + size(children[slot + 1]) <= capacity {
            left = slot
        } else {
            return
        }
        let (keep, drop) = (Int(children[left]), children[left + 1])
        if childHeight == 0 {
            leaves[keep].entries.append(contentsOf: leaves[Int(drop)].entries)
            freeLeaf(drop)
        } else {
            branches[keep].children.append(contentsOf: branches[Int(drop)].children)
            branches[keep].summaries.append(contentsOf: branches[Int(drop)].summaries)
            freeBranch(drop)
        }
        branches[n].summaries[left].append(branches[n].summaries[left + 1])
        branches[n].children.remove(at: left + 1)
        branches[n].summaries.remove(at: left + 1)
    }

    // MARK: - Node allocation

    private mutating func allocateLeaf(_ leaf: Leaf) -> Int32 {
        if let index = freeLeaves.popLast() {
            leaves[Int(index)] = leaf
            return index
        }
        leaves.append(leaf)
        return Int32(leaves.count - 1)
    }

    private mutating func allocateBranch(_ branch: Branch) -> Int32 {
        if let index = freeBranches.popLast() {
            branches[Int(index)] = branch
            return index
        }
        branches.append(branch)
        return Int32(branches.count - 1)
    }

    private mutating func freeLeaf(_ index: Int32) {
        leaves[Int(index)].entries = []
        freeLeaves.append(index)
    }

    private mutating func freeBranch(_ index: Int32) {
        branches[Int(index)] = Branch(children: [], summaries: [])
        freeBranches.append(index)
    }
}

extension MortonTree.Branch {
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

extension ContiguousArray where Element == IndexEntry {
    /// The first position whose key is not below `key`.
    @inline(__always) func lowerBound(of key: UInt64) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].key < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first position whose key is above `key`.
    @inline(__always) func upperBound(of key: UInt64) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].key <= key { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
