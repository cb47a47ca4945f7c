/// A value the tree keeps for every node and group of a ``NodeColumn``: the merge of its entries' values.
protocol NodeValue: Sendable {
    /// What each element stores for it.
    associatedtype Stored: Sendable
    /// The value of no entry.
    static var identity: Self { get }
    /// Adds another value's entries (associative and commutative).
    mutating func merge(_ other: Self)
    /// The value of one entry whose element stores `stored`.
    init(entry: IndexEntry, stored: Stored)
    /// Takes out the value of one of its entries, when that can be done exactly; returns false (and changes nothing)
    /// when the value must be recomputed from the rest instead, as for a merge without an inverse.
    mutating func remove(_ one: Self) -> Bool
}

extension NodeValue {
    func remove(_ one: Self) -> Bool { false }
}

/// One aggregate of an index, kept for every node of its tree, and what each element stores for it.
///
/// The values of a node are `groupCount` consecutive ones: one per category (when the column is kept per category),
/// then, when ``hasAllGroup``, the value of every entry. A node's values live at `node * groupCount` in the array of
/// its kind (leaves, branches), so a node keeps its values wherever it sits in its parent, and a freed node's are
/// overwritten when the node is reused.
///
/// What each element stores lies in leaf order, beside the leaf's entries (a window of ``window`` per leaf), so that
/// the scans of a leaf read consecutive memory: looking values up by slot made a view's aggregates a cache miss per
/// entry.
///
/// The tree tells its columns of each change, bottom-up (``MortonTree/insert(_:)``, ``MortonTree/remove(key:where:)``):
/// an insert merges the entry's value into its groups in the nodes on its path, O(1) a level; a removal recomputes the
/// entry's groups of the nodes on its path from what lies below them, O(*F* + *L*) a level, since a merge has no
/// inverse; a split or a merge of nodes recomputes the nodes it makes.
///
/// Columns are classes, so that the non-generic tree holds columns of any value type; the tree copies a column before
/// changing it when another tree shares it (``NodeAggregates/makeUnique()``), so trees keep their value semantics.
protocol AggregateColumn: AnyObject, Sendable {
    /// A copy that shares nothing mutable with this one.
    func copy() -> any AggregateColumn
    /// Makes the next inserted entry store the default value.
    func prepareDefault()
    /// Makes the next inserted entry store what the last removed one stored (a move).
    func prepareLastRemoved()
    /// An entry was inserted at `position` of a leaf, which now holds `count`: it stores the prepared value.
    func inserted(at position: Int, of leaf: Int32, count: Int)
    /// The entry at `position` of a leaf, which held `count`, was removed.
    func removed(at position: Int, of leaf: Int32, count: Int)
    /// A leaf of `count` entries moved those from `half` on to a new sibling.
    func split(_ leaf: Int32, at half: Int, count: Int, into sibling: Int32)
    /// A leaf of `count` entries took the `dropCount` entries of another.
    func merged(_ drop: Int32, count dropCount: Int, into keep: Int32, count: Int)
    /// An entry was added below a node.
    func added(_ entry: IndexEntry, to node: Int32, isLeaf: Bool)
    /// An entry was removed from below a node: its groups are recomputed from the node's entries or children.
    func removed(_ entry: IndexEntry, from node: Int32, height: Int, in tree: MortonTree)
    /// Recomputes every group of a node, whose children's values are current.
    func rebuild(_ node: Int32, height: Int, in tree: MortonTree)
    /// Computes every node's groups of a tree built in bulk.
    func build(_ tree: MortonTree)
}

/// A column of one of the user's reductions, whose values come in and go out type-erased.
protocol UserReductionColumn: AggregateColumn {
    /// A copy that shares nothing mutable with this one.
    func copyReduction() -> any UserReductionColumn
    /// Stores a reduction's values of a bulk load's elements, by slot (identities for `nil`).
    func storeInput(_ values: ReductionValues?)
    /// Makes the next inserted entry store a reduction's value.
    func prepare(erased value: any ClusterAggregate)
    /// A reduction's value over the entries in each of `ranges` (disjoint, in key order) that `takes` accepts, merged
    /// over `groups`.
    func reductions(
        ranges: [ClosedRange<UInt64>], groups: [Int], where takes: ((IndexEntry) -> Bool)?, tree: MortonTree
    ) -> [any ClusterAggregate]
    /// Whether every node's values equal a recomputation from the values its entries store, for
    /// ``MortonTree/_checkInvariants()``.
    func matchesRecomputation(in tree: MortonTree) -> Bool
}

