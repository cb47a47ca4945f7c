/// What receives a walk of the rows over key ranges (``NodeRows/walk(ranges:tree:_:)``): whole nodes that lie inside a
/// range, and the entries of leaves that straddle one.
///
/// A protocol rather than closures: the walk is specialized for each receiver.
protocol RowVisitor {
    /// Whether a node's row stands for its entries in a range; otherwise they are visited (a predicate on entries).
    func takesNodes(in range: Int) -> Bool
    /// A node whose entries all lie in range `range`: its row.
    mutating func node(_ row: Cursor<UInt64>, range: Int)
    /// An entry in range `range`, and what it stores.
    mutating func entry(_ entry: IndexEntry, _ values: Cursor<UInt64>, range: Int)
    /// Takes a leaf that straddles `candidates` of `ranges` in a way of its own, from its row, its checkpoints (when
    /// the rows keep them, ``NodeRows/checkpointsAt``) and fewer visits; false to have its entries handed over one by
    /// one.
    mutating func leaf(_ leaf: LeafView, ranges: Run<ClosedRange<UInt64>>, candidates: Range<Int>)
        -> Bool
}

extension RowVisitor {
    mutating func leaf(_ leaf: LeafView, ranges: Run<ClosedRange<UInt64>>, candidates: Range<Int>)
        -> Bool
    { false }
}

/// What a walk knows of a leaf: its entries, what they store, its row and its checkpoints.
struct LeafView {
    let entries: Run<IndexEntry>
    /// What the entries store, `entryWidth` doubles each (as bit patterns).
    let values: Cursor<UInt64>
    let entryWidth: Int
    let row: Cursor<UInt64>
    /// The leaf's checkpoints (``NodeRows/checkpointsAt``); `nil` when the rows keep none.
    let checkpoints: Cursor<UInt64>?
}

/// The tree's leaves and the rows of its nodes, bound once for a walk or an answer: a node's row by its height, and what
/// a leaf's array holds (``LeafView``).
struct RowTables {
    let leaves: ContiguousArray<MortonTree.Leaf>
    let leafBlocks: ContiguousArray<ContiguousArray<UInt64>>
    let branchRows: ContiguousArray<ContiguousArray<UInt64>>
    let valuesAt: Int
    let entryWidth: Int
    /// Where a leaf's checkpoints start in its block; `nil` when the rows keep none.
    let checkpointsAt: Int?

    init(_ rows: NodeRows, tree: borrowing MortonTree) {
        (leaves, leafBlocks, branchRows) = (tree.leaves, rows.store.leaves.arrays, rows.store.branches.arrays)
        (valuesAt, entryWidth) = (rows.store.entryAt(0), rows.entryWidth)
        checkpointsAt = rows.keepsCheckpoints ? rows.checkpointsAt : nil
    }

    /// Calls `body` with the row of a node at a height (0 for a leaf).
    @inline(__always) func withRow(_ node: Int, height: Int, _ body: (Cursor<UInt64>) -> Void) {
        if height == 0 { leafBlocks[node].withCursor(body) } else { branchRows[node].withCursor(body) }
    }

    /// Calls `body` with what a leaf's array holds.
    @inline(__always) func withLeaf(_ leaf: Int, _ body: (LeafView) -> Void) {
        let (valuesAt, entryWidth, checkpointsAt) = (valuesAt, entryWidth, checkpointsAt)
        leaves[leaf].entries.withRun { entries in
            leafBlocks[leaf].withCursor { block in
                body(
                    LeafView(
                        entries: entries, values: block + valuesAt, entryWidth: entryWidth, row: block,
                        checkpoints: checkpointsAt.map { block + $0 }))
            }
        }
    }
}

extension NodeRows {
    /// Walks the tree once for all `ranges` (disjoint, in key order), handing `visitor` the rows of the subtrees inside
    /// a range and the entries of the leaves that straddle one: the descents of neighbouring ranges are shared.
    /// - Complexity: O(*r* *F* log *n* + *e*) for *r* ranges and *e* entries in leaves that straddle them; every entry
    ///   of a range whose nodes the visitor does not take (``RowVisitor/takesNodes(in:)``).
    func walk<Visitor: RowVisitor>(ranges: [ClosedRange<UInt64>], tree: MortonTree, _ visitor: inout Visitor) {
        guard tree.rootSummary != nil, !ranges.isEmpty, width > 0 else { return }
        ranges.withRun { ranges in
            var walk = Walk(tables: RowTables(self, tree: tree), ranges: ranges, visitor: visitor)
            tree.descend(ranges: ranges, &walk)
            visitor = walk.visitor
        }
    }

