/// What receives the cells of a fold (``MortonTree/forEachCell(in:into:usingCoarseCells:)``).
///
/// A protocol rather than a closure: the fold is specialized for its one receiver, which travels down the walk by
/// reference, where a closure's captures would be copied at every step.
protocol CellReceiver {
    /// Takes a non-empty cell: its Morton code at the region's level, and the totals of its members.
    mutating func take(_ code: UInt64, _ totals: CellTotals)
    /// Takes a part of the cell being folded, before the cell's ``take(_:_:)``: the parts of a cell are its members,
    /// each once, in key order.
    mutating func take(_ part: CellPart)
}

extension CellReceiver {
    /// Leaves a cell's parts alone: what a receiver of its totals alone does.
    @inline(__always) mutating func take(_ part: CellPart) {}
}

/// A part of a cell that a fold takes whole: a node, a run of a branch's children, or a run of a leaf's entries.
///
/// What a receiver needs to add up the cell's rows (``CellParts``) without a walk of its own.
enum CellPart {
    /// A node all of whose entries lie in the cell, at a height (0 for a leaf).
    case node(Int32, height: Int)
    /// Children of a branch, at positions `slots`, all of whose entries lie in the cell; they are at `height`.
    case children(of: Int32, slots: Range<Int>, height: Int)
    /// The entries of a leaf at positions `positions`.
    case entries(of: Int32, positions: Range<Int>)
}

extension MortonTree {
    /// Folds the entries of every cell of `region` into the totals of each cell.
    ///
    /// `receiver` gets each non-empty cell, in key order.
    ///
    /// One walk of the tree serves all cells: a run of children whose keys share one cell is folded in whole from
    /// their stored summaries; a subtree outside the region's span of keys, or whose bounds miss the region, is
    /// skipped; only nodes that straddle a cell boundary are opened.
    ///
    /// At a level the tree keeps ``CoarseCells`` of, the cells are read from them instead (unless `usingCoarseCells` is
    /// false, as when building them).
    /// - Complexity: O(*c* (*F* log *n* + *L*)) for *c* cells that hold entries; O(*c*) from the coarse cells.
    func forEachCell<Receiver: CellReceiver>(
        in region: CellRegion, into receiver: inout Receiver, usingCoarseCells: Bool = true
    ) {
        // Read in place: a copy of the cells would retain their arrays.
        if usingCoarseCells, region.level <= CoarseCells.deepestLevel, coarseCells != nil {
            coarseCells?.forEachCell(in: region, into: &receiver)
            return
        }
        guard let rootSummary else { return }
        var fold = CellFold(region: region, placeholder: CellTotals(rootSummary))
        fold.walk(self, node: root, height: height, summary: rootSummary, &receiver)
        fold.flush(&receiver)
    }
}

/// The running state of ``MortonTree/forEachCell(in:into:usingCoarseCells:)``: the cell being folded and its totals.
///
/// Entries arrive in key order, so each cell's entries arrive together and a cell is complete as soon as an entry of
/// another cell arrives. The totals are kept unwrapped, with a flag, so that adding an entry changes them in place.
private struct CellFold {
    let region: CellRegion
    let shift: UInt64
    /// The keys of the region's cells lie in this span (with keys of other cells between them).
    let keys: ClosedRange<UInt64>
    /// The region's rows and columns, to test an entry's key against.
    let keyBounds: CellRegion.KeyBounds
    /// The cell being folded, when `isFolding`.
    var code: UInt64 = 0
    var totals: CellTotals
    var isFolding = false
    /// The last cell found outside the region, so that its other entries are skipped without a test.
    var rejected: UInt64?

    init(region: CellRegion, placeholder: CellTotals) {
        self.region = region
        shift = UInt64(64 - 2 * region.level)
        let firstCode = min(region.codes.lowerBound, region.wrappedCodes?.lowerBound ?? .max)
        let lastCode = max(region.codes.upperBound, region.wrappedCodes?.upperBound ?? 0)
        keys = (firstCode << shift)...((lastCode << shift) | ((1 << shift) &- 1))
        keyBounds = region.keyBounds
        totals = placeholder
    }

