extension MortonTree {
    /// Adds an entry after every entry with the same key.
    /// - Complexity: O(*L* + *F* log *n*) for the moves in the nodes; summaries update in O(1) a level.
    @usableFromInline
    mutating func insert(_ entry: Entry) {
        aggregates?.makeUnique()
        let (summary, split) = insert(entry, into: root, height: height, summary: rootSummary)
        if let split {
            let newRoot = allocateBranch(Branch(children: [root, split.node], summaries: [summary, split.summary]))
            root = newRoot
            height += 1
            rebuildAggregates(of: newRoot, height: height)
        }
        rootSummary = rootSummary?.inserting(entry) ?? Summary(entry)
        if coarseCells != nil {
            // The values as a cursor: the rows passed as an argument were a copy (a retain and a release).
            coarseCells?.insert(entry, values: aggregates?.rows.prepared.cursor.reading)
        } else if count >= CoarseCells.keptFrom {
            coarseCells = CoarseCells(of: self)
        }
    }

    /// Inserts into the subtree at `node`, whose summary is `summary` (`nil` for an empty root), and
    /// returns the subtree's new summary and, if it split, its new right sibling.
    private mutating func insert(
        _ entry: Entry, into node: Int32, height: Int, summary: Summary?
    ) -> (Summary, (node: Int32, summary: Summary)?) {
        let n = Int(node)
        if height == 0 {
            let position = leaves[n].entries.upperBound(of: entry.key)
            leaves[n].entries.insert(entry, at: position)
            aggregates?.forEachColumn { $0.inserted(at: position, of: node, count: leaves[n].entries.count) }
            guard leaves[n].entries.count > Self.leafCapacity else {
                aggregatesAdded(entry, to: node, isLeaf: true)
                return (summary?.inserting(entry) ?? Summary(entry), nil)
            }
            let half = leaves[n].entries.count / 2
            var right = ContiguousArray<Entry>()
            right.reserveCapacity(Self.leafCapacity)
            right.append(contentsOf: leaves[n].entries[half...])
            leaves[n].entries.removeSubrange(half...)
            let sibling = allocateLeaf(Leaf(entries: right))
            aggregates?.forEachColumn { $0.split(node, at: half, count: half + right.count, into: sibling) }
            rebuildAggregates(of: node, height: 0)
            rebuildAggregates(of: sibling, height: 0)
            return (Summary(nonEmpty: leaves[n].entries), (sibling, Summary(nonEmpty: right)))
        }
        let slot = branches[n].slot(forInserting: entry.key)
        let (childSummary, childSplit) = insert(
            entry, into: branches[n].children[slot], height: height - 1, summary: branches[n].summaries[slot])
        branches[n].summaries[slot] = childSummary
        if let childSplit {
            branches[n].children.insert(childSplit.node, at: slot + 1)
            branches[n].summaries.insert(childSplit.summary, at: slot + 1)
        }
        guard branches[n].children.count > Self.branchCapacity else {
            aggregatesAdded(entry, to: node, isLeaf: false)
            return (summary?.inserting(entry) ?? Summary(nonEmptyCombining: branches[n].summaries), nil)
        }
        let half = branches[n].children.count / 2
        let right = Branch(
            children: ContiguousArray(branches[n].children[half...]),
            summaries: ContiguousArray(branches[n].summaries[half...]))
        branches[n].children.removeSubrange(half...)
        branches[n].summaries.removeSubrange(half...)
        let sibling = allocateBranch(right)
        rebuildAggregates(of: node, height: height)
        rebuildAggregates(of: sibling, height: height)
        return (
            Summary(nonEmptyCombining: branches[n].summaries), (sibling, Summary(nonEmptyCombining: right.summaries))
        )
    }
}

extension MortonTree {
    /// Tells the aggregates' columns that `entry` was added below a node.
    @inline(__always) func aggregatesAdded(_ entry: Entry, to node: Int32, isLeaf: Bool) {
        aggregates?.forEachColumn { $0.added(entry, to: node, isLeaf: isLeaf) }
    }

    /// Tells the aggregates' columns that `entry` was removed from below a node.
    @inline(__always) func aggregatesRemoved(_ entry: Entry, from node: Int32, height: Int) {
        aggregates?.forEachColumn { $0.removed(entry, from: node, height: height, in: self) }
    }

    /// Recomputes a node's aggregates, whose children's are current.
    @inline(__always) func rebuildAggregates(of node: Int32, height: Int) {
        aggregates?.forEachColumn { $0.rebuild(node, height: height, in: self) }
    }
}

extension MortonTree {
    /// Starts a batch of changes: until ``finishBatch()``, the coarse cells change only at their deepest level, and the
    /// levels above are brought up to date once at the end (``CoarseCells/beginBatch()``).
    @usableFromInline
    mutating func beginBatch() {
        coarseCells?.beginBatch()
    }

    /// Ends a batch that ``beginBatch()`` started.
    @usableFromInline
    mutating func finishBatch() {
        // Moved out while it changes, so that it stays uniquely referenced.
        guard var coarseCells = coarseCells.take() else { return }
        coarseCells.finishBatch(self)
        self.coarseCells = coarseCells
    }
}
