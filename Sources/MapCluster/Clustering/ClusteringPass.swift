/// The grid clustering pass: the tree and the rules it is clustered by, turned into the clusters of a region of grid
/// cells.
///
/// It knows nothing of the element type: it names elements by their slots in the index's store, and ``ClusterDraft``s
/// become ``Cluster``s in a small generic step that the caller specializes (``Clustering/clusters(in:)`` is
/// inlinable). So the pass is compiled, specialized and optimized once, here, and a query runs no generic code of the
/// library's: no metadata lookups, no witness tables.
///
/// Each non-empty cell of the region comes from the tree's one ordered fold, or its coarse cells
/// (``MortonTree/forEachCell(in:into:usingCoarseCells:)``), as totals, so a clustered cell costs O(log *n*) whatever it
/// holds. A ``ClusterOptions/shouldCluster`` predicate is a
/// filter of the same pass: the cell's clusterable members are added up by visiting them.
///
/// An object, made once per ``Clustering`` and shared by its queries: the fold's receiver calls the pass for every
/// cell, and as a struct of 273 bytes (the tree and the rules) it was copied onto the stack for each call
/// (`viewport-1M-z3` in `mapcluster bench` took 0.0203 ms as a struct, 0.0182 as an object made per query). Made per
/// query, it still copied the tree (a retain of each of its buffers, a release after) and allocated itself; a small
/// view with aggregates spent a fifth of its time on that.
@usableFromInline
final class ClusteringPass: Sendable {
    let tree: MortonTree
    @usableFromInline let rules: ClusteringRules

    @usableFromInline
    init(tree: MortonTree, rules: ClusteringRules) {
        self.tree = tree
        self.rules = rules
    }

    /// How many cells a clustering pass works through between two questions to its `stop` function.
    @usableFromInline static var cellsPerStopCheck: Int { 32 }

    /// The clusters of every cell of `region`, in key order of their cells; `nil` if `stop` said so.
    ///
    /// The clusters are of the elements `filter` takes: all of them, or (for a cluster's children) the clusterable
    /// ones. `stop`, when given, is asked every few cells; once it answers true the remaining cells are passed over
    /// without work. Nothing is allocated for a region without clusters, and no closure: a small view costs what it
    /// returns.
    ///
    /// The walk reads `tree`, the pass's own, which the caller lends: read through the pass, it would be a copy.
    @usableFromInline
    static func drafts(
        walking tree: borrowing MortonTree, with pass: ClusteringPass, in region: CellRegion, zoom: Double,
        taking filter: MemberFilter, stop: (() -> Bool)?
    ) -> [ClusterDraft]? {
        let clusteringIsOn = zoom <= pass.rules.maxZoomLevelForClustering
        var receiver = Receiver(
            pass: pass, level: region.level, clusteringIsOn: clusteringIsOn, filter: filter, stop: stop,
            cellCount: min(region.cellCount, tree.count, 4_096), parts: NoParts())
        if pass.needsFinishing { return pass.finishedDrafts(in: region, receiver: &receiver) }
        tree.forEachCell(in: region, into: &receiver)
        return receiver.stopped ? nil : receiver.drafts
    }

