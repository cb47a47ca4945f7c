/// An index and the options it is clustered with, bound together: the clusters of a viewport, and every question about a
/// cluster it made (its members, bounds, children, parent, expansion zoom and aggregates) answered with the options
/// that made it.
///
///     var options = ClusterOptions<String>()
///     options.cellSize = 80
///     let clustering = try Clustering(index, options: options)
///     for cluster in clustering.clusters(in: viewport) where cluster.isCluster {
///         let firstTen = try clustering.members(of: cluster, limit: 10)
///         let zoom = try clustering.expansionZoom(of: cluster)
///     }
///
/// A cluster remembers what of its clustering's options shaped it. A clustering with other options refuses to answer
/// for it with a ``ClusteringMismatch`` that names the options that differ: its members, children or expansion zoom on
/// another grid would not be those of the marker the map showed. A clustering of a later state of the index, with the
/// same options, answers for that state.
///
/// It is a value: it holds the index (shared, not copied, as an index's copies are) and the options.
public struct Clustering<Element: Hashable & Sendable>: Sendable {
    /// The index clustered.
    public let index: ClusterIndex<Element>
    /// The options every answer is made with.
    public let options: ClusterOptions<Element>
    /// What of the options shapes clusters: each cluster made here carries it.
    @usableFromInline let stamp: ClusteringStamp
    /// The clustering pass over the index's tree with the options' rules, made once for every query.
    @usableFromInline let pass: ClusteringPass

    /// The clustering of `index` with `options`.
    /// - Throws: ``OptionError`` for options that fail ``ClusterOptions/validate()``.
    public init(_ index: ClusterIndex<Element>, options: ClusterOptions<Element>) throws(OptionError) {
        try options.validate()
        self.init(validated: index, options: options)
    }

    /// The clustering of `index` with the default options.
    ///
    ///     let clusters = Clustering(index).clusters(in: viewport)
    public init(_ index: ClusterIndex<Element>) {
        self.init(validated: index, options: ClusterOptions())
    }

    /// The clustering of `index` with options the caller has validated.
    package init(validated index: ClusterIndex<Element>, options: ClusterOptions<Element>) {
        self.init(index: index, options: options, stamp: ClusteringStamp(options))
    }

    /// The same clustering of another state of the index (a later copy, or a snapshot of it).
    public func of(_ index: ClusterIndex<Element>) -> Clustering {
        Clustering(index: index, options: options, stamp: stamp)
    }

    /// The same clustering, showing only elements of these categories (``ClusterOptions/categories``); `nil` shows
    /// every element.
    ///
    /// A filter shapes no cluster's grid: each filtered cluster's id carries its filter, and any clustering of the same
    /// options answers for it.
    public func selecting(categories: Set<String>?) -> Clustering {
        var options = options
        options.categories = categories
        return Clustering(index: index, options: options, stamp: stamp)
    }

    private init(index: ClusterIndex<Element>, options: ClusterOptions<Element>, stamp: ClusteringStamp) {
        self.index = index
        self.options = options
        self.stamp = stamp
        pass = ClusteringPass(tree: index.tree, rules: index.clusteringRules(options))
    }

    /// The clusters of a viewport and its margin, on the world-aligned grid: one per grid cell whose
    /// elements are clustered, and the elements of the other cells on their own (those sharing a
    /// coordinate together).
    ///
    ///     let clusters = clustering.clusters(in: viewport)
    ///
    /// The grid level follows the viewport's zoom and ``ClusterOptions/cellSize``; the cells are those that the
    /// viewport, grown by ``ClusterOptions/marginFactor`` on every side, touches, wrapping around the antimeridian (no
    /// cell is returned twice).
    ///
    /// - Returns: The clusters, in Z order of their cells; none for an empty viewport (``Viewport/isEmpty``).
    /// - Complexity: O(*c* log *n*) for *c* non-empty cells, whatever they hold, and O(*c*) for a world map (grid
    ///   levels 0 to 6) of an index of 65,536 elements or more; a cell that is not clustered costs the visit of its
    ///   elements, as does a ``ClusterOptions/shouldCluster`` predicate.
    @inlinable
    public func clusters(in viewport: Viewport) -> [Cluster<Element>] {
        guard !viewport.isEmpty else { return [] }
        let zoom = viewport.zoom
        return clusters(in: CellRegion(viewport, zoom: zoom, options: options), zoom: zoom, stoppingIf: nil) ?? []
    }

