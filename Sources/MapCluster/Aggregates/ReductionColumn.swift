/// What the tree tells each column it keeps beside its nodes (the rows, ``NodeRows``; a user's reduction,
/// ``ReductionColumn``) of every change, bottom-up (``MortonTree/insert(_:)``, ``MortonTree/remove(key:where:)``).
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
    /// An entry was removed from below a node.
    func removed(_ entry: IndexEntry, from node: Int32, height: Int, in tree: MortonTree)
    /// Recomputes a node's values, whose children's values are current.
    func rebuild(_ node: Int32, height: Int, in tree: MortonTree)
    /// Computes every node's values of a tree built in bulk.
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
    /// The value over the entries in each of `ranges` (disjoint, in key order) that `takes` accepts (all when `nil`)
    /// of the members of `categories` (all when `nil`).
    func reductions(
        ranges: [ClosedRange<UInt64>], categories: CategorySet?, where takes: ((IndexEntry) -> Bool)?,
        tree: MortonTree
    ) -> [any ClusterAggregate]
    /// Whether every node's values equal a recomputation from the values its entries store, for
    /// ``MortonTree/_checkInvariants()``.
    func matchesRecomputation(in tree: MortonTree) -> Bool
}

extension ClusterAggregate {
    /// A column of this (non-numeric) reduction for an index with `categoryCount` categories.
    static func column(categoryCount: Int) -> any UserReductionColumn {
        ReductionColumn<Self>(categoryCount: categoryCount)
    }

    /// The value of no member, type-erased.
    static var erasedIdentity: any ClusterAggregate { identity }
}

/// A user's reduction (a ``ClusterAggregate`` that rows can't hold), kept for every node of the tree, and what each
/// element stores for it.
///
/// A node's values are one per category and then that of all its entries (``groupCount``), at `node * groupCount` in
/// the array of its kind (leaves, branches), so a node keeps its values wherever it sits in its parent, and a freed
/// node's are overwritten when the node is reused. What each element stores lies beside the leaf's entries
/// (``EntryValues``).
///
/// An insert merges the entry's value into its two groups in the nodes on its path, O(1) a level. A merge has no
/// inverse, so a removal recomputes those two groups of each node on its path from what lies below it, O(*F* + *L*) a
/// level; a split or a merge of nodes recomputes the nodes it makes.
final class ReductionColumn<Value: ClusterAggregate>: UserReductionColumn, @unchecked Sendable {
    /// The number of categories, whose groups come first.
    let categoryCount: Int
    /// Values per node: a group per category, then that of all.
    var groupCount: Int { categoryCount + 1 }
    /// The group of all a node's entries.
    var allGroup: Int { categoryCount }

    // Changed only by the tree that owns the column, which copies a shared one first (no access overlaps another):
    // the dynamic exclusivity checks of class properties would cost more than the work of an update.
    /// What each entry stores.
    @exclusivity(unchecked) var stored = EntryValues(width: 1, filler: Value.identity, defaults: [.identity])
    @exclusivity(unchecked) var leafValues: ContiguousArray<Value> = []
    @exclusivity(unchecked) var branchValues: ContiguousArray<Value> = []
    /// A bulk load's value of a slot, until ``build(_:)`` lays them out: read from the caller's values, so that no copy
    /// of them by slot is made on the way.
    @exclusivity(unchecked) var input: ((Int) -> Value)?

    init(categoryCount: Int) {
        self.categoryCount = categoryCount
    }

    func copy() -> any AggregateColumn { copyReduction() }

    func copyReduction() -> any UserReductionColumn {
        let copy = ReductionColumn(categoryCount: categoryCount)
        copy.stored = stored
        copy.leafValues = leafValues
        copy.branchValues = branchValues
        copy.input = input
        return copy
    }

    /// The category group of an entry, if it has a category.
    @inline(__always) func categoryGroup(of entry: IndexEntry) -> Int? {
        entry.category != 0 && Int(entry.category) <= categoryCount ? Int(entry.category) - 1 : nil
    }

    /// The groups a query of `categories` (all when `nil`) reads: those categories', or that of all.
    func groups(for categories: CategorySet?) -> [Int] {
        categories?.positions.filter { $0 < categoryCount } ?? [allGroup]
    }

