/// A cluster as the clustering pass makes it, before it names elements.
///
/// A single element is its slot in the index's store; ``Cluster/init(_:zoom:store:categories:)`` turns the draft into a
/// ``Cluster``, in the caller's specialization.
@usableFromInline
struct ClusterDraft {
    @usableFromInline
    enum Identity {
        case cell(GridCell)
        case location(Coordinate)
        case element(slot: UInt32)
    }

    @usableFromInline let identity: Identity
    @usableFromInline let coordinate: Coordinate
    @usableFromInline let count: Int
    @usableFromInline let isSameLocation: Bool
    @usableFromInline let cell: GridCell
    @usableFromInline let filter: MemberFilter
    /// Where a single element's entry lies in the tree the draft was made from, when the fold read it from a leaf.
    @usableFromInline var place: EntryPlace? = nil

    /// The request for the aggregates of the draft's members; `key` gives a slot's key.
    func request(clusterable: Bool, key: (UInt32) -> UInt64) -> AggregateRequest {
        switch identity {
        case .cell(let tight): .cell(tight, madeIn: cell, count: count, clusterable: clusterable)
        case .location(let location): .location(location, taking: filter, count: count)
        case .element(let slot): .element(slot: slot, key: key(slot), place: place)
        }
    }

    /// The same draft at another coordinate.
    func placed(at coordinate: Coordinate) -> ClusterDraft {
        ClusterDraft(
            identity: identity, coordinate: coordinate, count: count, isSameLocation: isSameLocation, cell: cell,
            filter: filter, place: place)
    }
}

/// What the clustering pass needs of ``ClusterOptions``, without the element type.
@usableFromInline
struct ClusteringRules: Sendable {
    /// Where a cluster of several locations goes: the placements the pass computes.
    ///
    /// A ``ClusterPosition/custom(_:)`` one is drafted at the center of mass, and placed by the caller, who has the
    /// ``Cluster`` it needs.
    @usableFromInline
    enum Placement: Sendable {
        case centerOfMass
        case weightedCenterOfMass
        case cellCenter
        case firstAdded
        case firstInZOrder
        case nearestToCellCenter
    }

    let maxZoomLevelForClustering: Double
    let minCountForClustering: Int
    let minUniqueLocationsForClustering: Int
    let placement: Placement
    /// Whether the element in a slot takes part in clustering (``ClusterOptions/shouldCluster``); `nil` when all do.
    let isClusterable: (@Sendable (UInt32) -> Bool)?
    /// The rank of addition of the element in a slot, for ``Placement/firstAdded``; `nil` for other placements.
    let addedOrder: (@Sendable (UInt32) -> UInt32)?
    /// The grid level whose cells are one location each (``ClusterOptions/locationLevel``); `nil` when only equal
    /// coordinates are.
    let locationLevel: Int?
    /// The categories shown (``ClusterOptions/categories``); `nil` when every element is.
    @usableFromInline let categories: CategorySet?

    @usableFromInline
    init(
        maxZoomLevelForClustering: Double, minCountForClustering: Int, minUniqueLocationsForClustering: Int,
        placement: Placement, isClusterable: (@Sendable (UInt32) -> Bool)?,
        addedOrder: (@Sendable (UInt32) -> UInt32)? = nil,
        locationLevel: Int? = nil, categories: CategorySet?
    ) {
        self.categories = categories
        self.addedOrder = addedOrder
        self.locationLevel = locationLevel
        self.maxZoomLevelForClustering = maxZoomLevelForClustering
        self.minCountForClustering = minCountForClustering
        self.minUniqueLocationsForClustering = minUniqueLocationsForClustering
        self.placement = placement
        self.isClusterable = isClusterable
    }
}

