/// What receives a descent of the tree over key ranges (``MortonTree/descend(ranges:_:)``): the nodes that lie inside
/// one range, and the leaves that straddle ranges.
///
/// A protocol rather than closures: the descent is specialized for each receiver. The walks of the aggregates' rows
/// (``NodeRows/walk(ranges:tree:_:)``) and of a user's reductions
/// (``ReductionColumn/reductions(ranges:categories:where:tree:)``) share it, and so does a range's summary
/// (``MortonTree/summary(in:)``).
protocol RangeDescent {
    /// Takes a node whose entries all lie in range `range` as a whole (from what it keeps for them, or its `summary`)
    /// and returns true; false to have it descended, and a leaf handed to ``leaf(_:candidates:)``.
    mutating func whole(_ node: Int32, height: Int, summary: Summary, range: Int) -> Bool
    /// A leaf whose entries may lie in any of `candidates` (indices of the ranges), and outside them.
    mutating func leaf(_ leaf: Int32, candidates: Range<Int>)
}

extension RandomAccessCollection where Element == IndexEntry, Index == Int {
    /// Calls `body` with each of a leaf's entries in one of `candidates` of `ranges` (disjoint, in key order).
    ///
    /// `body` takes the entry's position, the entry and the range's index: what a descent's receiver does with a leaf
    /// that straddles ranges.
    @inline(__always) func forEachEntry(
        in ranges: Run<ClosedRange<UInt64>>, candidates: Range<Int>,
        _ body: (Int, IndexEntry, Int) -> Void
    ) {
        var range = candidates.lowerBound
        var position = lowerBound(of: ranges[range].lowerBound)
        while position < endIndex {
            let entry = self[position]
            while range < candidates.upperBound && ranges[range].upperBound < entry.key { range += 1 }
            guard range < candidates.upperBound else { return }
            if entry.key >= ranges[range].lowerBound { body(position, entry, range) }
            position += 1
        }
    }
}

extension MortonTree {
    /// Descends once for all `ranges` (disjoint, in key order), handing `receiver` each node inside one range and each
    /// leaf that straddles some: the descents of neighbouring ranges are shared.
    /// - Complexity: O(*r* *F* log *n*) for *r* ranges, and what the receiver does with the nodes and leaves.
    func descend<Receiver: RangeDescent>(ranges: Run<ClosedRange<UInt64>>, _ receiver: inout Receiver) {
        guard let rootSummary, !ranges.isEmpty else { return }
        descend(root, height: height, summary: rootSummary, ranges: ranges, candidates: 0..<ranges.count, &receiver)
    }

    /// Hands `receiver` what the subtree at `node` holds of `candidates`, the ranges that may hold some of its entries.
    private func descend<Receiver: RangeDescent>(
        _ node: Int32, height: Int, summary: Summary, ranges: Run<ClosedRange<UInt64>>,
        candidates: Range<Int>, _ receiver: inout Receiver
    ) {
        var first = candidates.lowerBound
        var end = candidates.upperBound
        while first < end && ranges[first].upperBound < summary.firstKey { first += 1 }
        while end > first && ranges[end - 1].lowerBound > summary.lastKey { end -= 1 }
        guard first < end else { return }
        if ranges[first].lowerBound <= summary.firstKey && summary.lastKey <= ranges[first].upperBound,
            receiver.whole(node, height: height, summary: summary, range: first)
        {
            return
        }
        if height == 0 {
            receiver.leaf(node, candidates: first..<end)
            return
        }
        let n = Int(node)
        var slot = branches[n].firstSlot(reaching: ranges[first].lowerBound)
        while slot < branches[n].children.count, branches[n].summaries[slot].firstKey <= ranges[end - 1].upperBound {
            let child = branches[n].summaries[slot]
            while first < end && ranges[first].upperBound < child.firstKey { first += 1 }
            var childEnd = first
            while childEnd < end && ranges[childEnd].lowerBound <= child.lastKey { childEnd += 1 }
            if first < childEnd {
                descend(
                    branches[n].children[slot], height: height - 1, summary: child, ranges: ranges,
                    candidates: first..<childEnd, &receiver)
            }
            slot += 1
        }
    }
}

extension MortonTree {
    /// The summary of the entries whose keys lie in `range`, or `nil` when there are none.
    /// - Complexity: O(*F* log *n* + *L*): whole subtrees inside the range give their stored summaries.
    func summary(in range: ClosedRange<UInt64>) -> Summary? {
        var summarizer = Summarizer(leaves: leaves, range: range)
        Run.withOne(range) { descend(ranges: $0, &summarizer) }
        return summarizer.result
    }

    /// The descent of ``summary(in:)``: whole subtrees' summaries, and the entries in range of the leaves it straddles.
    private struct Summarizer: RangeDescent {
        let leaves: ContiguousArray<Leaf>
        let range: ClosedRange<UInt64>
        var result: Summary?

        mutating func whole(_ node: Int32, height: Int, summary: Summary, range: Int) -> Bool {
            result.append(summary)
            return true
        }

        mutating func leaf(_ leaf: Int32, candidates: Range<Int>) {
            let entries = leaves[Int(leaf)].entries
            var i = entries.lowerBound(of: range.lowerBound)
            while i < entries.count, entries[i].key <= range.upperBound {
                result.add(entries[i])
                i += 1
            }
        }
    }
}