    /// The drafts of all elements of `region`, as ``drafts(walking:with:in:zoom:taking:stop:)``, with their aggregates
    /// (`nil` for a tree that keeps none).
    ///
    /// Where it can, the fold that drafts the clusters also keeps the parts of the cells it drafts as one cluster each
    /// (``CellParts``), which their rows are added up from, so only the other clusters are walked for: for rows with
    /// checkpoints (no minimum or maximum), an answer of all members (no category filter, no member predicate) and no
    /// reduction of the user's. `clusterable` says the clusters are of the clusterable elements; `key` gives a slot's
    /// key.
    @usableFromInline
    static func draftsWithAggregates(
        walking tree: borrowing MortonTree, with pass: ClusteringPass, in region: CellRegion, zoom: Double,
        clusterable: Bool, key: (UInt32) -> UInt64
    ) -> (drafts: [ClusterDraft], aggregates: ClusterAggregateTable?) {
        // The tree's aggregates read in place, through `tree.aggregates?`: bound to a name they would be a copy (a
        // retain of each of their three references, and a release after).
        guard tree.keepsAggregates else {
            return (drafts(walking: tree, with: pass, in: region, zoom: zoom, taking: .all, stop: nil) ?? [], nil)
        }
        let readsCoarseCells = region.level <= CoarseCells.deepestLevel && tree.coarseCells != nil
        let rules = pass.rules
        guard !pass.needsFinishing, !readsCoarseCells, tree.aggregates?.custom.isEmpty == true,
            tree.aggregates?.rows.keepsCheckpoints == true, rules.categories == nil, rules.isClusterable == nil
        else {
            let drafts = drafts(walking: tree, with: pass, in: region, zoom: zoom, taking: .all, stop: nil) ?? []
            return (
                drafts,
                tree.aggregates?.answer(drafts: drafts, clusterable: clusterable, rules: rules, tree: tree, key: key)
            )
        }
        var receiver = Receiver(
            pass: pass, level: region.level, clusteringIsOn: zoom <= rules.maxZoomLevelForClustering, filter: .all,
            stop: nil, cellCount: min(region.cellCount, tree.count, 4_096), parts: CellParts())
        tree.forEachCell(in: region, into: &receiver)
        return (
            receiver.drafts,
            tree.aggregates?.answer(
                drafts: receiver.drafts, clusterable: clusterable, rules: rules, tree: tree, key: key,
                parts: receiver.parts)
        )
    }

    /// The drafts of a pass with a category filter or a weighted position, which come in steps.
    private func finishedDrafts(in region: CellRegion, receiver: inout Receiver<NoParts>) -> [ClusterDraft]? {
        if let categories = rules.categories, rules.placement != .weightedCenterOfMass,
            region.level <= CoarseCells.deepestLevel, let coarse = tree.coarseCells, coarse.rows != nil
        {
            // A filtered world map: each coarse cell's selected categories come with the cell, in the same pass.
            var selection = CoarseSelection(
                tree: tree, coarse: coarse, categories: categories, level: region.level, receiver: receiver)
            tree.forEachCell(in: region, into: &selection)
            return selection.receiver.stopped ? nil : selection.receiver.drafts
        }
        // With a category filter or a weighted position the work comes in steps, each one walk of the tree for all the
        // cells: the cells; with a filter, the selected categories' totals of each; the weighted positions.
        var cells = CellCollector()
        tree.forEachCell(in: region, into: &cells)
        if let categories = rules.categories {
            cells.cells = selected(categories, of: cells.cells, level: region.level)
        }
        for (code, totals) in cells.cells { receiver.take(code, totals) }
        guard !receiver.stopped else { return nil }
        var drafts = receiver.drafts
        finish(&drafts)
        return drafts
    }

    /// The cells of a fold, collected.
    private struct CellCollector: CellReceiver {
        var cells: [(code: UInt64, totals: CellTotals)] = []

        mutating func take(_ code: UInt64, _ totals: CellTotals) { cells.append((code, totals)) }
    }

    /// The cells of a region at `level` with the totals of their members of `categories` only, without those that have
    /// none: from the coarse cells' rows at their levels, else one walk of the nodes' rows.
    private func selected(_ categories: CategorySet, of cells: [(code: UInt64, totals: CellTotals)], level: Int)
        -> [(code: UInt64, totals: CellTotals)]
    {
        guard let rows = tree.aggregates?.rows else { return [] }
        let totals: [CategoryTotals]
        if level <= CoarseCells.deepestLevel, let coarse = tree.coarseCells, coarse.rows != nil {
            totals = cells.map {
                coarse.categoryTotals(level: level, code: $0.code, categories: categories) ?? CategoryTotals()
            }
        } else {
            totals = rows.categoryTotals(
                ranges: cells.map { GridCell(level: level, code: $0.code).keyRange }, categories: categories, tree: tree
            )
        }
        return zip(cells, totals).compactMap { cell, total in
            total.count > 0 ? (cell.code, total.cellTotals(of: categories, in: tree)) : nil
        }
    }