    /// The clusters of a viewport, as ``clusters(in:)`` gives them, with what each adds up to: `aggregates[i]` is
    /// `clusters[i]`'s, or `nil` for an index without an ``AggregateSchema``.
    ///
    ///     let (clusters, aggregates) = clustering.clustersWithAggregates(in: viewport)
    ///     for (cluster, sums) in zip(clusters, aggregates ?? []) { … }
    ///
    /// One call instead of ``clusters(in:)`` and then ``aggregates(of:)->ClusterAggregateTable?``: the clusters are
    /// this clustering's own, so none is checked, and a single element's aggregates need no lookup of the element.
    /// - Complexity: That of ``clusters(in:)``, and O(*F* log *n*) a cluster for its aggregates.
    @inlinable
    public func clustersWithAggregates(in viewport: Viewport)
        -> (clusters: [Cluster<Element>], aggregates: ClusterAggregateTable?)
    {
        guard !viewport.isEmpty else { return ([], index.tree.emptyAggregates) }
        let zoom = viewport.zoom
        return index.makeClustersWithAggregates(
            in: CellRegion(viewport, zoom: zoom, options: options), zoom: zoom, options: options, stamp: stamp,
            pass: pass)
    }

    /// ``clusters(in:zoom:)`` with what each cluster adds up to, as ``clustersWithAggregates(in:)`` gives them: a
    /// bounding-box query (a tile and its buffer) with its aggregates.
    @inlinable
    public func clustersWithAggregates(in rect: MapRect, zoom: Double)
        -> (clusters: [Cluster<Element>], aggregates: ClusterAggregateTable?)
    {
        guard let region = region(of: rect, zoom: zoom) else { return ([], index.tree.emptyAggregates) }
        return index.makeClustersWithAggregates(in: region, zoom: zoom, options: options, stamp: stamp, pass: pass)
    }

    /// The clusters of the grid cells a rectangle touches at a zoom, without a margin: a bounding-box query, as
    /// supercluster's `getClusters(bbox, zoom)` asks it (a tile and its buffer, say).
    ///
    ///     let clusters = clustering.clusters(in: try MapRect(west: -10, south: 35, east: 30, north: 60), zoom: 5)
    ///
    /// - Returns: The clusters, in Z order of their cells; none for an empty rectangle.
    public func clusters(in rect: MapRect, zoom: Double) -> [Cluster<Element>] {
        guard let region = region(of: rect, zoom: zoom) else { return [] }
        return clusters(in: region, zoom: zoom, stoppingIf: nil) ?? []
    }

    /// The grid cells a bounding-box query considers: those a rectangle touches at a zoom; `nil` for an empty
    /// rectangle or a zoom that is no number.
    @usableFromInline
    func region(of rect: MapRect, zoom: Double) -> CellRegion? {
        guard rect.size.width > 0, rect.size.height > 0, zoom.isFinite else { return nil }
        return CellRegion(level: options.gridLevel(forZoom: zoom), covering: rect)
    }

    /// The clusters of a region of grid cells at a zoom, or `nil` if `stop` answered true: it is asked every
    /// ``clusteringCellsPerStopCheck`` cells, so that a caller whose answer is no longer wanted (a manager's superseded
    /// update) stops early.
    @inlinable
    package func clusters(in region: CellRegion, zoom: Double, stop: () -> Bool) -> [Cluster<Element>]? {
        withoutActuallyEscaping(stop) { stop in clusters(in: region, zoom: zoom, stoppingIf: stop) }
    }

    /// ``clusters(in:zoom:stop:)``, with no `stop` to ask when `nil`.
    @inlinable
    func clusters(in region: CellRegion, zoom: Double, stoppingIf stop: (() -> Bool)?) -> [Cluster<Element>]? {
        index.makeClusters(in: region, zoom: zoom, options: options, stamp: stamp, pass: pass, taking: .all, stop: stop)
    }

    /// How many cells a clustering pass works through between two questions to its `stop` function.
    package static var clusteringCellsPerStopCheck: Int { ClusteringPass.cellsPerStopCheck }

    /// The grid cells that ``clusters(in:)`` considers for a viewport, for drawing a debug grid.
    public func gridCells(in viewport: Viewport) -> [GridCell] {
        guard !viewport.isEmpty else { return [] }
        return CellRegion(viewport, options: options).cells
    }

