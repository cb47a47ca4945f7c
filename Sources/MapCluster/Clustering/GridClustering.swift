/// The grid clustering pass: an index and the options it is clustered with, turned into the clusters of a region of
/// grid cells.
///
/// Each non-empty cell of the region comes from the tree's one ordered fold (``MortonTree/forEachCell(in:_:)``) as a
/// summary, so a clustered cell costs O(log *n*) whatever it holds. A ``ClusterOptions/shouldCluster`` predicate is a
/// filter of the same pass: the cell's clusterable members are summarized by visiting them.
///
/// It is a value made for one query: it holds the index (shared, not copied) and the options, and allocates nothing.
struct GridClustering<Element: Hashable & Sendable> {
    typealias Entry = IndexEntry

    let index: ClusterIndex<Element>
    let options: ClusterOptions<Element>

    var tree: MortonTree { index.tree }

    /// The element an entry refers to.
    @inline(__always) func element(of entry: Entry) -> Element { index.store[Int(entry.slot)].element }

    /// How many cells a clustering pass works through between two questions to its `stop` function.
    static var cellsPerStopCheck: Int { 32 }

    /// The clusters of every cell of `region`, at `zoom`, in key order of their cells, of the elements `filter` takes:
    /// all of them, or (for a cluster's children) the clusterable ones.
    func clusters(in region: CellRegion, zoom: Double, taking filter: MemberFilter) -> [Cluster<Element>] {
        clusters(in: region, zoom: zoom, taking: filter) { false } ?? []
    }

    /// The clusters of every cell of `region`, or `nil` if `stop` said so: it is asked every few cells, and once it
    /// answers true the remaining cells are passed over without work.
    func clusters(
        in region: CellRegion, zoom: Double, taking filter: MemberFilter, stop: () -> Bool
    ) -> [Cluster<Element>]? {
        var result: [Cluster<Element>] = []
        let clusteringIsOn = zoom <= options.maxZoomLevelForClustering
        var stopped = false
        var cellsToNextCheck = Self.cellsPerStopCheck
        tree.forEachCell(in: region) { code, summary in
            guard !stopped else { return }
            cellsToNextCheck -= 1
            if cellsToNextCheck == 0 {
                cellsToNextCheck = Self.cellsPerStopCheck
                stopped = stop()
                if stopped { return }
            }
            let cell = GridCell(level: region.level, code: code)
            appendClusters(
                of: cell, summary: summary, zoom: zoom, clusteringIsOn: clusteringIsOn, taking: filter, into: &result)
        }
        return stopped ? nil : result
    }

    /// The clusters of one non-empty cell, whose members `summary` summarizes.
    private func appendClusters(
        of cell: GridCell, summary: Summary, zoom: Double, clusteringIsOn: Bool, taking filter: MemberFilter,
        into result: inout [Cluster<Element>]
    ) {
        // What clusters: every member, or those the predicate takes.
        var clusterable: Summary? = summary
        var hasOptedOut = false
        if let shouldCluster = options.shouldCluster {
            clusterable = nil
            tree.forEachEntry(in: cell.keyRange) { entry in
                if shouldCluster(element(of: entry)) { clusterable.add(entry) } else { hasOptedOut = true }
                return true
            }
        }
        guard clusteringIsOn, let clusterable, qualifies(clusterable, in: cell) else {
            appendUnclustered(in: cell, zoom: zoom, filter: filter, into: &result)
            return
        }
        guard filter == .all && hasOptedOut else {
            result.append(cluster(of: clusterable, in: cell, zoom: zoom, filter: .clusterable))
            return
        }
        if clusterable.isSameLocation {
            // Elements on one coordinate always show together, clustering or not.
            let location = clusterable.location
            let atLocation = count(at: location, filter: .all)
            result.append(locationCluster(location, count: atLocation, in: cell, zoom: zoom, filter: .all))
            appendUnclustered(in: cell, zoom: zoom, filter: .optedOut, excluding: location, into: &result)
        } else {
            result.append(cluster(of: clusterable, in: cell, zoom: zoom, filter: .clusterable))
            appendUnclustered(in: cell, zoom: zoom, filter: .optedOut, into: &result)
        }
    }

    /// Whether a cell's clusterable members, summarized, are clustered.
    private func qualifies(_ summary: Summary, in cell: GridCell) -> Bool {
        guard summary.count >= max(options.minCountForClustering, 2) else { return false }
        let needed = options.minUniqueLocationsForClustering
        if needed <= 1 { return true }
        if summary.isSameLocation { return false }
        if needed == 2 { return true }
        var locations: Set<Coordinate> = []
        tree.forEachEntry(in: cell.keyRange) { entry in
            if admits(entry, .clusterable) { locations.insert(entry.coordinate) }
            return locations.count < needed
        }
        return locations.count >= needed
    }

    /// The cluster of a cell's qualifying members.
    private func cluster(of summary: Summary, in cell: GridCell, zoom: Double, filter: MemberFilter) -> Cluster<Element>
    {
        if summary.isSameLocation {
            return locationCluster(summary.location, count: summary.count, in: cell, zoom: zoom, filter: filter)
        }
        let tight = GridCell.smallest(holding: summary.firstKey, summary.lastKey)
        let cluster = Cluster<Element>(
            id: .cell(tight), coordinate: summary.centerOfMass, count: summary.count, isSameLocation: false, cell: cell,
            zoom: zoom, filter: .clusterable)
        if case .centerOfMass = options.position { return cluster }
        return cluster.placed(at: position(of: cluster))
    }

    private func locationCluster(
        _ location: Coordinate, count: Int, in cell: GridCell, zoom: Double, filter: MemberFilter
    ) -> Cluster<Element> {
        if count == 1, let only = firstMember(at: location, filter: filter) {
            return single(only, in: cell, zoom: zoom)
        }
        return Cluster(
            id: .location(location), coordinate: location, count: count, isSameLocation: true, cell: cell, zoom: zoom,
            filter: filter)
    }

    private func single(_ entry: Entry, in cell: GridCell, zoom: Double) -> Cluster<Element> {
        Cluster(
            id: .element(element(of: entry)), coordinate: entry.coordinate, count: 1, isSameLocation: true, cell: cell,
            zoom: zoom, filter: .all)
    }

    /// The members of a cell that `filter` takes, one by one, those on one coordinate together.
    private func appendUnclustered(
        in cell: GridCell, zoom: Double, filter: MemberFilter, excluding excluded: Coordinate? = nil,
        into result: inout [Cluster<Element>]
    ) {
        var groups: [(first: Entry, count: Int)] = []
        var groupOfLocation: [Coordinate: Int] = [:]
        tree.forEachEntry(in: cell.keyRange) { entry in
            guard admits(entry, filter), entry.coordinate != excluded else { return true }
            if let group = groupOfLocation[entry.coordinate] {
                groups[group].count += 1
            } else {
                groupOfLocation[entry.coordinate] = groups.count
                groups.append((entry, 1))
            }
            return true
        }
        for (first, count) in groups {
            result.append(
                count == 1
                    ? single(first, in: cell, zoom: zoom)
                    : locationCluster(first.coordinate, count: count, in: cell, zoom: zoom, filter: filter))
        }
    }

    /// Whether `filter` takes an entry's element.
    @inline(__always) func admits(_ entry: Entry, _ filter: MemberFilter) -> Bool {
        guard options.shouldCluster != nil else { return filter != .optedOut }
        return admits(element(of: entry), filter)
    }
}