    /// One walk: the nodes of a descent as their rows, and the entries of the leaves that straddle ranges.
    private struct Walk<Visitor: RowVisitor>: RangeDescent {
        let tables: RowTables
        let ranges: Run<ClosedRange<UInt64>>
        var visitor: Visitor

        mutating func whole(_ node: Int32, height: Int, summary: Summary, range: Int) -> Bool {
            guard visitor.takesNodes(in: range) else { return false }
            tables.withRow(Int(node), height: height) { visitor.node($0, range: range) }
            return true
        }

        mutating func leaf(_ leaf: Int32, candidates: Range<Int>) {
            let (ranges, entryWidth) = (ranges, tables.entryWidth)
            tables.withLeaf(Int(leaf)) { view in
                if visitor.leaf(view, ranges: ranges, candidates: candidates) { return }
                view.entries.forEachEntry(in: ranges, candidates: candidates) { position, entry, range in
                    visitor.entry(entry, view.values + position * entryWidth, range: range)
                }
            }
        }
    }
}

// MARK: - Clusters' aggregates

extension NodeRows {
    /// Adds a single element's entry, at its place in `tree`, to its answer's row (``RowLayout/all``), unless
    /// `categories` leaves it out: the aggregates of a single the query found, without a walk.
    /// - Complexity: O(1).
    func addEntry(
        at place: EntryPlace, of tree: MortonTree, categories: CategorySet?, into row: MutableCursor<UInt64>
    ) {
        guard width > 0 else { return }
        let position = Int(place.position)
        let entry = tree.leaves[Int(place.leaf)].entries[position]
        if let categories, !categories.admits(code: entry.category) { return }
        store.leaves[Int(place.leaf)].withCursor { block in
            _ = layout.addEntry(entry, block + store.entryAt(position), toAll: row, precise: false)
        }
    }
}

/// What a clustering pass's receiver does with the parts of each cell (``CellPart``) and the drafts it made of them.
///
/// Nothing (``NoParts``), or keep those of the cells drafted as one cluster each (``CellParts``). A type parameter of
/// the receiver, so that a query without aggregates runs the fold it always did.
protocol DraftParts {
    /// Takes a part of the cell being folded.
    mutating func take(_ part: CellPart)
    /// Takes what the cell whose parts were taken was drafted as: `drafts` from `first` on.
    mutating func drafted(from first: Int, in drafts: [ClusterDraft])
}

/// The parts of no interest: a query without aggregates, or whose aggregates are walked for.
struct NoParts: DraftParts {
    @inline(__always) mutating func take(_ part: CellPart) {}
    @inline(__always) mutating func drafted(from first: Int, in drafts: [ClusterDraft]) {}
}

/// The parts (``CellPart``) of each cell a clustering pass drafts as one cluster of the whole cell, as its fold takes
/// them: what the answer adds up the cluster's row from (``PartReader``), without a walk of the tree.
///
/// A cell's parts are those the walk of its key range would visit (whole nodes, runs of a leaf's entries), in the same
/// order, so its row is the same, bit for bit.
struct CellParts: DraftParts {
    /// The parts of each such cell, one cell after another, then those of the cell being folded but its first.
    private(set) var parts: [CellPart] = []
    /// Each such cell's draft and where its parts end in `parts`, in order.
    private(set) var cells: [(draft: Int, end: Int)] = []
    /// The first part of the cell being folded, while it is its only one: a cell of one part that is not drafted as
    /// a cluster (a small view's single elements) then takes no array.
    private var pending: CellPart?

    /// Where the parts of the cell being folded start in `parts`.
    private var start = 0

    @inline(__always) mutating func take(_ part: CellPart) {
        if pending == nil && parts.count == start {
            pending = part
            return
        }
        if let first = pending {
            keep(first)
            pending = nil
        }
        keep(part)
    }

    @inline(__always) mutating func drafted(from first: Int, in drafts: [ClusterDraft]) {
        if drafts.count == first + 1, case .cell = drafts[first].identity {
            if let part = pending { keep(part) }
            if parts.count > start {
                // Room for as many cells as the parts take at once, rather than doubling up to them from one.
                if cells.capacity == 0 { cells.reserveCapacity(1_024) }
                cells.append((first, parts.count))
            }
            start = parts.count
        } else if parts.count > start {
            parts.removeLast(parts.count - start)
        }
        pending = nil
    }