    /// Hands a receiver each cell with the totals of its members of some categories, read from the coarse cells' rows;
    /// a cell with none of them is left out.
    private struct CoarseSelection<Inner: CellReceiver>: CellReceiver {
        let tree: MortonTree
        let coarse: CoarseCells
        let categories: CategorySet
        let level: Int
        var receiver: Inner

        mutating func take(_ code: UInt64, _ totals: CellTotals) {
            guard let selected = coarse.categoryTotals(level: level, code: code, categories: categories),
                selected.count > 0
            else { return }
            receiver.take(code, selected.cellTotals(of: categories, in: tree))
        }
    }

    /// The pass's receiver of the tree's cells: it asks `stop` every few cells, drafts the clusters of each, and hands
    /// `parts` the parts of each cell and what it drafted of them.
    private struct Receiver<Parts: DraftParts>: CellReceiver {
        let pass: ClusteringPass
        let level: Int
        let clusteringIsOn: Bool
        let filter: MemberFilter
        let stop: (() -> Bool)?
        /// How many cells of the region may hold elements (at most 4,096): the room the drafts take at once when they
        /// need more than a small view's.
        let cellCount: Int
        var parts: Parts
        var drafts: [ClusterDraft] = []
        var stopped = false
        var cellsToNextCheck = ClusteringPass.cellsPerStopCheck

        @inline(__always) mutating func take(_ part: CellPart) { parts.take(part) }

        @inline(__always) mutating func take(_ code: UInt64, _ totals: CellTotals) {
            guard !stopped else { return }
            if let stop {
                cellsToNextCheck -= 1
                if cellsToNextCheck == 0 {
                    cellsToNextCheck = ClusteringPass.cellsPerStopCheck
                    stopped = stop()
                    if stopped { return }
                }
            }
            // Room for the drafts in one step or two, rather than doubling from 16, which reallocates six times on the
            // way to a thousand and copies them all each time: a small view's at once; past them, or at a coarse
            // level, where most cells hold elements (a world map), one per cell.
            if drafts.count == drafts.capacity {
                let isCoarse = level <= CoarseCells.deepestLevel
                drafts.reserveCapacity(drafts.isEmpty && !isCoarse ? 16 : max(2 &* drafts.count, cellCount, 16))
            }
            let first = drafts.count
            pass.clusters(
                of: GridCell(level: level, code: code), totals: totals, clusteringIsOn: clusteringIsOn, taking: filter,
                into: &drafts)
            parts.drafted(from: first, in: drafts)
        }
    }

    /// Whether the cells need a category filter, or the drafts a weighted position, before they are handed out.
    private var needsFinishing: Bool {
        rules.categories != nil || (rules.placement == .weightedCenterOfMass && tree.keepsAggregates)
    }

    /// The smallest rectangle holding the members of `categories` with keys in `range`; `nil` when there are none.
    func categoryBounds(in range: ClosedRange<UInt64>, _ categories: CategorySet) -> MapRect? {
        tree.aggregates?.rows.categoryBounds(in: range, categories: categories, tree: tree)
    }

    /// The totals of the members of `categories` with keys in `range`; `nil` when there are none.
    /// - Complexity: O((*F* log *n* + *L*) · *g*) for *g* categories.
    func categoryTotals(in range: ClosedRange<UInt64>, _ categories: CategorySet) -> CategoryTotals? {
        guard let rows = tree.aggregates?.rows else { return nil }
        return rows.categoryTotals(ranges: [range], categories: categories, tree: tree).first.flatMap {
            $0.count > 0 ? $0 : nil
        }
    }

    /// Gives drafts, for ``ClusterPosition/weightedCenterOfMass``, their weighted positions (the clusters of cells in
    /// one walk of the nodes' rows).
    private func finish(_ drafts: inout [ClusterDraft]) {
        guard rules.placement == .weightedCenterOfMass, tree.aggregates?.layout.isWeighted == true else { return }
        let cells = drafts.indices.filter { if case .cell = drafts[$0].identity { true } else { false } }
        let requests = cells.map { i -> AggregateRequest in
            guard case .cell(let tight) = drafts[i].identity else { preconditionFailure("a cell's draft") }
            return AggregateRequest(
                range: tight.keyRange, match: rules.isClusterable == nil ? .all : .clusterable, count: drafts[i].count)
        }
        guard let answers = tree.aggregates(requests, rules: rules, filters: [rules.categories]) else { return }
        for (i, answer) in zip(cells, answers) {
            if let center = answer.weightedCenter { drafts[i] = drafts[i].placed(at: center) }
        }
    }

