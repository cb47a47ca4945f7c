extension MortonTree {
    /// Calls `body` with the entries whose keys lie in `range`, in key order, after skipping the first
    /// `skip` of them, until `body` returns false.
    /// - Complexity: O(*F* log *n* + *k*) for *k* entries visited; skipped subtrees cost O(1) each.
    @usableFromInline
    func forEachEntry(in range: ClosedRange<UInt64>, skip: Int = 0, _ body: (Entry) -> Bool) {
        guard let rootSummary else { return }
        var toSkip = skip
        _ = visit(root, height: height, summary: rootSummary, range: range, skip: &toSkip, body)
    }

    private func visit(
        _ node: Int32, height: Int, summary: Summary, range: ClosedRange<UInt64>, skip: inout Int,
        _ body: (Entry) -> Bool
    ) -> Bool {
        if summary.lastKey < range.lowerBound || summary.firstKey > range.upperBound { return true }
        let inside = range.lowerBound <= summary.firstKey && summary.lastKey <= range.upperBound
        if inside && skip >= summary.count {
            skip -= summary.count
            return true
        }
        let n = Int(node)
        if height == 0 {
            let entries = leaves[n].entries
            var i = entries.lowerBound(of: range.lowerBound)
            while i < entries.count, entries[i].key <= range.upperBound {
                if skip > 0 {
                    skip -= 1
                } else if !body(entries[i]) {
                    return false
                }
                i += 1
            }
            return true
        }
        let branch = branches[n]
        var slot = branch.firstSlot(reaching: range.lowerBound)
        while slot < branch.children.count, branch.summaries[slot].firstKey <= range.upperBound {
            if !visit(
                branch.children[slot], height: height - 1, summary: branch.summaries[slot], range: range, skip: &skip,
                body)
            {
                return false
            }
            slot += 1
        }
        return true
    }

    /// The entry with `key` that `matches` accepts, if any.
    /// - Complexity: O(*F* log *n* + *d*), where *d* is the number of entries sharing the key.
    @usableFromInline
    func entry(key: UInt64, where matches: (Entry) -> Bool) -> Entry? {
        place(ofKey: key, where: matches).map { leaves[Int($0.leaf)].entries[Int($0.position)] }
    }

    /// Where the entry with `key` that `matches` accepts lies, if any: one descent by the key, without the set-up of a
    /// walk over ranges.
    ///
    /// A leaf that `near` names is searched first, with no descent, when the key lies inside its keys: the entries of
    /// one view, asked in key order, mostly share a few leaves.
    /// - Complexity: O(*F* log *n* + *d*), where *d* is the number of entries sharing the key.
    @usableFromInline
    func place(ofKey key: UInt64, near: EntryPlace? = nil, where matches: (Entry) -> Bool) -> EntryPlace? {
        guard let rootSummary, rootSummary.firstKey <= key, key <= rootSummary.lastKey else { return nil }
        if let near, let first = leaves[Int(near.leaf)].entries.first, let last = leaves[Int(near.leaf)].entries.last,
            first.key < key, key < last.key
        {
            // Strictly inside: no other leaf holds an entry of this key.
            return place(ofKey: key, where: matches, inLeaf: near.leaf)
        }
        return place(ofKey: key, where: matches, in: root, height: height)
    }

    private func place(ofKey key: UInt64, where matches: (Entry) -> Bool, inLeaf leaf: Int32) -> EntryPlace? {
        let n = Int(leaf)
        var position = leaves[n].entries.lowerBound(of: key)
        while position < leaves[n].entries.count, leaves[n].entries[position].key == key {
            if matches(leaves[n].entries[position]) { return EntryPlace(leaf: leaf, position: Int32(position)) }
            position += 1
        }
        return nil
    }

    private func place(ofKey key: UInt64, where matches: (Entry) -> Bool, in node: Int32, height: Int) -> EntryPlace? {
        let n = Int(node)
        if height == 0 { return place(ofKey: key, where: matches, inLeaf: node) }
        // Entries of one key may lie in several children: each whose keys reach it, in turn.
        var slot = branches[n].firstSlot(reaching: key)
        while slot < branches[n].children.count, branches[n].summaries[slot].firstKey <= key {
            if let place = place(ofKey: key, where: matches, in: branches[n].children[slot], height: height - 1) {
                return place
            }
            slot += 1
        }
        return nil
    }
}