/// The groups a query reads of a column that keeps `categoryCount` categories' groups (and a group of all, if
/// `hasAllGroup`): those of the selected categories, or, without a filter, the group of all when there is one and every
/// category's otherwise.
func aggregateGroups(for categories: CategorySet?, categoryCount: Int, hasAllGroup: Bool) -> [Int] {
    guard let categories else { return hasAllGroup ? [categoryCount] : Array(0..<categoryCount) }
    return categories.positions.filter { $0 < categoryCount }
}

class NodeColumn<Value: NodeValue>: AggregateColumn, @unchecked Sendable {
    /// The number of categories whose groups it keeps (0 for none).
    let categoryCount: Int
    /// Whether its last group is the value of every entry.
    let hasAllGroup: Bool
    /// Values per node.
    let groupCount: Int
    /// What a new element stores.
    let defaultStored: Value.Stored
    /// The room per leaf in `leafStored`: a leaf holds one entry over its capacity before it splits.
    static var window: Int { MortonTree.leafCapacity + 1 }

    // Changed only by the tree that owns the column, which copies a shared one first (no access overlaps another):
    // the dynamic exclusivity checks of class properties would cost more than the work of an update.
    /// What each entry stores, at `leaf * window + position`.
    @exclusivity(unchecked) var leafStored: ContiguousArray<Value.Stored> = []
    @exclusivity(unchecked) var leafValues: ContiguousArray<Value> = []
    @exclusivity(unchecked) var branchValues: ContiguousArray<Value> = []
    /// What the next inserted entry stores.
    @exclusivity(unchecked) var prepared: Value.Stored
    /// What the last removed entry stored.
    @exclusivity(unchecked) var lastRemoved: Value.Stored
    /// A bulk load's value of a slot, until ``build(_:)`` lays them out: read from the caller's columns, so that no
    /// copy of them by slot is made on the way.
    @exclusivity(unchecked) var input: ((Int) -> Value.Stored)?

    init(categoryCount: Int, hasAllGroup: Bool, defaultStored: Value.Stored) {
        precondition(categoryCount > 0 || hasAllGroup, "a column keeps some group")
        self.categoryCount = categoryCount
        self.hasAllGroup = hasAllGroup
        self.groupCount = categoryCount + (hasAllGroup ? 1 : 0)
        self.defaultStored = defaultStored
        prepared = defaultStored
        lastRemoved = defaultStored
    }

    /// Copies the state of `other` into this new column.
    func copyState(of other: NodeColumn) {
        leafStored = other.leafStored
        leafValues = other.leafValues
        branchValues = other.branchValues
        prepared = other.prepared
        lastRemoved = other.lastRemoved
        input = other.input
    }

    func copy() -> any AggregateColumn {
        let copy = NodeColumn(categoryCount: categoryCount, hasAllGroup: hasAllGroup, defaultStored: defaultStored)
        copy.copyState(of: self)
        return copy
    }

    /// The group of every entry, when the column keeps one.
    var allGroup: Int? { hasAllGroup ? categoryCount : nil }

    /// The groups a query filtered by `categories` (or not, when `nil`) reads.
    func groups(for categories: CategorySet?) -> [Int] {
        aggregateGroups(for: categories, categoryCount: categoryCount, hasAllGroup: hasAllGroup)
    }

    /// The category group of an entry, if it has a category and the column keeps categories.
    @inline(__always) func categoryGroup(of entry: IndexEntry) -> Int? {
        categoryCount > 0 && entry.category != 0 ? Int(entry.category) - 1 : nil
    }

    /// Whether `group` takes an entry.
    @inline(__always) func takes(_ entry: IndexEntry, group: Int) -> Bool {
        group == categoryCount || Int(entry.category) - 1 == group
    }

