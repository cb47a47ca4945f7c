/// A snapshot of an index and the options it is clustered with: what grid clustering reads, and what
/// every ``Cluster`` it makes keeps for its lazy answers (members, children, parent).
final class ClusteringContext<Element: Hashable & Sendable>: Sendable {
    typealias Entry = IndexEntry

    let index: ClusterIndex<Element>
    let options: ClusterOptions<Element>

    init(index: ClusterIndex<Element>, options: ClusterOptions<Element>) {
        self.index = index
        self.options = options
    }

    var tree: MortonTree { index.tree }

    /// The element an entry refers to.
    @inline(__always) func element(of entry: Entry) -> Element { index.store[Int(entry.slot)].element }

    /// Which elements a region's clustering takes: everything, or (for a cluster's children) only the
    /// elements that cluster.
    enum Scope {
        case all
        case clusterableOnly
    }

    // MARK: - Clusters of a region

    /// The clusters of every cell of `region`, at `zoom`, in key order of their cells.
    func clusters(in region: CellRegion, zoom: Double, scope: Scope) -> [Cluster<Element>] {
        clusters(in: region, zoom: zoom, scope: scope) { false } ?? []
    }

    /// The clusters of every cell of `region`, or `nil` if `stop` said so: it is asked every few cells, and once it
    /// answers true the remaining cells are passed over without work.
    func clusters(in region: CellRegion, zoom: Double, scope: Scope, stop: () -> Bool) -> [Cluster<Element>]? {
        var result: [Cluster<Element>] = []
        let clusteringIsOn = zoom <= options.maxZoomLevelForClustering
        var stopped = false
        var cellsToNextCheck = Self.cellsPerStopCheck
        /// Whether to pass over the next cell: `stop` is asked once per `cellsPerStopCheck` cells.
        func passOver() -> Bool {
            guard !stopped else { return true }
            cellsToNextCheck -= 1
            if cellsToNextCheck == 0 {
                cellsToNextCheck = Self.cellsPerStopCheck
                stopped = stop()
            }
            return stopped
        }
        if let shouldCluster = options.shouldCluster {
            tree.forEachCell(in: region) { code, _ in
                if passOver() { return }
                let cell = GridCell(level: region.level, code: code)
                clusterVisitingMembers(
                    of: cell, zoom: zoom, clusteringIsOn: clusteringIsOn, shouldCluster: shouldCluster,
                    scope: scope, into: &result)
            }
        } else {
            tree.forEachCell(in: region) { code, summary in
                if passOver() { return }
                let cell = GridCell(level: region.level, code: code)
                if clusteringIsOn && qualifies(summary, in: cell, filter: .all) {
                    result.append(cluster(of: summary, in: cell, zoom: zoom, filter: .all))
                } else {
                    appendUnclustered(in: cell, zoom: zoom, filter: .all, into: &result)
                }
            }
        }
        return stopped ? nil : result
    }

    /// How many cells a clustering pass works through between two questions to its `stop` function.
    static var cellsPerStopCheck: Int { 32 }

