extension MortonTree {
    /// Removes the first entry with `key` that `matches` accepts, and returns it.
    /// - Complexity: O(*L* + *F* log *n* + *d*), where *d* is the number of entries sharing the key.
    @usableFromInline
    mutating func remove(key: UInt64, where matches: (Entry) -> Bool) -> Entry? {
        guard let rootSummary, rootSummary.firstKey <= key, key <= rootSummary.lastKey else { return nil }
        aggregates?.makeUnique()
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
        // Moved out while it changes, so that it stays uniquely referenced, and not copied (a copy retains its arrays).
        if var coarseCells = coarseCells.take() {
            if count >= CoarseCells.keptFrom / 2 {
                coarseCells.remove(removed, values: aggregates?.rows.lastRemoved.cursor.reading, from: self)
                self.coarseCells = coarseCells
            }
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
                    aggregates?.forEachColumn {
                        $0.removed(at: position, of: node, count: leaves[n].entries.count)
                    }
                    let removed = leaves[n].entries.remove(at: position)
                    // Also when the leaf is left empty: it may be the root, which stays.
                    aggregatesRemoved(removed, from: node, height: 0)
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
                aggregatesRemoved(removed, from: node, height: height)
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
            let (keepCount, dropCount) = (leaves[keep].entries.count, leaves[Int(drop)].entries.count)
            aggregates?.forEachColumn { $0.merged(drop, count: dropCount, into: Int32(keep), count: keepCount) }
            leaves[keep].entries.append(contentsOf: leaves[Int(drop)].entries)
            freeLeaf(drop)
        } else {
            branches[keep].children.append(contentsOf: branches[Int(drop)].children)
            branches[keep].summaries.append(contentsOf: branches[Int(drop)].summaries)
            freeBranch(drop)
        }
        rebuildAggregates(of: Int32(keep), height: childHeight)
        branches[n].summaries[left].append(branches[n].summaries[left + 1])
        branches[n].children.remove(at: left + 1)
        branches[n].summaries.remove(at: left + 1)
    }
}
