public import MapCluster

/// An index and the options of a map's markers, bound together: the markers of a viewport, laid out as a
/// ``ClusterManager`` with the same options lays out its first update, and the marker an id names.
///
///     let markers = try MarkerClustering(index, options: options)
///     let snapshot = markers.markers(in: viewport)
///     let zoom = try snapshot.expansionZoom(of: snapshot.markers[0])
///
/// For a stateless caller, such as a server that answers each request on its own; its snapshots answer for their
/// markers (members, bounds, children, expansion zooms) with the same options, and refuse a marker that other options
/// made.
public struct MarkerClustering<Element: Hashable & Sendable>: Sendable {
    /// The clustering of the index, with the options' ``ClusterManagerOptions/clustering``.
    public let clustering: Clustering<Element>
    /// The options: how it clusters, lays out and titles markers.
    public let options: ClusterManagerOptions<Element>
    /// The merged layout, laid out block by block as views and ids ask for it, when the options merge markers.
    let merging: MergeLayout<Element>?

    /// The markers of `index` with `options`.
    /// - Throws: `OptionError` for options that fail ``ClusterManagerOptions/validate()``, as a
    ///   ``ClusterManager`` refuses them: no pass is skipped without a word.
    public init(_ index: ClusterIndex<Element>, options: ClusterManagerOptions<Element> = .init()) throws(OptionError) {
        try options.validate()
        self.init(validated: index, options: options)
    }

    /// The markers of `index` with options its caller has validated, as a server does once when it starts.
    @_spi(MapClusterServer) public init(validated index: ClusterIndex<Element>, options: ClusterManagerOptions<Element>)
    {
        clustering = Clustering(validated: index, options: options.clustering)
        self.options = options
        merging = MergeLayout(clustering, resolution: options.overlap)
    }

    /// The same markers, showing only elements of these categories (`ClusterOptions.categories`); `nil`
    /// shows every element.
    public func selecting(categories: Set<String>?) -> MarkerClustering {
        var options = options
        options.clustering.categories = categories
        let selected = clustering.selecting(categories: categories)
        return MarkerClustering(
            clustering: selected, options: options,
            merging: merging?.selecting(categories: categories, selected))
    }

    private init(
        clustering: Clustering<Element>, options: ClusterManagerOptions<Element>, merging: MergeLayout<Element>?
    ) {
        self.clustering = clustering
        self.options = options
        self.merging = merging
    }

    /// The markers of one viewport: the overlap and fan-out passes run, with no earlier markers to keep.
    public func markers(in viewport: Viewport) -> ClusterSnapshot<Element> {
        var empty = ClusterSnapshot.empty(clustering, layout: options)
        // The job goes on with the layout kept here: the empty snapshot is of the same elements and options.
        empty.merging = merging
        guard !viewport.isEmpty else { return empty }
        if let merged = mergedMarkers(in: viewport) { return merged }
        let job = UpdateJob(
            viewport: viewport, clustering: clustering, dataVersion: 0, options: options, optionsVersion: 0,
            previous: empty, dirty: .all)
        // Nothing stops a job that is never cancelled: it always answers.
        return job.run { false }?.snapshot ?? empty
    }

    /// The markers of a viewport where they merge and no other pass runs, taken straight from the layout.
    ///
    /// They are what an update with no earlier markers makes, without what an update keeps for the next (anchors,
    /// changes). `nil` where the update must run: no merge, a zoom that doesn't cluster, a fan-out or fixed positions.
    private func mergedMarkers(in viewport: Viewport) -> ClusterSnapshot<Element>? {
        guard let merging, options.sameLocation == nil, options.fixPositions == nil,
            clustering.options.clusters(atZoom: viewport.zoom)
        else { return nil }
        let region = CellRegion(viewport, options: clustering.options)
        let markers = merging.items(in: region, rect: viewport.rect).map { item in
            ClusterMarker(
                id: item.id, cluster: item.cluster, mergedClusters: item.mergedClusters, coordinate: item.coordinate,
                layoutExpansionZoom: item.layoutExpansionZoom)
        }
        var snapshot = ClusterSnapshot(
            viewport: viewport, markers: markers, region: region, clustering: clustering, layout: options,
            gridLevel: region.level, dataVersion: 0, optionsVersion: 0, anchors: [:])
        snapshot.merging = merging
        return snapshot
    }

    /// A snapshot of the one marker an id names, as ``markers(in:)`` gives it out: a cluster's, or a merged marker's of
    /// its parts' ids; `nil` if the index has no such cluster, or one of the parts is not a cluster of this clustering,
    /// or (where markers merge) no zoom shows those parts merged as one.
    ///
    /// Its expansion zoom is the one ``markers(in:)`` gives it (see ``ClusterSnapshot/expansionZoom(of:)``).
    public func marker(id: ClusterMarker<Element>.ID) -> ClusterSnapshot<Element>? {
        let ids: [ClusterID<Element>]
        switch id {
        case .cluster(let only): ids = [only]
        case .merged(let parts):
            guard parts.count > 1 else { return nil }
            ids = parts
        }
        // Filtered parts merged in the layout of their categories, which their ids name.
        let filter = ids.lazy.compactMap { id -> CategorySet? in
            switch id {
            case .filteredCell(_, let set), .filteredLocation(_, let set): set
            default: nil
            }
        }.first
        if let set = filter, options.clustering.categories == nil, let names = clustering.index.schema?.categories {
            return selecting(categories: Set(set.positions.filter { $0 < names.count }.map { names[$0] })).marker(
                id: id)
        }
        var parts: [Cluster<Element>] = []
        for part in ids {
            guard let cluster = clustering.cluster(id: part) else { return nil }
            parts.append(cluster)
        }
        guard let first = parts.first else { return nil }
        let marker: ClusterMarker<Element>
        if parts.count > 1 {
            // A merged marker is the layout's: its parts must show merged, as that marker, at some zoom.
            guard let merging, let (item, expansionZoom) = merging.merged(parts) else { return nil }
            marker = ClusterMarker(
                id: id, cluster: item.cluster, mergedClusters: item.mergedClusters, coordinate: item.coordinate,
                layoutExpansionZoom: .some(expansionZoom))
        } else {
            let item = MarkerLayout<Element>.Item(id: first.id, cluster: first, coordinate: first.coordinate)
            marker = ClusterMarker(
                id: id, cluster: first, coordinate: first.coordinate,
                layoutExpansionZoom: merging.flatMap {
                    first.count > 1 ? .some($0.expansionZoom(ofCluster: item)) : nil
                })
        }
        return ClusterSnapshot(
            viewport: nil, markers: [marker], region: nil, clustering: clustering, layout: options, gridLevel: nil,
            dataVersion: 0, optionsVersion: 0, anchors: [:])
    }

    /// ``markers(in:)`` of an index of record numbers, compiled for them here: a server's elements are record numbers,
    /// and the generic version, called from another module, spent a sixth of a request looking up generic metadata.
    @_spi(MapClusterServer) public func recordMarkers(in viewport: Viewport) -> ClusterSnapshot<Element>
    where Element == Int {
        markers(in: viewport)
    }
}
