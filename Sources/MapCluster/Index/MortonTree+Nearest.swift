extension MortonTree {
    /// The entry in `range` that `admits` accepts and that lies nearest to `target` on the plane.
    ///
    /// Branch and bound: children are searched nearest bounds first, and a subtree whose bounds are farther than the
    /// best entry so far is skipped.
    func nearestEntry(in range: ClosedRange<UInt64>, to target: MapPoint, where admits: (Entry) -> Bool) -> Entry? {
        guard let rootSummary else { return nil }
        var best: (entry: Entry, distance: Double)?
        searchNearest(
            root, height: height, summary: rootSummary, range: range, target: target, admits: admits, best: &best)
        return best?.entry
    }

    private func searchNearest(
        _ node: Int32, height: Int, summary: Summary, range: ClosedRange<UInt64>, target: MapPoint,
        admits: (Entry) -> Bool, best: inout (entry: Entry, distance: Double)?
    ) {
        if summary.lastKey < range.lowerBound || summary.firstKey > range.upperBound { return }
        if let best, summary.distanceSquared(to: target) > best.distance { return }
        if height == 0 {
            let entries = leaves[Int(node)].entries
            var i = entries.lowerBound(of: range.lowerBound)
            while i < entries.count, entries[i].key <= range.upperBound {
                let point = entries[i].coordinate.mapPoint
                let dx = point.x - target.x
                let dy = point.y - target.y
                let distance = dx * dx + dy * dy
                if best.map({ distance < $0.distance }) ?? true, admits(entries[i]) { best = (entries[i], distance) }
                i += 1
            }
            return
        }
        let branch = branches[Int(node)]
        var slots: [(slot: Int, bound: Double)] = []
        var slot = branch.firstSlot(reaching: range.lowerBound)
        while slot < branch.children.count, branch.summaries[slot].firstKey <= range.upperBound {
            slots.append((slot, branch.summaries[slot].distanceSquared(to: target)))
            slot += 1
        }
        for (slot, _) in slots.sorted(by: { $0.bound < $1.bound }) {
            searchNearest(
                branch.children[slot], height: height - 1, summary: branch.summaries[slot], range: range,
                target: target, admits: admits, best: &best)
        }
    }
}

extension Summary {
    /// The squared distance on the plane from a point to the summary's bounds (0 inside them).
    func distanceSquared(to point: MapPoint) -> Double {
        let box = bounds
        let dx = max(box.minX - point.x, 0, point.x - box.maxX)
        let dy = max(box.minY - point.y, 0, point.y - box.maxY)
        return dx * dx + dy * dy
    }
}