    /// What the entry at `position` of a leaf stores.
    @inline(__always) func stored(at position: Int, of leaf: Int32) -> Value {
        stored.values[stored.start(position, of: leaf)]
    }

    // MARK: Stored values

    func prepareDefault() { stored.prepared[0] = .identity }

    func prepareLastRemoved() { stored.prepareLastRemoved() }

    func prepare(erased value: any ClusterAggregate) {
        guard let value = value as? Value else { preconditionFailure("values are validated before they are stored") }
        stored.prepared[0] = value
    }

    func storeInput(_ values: ReductionValues?) {
        switch values {
        case nil, .numbers:
            input = nil
        case .values(let values):
            input = { values[$0] as? Value ?? .identity }
        }
    }

    func inserted(at position: Int, of leaf: Int32, count: Int) {
        stored.inserted(at: position, of: leaf, count: count)
    }

    func removed(at position: Int, of leaf: Int32, count: Int) { stored.removed(at: position, of: leaf, count: count) }

    func split(_ leaf: Int32, at half: Int, count: Int, into sibling: Int32) {
        stored.split(leaf, at: half, count: count, into: sibling)
    }

    func merged(_ drop: Int32, count dropCount: Int, into keep: Int32, count: Int) {
        stored.merged(drop, count: dropCount, into: keep, count: count)
    }

    // MARK: Node values

    /// The values of the nodes of one kind, grown to hold `node`.
    @inline(__always) private func grow(_ values: inout ContiguousArray<Value>, toHold node: Int32) {
        let needed = (Int(node) + 1) * groupCount
        if values.count < needed {
            values.append(contentsOf: repeatElement(Value.identity, count: needed - values.count))
        }
    }

    /// Calls `body` with a node's value of a group, to change it in place (the values grown to hold the node).
    @inline(__always) private func withValue(
        of node: Int32, isLeaf: Bool, group: Int, _ body: (inout Value) -> Void
    ) {
        let at = Int(node) * groupCount + group
        if isLeaf {
            grow(&leafValues, toHold: node)
            body(&leafValues[at])
        } else {
            grow(&branchValues, toHold: node)
            body(&branchValues[at])
        }
    }

    /// A node's value of a group.
    @inline(__always) private func value(of node: Int32, isLeaf: Bool, group: Int) -> Value {
        (isLeaf ? leafValues : branchValues)[Int(node) * groupCount + group]
    }

    func added(_ entry: IndexEntry, to node: Int32, isLeaf: Bool) {
        let one = stored.prepared[0]
        withValue(of: node, isLeaf: isLeaf, group: allGroup) { $0.merge(one) }
        if let group = categoryGroup(of: entry) { withValue(of: node, isLeaf: isLeaf, group: group) { $0.merge(one) } }
    }

    func removed(_ entry: IndexEntry, from node: Int32, height: Int, in tree: MortonTree) {
        // The entry's category and the group of all, in one pass over what lies below the node: a merge has no
        // inverse.
        let category = categoryGroup(of: entry)
        var ofCategory = Value.identity
        var ofAll = Value.identity
        if height == 0 {
            for (position, member) in tree.leaves[Int(node)].entries.enumerated() {
                let one = stored(at: position, of: node)
                if let category, categoryGroup(of: member) == category { ofCategory.merge(one) }
                ofAll.merge(one)
            }
        } else {
            let childValues = height == 1 ? leafValues : branchValues
            for child in tree.branches[Int(node)].children {
                let base = Int(child) * groupCount
                if let category { ofCategory.merge(childValues[base + category]) }
                ofAll.merge(childValues[base + allGroup])
            }
        }
        withValue(of: node, isLeaf: height == 0, group: allGroup) { $0 = ofAll }
        if let category { withValue(of: node, isLeaf: height == 0, group: category) { $0 = ofCategory } }
    }