    /// The value of the entry at `position` of a leaf.
    @inline(__always) func value(of entry: IndexEntry, at position: Int, of leaf: Int32) -> Value {
        Value(entry: entry, stored: leafStored[Int(leaf) * Self.window + position])
    }

    // MARK: Stored values

    func prepareDefault() { prepared = defaultStored }

    func prepareLastRemoved() { prepared = lastRemoved }

    func prepare(_ value: Value.Stored) { prepared = value }

    /// Grows `leafStored` to hold a leaf's window.
    @inline(__always) private func growStored(toHold leaf: Int32) {
        let needed = (Int(leaf) + 1) * Self.window
        if leafStored.count < needed {
            leafStored.append(contentsOf: repeatElement(defaultStored, count: needed - leafStored.count))
        }
    }

    func inserted(at position: Int, of leaf: Int32, count: Int) {
        growStored(toHold: leaf)
        let base = Int(leaf) * Self.window
        var i = base + count - 1
        while i > base + position {
            leafStored[i] = leafStored[i - 1]
            i -= 1
        }
        leafStored[base + position] = prepared
    }

    func removed(at position: Int, of leaf: Int32, count: Int) {
        let base = Int(leaf) * Self.window
        lastRemoved = leafStored[base + position]
        for i in (base + position)..<(base + count - 1) { leafStored[i] = leafStored[i + 1] }
    }

    func split(_ leaf: Int32, at half: Int, count: Int, into sibling: Int32) {
        growStored(toHold: max(leaf, sibling))
        let from = Int(leaf) * Self.window
        let to = Int(sibling) * Self.window
        for i in half..<count { leafStored[to + i - half] = leafStored[from + i] }
    }

    func merged(_ drop: Int32, count dropCount: Int, into keep: Int32, count: Int) {
        let from = Int(drop) * Self.window
        let to = Int(keep) * Self.window + count
        for i in 0..<dropCount { leafStored[to + i] = leafStored[from + i] }
    }

    // MARK: Node values

    /// The values of the nodes of one kind, grown to hold `node`.
    @inline(__always) private func grow(_ values: inout ContiguousArray<Value>, toHold node: Int32) {
        let needed = (Int(node) + 1) * groupCount
        if values.count < needed {
            values.append(contentsOf: repeatElement(Value.identity, count: needed - values.count))
        }
    }

    func added(_ entry: IndexEntry, to node: Int32, isLeaf: Bool) {
        let one = Value(entry: entry, stored: prepared)
        let base = Int(node) * groupCount
        if isLeaf {
            grow(&leafValues, toHold: node)
            if let group = categoryGroup(of: entry) { leafValues[base + group].merge(one) }
            if let group = allGroup { leafValues[base + group].merge(one) }
        } else {
            grow(&branchValues, toHold: node)
            if let group = categoryGroup(of: entry) { branchValues[base + group].merge(one) }
            if let group = allGroup { branchValues[base + group].merge(one) }
        }
    }

    func removed(_ entry: IndexEntry, from node: Int32, height: Int, in tree: MortonTree) {
        let category = categoryGroup(of: entry)
        guard category != nil || hasAllGroup else { return }
        if removeExactly(entry, category: category, from: node, isLeaf: height == 0) { return }
        // The entry's category and the group of all, in one pass over what lies below the node.
        var ofCategory = Value.identity
        var ofAll = Value.identity
        let base = Int(node) * groupCount
        if height == 0 {
            for (position, member) in tree.leaves[Int(node)].entries.enumerated() {
                let isOfCategory = category != nil && member.category == entry.category
                guard isOfCategory || hasAllGroup else { continue }
                let one = value(of: member, at: position, of: node)
                if isOfCategory { ofCategory.merge(one) }
                ofAll.merge(one)
            }
            grow(&leafValues, toHold: node)
            if let category { leafValues[base + category] = ofCategory }
            if let all = allGroup { leafValues[base + all] = ofAll }
        } else {
            let childValues = height == 1 ? leafValues : branchValues
            for child in tree.branches[Int(node)].children {
                let childBase = Int(child) * groupCount
                if let category { ofCategory.merge(childValues[childBase + category]) }
                if let all = allGroup { ofAll.merge(childValues[childBase + all]) }
            }
            grow(&branchValues, toHold: node)
            if let category { branchValues[base + category] = ofCategory }
            if let all = allGroup { branchValues[base + all] = ofAll }
        }
    }

