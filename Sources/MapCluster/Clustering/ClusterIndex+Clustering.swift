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
    /// - Returns: The clusters, in Z order of their cells; none for an empty viewport (``Viewport/isEmpty``).
    /// - Complexity: O(*c* log *n*) for *c* non-empty cells, whatever they hold, and O(*c*) for a world map (grid
    ///   levels 0 to 6) of an index of 65,536 elements or more; a cell that is not clustered costs the visit of its
    ///   elements, as does a ``ClusterOptions/shouldCluster`` predicate.
    @inlinable
    public func clusters(in viewport: Viewport, options: ClusterOptions<Element> = .init()) -> [Cluster<Element>] {
        guard !viewport.isEmpty else { return [] }
        return clusters(in: CellRegion(viewport, options: options), zoom: viewport.zoom, options: options, taking: .all)
        {
            false
        } ?? []
    }

    /// The clusters of a region of grid cells at a zoom, or `nil` if `stop` answered true: it is asked every
    /// ``clusteringCellsPerStopCheck`` cells, so that a caller whose answer is no longer wanted (a manager's superseded
    /// update) stops early.
    @inlinable
    package func clusters(
        in region: CellRegion, zoom: Double, options: ClusterOptions<Element>, stop: () -> Bool
    ) -> [Cluster<Element>]? {
        clusters(in: region, zoom: zoom, options: options, taking: .all, stop: stop)
    }

    /// How many cells a clustering pass works through between two questions to its `stop` function.
    package static var clusteringCellsPerStopCheck: Int { ClusteringPass.cellsPerStopCheck }

    /// The grid cells that ``clusters(in:options:)`` considers for a viewport, for drawing a debug grid.
    public func gridCells(in viewport: Viewport, options: ClusterOptions<Element> = .init()) -> [GridCell] {
        guard !viewport.isEmpty else { return [] }
        return CellRegion(viewport, options: options).cells
    }

    /// The cluster that holds an element in a viewport's clustering, or `nil` if the element is unknown or the viewport
    /// empty.
    ///
    /// It is the cluster ``clusters(in:options:)`` gives for the element, whether or not the element lies in the
    /// viewport and its margin.
    /// - Complexity: O(log *n*) for a clustered cell; an unclustered cell costs the visit of its elements.
    public func cluster(holding element: Element, in viewport: Viewport, options: ClusterOptions<Element> = .init())
        -> Cluster<Element>?
    {
        guard !viewport.isEmpty, let coordinate = coordinate(of: element) else { return nil }
        return GridClustering(index: self, options: options).cluster(
            holding: element, at: coordinate, zoom: viewport.zoom)
    }

    /// The cluster with an id, as clustering with `options` makes it at the deepest zoom that shows it; `nil` if no
    /// zoom does (an unknown or stale id, or one from other options).
    ///
    /// What a server needs to answer for a cluster a client names: its members, children and expansion zoom.
    /// - Complexity: O(log *n*) for a cluster of several locations; a location or an element costs the visit of the
    ///   elements in its cell at that zoom.
    public func cluster(id: ClusterID<Element>, options: ClusterOptions<Element> = .init()) -> Cluster<Element>? {
        GridClustering(index: self, options: options, madeFor: id).cluster(id: id)
    }

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

// MARK: - A cluster's members, bounds and hierarchy

/// A cluster's members, bounds, children, parent and expansion zoom are asked of the index it came from, with the
/// options it was made with. Asked of a later state of the index, they answer for that state.
extension ClusterIndex {
    /// A page of a cluster's members, in the index's order.
    ///
    ///     let firstTen = index.members(of: cluster, limit: 10)
    ///
    /// - Complexity: O(log *n* + `offset` + `limit`); without ``ClusterOptions/shouldCluster``, a cluster of several
    ///   locations skips `offset` members in O(log *n*).
    public func members(
        of cluster: Cluster<Element>, options: ClusterOptions<Element> = .init(), offset: Int = 0, limit: Int = .max
    ) -> [Element] {
        membersWithCoordinates(of: cluster, options: options, offset: offset, limit: limit).map(\.element)
    }

    /// A page of a cluster's members with their coordinates, in the index's order.
    /// - Complexity: As ``members(of:options:offset:limit:)``.
    public func membersWithCoordinates(
        of cluster: Cluster<Element>, options: ClusterOptions<Element> = .init(), offset: Int = 0, limit: Int = .max
    ) -> [(element: Element, coordinate: Coordinate)] {
        GridClustering(index: self, options: options, madeFor: cluster.id).members(
            of: cluster, offset: offset, limit: limit)
    }

    /// Whether a cluster holds an element.
    /// - Complexity: O(log *n*).
    public func isMember(_ element: Element, of cluster: Cluster<Element>, options: ClusterOptions<Element> = .init())
        -> Bool
    {
        guard let coordinate = coordinate(of: element) else { return false }
        return isMember(element, at: coordinate, of: cluster, options: options)
    }

    /// Whether a cluster holds an element found at `coordinate`, for a caller that tests one element against many
    /// clusters and looks its coordinate up once.
    /// - Complexity: O(1).
    package func isMember(
        _ element: Element, at coordinate: Coordinate, of cluster: Cluster<Element>, options: ClusterOptions<Element>
    ) -> Bool {
        GridClustering(index: self, options: options, madeFor: cluster.id).holds(cluster, element, at: coordinate)
    }

