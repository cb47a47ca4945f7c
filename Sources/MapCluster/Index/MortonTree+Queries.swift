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

    /// Folds the entries of every cell of `region` into one summary per cell.
    ///
    /// `body` gets each non-empty cell, in key order, with the cell's Morton code at the region's level. The
    /// summaries' bounds hold the cell's members but may be larger; everything else in them is exact.
    ///
    /// One walk of the tree serves all cells: a subtree whose keys share one cell is folded in whole from its stored
    /// summary, a subtree outside the region is skipped on its bounds, and only nodes that straddle a cell boundary are
    /// opened.
    /// - Complexity: O(*c* (*F* log *n* + *L*)) for *c* cells that hold entries.
    func forEachCell(in region: CellRegion, _ body: (UInt64, Summary) -> Void) {
        guard let rootSummary else { return }
        var fold = CellFold(region: region, placeholder: rootSummary)
        fold.walk(self, node: root, height: height, summary: rootSummary, body)
        fold.flush(body)
    }
}

/// The cells of one grid level that a viewport (plus margin) touches: a range of rows and one or two
/// ranges of columns (two when it crosses the antimeridian).
struct CellRegion: Sendable {
    let level: Int
    let rows: ClosedRange<UInt32>
    let columns: [ClosedRange<UInt32>]

    init(level: Int, rows: ClosedRange<UInt32>, columns: [ClosedRange<UInt32>]) {
        self.level = level
        self.rows = rows
        self.columns = columns
    }

    /// The cells at `level` that intersect `rect`; x wraps around the world, y is clamped to it.
    init(level: Int, covering rect: MapRect) {
        let cellsAcross = Int64(1) << level
        let side = MapSize.worldWidth / Double(cellsAcross)
        let last = UInt32(cellsAcross - 1)
        func row(_ y: Double) -> UInt32 { UInt32(min(max(Int64((y / side).rounded(.down)), 0), cellsAcross - 1)) }
        let rows = row(rect.minY)...row(max(rect.minY, rect.maxY.nextDown))
        let first = Int64((rect.minX / side).rounded(.down))
        let lastColumn = Int64((max(rect.minX, rect.maxX.nextDown) / side).rounded(.down))
        var columns: [ClosedRange<UInt32>]
        if lastColumn - first + 1 >= cellsAcross {
            columns = [0...last]
        } else {
            let start = ((first % cellsAcross) + cellsAcross) % cellsAcross
            let end = ((lastColumn % cellsAcross) + cellsAcross) % cellsAcross
            columns = start <= end ? [UInt32(start)...UInt32(end)] : [UInt32(start)...last, 0...UInt32(end)]
        }
        self.init(level: level, rows: rows, columns: columns)
    }

    @inline(__always) func contains(code: UInt64) -> Bool {
        let x = MortonKey.compact(code)
        let y = MortonKey.compact(code >> 1)
        return rows.contains(y) && columns.contains { $0.contains(x) }
    }

    /// Whether a box on the 32-bit grid may hold positions in the region's cells.
    @inline(__always) func intersects(_ summary: Summary) -> Bool {
        let minY = summary.minY.shifted(toLevel: level)
        let maxY = summary.maxY.shifted(toLevel: level)
        guard minY <= rows.upperBound && maxY >= rows.lowerBound else { return false }
        let minX = summary.minX.shifted(toLevel: level)
        let maxX = summary.maxX.shifted(toLevel: level)
        return columns.contains { minX <= $0.upperBound && maxX >= $0.lowerBound }
    }
}

/// The running state of ``MortonTree/forEachCell(in:_:)``: the cell being folded and its summary.
///
/// Entries arrive in key order, so each cell's entries arrive together and a cell is complete as soon as an entry of
/// another cell arrives. The summary is kept unwrapped, with a flag, so that adding an entry changes it in place.
///
/// The summaries it hands out have exact counts, sums, keys and same-location tests, but their bounds may be larger
/// than the cell's members' (see ``foldStraddling(_:of:_:)``): callers that need exact bounds ask the tree.
private struct CellFold {
    let region: CellRegion
    let shift: UInt64
    /// The cell being folded, when `isFolding`.
    var code: UInt64 = 0
    var summary: Summary
    var isFolding = false
    /// The last cell found outside the region, so that its other entries are skipped without a test.
    var rejected: UInt64?