extension ClusteringRules {
    /// The same rules with another category filter.
    func selecting(_ categories: CategorySet?) -> ClusteringRules {
        ClusteringRules(
            maxZoomLevelForClustering: maxZoomLevelForClustering, minCountForClustering: minCountForClustering,
            minUniqueLocationsForClustering: minUniqueLocationsForClustering, placement: placement,
            isClusterable: isClusterable, addedOrder: addedOrder, locationLevel: locationLevel, categories: categories)
    }

    /// The location an entry's key falls in: the key itself when only equal coordinates are one location (the caller
    /// compares coordinates then), else its cell at ``locationLevel``.
    @inline(__always) func locationKey(_ key: UInt64) -> UInt64 {
        guard let locationLevel else { return key }
        return key >> UInt64(2 * (GridCell.maxLevel - locationLevel))
    }

    /// Whether `filter` takes an entry's element, under the category filter.
    @inline(__always) func admits(_ entry: IndexEntry, _ filter: MemberFilter) -> Bool {
        if let categories, !categories.admits(code: entry.category) { return false }
        guard filter != .all, let isClusterable else { return filter != .optedOut }
        return isClusterable(entry.slot) == (filter == .clusterable)
    }

    /// Whether the members that totals add up are one location: on one coordinate, or within one cell at
    /// ``locationLevel``.
    @inline(__always) func isOneLocation(_ totals: CellTotals) -> Bool {
        totals.isSameLocation || (locationLevel != nil && locationKey(totals.firstKey) == locationKey(totals.lastKey))
    }
}

extension ClusterIndex {
    /// The rules of `options`, with the predicate asked of the elements in this index's store.
    @inlinable
    func clusteringRules(_ options: ClusterOptions<Element>) -> ClusteringRules {
        let placement: ClusteringRules.Placement =
            switch options.position {
            case .centerOfMass, .custom: .centerOfMass
            case .weightedCenterOfMass: .weightedCenterOfMass
            case .cellCenter: .cellCenter
            case .firstMember: .firstAdded
            case .firstInZOrder: .firstInZOrder
            case .nearestToCellCenter: .nearestToCellCenter
            }
        let isClusterable = options.shouldCluster.map { shouldCluster in
            { @Sendable [store] (slot: UInt32) in shouldCluster(store[Int(slot)].element) }
        }
        let addedOrder: (@Sendable (UInt32) -> UInt32)? =
            placement == .firstAdded
            ? { @Sendable [order = elementSlots.addedOrder] (slot: UInt32) in order[Int(slot)] } : nil
        return ClusteringRules(
            maxZoomLevelForClustering: options.deepestClusteringZoom,
            minCountForClustering: options.minCountForClustering,
            minUniqueLocationsForClustering: options.minUniqueLocationsForClustering, placement: placement,
            isClusterable: isClusterable, addedOrder: addedOrder, locationLevel: options.locationLevel,
            categories: options.categories.map(categorySet))
    }

    /// The set of the named categories of the index's schema; names it does not have select nothing.
    @usableFromInline
    func categorySet(_ names: Set<String>) -> CategorySet {
        schema?.selection(of: names) ?? CategorySet()
    }

    /// The clusters of every cell of `region`, at `zoom`, in key order of their cells, of the elements `filter` takes;
    /// `nil` if `stop` said so (see ``ClusteringPass/drafts(walking:with:in:zoom:taking:stop:)``).
    ///
    /// `pass` is this index's pass with the rules of `options`. Inlinable, so that making each ``Cluster`` is
    /// specialized for the caller's element type; never inlined, so that the loop that makes them stays a function of
    /// its own, however short the call: inlined into the peer benchmark's main code, it made the 4,096 clusters of the
    /// uniform 100,000 at zoom 3 in 98 µs instead of 92.
    @inlinable @inline(never)
    func makeClusters(
        in region: CellRegion, zoom: Double, options: ClusterOptions<Element>, stamp: ClusteringStamp,
        pass: ClusteringPass, taking filter: MemberFilter, stop: (() -> Bool)?
    ) -> [Cluster<Element>]? {
        let rules = pass.rules
        guard
            let drafts = ClusteringPass.drafts(
                walking: tree, with: pass, in: region, zoom: zoom, taking: filter, stop: stop)
        else { return nil }
        return clusters(of: drafts, zoom: zoom, options: options, rules: rules, stamp: stamp, stop: stop)
    }