    /// Takes the removed entry's value out of its groups of a node by ``NodeValue/remove(_:)``; false when a group
    /// must be recomputed instead (then nothing changed).
    @inline(__always) private func removeExactly(_ entry: IndexEntry, category: Int?, from node: Int32, isLeaf: Bool)
        -> Bool
    {
        let one = Value(entry: entry, stored: lastRemoved)
        let base = Int(node) * groupCount
        // Both groups or neither: they are written back only when every group took the removal.
        var ofCategory = category.map { isLeaf ? leafValues[base + $0] : branchValues[base + $0] }
        var ofAll = allGroup.map { isLeaf ? leafValues[base + $0] : branchValues[base + $0] }
        if var value = ofCategory {
            guard value.remove(one) else { return false }
            ofCategory = value
        }
        if var value = ofAll {
            guard value.remove(one) else { return false }
            ofAll = value
        }
        if isLeaf {
            if let category, let ofCategory { leafValues[base + category] = ofCategory }
            if let all = allGroup, let ofAll { leafValues[base + all] = ofAll }
        } else {
            if let category, let ofCategory { branchValues[base + category] = ofCategory }
            if let all = allGroup, let ofAll { branchValues[base + all] = ofAll }
        }
        return true
    }

    func rebuild(_ node: Int32, height: Int, in tree: MortonTree) {
        // One pass over what lies below the node, each entry or child into its groups.
        var totals = [Value](repeating: .identity, count: groupCount)
        if height == 0 {
            for (position, entry) in tree.leaves[Int(node)].entries.enumerated() {
                let one = value(of: entry, at: position, of: node)
                if let group = categoryGroup(of: entry) { totals[group].merge(one) }
                if let all = allGroup { totals[all].merge(one) }
            }
        } else {
            let childValues = height == 1 ? leafValues : branchValues
            for child in tree.branches[Int(node)].children {
                for group in 0..<groupCount { totals[group].merge(childValues[Int(child) * groupCount + group]) }
            }
        }
        let base = Int(node) * groupCount
        if height == 0 {
            grow(&leafValues, toHold: node)
            for group in 0..<groupCount { leafValues[base + group] = totals[group] }
        } else {
            grow(&branchValues, toHold: node)
            for group in 0..<groupCount { branchValues[base + group] = totals[group] }
        }
    }

    func build(_ tree: MortonTree) {
        leafStored = ContiguousArray(repeating: defaultStored, count: tree.leaves.count * Self.window)
        if let input {
            for (leaf, node) in tree.leaves.enumerated() {
                for (position, entry) in node.entries.enumerated() {
                    leafStored[leaf * Self.window + position] = input(Int(entry.slot))
                }
            }
            self.input = nil
        }
        leafValues = ContiguousArray(repeating: Value.identity, count: tree.leaves.count * groupCount)
        branchValues = ContiguousArray(repeating: Value.identity, count: tree.branches.count * groupCount)
        guard tree.count > 0 else { return }
        func build(_ node: Int32, height: Int) {
            if height > 0 {
                for child in tree.branches[Int(node)].children { build(child, height: height - 1) }
            }
            rebuild(node, height: height, in: tree)
        }
        build(tree.root, height: tree.height)
    }

    // MARK: Queries

    /// The values of `groups` over each of `ranges` (disjoint, in key order), of the entries `takes` accepts (all
    /// when `nil`), in one walk of the tree: the value of group `groups[i]` over `ranges[r]` is at
    /// `r * groups.count + i`.
    ///
    /// Without `takes`, a subtree inside one range gives its node's values; a leaf that straddles ranges is visited
    /// once for all of them. So the clusters of a view cost one walk, whose descents they share. With `takes`, every
    /// entry in the ranges is visited.
    /// - Complexity: O((*r* *F* log *n* + *e*) · *g*) for *r* ranges and *e* entries in leaves that straddle them.
    func reduce(
        ranges: [ClosedRange<UInt64>], groups: [Int], where takes: ((IndexEntry) -> Bool)? = nil, tree: MortonTree
    ) -> [Value] {
        var totals = [Value](repeating: .identity, count: ranges.count * groups.count)
        guard tree.rootSummary != nil, !ranges.isEmpty else { return totals }
        totals.withUnsafeMutableBufferPointer { totals in
            ranges.withUnsafeBufferPointer { ranges in
                var walk = RangeWalk(
                    column: self, tree: tree, ranges: ranges, groups: groups, takes: takes, totals: totals)
                tree.descend(ranges: ranges, &walk)
            }
        }
        return totals
    }