    /// The clusters of one non-empty cell, whose members `totals` adds up.
    private func clusters(
        of cell: GridCell, totals: CellTotals, clusteringIsOn: Bool, taking filter: MemberFilter,
        into drafts: inout [ClusterDraft]
    ) {
        guard let isClusterable = rules.isClusterable else {
            // Every member clusters: the totals say it all.
            if totals.count == 1, let slot = totals.firstSlot, filter != .optedOut {
                // One element whose slot the fold saw (a small view's usual cell): the single `unclustered` drafts.
                return drafts.append(single(slot, at: totals.location, in: cell, place: totals.firstPlace))
            }
            if clusteringIsOn && qualifies(totals, in: cell) {
                drafts.append(cluster(of: totals, in: cell, filter: .clusterable))
            } else {
                unclustered(in: cell, totals: totals, filter: filter, into: &drafts)
            }
            return
        }
        // What clusters: the members the predicate takes.
        var clusterable: CellTotals?
        var hasOptedOut = false
        tree.forEachEntry(in: cell.keyRange) { entry in
            if let categories = rules.categories, !categories.admits(code: entry.category) { return true }
            if isClusterable(entry.slot) { clusterable.add(entry) } else { hasOptedOut = true }
            return true
        }
        guard clusteringIsOn, let clusterable, qualifies(clusterable, in: cell) else {
            unclustered(in: cell, filter: filter, into: &drafts)
            return
        }
        guard filter == .all && hasOptedOut else {
            drafts.append(cluster(of: clusterable, in: cell, filter: .clusterable))
            return
        }
        if clusterable.isSameLocation {
            // Elements on one coordinate always show together, clustering or not.
            let location = clusterable.location
            let atLocation = count(at: location, filter: .all)
            drafts.append(locationCluster(location, count: atLocation, in: cell, filter: .all))
            unclustered(in: cell, filter: .optedOut, excluding: location, into: &drafts)
        } else {
            drafts.append(cluster(of: clusterable, in: cell, filter: .clusterable))
            unclustered(in: cell, filter: .optedOut, into: &drafts)
        }
    }

    /// Whether a cell's clusterable members, added up, are clustered.
    private func qualifies(_ totals: CellTotals, in cell: GridCell) -> Bool {
        guard totals.count >= max(rules.minCountForClustering, 2) else { return false }
        let needed = rules.minUniqueLocationsForClustering
        if needed <= 1 { return true }
        if rules.isOneLocation(totals) { return false }
        if needed == 2 { return true }
        if rules.locationLevel != nil {
            var locations: Set<UInt64> = []
            tree.forEachEntry(in: cell.keyRange) { entry in
                if admits(entry, .clusterable) { locations.insert(rules.locationKey(entry.key)) }
                return locations.count < needed
            }
            return locations.count >= needed
        }
        var locations: Set<Coordinate> = []
        tree.forEachEntry(in: cell.keyRange) { entry in
            if admits(entry, .clusterable) { locations.insert(entry.coordinate) }
            return locations.count < needed
        }
        return locations.count >= needed
    }

    /// The cluster of a cell's qualifying members.
    private func cluster(of totals: CellTotals, in cell: GridCell, filter: MemberFilter) -> ClusterDraft {
        if totals.isSameLocation {
            return locationCluster(
                totals.location, count: totals.count, in: cell, filter: filter, first: totals.firstSlot,
                place: totals.firstPlace)
        }
        if rules.isOneLocation(totals) { return nearLocationCluster(totals, in: cell, filter: filter) }
        let tight = GridCell.smallest(holding: totals.firstKey, totals.lastKey)
        return ClusterDraft(
            identity: .cell(tight), coordinate: position(of: tight, in: cell, centerOfMass: totals.centerOfMass),
            count: totals.count, isSameLocation: false, cell: cell, filter: .clusterable)
    }

