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
/// A node's values are one per category and then that of all its entries (``groupCount``), in a ``NodeStore`` as the
/// rows are: a leaf's array holds its groups and then what its entries store, a branch's its groups.
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
    /// Each node's groups, and what a leaf's entries store.
    @exclusivity(unchecked) var store: NodeStore<Value>
    /// What the next inserted entry stores, and what the last removed one stored (one value each).
    @exclusivity(unchecked) var prepared: ContiguousArray<Value> = [.identity]
    @exclusivity(unchecked) var lastRemoved: ContiguousArray<Value> = [.identity]
    /// A bulk load's value of a slot, until ``build(_:)`` lays them out: read from the caller's values, so that no copy
    /// of them by slot is made on the way.
    @exclusivity(unchecked) var input: ((Int) -> Value)?

    init(categoryCount: Int) {
        self.categoryCount = categoryCount
        let groups = ContiguousArray(repeating: Value.identity, count: categoryCount + 1)
        store = NodeStore(head: groups, entryWidth: 1, filler: .identity, emptyBranch: groups)
    }

    func copy() -> any AggregateColumn { copyReduction() }

    func copyReduction() -> any UserReductionColumn {
        let copy = ReductionColumn(categoryCount: categoryCount)
        copy.store = store
        copy.prepared = prepared
        copy.lastRemoved = lastRemoved
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
        store.leaves[Int(leaf)][store.entryAt(position)]
    }

    /// A node's value of a group.
    @inline(__always) func value(of node: Int32, isLeaf: Bool, group: Int) -> Value {
        store.node(node, isLeaf: isLeaf)[group]
    }

    // MARK: Stored values

    func prepareDefault() { prepared[0] = .identity }

    func prepareLastRemoved() { prepared[0] = lastRemoved[0] }

    func prepare(erased value: any ClusterAggregate) {
        guard let value = value as? Value else { preconditionFailure("values are validated before they are stored") }
        prepared[0] = value
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
        store.inserted(at: position, of: leaf, count: count) { prepared[$0] }
    }

    func removed(at position: Int, of leaf: Int32, count: Int) {
        store.removed(at: position, of: leaf, count: count) { lastRemoved[$0] = $1 }
    }

    func split(_ leaf: Int32, at half: Int, count: Int, into sibling: Int32) {
        store.split(leaf, at: half, count: count, into: sibling)
    }

    func merged(_ drop: Int32, count dropCount: Int, into keep: Int32, count: Int) {
        store.merged(drop, count: dropCount, into: keep, count: count)
    }

    // MARK: Node values

    func added(_ entry: IndexEntry, to node: Int32, isLeaf: Bool) {
        let (one, all, category) = (prepared[0], allGroup, categoryGroup(of: entry))
        store.withNode(node, isLeaf: isLeaf) { groups in
            groups[all].merge(one)
            if let category { groups[category].merge(one) }
        }
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
            for child in tree.branches[Int(node)].children {
                if let category { ofCategory.merge(value(of: child, isLeaf: height == 1, group: category)) }
                ofAll.merge(value(of: child, isLeaf: height == 1, group: allGroup))
            }
        }
        let all = allGroup
        store.withNode(node, isLeaf: height == 0) { groups in
            groups[all] = ofAll
            if let category { groups[category] = ofCategory }
        }
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
            for child in tree.branches[Int(node)].children {
                for group in 0..<groupCount { totals[group].merge(value(of: child, isLeaf: height == 1, group: group)) }
            }
        }
        store.withNode(node, isLeaf: height == 0) { groups in
            for (group, total) in totals.enumerated() { groups[group] = total }
        }
    }

    func build(_ tree: MortonTree) {
        // A bulk load lays out its input; otherwise (a recomputation to check against) what each entry stores stays.
        let (kept, empty, first) = (input == nil ? store.leaves.arrays : [], store.emptyLeaf, store.entryAt(0))
        let leaves = ContiguousArray(
            tree.leaves.indices.lazy.map { leaf in
                var values = leaf < kept.count && !kept[leaf].isEmpty ? kept[leaf] : empty
                if let input = self.input {
                    for (position, entry) in tree.leaves[leaf].entries.enumerated() {
                        values[first + position] = input(Int(entry.slot))
                    }
                }
                return values
            })
        store.reset(leaves: leaves, branchCount: tree.branches.count)
        input = nil
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
        rebuilt.store = store
        var matches = true
        func check(_ node: Int32, height: Int) {
            if height > 0 {
                for child in tree.branches[Int(node)].children { check(child, height: height - 1) }
            }
            rebuilt.rebuild(node, height: height, in: tree)
            let isLeaf = height == 0
            let kept = isLeaf ? store.leaves.arrays : store.branches.arrays
            guard Int(node) < kept.count, !kept[Int(node)].isEmpty else {
                matches = false
                return
            }
            for group in 0..<groupCount
            where value(of: node, isLeaf: isLeaf, group: group) != rebuilt.value(of: node, isLeaf: isLeaf, group: group)
            {
                matches = false
            }
        }
        check(tree.root, height: tree.height)
        return matches
    }
}