    func rebuild(_ node: Int32, height: Int, in tree: MortonTree) {
        // One pass over what lies below the node, each entry or child into its groups.
        var totals = [Value](repeating: .identity, count: groupCount)
        if height == 0 {
            for (position, entry) in tree.leaves[Int(node)].entries.enumerated() {
                let one = stored(at: position, of: node)
                if let group = categoryGroup(of: entry) { totals[group].merge(one) }
                totals[allGroup].merge(one)
            }
        } else {
            let childValues = height == 1 ? leafValues : branchValues
            for child in tree.branches[Int(node)].children {
                for group in 0..<groupCount { totals[group].merge(childValues[Int(child) * groupCount + group]) }
            }
        }
        for group in 0..<groupCount { withValue(of: node, isLeaf: height == 0, group: group) { $0 = totals[group] } }
    }

    func build(_ tree: MortonTree) {
        stored.reset(leaves: tree.leaves.count)
        if let input {
            for (leaf, node) in tree.leaves.enumerated() {
                for (position, entry) in node.entries.enumerated() {
                    stored.values[stored.start(position, of: Int32(leaf))] = input(Int(entry.slot))
                }
            }
            self.input = nil
        }
        leafValues = ContiguousArray(repeating: .identity, count: tree.leaves.count * groupCount)
        branchValues = ContiguousArray(repeating: .identity, count: tree.branches.count * groupCount)
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

    func reductions(
        ranges: [ClosedRange<UInt64>], categories: CategorySet?, where takes: ((IndexEntry) -> Bool)?,
        tree: MortonTree
    ) -> [any ClusterAggregate] {
        var totals = [Value](repeating: .identity, count: ranges.count)
        guard tree.rootSummary != nil, !ranges.isEmpty else { return totals }
        let groups = groups(for: categories)
        totals.withMutableCursor { totals in
            ranges.withRun { ranges in
                var walk = RangeWalk(
                    column: self, tree: tree, ranges: ranges, groups: groups, readsAll: categories == nil,
                    takes: takes, totals: totals)
                tree.descend(ranges: ranges, &walk)
            }
        }
        return totals
    }

    /// One walk of ``reductions(ranges:categories:where:tree:)``, whose descents the clusters of a view share.
    ///
    /// A subtree inside one range gives its node's values (without `takes`); a leaf that straddles ranges is visited
    /// once for all of them, and with `takes`, every entry in the ranges.
    /// - Complexity: O((*r* *F* log *n* + *e*) · *g*) for *r* ranges, *e* entries in leaves that straddle them and *g*
    ///   groups.
    private struct RangeWalk: RangeDescent {
        let column: ReductionColumn
        let tree: MortonTree
        let ranges: Run<ClosedRange<UInt64>>
        let groups: [Int]
        /// Whether `groups` is the group of all alone (no category filter): every entry counts.
        let readsAll: Bool
        let takes: ((IndexEntry) -> Bool)?
        /// Each range's value over `groups`.
        let totals: MutableCursor<Value>

        func whole(_ node: Int32, height: Int, summary: Summary, range: Int) -> Bool {
            guard takes == nil else { return false }
            for group in groups { totals[range].merge(column.value(of: node, isLeaf: height == 0, group: group)) }
            return true
        }

        func leaf(_ leaf: Int32, candidates: Range<Int>) {
            tree.leaves[Int(leaf)].entries.forEachEntry(in: ranges, candidates: candidates) { position, entry, range in
                guard takes?(entry) != false, readsAll || column.categoryGroup(of: entry).map(groups.contains) == true
                else {
                    return
                }
                totals[range].merge(column.stored(at: position, of: leaf))
            }
        }
    }

    /// Whether every node's groups equal a rebuild's from the same stored values.
    ///
    /// The rebuild goes node by node from the leaves up. O(*n*), for tests.
    func matchesRecomputation(in tree: MortonTree) -> Bool {
        guard tree.count > 0 else { return true }
        let rebuilt = ReductionColumn(categoryCount: categoryCount)
        rebuilt.stored = stored
        var matches = true
        func check(_ node: Int32, height: Int) {
            if height > 0 {
                for child in tree.branches[Int(node)].children { check(child, height: height - 1) }
            }
            rebuilt.rebuild(node, height: height, in: tree)
            let (kept, computed) =
                height == 0 ? (leafValues, rebuilt.leafValues) : (branchValues, rebuilt.branchValues)
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