    /// Hands the receiver the cell being folded, if any.
    ///
    /// Always inlined: left a call (as the compiler leaves it once the receiver keeps a cell's parts), it cost a view
    /// of 17 points about 1,000 instructions (4%).
    @inline(__always) mutating func flush(_ receiver: inout some CellReceiver) {
        if isFolding { receiver.take(code, totals) }
        isFolding = false
    }

    /// Starts folding the cell `cellCode`, unless it lies outside the region (which `isInside` may already know);
    /// returns whether it does.
    @inline(__always) mutating func begin(
        _ cellCode: UInt64, isInside: Bool, _ receiver: inout some CellReceiver
    ) -> Bool {
        if cellCode == rejected { return false }
        flush(&receiver)
        guard isInside || region.contains(code: cellCode) else {
            rejected = cellCode
            return false
        }
        code = cellCode
        isFolding = true
        return true
    }

    /// Folds in a part of one cell (`part`: a run of entries, or a subtree), whose totals are `run()`; `isInside` says
    /// the cell is known to be one of the region's.
    @inline(__always) mutating func fold(
        _ runCode: UInt64, isInside: Bool = false, _ part: CellPart, _ run: () -> CellTotals,
        _ receiver: inout some CellReceiver
    ) {
        if isFolding && code == runCode {
            totals.append(run())
        } else if begin(runCode, isInside: isInside, &receiver) {
            totals = run()
        } else {
            return
        }
        receiver.take(part)
    }

    /// Folds the entries of a leaf whose keys fall in several cells.
    ///
    /// The leaf's runs of one cell are found once, by a few steps and a binary search. When the whole leaf lies in the
    /// region's span of keys, its longest run is not visited: counts and sums are the leaf's less the other runs', so a
    /// leaf split by a cell boundary costs the smaller side only (about a quarter of a leaf on average, instead of all
    /// of it).
    mutating func foldStraddling(
        _ entries: Run<IndexEntry>, of leaf: Summary, id: Int32, _ receiver: inout some CellReceiver
    ) {
        let isWhole = keys.contains(leaf.firstKey) && keys.contains(leaf.lastKey)
        // A leaf at the edge of the region's span: only the entries inside the span.
        let span =
            isWhole
            ? entries[...] : entries[entries.lowerBound(of: keys.lowerBound)..<entries.upperBound(of: keys.upperBound)]
        guard !span.isEmpty else { return }
        let shift = shift
        let cellMask: UInt64 = (1 << shift) &- 1
        // Where the run from `start` ends: a few steps, then a binary search (runs are short in a fine grid, long in a
        // coarse one).
        func runEnd(from start: Int) -> Int {
            let last = ((span[start].key >> shift) << shift) | cellMask
            var end = start + 1
            while end < span.endIndex && end < start + 8 && span[end].key <= last { end += 1 }
            return end == start + 8 ? span[end...].upperBound(of: last) : end
        }
        // The runs' ends, found once. A leaf holds at most 64 entries, so the ends fit in bytes, on the stack.
        MutableCursor<UInt8>.withScratch(capacity: MortonTree.leafCapacity) { ends in
            var runCount = 0
            var start = span.startIndex
            // Every run a cell of the region, when the leaf is whole: its longest run is then not visited.
            var isAllInside = isWhole
            while isAllInside && start < span.endIndex {
                isAllInside = isInside(span[start].key >> shift)
                let end = runEnd(from: start)
                ends[runCount] = UInt8(truncatingIfNeeded: end - span.startIndex)
                runCount += 1
                start = end
            }
            guard isAllInside else {
                foldSparse(span, of: id, runEnd: runEnd, &receiver)
                return
            }
            func runRange(_ run: Int) -> Range<Int> {
                (span.startIndex + (run == 0 ? 0 : Int(ends[run - 1])))..<(span.startIndex + Int(ends[run]))
            }
            var longest = 0
            for run in 1..<max(runCount, 1) where runRange(run).count > runRange(longest).count { longest = run }
            var before = CellTotals?.none
            var after = CellTotals?.none
            for run in 0..<runCount {
                let range = runRange(run)
                let runCode = span[range.lowerBound].key >> shift
                let totals: CellTotals?
                if run == longest {
                    after = CellTotals(run: span[range.upperBound...], ofLeaf: id)
                    var others = before
                    if let after { others.append(after) }
                    totals = .run(span[range], ofLeaf: id, summary: leaf, less: others)
                } else if run == longest + 1 && run == runCount - 1 {
                    totals = after  // the only run after the longest: added up already
                } else {
                    totals = CellTotals(run: span[range], ofLeaf: id)
                    if run < longest, let totals { before.append(totals) }
                }
                if let totals {
                    fold(runCode, isInside: true, .entries(of: id, positions: range), { totals }, &receiver)
                }
            }
        }
    }