    /// The cluster that holds an element in a viewport's clustering, or `nil` if the element is unknown or the viewport
    /// empty.
    ///
    /// It is the cluster ``clusters(in:)`` gives for the element, whether or not the element lies in the viewport and
    /// its margin.
    /// - Complexity: O(log *n*) for a clustered cell; an unclustered cell costs the visit of its elements.
    public func cluster(holding element: Element, in viewport: Viewport) -> Cluster<Element>? {
        guard !viewport.isEmpty, let coordinate = index.coordinate(of: element) else { return nil }
        return grid.cluster(holding: element, at: coordinate, zoom: viewport.zoom)
    }

    /// The cluster with an id, as this clustering makes it at the deepest zoom that shows it; `nil` if no zoom does (an
    /// unknown or stale id, or one that a clustering with other options made).
    ///
    /// What a server needs to answer for a cluster a client names: its members, children and expansion zoom.
    /// - Complexity: O(log *n*) for a cluster of several locations; a location or an element costs the visit of the
    ///   elements in its cell at that zoom.
    public func cluster(id: ClusterID<Element>) -> Cluster<Element>? {
        grid(madeFor: id).cluster(id: id)
    }

    /// The smallest zoom at which an element stands alone, or in a cluster of its coordinate only; `nil` if the index
    /// does not hold it.
    ///
    /// The answer lies a hair past the boundary, so that a viewport made for it (whose zoom rounds) shows the element
    /// on its own.
    /// - Complexity: O(log *L* · log *n*) for the *L* grid levels, when the cells it passes through are clustered.
    public func revealingZoom(of element: Element) -> Double? {
        guard let coordinate = index.coordinate(of: element) else { return nil }
        return grid.revealingZoom(of: element, at: coordinate)
    }

    // MARK: - A cluster's members, bounds and hierarchy

    /// A page of a cluster's members, in the index's order.
    ///
    ///     let firstTen = try clustering.members(of: cluster, limit: 10)
    ///
    /// - Throws: ``ClusteringMismatch`` for a cluster that a clustering with other options made.
    /// - Complexity: O(log *n* + `offset` + `limit`); without ``ClusterOptions/shouldCluster``, a cluster of several
    ///   locations skips `offset` members in O(log *n*).
    public func members(of cluster: Cluster<Element>, offset: Int = 0, limit: Int = .max) throws(ClusteringMismatch)
        -> [Element]
    {
        try membersWithCoordinates(of: cluster, offset: offset, limit: limit).map(\.element)
    }

    /// A page of a cluster's members with their coordinates, in the index's order.
    /// - Throws: ``ClusteringMismatch`` for a cluster that a clustering with other options made.
    /// - Complexity: As ``members(of:offset:limit:)``.
    public func membersWithCoordinates(of cluster: Cluster<Element>, offset: Int = 0, limit: Int = .max)
        throws(ClusteringMismatch) -> [(element: Element, coordinate: Coordinate)]
    {
        try check(cluster)
        return grid(madeFor: cluster.id).members(of: cluster, offset: offset, limit: limit)
    }

    /// Whether a cluster holds an element.
    /// - Throws: ``ClusteringMismatch`` for a cluster that a clustering with other options made.
    /// - Complexity: O(log *n*).
    public func isMember(_ element: Element, of cluster: Cluster<Element>) throws(ClusteringMismatch) -> Bool {
        try check(cluster)
        guard let coordinate = index.coordinate(of: element) else { return false }
        return isMember(element, at: coordinate, of: cluster)
    }

    /// Whether a cluster this clustering made holds an element found at `coordinate`, for a caller that tests one
    /// element against many clusters and looks its coordinate up once.
    /// - Complexity: O(1).
    package func isMember(_ element: Element, at coordinate: Coordinate, of cluster: Cluster<Element>) -> Bool {
        grid(madeFor: cluster.id).holds(cluster, element, at: coordinate)
    }

    /// The smallest rectangle holding every member of a cluster (to the index's grid of 1/16 plane unit); zoom the map
    /// to it to show them all.
    /// - Throws: ``ClusteringMismatch`` for a cluster that a clustering with other options made.
    /// - Complexity: O(log *n*); with a ``ClusterOptions/shouldCluster`` predicate, or for a cluster of one location,
    ///   O(*m*) for its *m* members.
    public func bounds(of cluster: Cluster<Element>) throws(ClusteringMismatch) -> MapRect {
        try check(cluster)
        return grid(madeFor: cluster.id).bounds(of: cluster)
    }

