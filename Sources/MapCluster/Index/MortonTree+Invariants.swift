extension MortonTree {
    /// Checks what the tree promises, and traps naming the first promise broken: every stored summary, the coarse
    /// cells, the nodes' aggregate rows and every user reduction's node values equal a recomputation from what lies
    /// below them, keys are in order within and across nodes, no node is over capacity or empty (but an empty root
    /// leaf), and every leaf is at the same depth.
    ///
    /// For tests, after random edits. It visits every entry: O(*n*).
    func _checkInvariants() {
        guard let rootSummary else {
            precondition(height == 0 && leaves[Int(root)].entries.isEmpty, "an empty tree is one empty leaf")
            precondition(coarseCells == nil, "an empty tree keeps no coarse cells")
            return
        }
        let computed = checkNode(root, height: height)
        precondition(computed.matches(rootSummary), "the root's summary differs from its recomputation")
        if let coarseCells {
            precondition(count >= CoarseCells.keptFrom / 2, "a small tree keeps no coarse cells")
            precondition(coarseCells.matches(CoarseCells(of: self)), "the coarse cells differ from their recomputation")
        } else {
            precondition(count < CoarseCells.keptFrom, "a large tree keeps coarse cells")
        }
        if let rows = aggregates?.rows {
            // Integers, extremes and keys exactly, pairs to their value: equal to a recomputation whatever order the
            // changes came in.
            let rebuilt = NodeRows(layout: rows.layout)
            rebuilt.store = rows.store
            rebuilt.build(self)
            precondition(rows.matches(rebuilt, in: self), "the nodes' aggregate rows differ from their recomputation")
        }
        for column in aggregates?.custom ?? [] {
            precondition(
                column.matchesRecomputation(in: self), "a user reduction's node values differ from their recomputation")
        }
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
            precondition(
                aggregates?.rows.checkpointsMatchEntries(of: node, entries) ?? true,
                "a leaf's checkpoints differ from its entries below them")
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
    /// agree: every entry's slot is live and holds an element of the entry's key, which the slot table finds there, and
    /// every live slot has exactly one entry.
    ///
    /// For tests, after random edits. One walk of the tree: O(*n*).
    func _checkInvariants() {
        tree._checkInvariants()
        var isHole = [Bool](repeating: false, count: store.count)
        for slot in freeSlots {
            precondition(!isHole[Int(slot)], "no hole is listed twice")
            isHole[Int(slot)] = true
        }
        var seen = isHole
        tree.forEachEntry(in: 0...UInt64.max) { entry in
            let slot = Int(entry.slot)
            precondition(!seen[slot], "each live slot has one entry, and a hole has none")
            seen[slot] = true
            let stored = store[slot]
            precondition(stored.key == entry.key, "an entry's key is its element's")
            precondition(slots.find(stored.element, in: store).slot == entry.slot, "the slot table finds every element")
            return true
        }
        precondition(!seen.contains(false), "every live slot has its entry")
    }
}

extension NodeRows {
    /// Whether the rows of every node of the tree equal another's: integers, extremes and keys exactly, pairs to their
    /// value within a relative 1e-12 (the coarse cells' rows are compared by ``CoarseCells/matches(_:)``).
    func matches(_ other: NodeRows, in tree: MortonTree) -> Bool {
        guard tree.count > 0 else { return true }
        func nodeMatches(_ node: Int32, height: Int) -> Bool {
            let isLeaf = height == 0
            guard rowsMatch(row(of: node, isLeaf: isLeaf), other.row(of: node, isLeaf: isLeaf)) else { return false }
            guard height > 0 else { return true }
            return tree.branches[Int(node)].children.allSatisfy { nodeMatches($0, height: height - 1) }
        }
        return nodeMatches(tree.root, height: tree.height)
    }

    /// Whether a leaf's checkpoints count its entries below their bounds, and add them up as a recomputation does.
    func checkpointsMatchEntries(of leaf: Int32, _ entries: ContiguousArray<IndexEntry>) -> Bool {
        guard keepsCheckpoints else { return true }
        let (width, allWidth) = (checkpointWidth, layout.all.width)
        let block = store.leaves[Int(leaf)]
        return (0..<Self.checkpointsPerLeaf).allSatisfy { k in
            let at = checkpointsAt + k * width
            let below = entries.lowerBound(of: block[at])
            guard block[at + 1] == UInt64(below) else { return false }
            var recomputed = ContiguousArray<UInt64>(repeating: 0, count: allWidth)
            recomputed.withMutableCursor { total in
                block.withCursor { block in
                    for position in 0..<below {
                        _ = layout.addEntry(
                            entries[position], block + store.entryAt(position), toAll: total, precise: true)
                    }
                }
            }
            return block.withCursor { kept in
                recomputed.withCursor { RowLayout.blockMatches(layout.all, kept + at + 2, $0) }
            }
        }
    }

    private func rowsMatch(_ mine: ContiguousArray<UInt64>, _ theirs: ContiguousArray<UInt64>) -> Bool {
        mine.count >= width && theirs.count >= width
            && mine.withCursor { mine in theirs.withCursor { theirs in layout.rowMatches(mine, theirs) } }
    }
}

extension RowLayout {
    /// Whether two rows say the same: integers, extremes and keys exactly, pairs to their value within a relative
    /// 1e-12 (for the invariant checks).
    func rowMatches(_ mine: Cursor<UInt64>, _ theirs: Cursor<UInt64>) -> Bool {
        Self.blockMatches(all, mine, theirs)
            && (0..<categoryCount).allSatisfy {
                Self.blockMatches(category, mine + categoryBlock($0), theirs + categoryBlock($0))
            }
    }

    /// Whether two blocks of one shape say the same, as ``rowMatches(_:_:)`` compares them.
    static func blockMatches(_ block: Block, _ mine: Cursor<UInt64>, _ theirs: Cursor<UInt64>) -> Bool {
        for i in 0..<block.width {
            let pair = i - block.pairsAt
            guard pair >= 0 && pair < 2 * block.pairs else {
                if mine[i] != theirs[i] { return false }
                continue
            }
            guard pair % 2 == 0 else { continue }
            let (value, other) = (pairValue(mine + i), pairValue(theirs + i))
            if !(abs(value - other) <= 1e-12 * max(abs(value), abs(other))) { return false }
        }
        return true
    }
}