    /// Appends a part to `parts`, which take room for the parts of a few hundred cells at once when they take their
    /// first, rather than doubling up to them from one (those copies took 1.5% of a view of 500 clusters).
    @inline(__always) private mutating func keep(_ part: CellPart) {
        if parts.capacity == 0 { parts.reserveCapacity(1_024) }
        parts.append(part)
    }
}

/// Adds up the rows of cells from their parts (``CellParts``).
///
/// What a walk of each cell's key range adds up, in the same order. The tree's nodes and their rows are bound once,
/// for every cell of an answer.
struct PartReader {
    let layout: RowLayout
    let branches: ContiguousArray<MortonTree.Branch>
    let tables: RowTables

    /// A reader of rows that keep checkpoints (``NodeRows/keepsCheckpoints``).
    init(_ nodeRows: NodeRows, tree: borrowing MortonTree) {
        (layout, branches, tables) = (nodeRows.layout, tree.branches, RowTables(nodeRows, tree: tree))
    }

    /// Adds the rows of a cell's parts (those of `parts` at `positions`) into an answer's row.
    func add(_ parts: [CellPart], _ positions: Range<Int>, into target: MutableCursor<UInt64>) {
        for position in positions {
            switch parts[position] {
            case .node(let node, let height):
                addNode(Int(node), height: height, into: target)
            case .children(let branch, let slots, let height):
                for slot in slots { addNode(Int(branches[Int(branch)].children[slot]), height: height, into: target) }
            case .entries(let leaf, let positions):
                tables.withLeaf(Int(leaf)) { view in
                    guard let checkpoints = view.checkpoints else {
                        preconditionFailure("a cell's parts are kept only where the rows keep checkpoints")
                    }
                    layout.addRun(positions, of: view, checkpoints: checkpoints, into: target)
                }
            }
        }
    }

    @inline(__always) private func addNode(_ node: Int, height: Int, into target: MutableCursor<UInt64>) {
        tables.withRow(node, height: height) { layout.addNode($0, categories: nil, into: target) }
    }
}

/// Adds up the aggregates of each range into a row of the shape of a block of all (``RowLayout/all``): what a
/// cluster's answer holds.
///
/// With `categories`, the counts of those categories and the other sections of their blocks; otherwise the block of
/// all. Each range's match says which of its entries count; a range that takes them all takes whole nodes' rows.
struct AggregateRowsVisitor: RowVisitor {
    let layout: RowLayout
    /// The query's rules: its category filter, and the member filters' predicate.
    let rules: ClusteringRules
    /// The answer's rows, `layout.all.width` words each.
    let rows: MutableCursor<UInt64>
    /// The answer's row of each range.
    let targets: [Int]
    let matches: [AggregateRequest.Match]

    var categories: CategorySet? { rules.categories }

    func takesNodes(in range: Int) -> Bool {
        if case .all = matches[range] { true } else { false }
    }

    mutating func node(_ row: Cursor<UInt64>, range: Int) {
        layout.addNode(row, categories: categories, into: rows + targets[range] * layout.all.width)
    }

    mutating func entry(_ entry: IndexEntry, _ values: Cursor<UInt64>, range: Int) {
        if let categories, !categories.admits(code: entry.category) { return }
        guard matches[range].takes(entry, rules: rules) else { return }
        _ = layout.addEntry(entry, values, toAll: rows + targets[range] * layout.all.width, precise: false)
    }

