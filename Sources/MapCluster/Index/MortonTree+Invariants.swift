extension MortonTree {
    /// Checks what the tree promises, and traps naming the first promise broken: every stored summary equals a
    /// recomputation from what lies below it, keys are in order within and across nodes, no node is over capacity or
    /// empty (but an empty root leaf), and every leaf is at the same depth.
    ///
    /// For tests, after random edits. It visits every entry: O(*n*).
    func _checkInvariants() {
        guard let rootSummary else {
            precondition(height == 0 && leaves[Int(root)].entries.isEmpty, "an empty tree is one empty leaf")
            return
        }
        let computed = checkNode(root, height: height)
        precondition(computed.matches(rootSummary), "the root's summary differs from its recomputation")
    }

    /// Checks the subtree at `node` and returns its recomputed summary.
    private func checkNode(_ node: Int32, height: Int) -> Summary {
        if height == 0 {
            let entries = leaves[Int(node)].entries
            precondition(
                !entries.isEmpty && entries.count <= Self.leafCapacity, "a leaf holds 1...\(Self.leafCapacity)")
            for i in entries.indices.dropFirst() {
                precondition(entries[i - 1].key <= entries[i].key, "a leaf's keys are in order")
            }
            return Summary(nonEmpty: entries)
        }
        let branch = branches[Int(node)]
        precondition(
            !branch.children.isEmpty && branch.children.count <= Self.branchCapacity,
            "a branch holds 1...\(Self.branchCapacity) children")
        precondition(branch.children.count == branch.summaries.count, "a branch has one summary per child")
        var previousLast: UInt64?
        for (child, stored) in zip(branch.children, branch.summaries) {
            let computed = checkNode(child, height: height - 1)
            precondition(computed.matches(stored), "a child's stored summary differs from its recomputation")
            if let previousLast { precondition(previousLast <= stored.firstKey, "children are in key order") }
            previousLast = stored.lastKey
        }
        return Summary(nonEmptyCombining: branch.summaries)
    }
}

extension Summary {
    /// Whether two summaries say the same: `location` counts only when the members share one.
    func matches(_ other: Summary) -> Bool {
        var a = self
        var b = other
        if !a.isSameLocation { a.location = b.location }
        if !b.isSameLocation { b.location = a.location }
        return a == b
    }
}

extension ClusterIndex {
    /// Checks the tree (``MortonTree/_checkInvariants()``) and that the tree, the element store and the slot table
    /// agree: each live slot's element is found by the table and its entry by its key, and the holes are the rest.
    ///
    /// For tests, after random edits. O(*n* log *n*).
    func _checkInvariants() {
        tree._checkInvariants()
        precondition(tree.count == store.count - freeSlots.count, "the tree holds every live element once")
        let holes = Set(freeSlots)
        precondition(holes.count == freeSlots.count, "no hole is listed twice")
        for slot in 0..<UInt32(store.count) where !holes.contains(slot) {
            let stored = store[Int(slot)]
            precondition(slots.find(stored.element, in: store).slot == slot, "the slot table finds every element")
            precondition(tree.entry(key: stored.key) { $0.slot == slot } != nil, "every element has its entry")
        }
    }
}