    /// The value over each of `ranges` (disjoint, in key order) of the entries `takes` accepts (all when `nil`),
    /// merged over `groups`: ``reduce(ranges:groups:where:tree:)`` with each range's groups added up.
    func merged(
        ranges: [ClosedRange<UInt64>], groups: [Int], where takes: ((IndexEntry) -> Bool)? = nil, tree: MortonTree
    ) -> [Value] {
        let totals = reduce(ranges: ranges, groups: groups, where: takes, tree: tree)
        return ranges.indices.map { range in
            var total = Value.identity
            for value in totals[(range * groups.count)..<((range + 1) * groups.count)] { total.merge(value) }
            return total
        }
    }

    /// One walk of ``reduce(ranges:groups:where:tree:)``: the nodes of a descent as their values, and the entries of
    /// the leaves that straddle ranges.
    private struct RangeWalk: RangeDescent {
        let column: NodeColumn
        let tree: MortonTree
        let ranges: UnsafeBufferPointer<ClosedRange<UInt64>>
        let groups: [Int]
        let takes: ((IndexEntry) -> Bool)?
        /// Each range's value of each group, at `range * groups.count + i`.
        let totals: UnsafeMutableBufferPointer<Value>

        func whole(_ node: Int32, height: Int, range: Int) -> Bool {
            guard takes == nil else { return false }
            let base = Int(node) * column.groupCount
            let target = range * groups.count
            if height == 0 {
                for i in groups.indices { totals[target + i].merge(column.leafValues[base + groups[i]]) }
            } else {
                for i in groups.indices { totals[target + i].merge(column.branchValues[base + groups[i]]) }
            }
            return true
        }

        func leaf(_ leaf: Int32, candidates: Range<Int>) {
            let entries = tree.leaves[Int(leaf)].entries
            let groupCount = groups.count
            var range = candidates.lowerBound
            var position = entries.lowerBound(of: ranges[range].lowerBound)
            while position < entries.count {
                let entry = entries[position]
                while range < candidates.upperBound && ranges[range].upperBound < entry.key { range += 1 }
                guard range < candidates.upperBound else { return }
                if entry.key >= ranges[range].lowerBound && takes?(entry) != false {
                    var one: Value?
                    for i in 0..<groupCount where column.takes(entry, group: groups[i]) {
                        if one == nil { one = column.value(of: entry, at: position, of: leaf) }
                        if let one { totals[range * groupCount + i].merge(one) }
                    }
                }
                position += 1
            }
        }
    }
}

extension NodeColumn where Value: Equatable {
    /// Whether every node's groups equal a rebuild's from the same stored values.
    ///
    /// The rebuild goes node by node from the leaves up. O(*n*), for tests.
    func matchesRecomputation(in tree: MortonTree) -> Bool {
        guard tree.count > 0 else { return true }
        let rebuilt = NodeColumn(categoryCount: categoryCount, hasAllGroup: hasAllGroup, defaultStored: defaultStored)
        rebuilt.leafStored = leafStored
        var matches = true
        func check(_ node: Int32, height: Int) {
            if height > 0 {
                for child in tree.branches[Int(node)].children { check(child, height: height - 1) }
            }
            rebuilt.rebuild(node, height: height, in: tree)
            let kept = height == 0 ? leafValues : branchValues
            let computed = height == 0 ? rebuilt.leafValues : rebuilt.branchValues
            let base = Int(node) * groupCount
            guard base + groupCount <= kept.count else {
                matches = false
                return
            }
            for group in 0..<groupCount where kept[base + group] != computed[base + group] { matches = false }
        }
        check(tree.root, height: tree.height)
        return matches
    }
}
