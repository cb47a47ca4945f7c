/// One thing a map draws for a ``ClusterManager``: a cluster, a single element, or a fanned-out member of a
/// same-location group, at the position to draw it.
public struct ClusterMarker<Element: Hashable & Sendable>: Identifiable, Sendable {
    /// The marker's identity: the cluster's id, or the id of the marker it reuses (see
    /// ``ClusterManagerOptions/reuseExistingClusterAnnotations``).
    public let id: ClusterID<Element>
    /// What it stands for.
    public let cluster: Cluster<Element>
    /// Where to draw it.
    ///
    /// It differs from ``Cluster/coordinate`` when the marker keeps its place while its members change, is nudged
    /// apart from another one, or is fanned out around a shared coordinate.
    public let coordinate: Coordinate
    let options: ClusterManagerOptions<Element>

    /// How many elements it stands for.
    public var count: Int { cluster.count }
    /// Whether it stands for more than one element.
    public var isCluster: Bool { cluster.isCluster }
    /// Whether all its members share one coordinate.
    public var isUniqueLocation: Bool { cluster.isUniqueLocation }
    /// The title, from ``ClusterManagerOptions/title``, computed when asked.
    public var title: String? { options.title(for: cluster) }
    /// The subtitle, from ``ClusterManagerOptions/subtitle``, computed when asked.
    public var subtitle: String? { options.subtitle(for: cluster) }

    func moved(to coordinate: Coordinate) -> ClusterMarker {
        ClusterMarker(id: id, cluster: cluster, coordinate: coordinate, options: options)
    }
}

/// What a ``ClusterManager`` shows after an update: its markers, for one viewport, from one state of its elements.
public struct ClusterSnapshot<Element: Hashable & Sendable>: Sendable {
    /// The viewport it was made for; `nil` before the first update.
    public let viewport: Viewport?
    /// The markers, in the order of their grid cells; markers kept from earlier updates (see
    /// ``ClusterManagerOptions/shouldRemoveInvisibleAnnotations``) come last.
    public let markers: [ClusterMarker<Element>]
    /// The grid cells the update considered, for a debug overlay: draw each one's ``GridCell/rect``.
    public let gridCells: [GridCell]
    /// The elements it was made from.
    public let index: ClusterIndex<Element>

    /// The grid level of its clusters, for telling whether the next update may reuse their markers.
    let gridLevel: Int?
    /// The version of the elements it shows.
    let dataVersion: Int
    /// The version of the manager's options it was made with.
    let optionsVersion: Int
    /// For each grid cell of a cluster of several locations, the marker id and position given to it, before the
    /// overlap and fan-out passes: what a later update at the same grid level reuses.
    let anchors: [GridCell: Anchor]

    struct Anchor: Sendable {
        var id: ClusterID<Element>
        var coordinate: Coordinate
    }

    static func empty(index: ClusterIndex<Element>) -> ClusterSnapshot {
        ClusterSnapshot(
            viewport: nil, markers: [], gridCells: [], index: index, gridLevel: nil, dataVersion: 0,
            optionsVersion: 0, anchors: [:])
    }

    /// The marker with an id, if the snapshot has one.
    /// - Complexity: O(*m*) for *m* markers.
    public func marker(id: ClusterID<Element>) -> ClusterMarker<Element>? {
        markers.first { $0.id == id }
    }

    /// The marker that shows an element, or `nil` if the element is unknown or outside the clustered region.
    /// - Complexity: O(*m*) for *m* markers, plus O(log *n*) to find the element.
    public func marker(holding element: Element) -> ClusterMarker<Element>? {
        guard let coordinate = index.coordinate(of: element) else { return nil }
        return markers.first { $0.cluster.context.holds($0.cluster, element, at: coordinate) }
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