    /// ``makeClusters(in:zoom:options:stamp:pass:taking:stop:)`` of all elements, with each cluster's aggregates (`nil`
    /// for an index that keeps none), asked of the drafts: each knows its members' keys, and a single element its
    /// slot, which a cluster would have to look up.
    @inlinable
    func makeClustersWithAggregates(
        in region: CellRegion, zoom: Double, options: ClusterOptions<Element>, stamp: ClusteringStamp,
        pass: ClusteringPass
    ) -> (clusters: [Cluster<Element>], aggregates: ClusterAggregateTable?) {
        let store = store
        let (drafts, aggregates) = ClusteringPass.draftsWithAggregates(
            walking: tree, with: pass, in: region, zoom: zoom, clusterable: options.shouldCluster != nil,
            key: { store[Int($0)].key })
        // An empty view (what a map far from any element asks, often): no answer to make.
        guard !drafts.isEmpty else { return ([], tree.emptyAggregates) }
        let clusters =
            clusters(of: drafts, zoom: zoom, options: options, rules: pass.rules, stamp: stamp, stop: nil) ?? []
        return (clusters, aggregates)
    }

    /// The clusters of a pass's drafts; `nil` if `stop` said so, asked between calls of a ``ClusterPosition/custom(_:)``
    /// position.
    ///
    /// Always inlined, as it was when it lay inside ``makeClusters(in:zoom:options:stamp:pass:taking:stop:)``: left a call
    /// of its own, `viewport-1M-z3` in `mapcluster bench` took 0.0238 ms against 0.0193 (and `viewport-1M-z8` 0.0253
    /// against 0.0276: views this short move with the code's layout).
    @inlinable @inline(__always)
    func clusters(
        of drafts: [ClusterDraft], zoom: Double, options: ClusterOptions<Element>, rules: ClusteringRules,
        stamp: ClusteringStamp, stop: (() -> Bool)?
    ) -> [Cluster<Element>]? {
        guard !drafts.isEmpty else { return [] }
        let store = store
        var result: [Cluster<Element>] = []
        result.reserveCapacity(drafts.count)
        guard case .custom(let place) = options.position else {
            for draft in drafts {
                result.append(Cluster(draft, zoom: zoom, store: store, categories: rules.categories, stamp: stamp))
            }
            return result
        }
        // The app's own position function is the costly part of such a pass: `stop` is asked between its calls too.
        let check = ClusteringPass.cellsPerStopCheck
        for (position, draft) in drafts.enumerated() {
            if let stop, position % check == check - 1, stop() { return nil }
            var cluster = Cluster(draft, zoom: zoom, store: store, categories: rules.categories, stamp: stamp)
            if case .cell = draft.identity { cluster = cluster.placed(at: place(cluster)) }
            result.append(cluster)
        }
        return result
    }
}

extension Cluster {
    /// The cluster a draft stands for, with its element read from the index's store; a cluster of several elements of
    /// a query filtered by `categories` carries them in its id.
    @inlinable
    init(
        _ draft: ClusterDraft, zoom: Double, store: PagedArray<StoredElement<Element>>, categories: CategorySet?,
        stamp: ClusteringStamp
    ) {
        var id: ClusterID<Element> =
            switch draft.identity {
            case .cell(let tight): .cell(tight)
            case .location(let location): .location(location)
            case .element(let slot): .element(store[Int(slot)].element)
            }
        if let categories, !id.isElement { id = .filtered(id, categories: categories) }
        self.init(
            id: id, coordinate: draft.coordinate, count: draft.count, isSameLocation: draft.isSameLocation,
            cell: draft.cell, zoom: zoom, filter: draft.filter, stamp: stamp)
    }
}