    /// The smallest zoom level at which a cluster's members no longer show as this one cluster, or `nil` if they never
    /// split: a single element, or members on one location.
    /// - Throws: ``ClusteringMismatch`` for a cluster that a clustering with other options made.
    /// - Complexity: O(1), or O(log *n*) with ``ClusterOptions/cellSizeForZoom``.
    public func expansionZoom(of cluster: Cluster<Element>) throws(ClusteringMismatch) -> Double? {
        try check(cluster)
        return expansionZoom(ofOwn: cluster)
    }

    /// The expansion zoom of a cluster this clustering made, for a caller that made it (a manager's layout pass, a
    /// tile's encoder).
    @_spi(MapClusterServer) public func expansionZoom(ofOwn cluster: Cluster<Element>) -> Double? {
        // It follows from the cluster's tight cell and the grid alone, whatever its category filter: no clustering
        // made for it is needed, which a writer asking it of every feature would pay.
        options.expansionZoom(of: cluster.id)
    }

    /// The members of a cluster this clustering made, for a caller that made it (a manager's fan-out pass).
    package func membersWithCoordinates(ofOwn cluster: Cluster<Element>) -> [(element: Element, coordinate: Coordinate)]
    {
        grid(madeFor: cluster.id).members(of: cluster, offset: 0, limit: .max)
    }

    /// What each cluster's members add up to, in an index with an ``AggregateSchema``: their weight, their count in
    /// each category, and each reduction; `nil` for an index without a schema.
    ///
    ///     let clusters = clustering.clusters(in: viewport)
    ///     for (cluster, aggregates) in zip(clusters, try clustering.aggregates(of: clusters) ?? .init()) { … }
    ///
    /// The answers are in the order of `clusters`, each for the cluster's own category filter (its id carries it), in
    /// one table of plain numbers: reading them allocates nothing per cluster.
    /// - Throws: ``ClusteringMismatch`` for a cluster that a clustering with other options made.
    /// - Complexity: O(*c*) for clusters made at grid levels 0 to 6 (a world map) of an index of 65,536 elements or
    ///   more, from its coarse cells; otherwise one walk of the tree for all the clusters of several locations,
    ///   O(*c* *F* log *n* + *e*) for *c* clusters and *e* entries in leaves their cells share. A cluster of one location
    ///   or element, or any with a ``ClusterOptions/shouldCluster`` predicate, visits its members.
    @inlinable
    public func aggregates(of clusters: [Cluster<Element>]) throws(ClusteringMismatch) -> ClusterAggregateTable? {
        for cluster in clusters { try check(cluster) }
        return table(of: clusters)
    }

    /// ``aggregates(of:)`` of clusters this clustering made, for a caller that made them (a tile's encoder).
    @_spi(MapClusterServer) public func aggregates(ofOwn clusters: [Cluster<Element>]) -> ClusterAggregateTable? {
        table(of: clusters)
    }

    /// The aggregates of clusters this clustering made: specialized where it's called, so that reading the clusters
    /// costs no generic lookups.
    @inlinable
    func table(of clusters: [Cluster<Element>]) -> ClusterAggregateTable? {
        let index = index
        guard index.tree.keepsAggregates else { return nil }
        guard !clusters.isEmpty else { return index.tree.emptyAggregates }
        // Specialized here, so that reading the clusters costs no generic lookups: each becomes a plain request, with
        // the category filter it was made with (an element's is the options').
        let optionsFilter = options.categories.map(index.categorySet)
        let predicate = options.shouldCluster != nil
        var requests: [AggregateRequest] = []
        requests.reserveCapacity(clusters.count)
        // The filter all requests share so far (`nil` before the first), or every request's once they differ.
        var shared: CategorySet?? = nil
        var perRequest: [CategorySet?] = []
        // Where the last single lay: the next one is looked for in its leaf first.
        var lastPlace: EntryPlace?
        for cluster in clusters {
            let filter: CategorySet?
            switch cluster.id {
            case .cell(let tight):
                filter = nil
                requests.append(.cell(tight, madeIn: cluster.cell, count: cluster.count, clusterable: predicate))
            case .filteredCell(let tight, let categories):
                filter = categories
                requests.append(.cell(tight, madeIn: cluster.cell, count: cluster.count, clusterable: predicate))
            case .location(let location):
                filter = nil
                requests.append(.location(location, taking: cluster.filter, count: cluster.count))
            case .filteredLocation(let location, let categories):
                filter = categories
                requests.append(.location(location, taking: cluster.filter, count: cluster.count))
            case .element(let element):
                filter = optionsFilter
                // An element the index no longer holds (a stale cluster) adds up to nothing. One found is read
                // where its entry lies, with no walk.
                let slot = index.slots.find(element, in: index.store).slot
                let key = slot.map { index.store[Int($0)].key } ?? 0
                let place = slot.flatMap { slot in index.tree.place(ofKey: key, near: lastPlace) { $0.slot == slot } }
                lastPlace = place ?? lastPlace
                requests.append(.element(slot: slot, key: key, place: place))
            }
            if !perRequest.isEmpty {
                perRequest.append(filter)
            } else if let shared, shared != filter {
                // The first cluster of another filter: from here on, every request has its own.
                perRequest = Array(repeating: shared, count: requests.count - 1) + [filter]
            } else {
                shared = filter
            }
        }
        return index.tree.aggregates(
            requests, rules: index.clusteringRules(options), filters: perRequest.isEmpty ? [shared ?? nil] : perRequest)
    }

