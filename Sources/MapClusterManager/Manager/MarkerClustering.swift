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

    /// The markers of `index` with `options`.
    /// - Throws: `OptionError` for options that fail ``ClusterManagerOptions/validate()``, as a
    ///   ``ClusterManager`` refuses them: no pass is skipped without a word.
    public init(_ index: ClusterIndex<Element>, options: ClusterManagerOptions<Element> = .init()) throws(OptionError) {
        try options.validate()
        clustering = Clustering(validated: index, options: options.clustering)
        self.options = options
    }

    /// The markers of `index` with options its caller has validated, as a server does once when it starts.
    @_spi(MapClusterServer) public init(validated index: ClusterIndex<Element>, options: ClusterManagerOptions<Element>)
    {
        clustering = Clustering(validated: index, options: options.clustering)
        self.options = options
    }

    /// The same markers, showing only elements of these categories (`ClusterOptions.categories`); `nil`
    /// shows every element.
    public func selecting(categories: Set<String>?) -> MarkerClustering {
        var options = options
        options.clustering.categories = categories
        return MarkerClustering(clustering: clustering.selecting(categories: categories), options: options)
    }

    private init(clustering: Clustering<Element>, options: ClusterManagerOptions<Element>) {
        self.clustering = clustering
        self.options = options
    }

    /// The markers of one viewport: the overlap and fan-out passes run, with no earlier markers to keep.
    public func markers(in viewport: Viewport) -> ClusterSnapshot<Element> {
        let empty = ClusterSnapshot.empty(clustering, layout: options)
        guard !viewport.isEmpty else { return empty }
        let job = UpdateJob(
            viewport: viewport, clustering: clustering, dataVersion: 0, options: options, optionsVersion: 0,
            previous: empty, dirty: .all)
        // Nothing stops a job that is never cancelled: it always answers.
        return job.run { false }?.snapshot ?? empty
    }

    /// A snapshot of the one marker an id names, as ``markers(in:)`` gives it out: a cluster's, or a merged marker's of
    /// its parts' ids; `nil` if the index has no such cluster, or one of the parts is not a cluster of this clustering.
    ///
    /// A merged marker's expansion zoom is the one its parts give (see ``ClusterSnapshot/expansionZoom(of:)``), and it
    /// stands at their positions' mean weighted by count.
    public func marker(id: ClusterMarker<Element>.ID) -> ClusterSnapshot<Element>? {
        let ids: [ClusterID<Element>]
        switch id {
        case .cluster(let only): ids = [only]
        case .merged(let parts):
            guard parts.count > 1 else { return nil }
            ids = parts
        }
        var parts: [Cluster<Element>] = []
        for part in ids {
            guard let cluster = clustering.cluster(id: part) else { return nil }
            parts.append(cluster)
        }
        guard let first = parts.first else { return nil }
        var mergedExpansionZoom: Double?
        var coordinate = first.coordinate
        if parts.count > 1, let resolution = options.overlap {
            mergedExpansionZoom = MarkerLayout.mergedExpansionZoom(
                of: parts, resolution: resolution, clustering: clustering)
            coordinate = MarkerLayout<Element>.weightedCenter(of: parts)
        }
        let marker = ClusterMarker(
            id: id, cluster: first, mergedClusters: Array(parts.dropFirst()), coordinate: coordinate,
            mergedExpansionZoom: mergedExpansionZoom)
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