    /// One cell when a ``ClusterOptions/shouldCluster`` predicate splits its members in two.
    private func clusterVisitingMembers(
        of cell: GridCell, zoom: Double, clusteringIsOn: Bool, shouldCluster: (Element) -> Bool, scope: Scope,
        into result: inout [Cluster<Element>]
    ) {
        var clusterable: Summary?
        var optedOut = false
        tree.forEachEntry(in: cell.keyRange) { entry in
            if shouldCluster(element(of: entry)) { clusterable.add(entry) } else { optedOut = true }
            return true
        }
        let unclusteredFilter: MemberFilter = scope == .all ? .all : .clusterable
        guard clusteringIsOn, let clusterable, qualifies(clusterable, in: cell, filter: .clusterable) else {
            appendUnclustered(in: cell, zoom: zoom, filter: unclusteredFilter, into: &result)
            return
        }
        guard scope == .all && optedOut else {
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

    /// Whether a cell's members (those `filter` takes, summarized) are clustered.
    private func qualifies(_ summary: Summary, in cell: GridCell, filter: MemberFilter) -> Bool {
        guard summary.count >= max(options.minCountForClustering, 2) else { return false }
        let needed = options.minUniqueLocationsForClustering
        if needed <= 1 { return true }
        if summary.isSameLocation { return false }
        if needed == 2 { return true }
        var locations: Set<Coordinate> = []
        tree.forEachEntry(in: cell.keyRange) { entry in
            if admits(entry, filter) { locations.insert(entry.coordinate) }
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
        var cluster = Cluster(
            id: .cell(tight), coordinate: summary.centerOfMass, count: summary.count,
            isUniqueLocation: false, cell: cell, zoom: zoom,
            membership: .cell(tight), context: self)
        switch options.position {
        case .centerOfMass:
            break
        case .cellCenter:
            cluster.coordinate = cell.rect.center.coordinate
        case .firstMember:
            cluster.coordinate = firstMember(of: cluster)?.coordinate ?? cluster.coordinate
        case .nearestToCellCenter:
            cluster.coordinate = nearestMember(of: cluster, to: cell.rect.center)?.coordinate ?? cluster.coordinate
        case .custom(let place):
            cluster.coordinate = place(cluster)
        }
        return cluster
    }

    private func locationCluster(
        _ location: Coordinate, count: Int, in cell: GridCell, zoom: Double, filter: MemberFilter
    ) -> Cluster<Element> {
        if count == 1, let only = firstMember(at: location, filter: filter) {
            return single(only, in: cell, zoom: zoom)
        }
        return Cluster(
            id: .location(location), coordinate: location, count: count,
            isUniqueLocation: true, cell: cell, zoom: zoom, membership: .location(location, filter), context: self)
    }

    private func single(_ entry: Entry, in cell: GridCell, zoom: Double) -> Cluster<Element> {
        Cluster(
            id: .element(element(of: entry)), coordinate: entry.coordinate, count: 1,
            isUniqueLocation: true, cell: cell, zoom: zoom, membership: .element(element(of: entry)), context: self)
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

    // MARK: - Members

    @inline(__always) private func admits(_ entry: Entry, _ filter: MemberFilter) -> Bool {
        guard filter != .all, let shouldCluster = options.shouldCluster else { return true }
        return shouldCluster(element(of: entry)) == (filter == .clusterable)
    }

    private func count(at location: Coordinate, filter: MemberFilter) -> Int {
        var count = 0
        let key = QuantizedPoint(location).key
        tree.forEachEntry(in: key...key) { entry in
            if entry.coordinate == location && admits(entry, filter) { count += 1 }
            return true
        }
        return count
    }

    private func firstMember(at location: Coordinate, filter: MemberFilter) -> Entry? {
        let key = QuantizedPoint(location).key
        return tree.entry(key: key) { $0.coordinate == location && admits($0, filter) }
    }

    private func firstMember(of cluster: Cluster<Element>) -> (element: Element, coordinate: Coordinate)? {
        members(of: cluster, offset: 0, limit: 1).first
    }

    /// The member nearest to a point of the plane, by branch and bound over the tree's node bounds.
    private func nearestMember(of cluster: Cluster<Element>, to target: MapPoint) -> Entry? {
        guard case .cell(let cell) = cluster.membership else { return nil }
        let filter: MemberFilter = options.shouldCluster == nil ? .all : .clusterable
        return tree.nearestEntry(in: cell.keyRange, to: target) { admits($0, filter) }
    }

    func members(of cluster: Cluster<Element>, offset: Int, limit: Int) -> [(element: Element, coordinate: Coordinate)]
    {
        precondition(offset >= 0 && limit >= 0, "offset and limit are not negative")
        var page: [(element: Element, coordinate: Coordinate)] = []
        guard limit > 0 else { return page }
        switch cluster.membership {
        case .element(let element):
            if offset == 0 { page.append((element, cluster.coordinate)) }
        case .location(let location, let filter):
            let key = QuantizedPoint(location).key
            var skip = offset
            tree.forEachEntry(in: key...key) { entry in
                guard entry.coordinate == location && admits(entry, filter) else { return true }
                if skip > 0 {
                    skip -= 1
                    return true
                }
                page.append((element(of: entry), entry.coordinate))
                return page.count < limit
            }
        case .group(let parts, _):
            var skip = offset
            for part in parts {
                if skip >= part.count {
                    skip -= part.count
                    continue
                }
                page += members(of: part, offset: skip, limit: limit - page.count)
                skip = 0
                if page.count == limit { break }
            }
        case .cell(let cell):
            if options.shouldCluster == nil {
                tree.forEachEntry(in: cell.keyRange, skip: offset) { entry in
                    page.append((element(of: entry), entry.coordinate))
                    return page.count < limit
                }
            } else {
                var skip = offset
                tree.forEachEntry(in: cell.keyRange) { entry in
                    guard admits(entry, .clusterable) else { return true }
                    if skip > 0 {
                        skip -= 1
                        return true
                    }
                    page.append((element(of: entry), entry.coordinate))
                    return page.count < limit
                }
            }
        }
        return page
    }

    /// The exact bounds of a cluster's members, from the tree (the fold's summaries may have larger ones).
    func bounds(of cluster: Cluster<Element>) -> MapRect {
        let unit = { (coordinate: Coordinate) -> MapRect in
            let point = QuantizedPoint(coordinate)
            return point.rect(through: point)
        }
        switch cluster.membership {
        case .element, .location:
            return unit(cluster.coordinate)
        case .group(let parts, _):
            return parts.dropFirst().reduce(bounds(of: parts[0])) { $0.union(bounds(of: $1)) }
        case .cell(let cell):
            var summary: Summary?
            if options.shouldCluster == nil {
                summary = tree.summary(in: cell.keyRange)
            } else {
                tree.forEachEntry(in: cell.keyRange) { entry in
                    if admits(entry, .clusterable) { summary.add(entry) }
                    return true
                }
            }
            return summary?.bounds ?? unit(cluster.coordinate)
        }
    }

    // MARK: - Across zoom levels

    func expansionZoom(of cluster: Cluster<Element>) -> Double? {
        if case .group(_, let zoom) = cluster.membership { return zoom }
        guard case .cell(let tight) = cluster.membership, tight.level < GridCell.maxLevel else { return nil }
        let split = options.zoom(forLevel: tight.level + 1)
        let limit = options.maxZoomLevelForClustering
        return limit.isFinite ? min(split, limit.nextUp) : split
    }

    func children(of cluster: Cluster<Element>) -> [Cluster<Element>] {
        if case .group(let parts, _) = cluster.membership { return parts }
        guard let zoom = expansionZoom(of: cluster), case .cell(let tight) = cluster.membership else { return [] }
        let level = max(options.gridLevel(forZoom: zoom), cluster.cell.level)
        let shift = level - tight.level
        let region: CellRegion
        if shift >= 0 {
            let side = UInt32(truncatingIfNeeded: (UInt64(1) << shift) - 1)
            region = CellRegion(
                level: level, rows: (tight.y << shift)...(tight.y << shift | side),
                columns: [(tight.x << shift)...(tight.x << shift | side)])
        } else {
            let cell = tight.ancestor(atLevel: level)
            region = CellRegion(level: level, rows: cell.y...cell.y, columns: [cell.x...cell.x])
        }
        return clusters(in: region, zoom: zoom, scope: .clusterableOnly)
    }

    func parent(of cluster: Cluster<Element>) -> Cluster<Element>? {
        if case .group(let parts, _) = cluster.membership {
            // The grid parent of every part, if they share one.
            let parents = parts.map { parent(of: $0) }
            guard let first = parents.first ?? nil, parents.allSatisfy({ $0?.id == first.id }) else { return nil }
            return first
        }
        var zoom = cluster.zoom
        var level = cluster.cell.level
        while level > 0 {
            level -= 1
            zoom = min(zoom, options.zoom(forLevel: level + 1).nextDown)
            let cell = cluster.cell.ancestor(atLevel: level)
            let region = CellRegion(level: level, rows: cell.y...cell.y, columns: [cell.x...cell.x])
            let candidates = clusters(in: region, zoom: zoom, scope: .all)
            guard let holder = candidates.first(where: { holds($0, cluster) }) else { return nil }
            if holder.id != cluster.id { return holder }
        }
        return nil
    }

    /// Whether `outer` holds every member of `inner` (tested on one of them).
    private func holds(_ outer: Cluster<Element>, _ inner: Cluster<Element>) -> Bool {
        guard let witness = members(of: inner, offset: 0, limit: 1).first else { return false }
        return holds(outer, witness.element, at: witness.coordinate)
    }

    /// Whether `cluster` holds an element of the index, found at `coordinate`.
    func holds(_ cluster: Cluster<Element>, _ element: Element, at coordinate: Coordinate) -> Bool {
        switch cluster.membership {
        case .element(let member):
            return member == element
        case .location(let location, let filter):
            return location == coordinate && (filter == .all || admitsElement(element, filter))
        case .cell(let cell):
            let key = QuantizedPoint(coordinate).key
            return cell.keyRange.contains(key) && admitsElement(element, .clusterable)
        case .group(let parts, _):
            return parts.contains { holds($0, element, at: coordinate) }
        }
    }

    /// The ranges of keys that a cluster's members lie in: one per part.
    func keyRanges(of cluster: Cluster<Element>) -> [ClosedRange<UInt64>] {
        switch cluster.membership {
        case .element, .location:
            let key = QuantizedPoint(cluster.coordinate).key
            return [key...key]
        case .cell(let cell):
            return [cell.keyRange]
        case .group(let parts, _):
            return parts.flatMap(keyRanges(of:))
        }
    }

    /// The cluster holding an element of the index, found at `coordinate`, at a zoom.
    func cluster(holding element: Element, at coordinate: Coordinate, zoom: Double) -> Cluster<Element>? {
        let cell = GridCell(containing: coordinate.mapPoint, level: options.gridLevel(forZoom: zoom))
        let region = CellRegion(level: cell.level, rows: cell.y...cell.y, columns: [cell.x...cell.x])
        return clusters(in: region, zoom: zoom, scope: .all).first { holds($0, element, at: coordinate) }
    }

    /// How far past the boundary ``revealingZoom(of:at:)`` answers.
    static var revealMargin: Double { 1e-6 }

    /// The smallest zoom at which an element of the index stands alone, or in a cluster of its coordinate only
    /// (plus ``revealMargin``).
    ///
    /// Found by bisection over the grid levels: a cell's members only thin out as the level grows.
    func revealingZoom(of element: Element, at coordinate: Coordinate) -> Double {
        func zoom(ofLevel level: Int) -> Double { max(options.zoom(forLevel: level), 0) }
        func standsAlone(atLevel level: Int) -> Bool {
            let holder = cluster(holding: element, at: coordinate, zoom: zoom(ofLevel: level))
            return holder.map { !$0.isCluster || $0.isUniqueLocation } ?? true
        }
        var low = 0
        var high = GridCell.maxLevel
        while low < high {
            let middle = (low + high) / 2
            if standsAlone(atLevel: middle) { high = middle } else { low = middle + 1 }
        }
        let limit = options.maxZoomLevelForClustering
        let zoom = limit.isFinite ? min(zoom(ofLevel: low), max(limit, 0)) : zoom(ofLevel: low)
        // Just past the boundary, so that a viewport made for this zoom (which rounds) is on the right side of it.
        return zoom + Self.revealMargin
    }

    private func admitsElement(_ element: Element, _ filter: MemberFilter) -> Bool {
        guard filter != .all, let shouldCluster = options.shouldCluster else { return true }
        return shouldCluster(element) == (filter == .clusterable)
    }
}

extension ClusterIndex {
    /// The clusters of a viewport and its margin, on the world-aligned grid: one per grid cell whose
    /// elements are clustered, and the elements of the other cells on their own (those sharing a
    /// coordinate together).
    ///
    ///     let clusters = index.clusters(in: viewport)
    ///
    /// The grid level follows the viewport's zoom and ``ClusterOptions/cellSize``; the cells are those that the
    /// viewport, grown by ``ClusterOptions/marginFactor`` on every side, touches, wrapping around the antimeridian (no
    /// cell is returned twice).
    ///
    /// - Returns: The clusters, in Z order of their cells.
    /// - Complexity: O(*c* log *n*) for *c* non-empty cells, whatever they hold; a cell that is not
    ///   clustered costs the visit of its elements, as does a ``ClusterOptions/shouldCluster`` predicate.
    public func clusters(in viewport: Viewport, options: ClusterOptions<Element> = .init()) -> [Cluster<Element>] {
        let context = ClusteringContext(index: self, options: options)
        return context.clusters(in: CellRegion(viewport, options: options), zoom: viewport.zoom, scope: .all)
    }

    /// The grid cells that ``clusters(in:options:)`` considers for a viewport, for drawing a debug grid.
    public func gridCells(in viewport: Viewport, options: ClusterOptions<Element> = .init()) -> [GridCell] {
        CellRegion(viewport, options: options).cells
    }

    /// The cluster that holds an element in a viewport's clustering, or `nil` if the element is unknown.
    ///
    /// It is the cluster ``clusters(in:options:)`` gives for the element, whether or not the element lies in the
    /// viewport and its margin.
    /// - Complexity: O(log *n*) for a clustered cell; an unclustered cell costs the visit of its elements.
    public func cluster(holding element: Element, in viewport: Viewport, options: ClusterOptions<Element> = .init())
        -> Cluster<Element>?
    {
        guard let coordinate = coordinate(of: element) else { return nil }
        return ClusteringContext(index: self, options: options).cluster(
            holding: element, at: coordinate, zoom: viewport.zoom)
    }

    /// The cluster with an id, as clustering with `options` makes it at the deepest zoom that shows it; `nil` if no
    /// zoom does (an unknown or stale id, or one from other options).
    ///
    /// What a server needs to answer for a cluster a client names: its members, children and expansion zoom.
    /// - Complexity: O(log *n*) for a cluster of several locations; a location or an element costs the visit of the
    ///   elements in its cell at that zoom.
    public func cluster(id: ClusterID<Element>, options: ClusterOptions<Element> = .init()) -> Cluster<Element>? {
        let context = ClusteringContext(index: self, options: options)
        let deepest = min(max(options.maxZoomLevelForClustering, 0), Self.deepestZoom)
        let zoom: Double
        let place: MapPoint
        switch id {
        case .cell(let tight):
            guard tight.level < GridCell.maxLevel, let summary = tree.summary(in: tight.keyRange),
                GridCell.smallest(holding: summary.firstKey, summary.lastKey) == tight
            else { return nil }
            zoom = min(max(options.zoom(forLevel: tight.level + 1).nextDown, 0), deepest)
            place = QuantizedPoint(key: summary.firstKey).rect(through: QuantizedPoint(key: summary.firstKey)).center
        case .location(let coordinate):
            zoom = Self.deepestZoom
            place = coordinate.mapPoint
        case .element(let element):
            guard let coordinate = coordinate(of: element) else { return nil }
            zoom = Self.deepestZoom
            place = coordinate.mapPoint
        case .merged:
            return nil
        }
        let cell = GridCell(containing: place, level: options.gridLevel(forZoom: zoom))
        let region = CellRegion(level: cell.level, rows: cell.y...cell.y, columns: [cell.x...cell.x])
        return context.clusters(in: region, zoom: zoom, scope: .all).first { $0.id == id }
    }

    /// The deepest zoom ``cluster(id:options:)`` looks at: deeper than any map zooms.
    static var deepestZoom: Double { 30 }

    /// The member of a cell nearest to a coordinate, on the plane, or `nil` if the cell is empty.
    /// - Complexity: O(log *n*) for spread-out data: subtrees farther than the best so far are skipped.
    public func member(of cell: GridCell, nearestTo coordinate: Coordinate) -> (
        element: Element, coordinate: Coordinate
    )? {
        tree.nearestEntry(in: cell.keyRange, to: coordinate.mapPoint) { _ in true }.map {
            (store[Int($0.slot)].element, $0.coordinate)
        }
    }
}

extension CellRegion {
    /// The cells that clustering a viewport with `options` considers: those the viewport, grown by the margin on
    /// every side, touches.
    init<Element>(_ viewport: Viewport, options: ClusterOptions<Element>) {
        let dx = viewport.rect.size.width * options.marginFactor
        let dy = viewport.rect.size.height * options.marginFactor
        self.init(
            level: options.gridLevel(forZoom: viewport.zoom), covering: viewport.rect.insetBy(dx: -dx, dy: -dy))
    }

    /// Every cell of the region.
    var cells: [GridCell] {
        columns.flatMap { columns in rows.flatMap { y in columns.map { x in GridCell(level: level, x: x, y: y) } } }
    }

    /// Whether a cell at the region's level is one of its cells.
    func contains(_ cell: GridCell) -> Bool {
        cell.level == level && rows.contains(cell.y) && columns.contains { $0.contains(cell.x) }
    }
}