    /// The elements on one location, `count` of them, that `filter` takes; `first` is the first one's slot, if known,
    /// and `place` where it lies.
    private func locationCluster(
        _ location: Coordinate, count: Int, in cell: GridCell, filter: MemberFilter, first: UInt32? = nil,
        place: EntryPlace? = nil
    ) -> ClusterDraft {
        if let first, count == 1 { return single(first, at: location, in: cell, place: place) }
        if count == 1, let only = firstMember(at: location, filter: filter)?.slot {
            return single(only, at: location, in: cell)
        }
        return ClusterDraft(
            identity: .location(location), coordinate: location, count: count, isSameLocation: true, cell: cell,
            filter: filter)
    }

    /// The elements within one cell at the tolerance's level, on several coordinates, that `filter` takes: a cluster
    /// of one location, at their center of mass, named by the smallest cell that holds them (always at that level or
    /// deeper, where no cluster of several locations is).
    private func nearLocationCluster(_ totals: CellTotals, in cell: GridCell, filter: MemberFilter) -> ClusterDraft {
        ClusterDraft(
            identity: .cell(GridCell.smallest(holding: totals.firstKey, totals.lastKey)),
            coordinate: totals.centerOfMass, count: totals.count, isSameLocation: true, cell: cell, filter: filter)
    }

    private func single(_ slot: UInt32, at coordinate: Coordinate, in cell: GridCell, place: EntryPlace? = nil)
        -> ClusterDraft
    {
        ClusterDraft(
            identity: .element(slot: slot), coordinate: coordinate, count: 1, isSameLocation: true, cell: cell,
            filter: .all, place: place)
    }

    /// The members of a cell that `filter` takes, one by one, those on one coordinate together.
    ///
    /// `totals`, when given, adds up every member of the cell, and spares the visit when they are one element or one
    /// location.
    private func unclustered(
        in cell: GridCell, totals: CellTotals? = nil, filter: MemberFilter, excluding excluded: Coordinate? = nil,
        into drafts: inout [ClusterDraft]
    ) {
        if let totals, totals.isSameLocation, filter != .optedOut {
            drafts.append(
                locationCluster(
                    totals.location, count: totals.count, in: cell, filter: filter, first: totals.firstSlot,
                    place: totals.firstPlace))
            return
        }
        if rules.locationLevel != nil {
            // At the tolerance's level and deeper every cell is one location: no visit.
            if let totals, rules.isOneLocation(totals), filter != .optedOut {
                drafts.append(nearLocationCluster(totals, in: cell, filter: filter))
            } else {
                unclusteredByLocationCell(in: cell, filter: filter, excluding: excluded, into: &drafts)
            }
            return
        }
        var groups: [(first: IndexEntry, count: Int)] = []
        var groupOfLocation: [Coordinate: Int] = [:]
        tree.forEachEntry(in: cell.keyRange) { entry in
            guard admits(entry, filter), entry.coordinate != excluded else { return true }
            if let group = group(of: entry.coordinate, in: groups, index: &groupOfLocation) {
                groups[group].count += 1
            } else {
                groupOfLocation[entry.coordinate] = groups.count
                groups.append((entry, 1))
            }
            return true
        }
        for (first, count) in groups {
            drafts.append(
                count == 1
                    ? single(first.slot, at: first.coordinate, in: cell)
                    : locationCluster(first.coordinate, count: count, in: cell, filter: filter))
        }
    }

    /// ``unclustered(in:totals:filter:excluding:_:)`` with a location tolerance: the members of each cell at its level
    /// are one location, and they come one after another in key order.
    private func unclusteredByLocationCell(
        in cell: GridCell, filter: MemberFilter, excluding excluded: Coordinate?, into drafts: inout [ClusterDraft]
    ) {
        var group: (key: UInt64, totals: CellTotals)?
        func flush() {
            guard let (_, totals) = group else { return }
            if totals.count == 1, let slot = totals.firstSlot {
                drafts.append(single(slot, at: totals.location, in: cell, place: totals.firstPlace))
            } else if totals.isSameLocation {
                drafts.append(locationCluster(totals.location, count: totals.count, in: cell, filter: filter))
            } else {
                drafts.append(nearLocationCluster(totals, in: cell, filter: filter))
            }
        }
        tree.forEachEntry(in: cell.keyRange) { entry in
            guard admits(entry, filter), entry.coordinate != excluded else { return true }
            let key = rules.locationKey(entry.key)
            if group?.key == key {
                group?.totals.add(entry)
            } else {
                flush()
                group = (key, CellTotals(entry))
            }
            return true
        }
        flush()
    }