    /// A leaf that straddles ranges, when answers have no minima or maxima.
    ///
    /// Without a category filter, each range's run of the leaf comes from the leaf's checkpoints: the prefix totals at
    /// its end less those at its start, a handful of entries each (``RowLayout/addRun(_:of:checkpoints:into:)``).
    /// Otherwise its longest run is the leaf's row less every entry outside the run, so only those are visited (as the
    /// clustering pass's fold does), about a quarter of a leaf instead of all of it; or, when the ranges hold fewer
    /// entries than lie outside that run, the entries in them alone.
    mutating func leaf(_ leaf: LeafView, ranges: Run<ClosedRange<UInt64>>, candidates: Range<Int>)
        -> Bool
    {
        let all = layout.all
        guard all.mins == 0, all.maxes == 0, candidates.allSatisfy({ takesNodes(in: $0) }) else { return false }
        let (entries, values, entryWidth, row) = (leaf.entries, leaf.values, leaf.entryWidth, leaf.row)
        // Each candidate's run of the leaf: a few steps at either end, then a binary search (runs are short in a fine
        // grid, long in a coarse one).
        func firstPosition(from start: Int, notBelow key: UInt64) -> Int {
            var position = start
            while position < entries.count && position < start + 8 && entries[position].key < key { position += 1 }
            return position == start + 8 ? entries[position...].lowerBound(of: key) : position
        }
        func runEnd(of range: Int, from start: Int) -> Int {
            ranges[range].upperBound == .max
                ? entries.count : firstPosition(from: start, notBelow: ranges[range].upperBound + 1)
        }
        if categories == nil, let checkpoints = leaf.checkpoints {
            var start = 0
            for range in candidates {
                start = firstPosition(from: start, notBelow: ranges[range].lowerBound)
                let end = runEnd(of: range, from: start)
                if start < end {
                    layout.addRun(
                        start..<end, of: leaf, checkpoints: checkpoints, into: rows + targets[range] * all.width)
                }
                start = end
            }
            return true
        }
        var longest = (range: -1, start: 0, end: 0)
        var inRanges = 0
        var start = 0
        for range in candidates {
            start = firstPosition(from: start, notBelow: ranges[range].lowerBound)
            let end = runEnd(of: range, from: start)
            if end - start > longest.end - longest.start { longest = (range, start, end) }
            inRanges += end - start
            start = end
        }
        // Fewer entries in the ranges than outside the longest run (a small cell in a big leaf, what a zoomed-in view
        // asks): they are added up one by one instead.
        guard longest.range >= 0, inRanges > entries.count - (longest.end - longest.start) else { return false }
        return MutableCursor<UInt64>.withScratch(capacity: 2 * all.width) { scratch in
            let others = scratch
            let run = others + all.width
            RowLayout.clear(all, at: others)
            // Every entry outside the longest run is added up once: a run in another range into a row of its own,
            // which goes to that range's answer and to the others; an entry in no range into the others.
            var range = candidates.lowerBound
            var runRange = -1
            func flush() {
                guard runRange >= 0 else { return }
                RowLayout.merge(all, run.reading, into: all, rows + targets[runRange] * all.width, precise: false)
                RowLayout.merge(all, run.reading, into: all, others, precise: false)
                runRange = -1
            }
            for position in entries.indices where position < longest.start || position >= longest.end {
                let entry = entries[position]
                if let categories, !categories.admits(code: entry.category) { continue }
                while range < candidates.upperBound && ranges[range].upperBound < entry.key { range += 1 }
                let inRange = range < candidates.upperBound && entry.key >= ranges[range].lowerBound ? range : -1
                if inRange != runRange {
                    flush()
                    if inRange >= 0 {
                        runRange = inRange
                        RowLayout.clear(all, at: run)
                    }
                }
                _ = layout.addEntry(
                    entry, values + position * entryWidth, toAll: inRange >= 0 ? run : others, precise: false)
            }
            flush()
            let target = rows + targets[longest.range] * all.width
            layout.addNode(row, categories: categories, into: target)
            RowLayout.subtract(all, others.reading, from: target)
            return true
        }
    }
}

extension RowLayout {
    /// Adds the entries of a run of a leaf to an answer's row from the leaf's prefix totals: those at the run's end
    /// less those at its start, each the nearest checkpoint (or none, or the whole leaf's row) and the entries
    /// between; or the run's entries themselves, when they are fewer.
    /// - Complexity: O(1): about 8 entries at each end, for checkpoints 16 entries apart.
    func addRun(
        _ run: Range<Int>, of leaf: LeafView, checkpoints: Cursor<UInt64>,
        into target: MutableCursor<UInt64>
    ) {
        func add(_ positions: Range<Int>, sign: Int64) {
            for position in positions {
                _ = addEntry(
                    leaf.entries[position], leaf.values + position &* leaf.entryWidth, toAll: target, sign: sign,
                    precise: false)
            }
        }
        // One or two entries cost less than any block of totals: the checkpoints need not be looked at.
        guard run.count > 2 else { return add(run, sign: 1) }
        let (count, width) = (leaf.entries.count, NodeRows.checkpointWidth(self))
        // The prefix nearest a position: of no entry, up to a checkpoint, or the whole leaf; with its totals.
        func anchor(_ position: Int) -> (end: Int, totals: Cursor<UInt64>?) {
            var best = (end: count, totals: Cursor?(leaf.row))
            if position < count - position { best = (0, nil) }
            for k in 0..<NodeRows.checkpointsPerLeaf {
                let checkpoint = checkpoints + k &* width
                let end = Int(checkpoint[1])
                if abs(position - end) < abs(position - best.end) { best = (end, checkpoint + 2) }
            }
            return best
        }
        let (first, last) = (anchor(run.lowerBound), anchor(run.upperBound))
        // A block of totals costs about two entries.
        let fromAnchors =
            abs(run.lowerBound - first.end) + abs(run.upperBound - last.end) + (first.totals == nil ? 0 : 2)
            + (last.totals == nil ? 0 : 2)
        guard fromAnchors < run.count else {
            add(run, sign: 1)
            return
        }
        if let totals = last.totals { Self.merge(all, totals, into: all, target, precise: false) }
        if let totals = first.totals { Self.subtract(all, totals, from: target) }
        add(last.end..<max(last.end, run.upperBound), sign: 1)
        add(run.upperBound..<max(run.upperBound, last.end), sign: -1)
        add(first.end..<max(first.end, run.lowerBound), sign: -1)
        add(run.lowerBound..<max(run.lowerBound, first.end), sign: 1)
    }

