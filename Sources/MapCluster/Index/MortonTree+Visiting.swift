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
    @usableFromInline
    func entry(key: UInt64, where matches: (Entry) -> Bool) -> Entry? {
        var found: Entry?
        forEachEntry(in: key...key) { entry in
            if matches(entry) {
                found = entry
                return false
            }
            return true
        }
        return found
    }
}
