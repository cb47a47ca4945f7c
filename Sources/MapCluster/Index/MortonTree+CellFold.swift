extension MortonTree {
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
    /// average, instead of all of it). `viewport-1M-z3` measures it.
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