    /// Takes the integers and pairs of `source` (of a block of shape `block`, without minima or maxima) out of
    /// `target`'s, word by word.
    @inline(__always) static func subtract(
        _ block: Block, _ source: Cursor<UInt64>, from target: MutableCursor<UInt64>
    ) {
        for i in 0..<block.ints { target[i] &-= source[i] }
        for i in block.pairsAt..<block.minsAt {
            target[i] = (Double(bitPattern: target[i]) - Double(bitPattern: source[i])).bitPattern
        }
    }
}

extension RowLayout {
    /// Adds what a row (of a node or a coarse cell) holds to an answer's row: its block of all, or with `categories`,
    /// their counts and blocks.
    @inline(__always) func addNode(
        _ row: Cursor<UInt64>, categories: CategorySet?, into target: MutableCursor<UInt64>
    ) {
        guard let categories else {
            Self.merge(all, row, into: all, target, precise: false)
            return
        }
        categories.forEach(below: categoryCount) { position in
            target[position] &+= row[position]
            Self.merge(
                category, row + categoryBlock(position), into: all, target, intsFrom: 0, intsTo: categoryCount,
                precise: false)
        }
    }
}

// MARK: - Categories' clustering totals

/// What a query filtered by categories knows of a range's members of those categories: their count, coordinate sums
/// and key span, from the categories' blocks.
struct CategoryTotals: Equatable {
    var count = 0
    var latitudeSum: Int64 = 0
    var longitudeSum: Int64 = 0
    var firstKey = UInt64.max
    var lastKey: UInt64 = 0

    /// Adds one entry.
    @inline(__always) mutating func add(_ entry: IndexEntry) {
        count += 1
        latitudeSum &+= Summary.fixedPoint(entry.coordinate.latitude)
        longitudeSum &+= Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        firstKey = min(firstKey, entry.key)
        lastKey = max(lastKey, entry.key)
    }

    /// Adds the members of `categories` that a row holds.
    @inline(__always) mutating func add(_ row: Cursor<UInt64>, categories: CategorySet, layout: RowLayout) {
        categories.forEach(below: layout.categoryCount) { position in
            let members = Int(truncatingIfNeeded: row[position])
            guard members > 0 else { return }
            let block = row + layout.categoryBlock(position)
            count &+= members
            latitudeSum &+= Int64(bitPattern: block[layout.latitudeSumAt])
            longitudeSum &+= Int64(bitPattern: block[layout.latitudeSumAt &+ 1])
            firstKey = min(firstKey, block[layout.category.keyMinsAt])
            lastKey = max(lastKey, block[layout.category.keyMaxesAt])
        }
    }

    /// The totals a clustering pass reads, for a non-empty value of the members of `categories` in `tree`.
    ///
    /// Members on one location share a key, so only members whose key span is one key can share a location: then the
    /// entries with that key are read, which settles it and gives the location (and a single member's slot).
    /// - Complexity: O(1); O(*F* log *n* + *d*) when every member has one key, which *d* entries share.
    func cellTotals(of categories: CategorySet, in tree: MortonTree) -> CellTotals {
        // The location means nothing unless the members share one, which only the entries can say.
        var totals = CellTotals(
            count: count, firstKey: firstKey, lastKey: lastKey, latitudeSum: latitudeSum, longitudeSum: longitudeSum,
            location: Coordinate(uncheckedLatitude: 0, longitude: 0), isSameLocation: false)
        guard firstKey == lastKey else { return totals }
        var first: IndexEntry?
        var isSameLocation = true
        tree.forEachEntry(in: firstKey...lastKey) { entry in
            guard categories.admits(code: entry.category) else { return true }
            guard let first else {
                first = entry
                return true
            }
            isSameLocation = entry.coordinate == first.coordinate
            return isSameLocation
        }
        guard let first else { preconditionFailure("the tree holds the members its rows count") }
        totals.location = first.coordinate
        totals.isSameLocation = isSameLocation
        if count == 1 { totals.firstSlot = first.slot }
        return totals
    }
}