    /// Folds the runs of a leaf's entries that are cells of the region, testing each entry's key against the region's
    /// bounds (``CellRegion/keyBounds``): a few instructions an entry, so that a small view costs a scan of the leaves
    /// its span of keys crosses (at most 64 entries each), not a search for each of its cells.
    mutating func foldSparse(
        _ span: Run<IndexEntry>.SubSequence, of id: Int32, runEnd: (Int) -> Int,
        _ receiver: inout some CellReceiver
    ) {
        let bounds = keyBounds
        var start = span.startIndex
        while start < span.endIndex {
            guard bounds.contains(key: span[start].key) else {
                start += 1
                continue
            }
            let end = runEnd(start)
            if let totals = CellTotals(run: span[start..<end], ofLeaf: id) {
                fold(
                    span[start].key >> shift, isInside: true, .entries(of: id, positions: start..<end), { totals },
                    &receiver)
            }
            start = end
        }
    }

    /// Whether a cell is one of the region's (the cell being folded is).
    @inline(__always) mutating func isInside(_ cellCode: UInt64) -> Bool {
        if isFolding && cellCode == code { return true }
        if cellCode == rejected { return false }
        guard region.contains(code: cellCode) else {
            rejected = cellCode
            return false
        }
        return true
    }

    mutating func walk(
        _ tree: MortonTree, node: Int32, height: Int, summary nodeSummary: Summary, _ receiver: inout some CellReceiver
    ) {
        let firstCode = nodeSummary.firstKey >> shift
        let lastCode = nodeSummary.lastKey >> shift
        guard region.mayHold(codes: firstCode, through: lastCode), region.intersects(nodeSummary) else { return }
        if firstCode == lastCode {
            fold(firstCode, .node(node, height: height), { CellTotals(nodeSummary) }, &receiver)
            return
        }
        if height == 0 {
            tree.leaves[Int(node)].entries.withRun { entries in
                foldStraddling(entries, of: nodeSummary, id: node, &receiver)
            }
            return
        }
        let n = Int(node)
        var slot = tree.branches[n].firstSlot(reaching: keys.lowerBound)
        while slot < tree.branches[n].children.count && tree.branches[n].summaries[slot].firstKey <= keys.upperBound {
            let child = tree.branches[n].summaries[slot]
            let childCode = child.firstKey >> shift
            guard childCode == child.lastKey >> shift else {
                walk(tree, node: tree.branches[n].children[slot], height: height - 1, summary: child, &receiver)
                slot += 1
                continue
            }
            // A run of children inside one cell folds in whole, from their summaries.
            let runEnd = tree.branches[n].firstSlot(from: slot + 1, passing: (childCode << shift) | ((1 << shift) &- 1))
            fold(
                childCode, .children(of: node, slots: slot..<runEnd, height: height - 1),
                { tree.branches[n].totals(of: slot..<runEnd) }, &receiver)
            slot = runEnd
        }
    }
}