    /// What a cluster's members add up to, as the table answers it; `nil` for an index without an
    /// ``AggregateSchema``.
    /// - Throws: ``ClusteringMismatch`` for a cluster that a clustering with other options made.
    /// - Complexity: O(*F* log *n* + *L*) for a cluster of several locations.
    public func aggregates(of cluster: Cluster<Element>) throws(ClusteringMismatch) -> ClusterAggregates? {
        try aggregates(of: [cluster])?.first
    }

    /// The clusters a cluster splits into at its ``expansionZoom(of:)``, whose counts add up to its own; empty if it
    /// never splits.
    /// - Throws: ``ClusteringMismatch`` for a cluster that a clustering with other options made.
    /// - Complexity: O(*c* log *n*) for its *c* children.
    public func children(of cluster: Cluster<Element>) throws(ClusteringMismatch) -> [Cluster<Element>] {
        try check(cluster)
        return grid(madeFor: cluster.id).children(of: cluster)
    }

    /// The cluster a cluster merges into when the map zooms out, or `nil` if it never merges with others.
    /// - Throws: ``ClusteringMismatch`` for a cluster that a clustering with other options made.
    /// - Complexity: O(*L* log *n*) for the *L* grid levels above the cluster's.
    public func parent(of cluster: Cluster<Element>) throws(ClusteringMismatch) -> Cluster<Element>? {
        try check(cluster)
        return grid(madeFor: cluster.id).parent(of: cluster)
    }

    // MARK: - Checks

    /// Refuses a cluster that a clustering with other options made.
    @inlinable
    package func check(_ cluster: Cluster<Element>) throws(ClusteringMismatch) {
        guard cluster.stamp != stamp else { return }
        throw mismatch(cluster)
    }

    @usableFromInline
    func mismatch(_ cluster: Cluster<Element>) -> ClusteringMismatch {
        var differences = stamp.differences(from: cluster.stamp)
        // The grid's difference, where the cluster's own cell shows it.
        let level = options.gridLevel(forZoom: cluster.zoom)
        if cluster.cell.level != level, let grid = differences.firstIndex(where: { $0.hasPrefix("the grid") }) {
            differences[grid] =
                "the grid differs: at zoom \(cluster.zoom) its cells are of level \(level) here, of level "
                + "\(cluster.cell.level) where the cluster was made (cellSize, cellSizeForZoom or zoomLevels)"
        }
        return ClusteringMismatch(cluster: "\(cluster.id)", differences: differences)
    }

    /// The clustering pass's jobs, with these options.
    var grid: GridClustering<Element> { GridClustering(index: index, options: options, stamp: stamp) }

    /// The jobs with the category filter a cluster's id carries.
    func grid(madeFor id: ClusterID<Element>) -> GridClustering<Element> {
        GridClustering(index: index, options: options, stamp: stamp, madeFor: id)
    }
}

extension ClusterIndex {
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
    @inlinable
    package init<Element>(_ viewport: Viewport, options: ClusterOptions<Element>) {
        self.init(viewport, zoom: viewport.zoom, options: options)
    }

    /// ``init(_:options:)`` for a viewport whose zoom the caller has computed already.
    @inlinable
    init<Element>(_ viewport: Viewport, zoom: Double, options: ClusterOptions<Element>) {
        // A margin that fails validation is clamped, never trusted: none for a negative or NaN one.
        let margin =
            options.marginFactor >= 0 ? min(options.marginFactor, ClusterOptions<Element>.maximumMarginFactor) : 0
        let dx = viewport.rect.size.width * margin
        let dy = viewport.rect.size.height * margin
        self.init(
            level: options.gridLevel(forZoom: zoom), covering: viewport.rect.insetBy(dx: -dx, dy: -dy))
    }
}
