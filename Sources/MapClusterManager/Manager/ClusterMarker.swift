@_spi(MapClusterServer) public import MapCluster

/// One thing a map draws for a ``ClusterManager``: a cluster, a single element, a fanned-out member of a
/// same-location group, or clusters merged because their markers overlapped, at the position to draw it.
///
/// A marker is plain data. Its members, bounds, children, expansion zoom, title and subtitle are asked of the
/// ``ClusterSnapshot`` it came from, which knows the options it was made with.
public struct ClusterMarker<Element: Hashable & Sendable>: Identifiable, Sendable {
    /// The identity of a marker.
    public enum ID: Hashable, Sendable, CustomStringConvertible {
        /// A marker of one cluster: its id, or the id of the marker it reuses (see
        /// ``ClusterManagerOptions/reusesMarkers``).
        case cluster(ClusterID<Element>)
        /// Clusters whose markers overlapped on screen, merged by the overlap pass: their ids, in the order of their
        /// cells.
        case merged([ClusterID<Element>])

        /// The kind of identity and its value, as in `cell 12/2200/1343` or `merged [element 1, element 2]`.
        public var description: String {
            switch self {
            case .cluster(let id): id.description
            case .merged(let parts): "merged [\(parts.map(\.description).joined(separator: ", "))]"
            }
        }
    }

    /// The marker's identity.
    public let id: ID
    /// The cluster it stands for; for a merged marker, the first of the clusters merged into it.
    public let cluster: Cluster<Element>
    /// For a merged marker, the clusters merged into it after ``cluster``, in the order of their cells; empty for any
    /// other.
    public let mergedClusters: [Cluster<Element>]
    /// Where to draw it.
    ///
    /// It differs from its cluster's `Cluster.coordinate` when the marker keeps its place while its members change,
    /// is nudged apart from another one, is fanned out around a shared coordinate, or is merged.
    public let coordinate: Coordinate
    /// How many elements it stands for.
    public let count: Int
    /// Where markers merge, the zoom at which its points first show as more than one marker of the merged layout
    /// (`.some(nil)` if they never do); `nil` where the clustering's own expansion zoom holds.
    let layoutExpansionZoom: Double??

    init(
        id: ID, cluster: Cluster<Element>, mergedClusters: [Cluster<Element>] = [], coordinate: Coordinate,
        layoutExpansionZoom: Double?? = nil
    ) {
        self.id = id
        self.cluster = cluster
        self.mergedClusters = mergedClusters
        self.coordinate = coordinate
        count = mergedClusters.reduce(cluster.count) { $0 + $1.count }
        self.layoutExpansionZoom = layoutExpansionZoom
    }

    /// Whether it stands for more than one element.
    public var isCluster: Bool { count > 1 }
    /// Whether it merges several clusters whose markers overlapped.
    ///
    /// Inlinable, as ``element`` is: a tile asks both of every marker, and called across modules without being
    /// specialized they cost `tiles-1M-z0-14-merged` 2% of its time, most of it in looking up generic metadata.
    @inlinable public var isMerged: Bool { !mergedClusters.isEmpty }
    /// Every cluster it stands for: its ``cluster`` and, for a merged marker, the ``mergedClusters``.
    public var clusters: [Cluster<Element>] { [cluster] + mergedClusters }
    /// Whether all its members share one coordinate.
    public var isSameLocation: Bool { !isMerged && cluster.isSameLocation }
    /// The element of a marker that stands for one element on its own; `nil` for any other.
    @inlinable public var element: Element? {
        guard !isMerged, case .element(let element) = cluster.id else { return nil }
        return element
    }

    func moved(to coordinate: Coordinate) -> ClusterMarker {
        ClusterMarker(
            id: id, cluster: cluster, mergedClusters: mergedClusters, coordinate: coordinate,
            layoutExpansionZoom: layoutExpansionZoom)
    }

    /// The key ranges of its members: one per cluster.
    var keyRanges: [ClosedRange<UInt64>] { isMerged ? clusters.map { $0.keyRange } : [cluster.keyRange] }
}