    /// The group of a location: found by a scan while there are few groups, and by a dictionary (built on first
    /// need) past that.
    private func group(
        of location: Coordinate, in groups: [(first: IndexEntry, count: Int)], index: inout [Coordinate: Int]
    ) -> Int? {
        let scanLimit = 16
        guard groups.count > scanLimit else { return groups.firstIndex { $0.first.coordinate == location } }
        if index.isEmpty {
            for (group, entry) in groups.enumerated() { index[entry.first.coordinate] = group }
        }
        return index[location]
    }

    /// Where ``ClusteringRules/placement`` places a cluster of several locations whose tight cell is `tight`.
    private func position(of tight: GridCell, in cell: GridCell, centerOfMass: Coordinate) -> Coordinate {
        switch rules.placement {
        case .centerOfMass, .weightedCenterOfMass:
            // The weighted center is placed when the draft is finished, from the nodes' weights.
            return centerOfMass
        case .cellCenter:
            return cell.rect.center.coordinate
        case .firstInZOrder:
            var first: Coordinate?
            forEachEntry(in: tight.keyRange, taking: .clusterable) { entry in
                first = entry.coordinate
                return false
            }
            return first ?? centerOfMass
        case .firstAdded:
            guard let addedOrder = rules.addedOrder else { return centerOfMass }
            var first: (rank: UInt32, coordinate: Coordinate)?
            forEachEntry(in: tight.keyRange, taking: .clusterable) { entry in
                let rank = addedOrder(entry.slot)
                if rank < first?.rank ?? .max { first = (rank, entry.coordinate) }
                return true
            }
            return first?.coordinate ?? centerOfMass
        case .nearestToCellCenter:
            let nearest = tree.nearestEntry(in: tight.keyRange, to: cell.rect.center) { admits($0, .clusterable) }
            return nearest?.coordinate ?? centerOfMass
        }
    }

    /// Calls `body` with each entry in `range` that `filter` takes, after skipping `skip` of those, until it returns
    /// false.
    func forEachEntry(
        in range: ClosedRange<UInt64>, taking filter: MemberFilter, skip: Int = 0, _ body: (IndexEntry) -> Bool
    ) {
        forEachEntry(in: range, skip: skip, where: { admits($0, filter) }, body)
    }

    /// Calls `body` with each entry on `location` that `filter` takes, after skipping `skip`, until it returns false.
    func forEachEntry(at location: Coordinate, filter: MemberFilter, skip: Int = 0, _ body: (IndexEntry) -> Bool) {
        let key = GridPosition(location).key
        forEachEntry(in: key...key, skip: skip, where: { $0.coordinate == location && admits($0, filter) }, body)
    }

    private func forEachEntry(
        in range: ClosedRange<UInt64>, skip: Int, where takes: (IndexEntry) -> Bool, _ body: (IndexEntry) -> Bool
    ) {
        var toSkip = skip
        tree.forEachEntry(in: range) { entry in
            guard takes(entry) else { return true }
            guard toSkip == 0 else {
                toSkip -= 1
                return true
            }
            return body(entry)
        }
    }

    /// How many elements on `location` `filter` takes.
    func count(at location: Coordinate, filter: MemberFilter) -> Int {
        var count = 0
        forEachEntry(at: location, filter: filter) { _ in
            count += 1
            return true
        }
        return count
    }

    /// The first element on `location` that `filter` takes.
    func firstMember(at location: Coordinate, filter: MemberFilter) -> IndexEntry? {
        var first: IndexEntry?
        forEachEntry(at: location, filter: filter) { entry in
            first = entry
            return false
        }
        return first
    }

    /// Whether `filter` takes an entry's element.
    @inline(__always) func admits(_ entry: IndexEntry, _ filter: MemberFilter) -> Bool {
        rules.admits(entry, filter)
    }
}
