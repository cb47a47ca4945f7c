extension MortonTree {
    /// The summary of the entries whose keys lie in `range`, or `nil` when there are none.
    /// - Complexity: O(*F* log *n* + *L*): whole subtrees inside the range give their stored summaries.
    func summary(in range: ClosedRange<UInt64>) -> Summary? {
        guard let rootSummary else { return nil }
        var result: Summary?
        summarize(root, height: height, summary: rootSummary, range: range, into: &result)
        return result
    }

    private func summarize(
        _ node: Int32, height: Int, summary: Summary, range: ClosedRange<UInt64>, into result: inout Summary?
    ) {
        if summary.lastKey < range.lowerBound || summary.firstKey > range.upperBound { return }
        if range.lowerBound <= summary.firstKey && summary.lastKey <= range.upperBound {
            result.append(summary)
            return
        }
        let n = Int(node)
        if height == 0 {
            let entries = leaves[n].entries
            var i = entries.lowerBound(of: range.lowerBound)
            while i < entries.count, entries[i].key <= range.upperBound {
                result.add(entries[i])
                i += 1
            }
            return
        }
        let branch = branches[n]
        var slot = branch.firstSlot(reaching: range.lowerBound)
        while slot < branch.children.count, branch.summaries[slot].firstKey <= range.upperBound {
            summarize(
                branch.children[slot], height: height - 1, summary: branch.summaries[slot], range: range, into: &result)
            slot += 1
        }
    }
}