/// What a ``ClusterManager`` shows after an update: its markers, for one viewport, from one state of its elements.
public struct ClusterSnapshot<Element: Hashable & Sendable>: Sendable {
    /// The viewport it was made for; `nil` before the first update.
    public let viewport: Viewport?
    /// The markers, in the order of their grid cells; markers kept from earlier updates (see
    /// ``ClusterManagerOptions/removesMarkersOutsideRegion``) come last.
    public let markers: [ClusterMarker<Element>]
    /// The grid cells the update considered, for a debug overlay: draw each one's `GridCell.rect`.
    ///
    /// Listed when asked, from the region the update covered.
    public var gridCells: [GridCell] { region?.cells ?? [] }
    /// The region of grid cells the update covered.
    let region: CellRegion?
    /// The clustering of the elements it was made from: its markers' clusters are this clustering's.
    public let clustering: Clustering<Element>
    /// The elements it was made from.
    public var index: ClusterIndex<Element> { clustering.index }
    /// The options it was made with: how it clustered, laid out and titles its markers.
    public let layout: ClusterManagerOptions<Element>
    /// The clustering options it was made with.
    public var options: ClusterOptions<Element> { layout.clustering }

    /// The grid level of its clusters, for telling whether the next update may reuse their markers.
    let gridLevel: Int?
    /// The version of the elements it shows.
    let dataVersion: Int
    /// The version of the manager's options it was made with.
    let optionsVersion: Int
    /// For each grid cell of a cluster of several locations, the marker id and position given to it, before the
    /// overlap and fan-out passes: what a later update at the same grid level reuses.
    let anchors: [GridCell: Anchor]
    /// The merged layout it was laid out in, which the next update of the same elements and options goes on with.
    var merging: MergeLayout<Element>?

    struct Anchor: Sendable {
        var id: ClusterID<Element>
        var coordinate: Coordinate
    }

    /// No markers yet, of `clustering`'s elements.
    static func empty(_ clustering: Clustering<Element>, layout: ClusterManagerOptions<Element> = .init())
        -> ClusterSnapshot
    {
        ClusterSnapshot(
            viewport: nil, markers: [], region: nil, clustering: clustering, layout: layout, gridLevel: nil,
            dataVersion: 0, optionsVersion: 0, anchors: [:])
    }

    /// A marker's title, from ``ClusterManagerOptions/title`` (or the default one), computed when asked.
    public func title(of marker: ClusterMarker<Element>) -> String? { layout.title(for: marker) }

    /// A marker's subtitle, from ``ClusterManagerOptions/subtitle`` (or the default one), computed when asked.
    public func subtitle(of marker: ClusterMarker<Element>) -> String? { layout.subtitle(for: marker) }

    /// The marker with an id, if the snapshot has one.
    /// - Complexity: O(*m*) for *m* markers.
    public func marker(id: ClusterMarker<Element>.ID) -> ClusterMarker<Element>? {
        markers.first { $0.id == id }
    }

    /// The marker that shows an element, or `nil` if the element is unknown or outside the clustered region.
    /// - Complexity: O(*m*) for *m* markers, plus O(log *n*) to find the element.
    public func marker(holding element: Element) -> ClusterMarker<Element>? {
        guard let coordinate = index.coordinate(of: element) else { return nil }
        return markers.first { marker in
            clustering.isMember(element, at: coordinate, of: marker.cluster)
                || marker.mergedClusters.contains { clustering.isMember(element, at: coordinate, of: $0) }
        }
    }

    /// A page of a marker's members, in the index's order (a merged marker's cluster by cluster).
    /// - Throws: `ClusteringMismatch` for a marker that a snapshot of other options made.
    /// - Complexity: O(*p* log *n* + `offset` + `limit`) for a marker of *p* clusters; see
    ///   `Clustering.members(of:offset:limit:)`.
    public func members(of marker: ClusterMarker<Element>, offset: Int = 0, limit: Int = .max)
        throws(ClusteringMismatch) -> [Element]
    {
        try membersWithCoordinates(of: marker, offset: offset, limit: limit).map(\.element)
    }

    /// A page of a marker's members with their coordinates, in the index's order.
    /// - Throws: `ClusteringMismatch` for a marker that a snapshot of other options made.
    public func membersWithCoordinates(of marker: ClusterMarker<Element>, offset: Int = 0, limit: Int = .max)
        throws(ClusteringMismatch) -> [(element: Element, coordinate: Coordinate)]
    {
        precondition(offset >= 0 && limit >= 0, "offset and limit are not negative")
        var page: [(element: Element, coordinate: Coordinate)] = []
        var skip = offset
        for cluster in marker.clusters where page.count < limit {
            guard skip < cluster.count else {
                skip -= cluster.count
                continue
            }
            page += try clustering.membersWithCoordinates(of: cluster, offset: skip, limit: limit - page.count)
            skip = 0
        }
        return page
    }