    /// The smallest rectangle holding every member of a cluster (to the index's grid of 1/16 plane unit); zoom the map
    /// to it to show them all.
    ///
    /// - Complexity: O(log *n*); with a ``ClusterOptions/shouldCluster`` predicate, or for a cluster of one location,
    ///   O(*m*) for its *m* members.
    public func bounds(of cluster: Cluster<Element>, options: ClusterOptions<Element> = .init()) -> MapRect {
        GridClustering(index: self, options: options, madeFor: cluster.id).bounds(of: cluster)
    }

    /// The smallest zoom level at which a cluster's members no longer show as this one cluster, or `nil` if they never
    /// split: a single element, or members on one location.
    /// - Complexity: O(1), or O(log *n*) with ``ClusterOptions/cellSizeForZoom``.
    public func expansionZoom(of cluster: Cluster<Element>, options: ClusterOptions<Element> = .init()) -> Double? {
        // It follows from the cluster's tight cell and the grid alone, whatever its category filter: no clustering
        // made for it is needed, which a writer asking it of every feature would pay.
        options.expansionZoom(of: cluster.id)
    }

    /// What each cluster's members add up to, in an index with an ``AggregateSchema``: their weight, their count in
    /// each category, and each reduction; `nil` for an index without a schema.
    ///
    ///     let clusters = index.clusters(in: viewport, options: options)
    ///     for (cluster, aggregates) in zip(clusters, index.aggregates(of: clusters, options: options) ?? .init()) { … }
    ///
    /// The answers are in the order of `clusters`, each for the cluster's own category filter (its id carries it), in
    /// one table of plain numbers: reading them allocates nothing per cluster.
    /// - Complexity: O(*c*) for clusters made at grid levels 0 to 6 (a world map) of an index of 65,536 elements or
    ///   more, from its coarse cells; otherwise one walk of the tree for all the clusters of several locations,
    ///   O(*c* *F* log *n* + *e*) for *c* clusters and *e* entries in leaves their cells share. A cluster of one location
    ///   or element, or any with a ``ClusterOptions/shouldCluster`` predicate, visits its members.
    @inlinable
    public func aggregates(of clusters: [Cluster<Element>], options: ClusterOptions<Element> = .init())
        -> ClusterAggregateTable?
    {
        guard tree.keepsAggregates else { return nil }
        guard !clusters.isEmpty else { return tree.emptyAggregates }
        // Specialized here, so that reading the clusters costs no generic lookups: each becomes a plain request, with
        // the category filter it was made with (an element's is the options').
        let optionsFilter = options.categories.map(categorySet)
        let predicate = options.shouldCluster != nil
        var requests: [AggregateRequest] = []
        requests.reserveCapacity(clusters.count)
        // The filter all requests share so far (`nil` before the first), or every request's once they differ.
        var shared: CategorySet?? = nil
        var perRequest: [CategorySet?] = []
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
                // An element the index no longer holds (a stale cluster) adds up to nothing.
                let slot = slots.find(element, in: store).slot
                requests.append(.element(slot: slot, key: slot.map { store[Int($0)].key } ?? 0))
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
        return ClusteringPass(tree: tree, rules: clusteringRules(options)).aggregates(
            requests, filters: perRequest.isEmpty ? [shared ?? nil] : perRequest)
    }

    /// What a cluster's members add up to, as the table answers it; `nil` for an index without an
    /// ``AggregateSchema``.
    /// - Complexity: O(*F* log *n* + *L*) for a cluster of several locations.
    public func aggregates(of cluster: Cluster<Element>, options: ClusterOptions<Element> = .init())
        -> ClusterAggregates?
    {
        aggregates(of: [cluster], options: options)?.first
    }

    /// The clusters a cluster splits into at its ``expansionZoom(of:options:)``, whose counts add up to its own; empty
    /// if it never splits.
    /// - Complexity: O(*c* log *n*) for its *c* children.
    public func children(of cluster: Cluster<Element>, options: ClusterOptions<Element> = .init()) -> [Cluster<Element>]
    {
        GridClustering(index: self, options: options, madeFor: cluster.id).children(of: cluster)
    }

    /// The cluster a cluster merges into when the map zooms out, or `nil` if it never merges with others.
    /// - Complexity: O(*L* log *n*) for the *L* grid levels above the cluster's.
    public func parent(of cluster: Cluster<Element>, options: ClusterOptions<Element> = .init()) -> Cluster<Element>? {
        GridClustering(index: self, options: options, madeFor: cluster.id).parent(of: cluster)
    }
}

extension CellRegion {
    /// The cells that clustering a viewport with `options` considers: those the viewport, grown by the margin on
    /// every side, touches.
    @inlinable
    package init<Element>(_ viewport: Viewport, options: ClusterOptions<Element>) {
        // A margin that fails validation is clamped, never trusted: none for a negative or NaN one.
        let margin =
            options.marginFactor >= 0 ? min(options.marginFactor, ClusterOptions<Element>.maximumMarginFactor) : 0
        let dx = viewport.rect.size.width * margin
        let dy = viewport.rect.size.height * margin
        self.init(
            level: options.gridLevel(forZoom: viewport.zoom), covering: viewport.rect.insetBy(dx: -dx, dy: -dy))
    }
}