    init(region: CellRegion, placeholder: Summary) {
        self.region = region
        shift = UInt64(64 - 2 * region.level)
        summary = placeholder
    }

    mutating func flush(_ body: (UInt64, Summary) -> Void) {
        if isFolding { body(code, summary) }
        isFolding = false
    }

    /// Starts folding the cell `cellCode`, unless it lies outside the region; returns whether it does.
    @inline(__always) mutating func begin(_ cellCode: UInt64, _ body: (UInt64, Summary) -> Void) -> Bool {
        if cellCode == rejected { return false }
        flush(body)
        guard region.contains(code: cellCode) else {
            rejected = cellCode
            return false
        }
        code = cellCode
        isFolding = true
        return true
    }

    /// Folds a leaf whose entries fall in several cells.
    ///
    /// Its longest run of one cell is not visited: counts and sums are the leaf's less the other runs', which are
    /// visited, so a leaf split by a cell boundary costs the smaller side only (about a quarter of a leaf on
    /// average, instead of all of it). Measured on `viewport-1M-z3`: 0.75 to 0.59 ms.
    mutating func foldStraddling(
        _ entries: UnsafeBufferPointer<IndexEntry>, of leaf: Summary, _ body: (UInt64, Summary) -> Void
    ) {
        // The longest run: comparing codes is cheap next to summarizing entries.
        var longest = 0..<0
        var start = 0
        while start < entries.count {
            let runCode = entries[start].key >> shift
            var end = start + 1
            while end < entries.count && entries[end].key >> shift == runCode { end += 1 }
            if end - start > longest.count { longest = start..<end }
            start = end
        }
        let after = Summary(entries: entries[longest.upperBound...])
        var before: Summary?
        var index = 0
        while index < entries.count {
            if index == longest.lowerBound {
                let run = Summary.run(entries[longest], of: leaf, before: before, after: after)
                let runCode = run.firstKey >> shift
                if isFolding && code == runCode {
                    summary.append(run)
                } else if begin(runCode, body) {
                    summary = run
                }
                index = longest.upperBound
                continue
            }
            let entry = entries[index]
            if index < longest.lowerBound { before.add(entry) }
            let entryCode = entry.key >> shift
            if isFolding && code == entryCode {
                summary.add(entry)
            } else if begin(entryCode, body) {
                summary = Summary(entry)
            }
            index += 1
        }
    }

    mutating func walk(
        _ tree: MortonTree, node: Int32, height: Int, summary nodeSummary: Summary, _ body: (UInt64, Summary) -> Void
    ) {
        guard region.intersects(nodeSummary) else { return }
        let firstCode = nodeSummary.firstKey >> shift
        if firstCode == nodeSummary.lastKey >> shift {
            if isFolding && code == firstCode {
                summary.append(nodeSummary)
            } else if begin(firstCode, body) {
                summary = nodeSummary
            }
            return
        }
        if height == 0 {
            tree.leaves[Int(node)].entries.withUnsafeBufferPointer { entries in
                foldStraddling(entries, of: nodeSummary, body)
            }
            return
        }
        let branch = tree.branches[Int(node)]
        for slot in branch.children.indices {
            walk(tree, node: branch.children[slot], height: height - 1, summary: branch.summaries[slot], body)
        }
    }
}

extension Optional where Wrapped == Summary {
    @inline(__always) mutating func append(_ other: Summary) {
        if case .some(var summary) = self {
            summary.append(other)
            self = summary
        } else {
            self = other
        }
    }

    @inline(__always) mutating func add(_ entry: IndexEntry) {
        if case .some(var summary) = self {
            summary.add(entry)
            self = summary
        } else {
            self = Summary(entry)
        }
    }
}

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