/// Adds up the members of some categories in each range.
struct CategoryTotalsVisitor: RowVisitor {
    let layout: RowLayout
    let categories: CategorySet
    var totals: [CategoryTotals]

    func takesNodes(in range: Int) -> Bool { true }

    mutating func node(_ row: Cursor<UInt64>, range: Int) {
        totals[range].add(row, categories: categories, layout: layout)
    }

    mutating func entry(_ entry: IndexEntry, _ values: Cursor<UInt64>, range: Int) {
        if categories.admits(code: entry.category) { totals[range].add(entry) }
    }
}

extension NodeRows {
    /// The totals of the members of `categories` in each of `ranges` (disjoint, in key order), in one walk.
    func categoryTotals(ranges: [ClosedRange<UInt64>], categories: CategorySet, tree: MortonTree) -> [CategoryTotals] {
        var visitor = CategoryTotalsVisitor(
            layout: layout, categories: categories, totals: Array(repeating: CategoryTotals(), count: ranges.count))
        walk(ranges: ranges, tree: tree, &visitor)
        return visitor.totals
    }
}

// MARK: - Categories' bounds

extension NodeRows {
    /// The smallest rectangle holding the members of `categories` with keys in `range` (to the index's grid), or `nil`
    /// when there are none.
    ///
    /// One descent: a node inside the range that holds none of the categories, or whose bounds lie within those of the
    /// members found before it, is passed over; one whose members all belong to them gives its bounds; any other is
    /// descended, down to its leaves' entries.
    /// - Complexity: O(*F* log *n*) for each node descended, those whose bounds reach past the members before them
    ///   (about the nodes along the rectangle's edges), and their entries.
    func categoryBounds(in range: ClosedRange<UInt64>, categories: CategorySet, tree: MortonTree) -> MapRect? {
        var bounder = CategoryBounds(rows: self, leaves: tree.leaves, range: range, categories: categories)
        Run.withOne(range) { tree.descend(ranges: $0, &bounder) }
        return bounder.bounds
    }

    /// The descent of ``categoryBounds(in:categories:tree:)``.
    private struct CategoryBounds: RangeDescent {
        let rows: NodeRows
        let leaves: ContiguousArray<MortonTree.Leaf>
        let range: ClosedRange<UInt64>
        let categories: CategorySet
        var minX = UInt32.max
        var minY = UInt32.max
        var maxX: UInt32 = 0
        var maxY: UInt32 = 0

        var bounds: MapRect? {
            minX > maxX ? nil : GridPosition(x: minX, y: minY).rect(through: GridPosition(x: maxX, y: maxY))
        }

        mutating func whole(_ node: Int32, height: Int, summary: Summary, range: Int) -> Bool {
            if minX <= summary.minX && summary.maxX <= maxX && minY <= summary.minY && summary.maxY <= maxY {
                return true
            }
            var selected = 0
            rows.row(of: node, isLeaf: height == 0).withCursor { row in
                categories.forEach(below: rows.layout.categoryCount) { selected += Int(truncatingIfNeeded: row[$0]) }
            }
            guard selected == summary.count || selected == 0 else { return false }
            if selected > 0 {
                extend(GridPosition(x: summary.minX, y: summary.minY))
                extend(GridPosition(x: summary.maxX, y: summary.maxY))
            }
            return true
        }

        mutating func leaf(_ leaf: Int32, candidates: Range<Int>) {
            let entries = leaves[Int(leaf)].entries
            var i = entries.lowerBound(of: range.lowerBound)
            while i < entries.count, entries[i].key <= range.upperBound {
                if categories.admits(code: entries[i].category) { extend(GridPosition(key: entries[i].key)) }
                i += 1
            }
        }

        private mutating func extend(_ point: GridPosition) {
            minX = min(minX, point.x)
            minY = min(minY, point.y)
            maxX = max(maxX, point.x)
            maxY = max(maxY, point.y)
        }
    }
}