    /// The smallest rectangle holding every member of a marker; zoom the map to it to show them all.
    /// - Throws: `ClusteringMismatch` for a marker that a snapshot of other options made.
    public func bounds(of marker: ClusterMarker<Element>) throws(ClusteringMismatch) -> MapRect {
        var bounds = try clustering.bounds(of: marker.cluster)
        for part in marker.mergedClusters { bounds = bounds.union(try clustering.bounds(of: part)) }
        return bounds
    }

    /// The smallest zoom at which a marker's members show as more than one marker; `nil` if they never do.
    ///
    /// Where markers merge (``ClusterManagerOptions/overlap``), it is the first zoom where they show apart in the merged
    /// layout, which a cluster's children may merge back into: a map zoomed there shows the marker split.
    /// - Throws: `ClusteringMismatch` for a marker that a snapshot of other options made.
    public func expansionZoom(of marker: ClusterMarker<Element>) throws(ClusteringMismatch) -> Double? {
        try clustering.check(marker.cluster)
        return expansionZoom(ofOwn: marker)
    }

    /// ``expansionZoom(of:)`` of one of its own markers, for a caller that took it from here (a server's writer).
    @_spi(MapClusterServer) public func expansionZoom(ofOwn marker: ClusterMarker<Element>) -> Double? {
        marker.layoutExpansionZoom ?? clustering.expansionZoom(ofOwn: marker.cluster)
    }

    /// What a marker splits into when the map zooms in: a merged marker's clusters, or a cluster's children.
    /// - Throws: `ClusteringMismatch` for a marker that a snapshot of other options made.
    public func children(of marker: ClusterMarker<Element>) throws(ClusteringMismatch) -> [Cluster<Element>] {
        guard marker.isMerged else { return try clustering.children(of: marker.cluster) }
        for part in marker.clusters { try clustering.check(part) }
        return marker.clusters
    }
}

/// An update's answer: the new snapshot and what changed since the one before.
public struct ClusterUpdate<Element: Hashable & Sendable>: Sendable {
    /// What the map shows now.
    public let snapshot: ClusterSnapshot<Element>
    /// What to add, remove and refresh on the map to go from the previous snapshot to this one.
    public let changes: ClusterChanges<Element>
}

/// The difference between two snapshots, as a map view applies it.
public struct ClusterChanges<Element: Hashable & Sendable>: Sendable {
    /// A marker to add.
    public struct Insertion: Sendable {
        /// The new marker.
        public let marker: ClusterMarker<Element>
        /// Where the marker it splits out of stood in the previous snapshot (when zooming in), for an animation from
        /// there; `nil` if it comes from no earlier marker.
        public let splitFrom: Coordinate?
    }

    /// A marker to take away.
    public struct Removal: Sendable {
        /// The marker of the previous snapshot.
        public let marker: ClusterMarker<Element>
        /// Where the marker it merges into stands in the new snapshot (when zooming out), for an animation to there;
        /// `nil` if it merges into none.
        public let mergesInto: Coordinate?
    }

    /// A marker that stays, with new members or a new position.
    public struct Update: Sendable {
        /// The marker as it was.
        public let old: ClusterMarker<Element>
        /// The marker as it is: the same id.
        public let new: ClusterMarker<Element>
    }

    /// Markers to add, in the order of the new snapshot.
    public internal(set) var insertions: [Insertion] = []
    /// Markers to take away, in the order of the previous snapshot.
    public internal(set) var removals: [Removal] = []
    /// Markers kept with changed members or position, in the order of the new snapshot.
    public internal(set) var updates: [Update] = []

    /// Whether nothing changed.
    public var isEmpty: Bool { insertions.isEmpty && removals.isEmpty && updates.isEmpty }
}

extension ClusterMarker.ID where Element == Int {
    /// The id as text, for a URL path or a GeoJSON `cluster_id` (see `ClusterIDText`).
    public var text: ClusterIDText {
        switch self {
        case .cluster(let id): ClusterIDText(id)
        case .merged(let parts): ClusterIDText(merged: parts)
        }
    }

    /// The id a text names.
    public init(_ text: ClusterIDText) {
        self = text.isMerged ? .merged(text.parts) : .cluster(text.parts[0])
    }
}
