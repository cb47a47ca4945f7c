public import MapCluster

extension ClusterIndex {
    /// The markers of one viewport, laid out as a ``ClusterManager`` with `options` lays out its first update: the
    /// overlap and fan-out passes run, with no earlier markers to keep.
    ///
    /// For a stateless caller, such as a server that answers each request on its own; the snapshot asks the index for
    /// members, bounds, children and expansion zooms as a manager's does.
    ///
    /// - Throws: ``MapCluster/OptionError`` for options that fail ``ClusterManagerOptions/validate()``, as a
    ///   ``ClusterManager`` refuses them: no pass is skipped without a word.
    public func markers(in viewport: Viewport, options: ClusterManagerOptions<Element>) throws(OptionError)
        -> ClusterSnapshot<Element>
    {
        try options.validate()
        guard !viewport.isEmpty else { return .empty(index: self, layout: options) }
        let job = UpdateJob(
            viewport: viewport, index: self, dataVersion: 0, options: options, optionsVersion: 0,
            previous: .empty(index: self), dirty: .all)
        // Nothing stops a job that is never cancelled: it always answers.
        return job.run { false }?.snapshot ?? .empty(index: self, layout: options)
    }

    /// ``markers(in:options:)`` of an index of record numbers, compiled for them here: a server's elements are record
    /// numbers, and the generic version, called from another module, spent a sixth of a request looking up generic
    /// metadata.
    @_spi(MapClusterServer) public func recordMarkers(in viewport: Viewport, options: ClusterManagerOptions<Element>)
        throws(OptionError) -> ClusterSnapshot<Element> where Element == Int
    {
        try markers(in: viewport, options: options)
    }

    /// A snapshot of the one marker an id names, as ``markers(in:options:)`` gives it out: a cluster's, or a merged
    /// marker's of its parts' ids; `nil` if the index has no such cluster, or one of the parts is not a cluster of
    /// the index.
    ///
    /// A merged marker's expansion zoom is the one its parts give (see ``ClusterSnapshot/expansionZoom(of:)``), and it
    /// stands at their positions' mean weighted by count.
    ///
    /// - Throws: ``MapCluster/OptionError`` for options that fail ``ClusterManagerOptions/validate()``.
    public func marker(id: ClusterMarker<Element>.ID, options: ClusterManagerOptions<Element>) throws(OptionError)
        -> ClusterSnapshot<Element>?
    {
        try options.validate()
        let ids: [ClusterID<Element>]
        switch id {
        case .cluster(let only): ids = [only]
        case .merged(let parts):
            guard parts.count > 1 else { return nil }
            ids = parts
        }
        var parts: [Cluster<Element>] = []
        for part in ids {
            guard let cluster = cluster(id: part, options: options.clustering) else { return nil }
            parts.append(cluster)
        }
        guard let first = parts.first else { return nil }
        var mergedExpansionZoom: Double?
        var coordinate = first.coordinate
        if parts.count > 1, let resolution = options.overlap {
            mergedExpansionZoom = MarkerLayout.mergedExpansionZoom(
                of: parts, resolution: resolution, index: self, options: options.clustering)
            coordinate = MarkerLayout<Element>.weightedCenter(of: parts)
        }
        let marker = ClusterMarker(
            id: id, cluster: first, mergedClusters: Array(parts.dropFirst()), coordinate: coordinate,
            mergedExpansionZoom: mergedExpansionZoom)
        return ClusterSnapshot(
            viewport: nil, markers: [marker], region: nil, index: self, layout: options, gridLevel: nil,
            dataVersion: 0, optionsVersion: 0, anchors: [:])
    }
}
