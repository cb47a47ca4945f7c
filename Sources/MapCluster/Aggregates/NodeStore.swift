/// What a tree keeps beside its nodes for a column of aggregates (the rows, ``NodeRows``; a user's reduction,
/// ``ReductionColumn``), by node id: one array per node, as the tree keeps its nodes, so that a copy of the tree (a
/// reader's snapshot) shares them all and a change copies only those on its path.
///
/// A leaf's array holds the leaf's own values first (``leafHead`` of them: a row and its checkpoints, or a reduction's
/// groups), then what its entries store, ``entryWidth`` values each, room for ``window`` entries; side by side, so that
/// a change to a leaf reads and writes one allocation. A branch's array holds its own values. The store moves what the
/// entries store as the tree tells it they move (``AggregateColumn``); what a node's own values are is its column's
/// business.
struct NodeStore<Element: Sendable>: Sendable {
    /// The room for entries in a leaf's array: a leaf holds one entry over its capacity before it splits.
    static var window: Int { MortonTree.leafCapacity + 1 }

    /// How many of a leaf's values are its own, before what its entries store.
    let leafHead: Int
    /// Values each entry stores.
    let entryWidth: Int
    /// What the room no entry holds is filled with: the room a removal or a split leaves holds nothing of an entry
    /// that went (a user's value may hold references).
    let filler: Element
    /// Each leaf's array, by leaf id.
    private(set) var leaves: ArrayTable<Element>
    /// Each branch's array, by branch id.
    private(set) var branches: ArrayTable<Element>

    /// A store of no node, whose leaves start as `head` (their own values of no member) and room for their entries
    /// full of `filler`, and branches as `emptyBranch`.
    init(head: ContiguousArray<Element>, entryWidth: Int, filler: Element, emptyBranch: ContiguousArray<Element>) {
        leafHead = head.count
        self.entryWidth = entryWidth
        self.filler = filler
        var emptyLeaf = head
        emptyLeaf.append(contentsOf: repeatElement(filler, count: Self.window * entryWidth))
        // One value at least, so that its base address is never nil.
        if emptyLeaf.isEmpty { emptyLeaf.append(filler) }
        leaves = ArrayTable(empty: emptyLeaf)
        branches = ArrayTable(empty: emptyBranch)
    }

    /// A leaf's array of no member.
    var emptyLeaf: ContiguousArray<Element> { leaves.empty }

    /// Where the values of the entry at `position` start in its leaf's array.
    @inline(__always) func entryAt(_ position: Int) -> Int { leafHead + position * entryWidth }

    /// A node's array.
    @inline(__always) func node(_ node: Int32, isLeaf: Bool) -> ContiguousArray<Element> {
        isLeaf ? leaves[Int(node)] : branches[Int(node)]
    }

    /// Calls `body` with a node's array to change, made as one of no member when the node has none yet.
    @inline(__always) mutating func withNode<Result>(
        _ node: Int32, isLeaf: Bool, _ body: (MutableCursor<Element>) -> Result
    ) -> Result {
        isLeaf ? leaves.withArray(Int(node), body) : branches.withArray(Int(node), body)
    }

    /// Sets a branch's array.
    mutating func setBranch(_ branch: Int32, to values: ContiguousArray<Element>) {
        branches[Int(branch)] = values
    }

    /// Sets every leaf's array (a bulk load's), and makes every branch's one of no member until it is set.
    mutating func reset(leaves: ContiguousArray<ContiguousArray<Element>>, branchCount: Int) {
        self.leaves.arrays = leaves
        branches.arrays = ContiguousArray(repeating: [], count: branchCount)
    }

    // MARK: What the entries store

    /// An entry was inserted at `position` of a leaf, which now holds `count`: it stores `prepared(j)` for each of its
    /// `entryWidth` values.
    mutating func inserted(at position: Int, of leaf: Int32, count: Int, storing prepared: (Int) -> Element) {
        guard entryWidth > 0 else { return }
        let (width, first) = (entryWidth, entryAt(0))
        withNode(leaf, isLeaf: true) { values in
            values.shift(from: first + position * width, count: (count - 1 - position) * width, by: width)
            for j in 0..<width { values[first + position * width + j] = prepared(j) }
        }
    }

    /// The entry at `position` of a leaf, which held `count`, was removed: `removed(j, value)` takes each of the values
    /// it stored.
    mutating func removed(at position: Int, of leaf: Int32, count: Int, into removed: (Int, Element) -> Void) {
        guard entryWidth > 0 else { return }
        let (width, first, filler) = (entryWidth, entryAt(0), filler)
        withNode(leaf, isLeaf: true) { values in
            for j in 0..<width { removed(j, values[first + position * width + j]) }
            values.shift(from: first + (position + 1) * width, count: (count - 1 - position) * width, by: -width)
            for i in (first + (count - 1) * width)..<(first + count * width) { values[i] = filler }
        }
    }

    /// A leaf of `count` entries moved those from `half` on to a new sibling.
    mutating func split(_ leaf: Int32, at half: Int, count: Int, into sibling: Int32) {
        guard entryWidth > 0 else { return }
        let (from, first, moved, filler) = (entryAt(half), entryAt(0), (count - half) * entryWidth, filler)
        var moving = ContiguousArray<Element>()
        moving.reserveCapacity(moved)
        withNode(leaf, isLeaf: true) { values in
            for i in from..<(from + moved) {
                moving.append(values[i])
                values[i] = filler
            }
        }
        withNode(sibling, isLeaf: true) { sibling in
            moving.withCursor { (sibling + first).update(from: $0, count: moved) }
        }
    }

    /// A leaf of `count` entries took the `dropCount` entries of another, whose array goes.
    mutating func merged(_ drop: Int32, count dropCount: Int, into keep: Int32, count: Int) {
        let dropped = leaves[Int(drop)]
        leaves[Int(drop)] = []
        guard entryWidth > 0 else { return }
        let (to, first, moved) = (entryAt(count), entryAt(0), dropCount * entryWidth)
        withNode(keep, isLeaf: true) { keep in
            dropped.withCursor { (keep + to).update(from: $0 + first, count: moved) }
        }
    }
}

/// Arrays by id (a tree's nodes, the coarse cells), each an allocation of its own, so that a copy of the table (a
/// reader's snapshot) shares them all and a change copies only the arrays it changes.
///
/// An id's array holds nothing until it is first changed, when it is made from ``empty`` (the values of no member).
struct ArrayTable<Element: Sendable>: Sendable {
    /// What an id's array is made from when it is first changed.
    let empty: ContiguousArray<Element>
    /// Each id's array; empty for an id whose array is not made.
    var arrays: ContiguousArray<ContiguousArray<Element>> = []

    /// An id's array; setting one grows the table to hold it.
    @inline(__always) subscript(id: Int) -> ContiguousArray<Element> {
        get { arrays[id] }
        set {
            grow(toHold: id)
            arrays[id] = newValue
        }
    }

    /// Calls `body` with an id's array to change, made from ``empty`` when it is not yet.
    @inline(__always) mutating func withArray<Result>(_ id: Int, _ body: (MutableCursor<Element>) -> Result) -> Result {
        grow(toHold: id)
        if arrays[id].isEmpty { arrays[id] = empty }
        return arrays[id].withMutableCursor(body)
    }

    /// Grows the table to hold id `n` (its array not made).
    @inline(__always) private mutating func grow(toHold n: Int) {
        if arrays.count <= n { arrays.append(contentsOf: repeatElement([], count: n + 1 - arrays.count)) }
    }
}
