/// What a map draws for one group of elements: a cluster of several, or a single element.
///
///     for cluster in index.clusters(in: viewport) {
///         print(cluster.coordinate, cluster.count, cluster.isCluster ? "cluster" : "single")
///         let firstTen = cluster.members(limit: 10)
///     }
///
/// A cluster is a value computed from a snapshot of the index: its members, children and parent answer from that
/// snapshot, whatever happens to the index afterwards.
public struct Cluster<Element: Hashable & Sendable>: Identifiable, Sendable {
    /// A stable identity: the same members give the same id at every zoom and viewport that shows them.
    public let id: ClusterID<Element>
    /// Where to draw it, by ``ClusterOptions/position`` for a cluster of several locations.
    public internal(set) var coordinate: Coordinate
    /// How many elements it stands for.
    public let count: Int
    /// The smallest rectangle holding every member (to the index's grid of 1/16 plane unit); zoom the map to it to
    /// show them all.
    ///
    /// - Complexity: O(log *n*), computed when asked; with a ``ClusterOptions/shouldCluster`` predicate, O(*m*) for
    ///   the *m* elements of the cluster's cell.
    public var bounds: MapRect { context.bounds(of: self) }
    /// Whether every member has the same coordinate: such a cluster never splits, however far one zooms.
    public let isUniqueLocation: Bool
    /// The grid cell it was made in, at the zoom it was made for.
    public let cell: GridCell
    /// The zoom level it was made for.
    public let zoom: Double

    let membership: Membership<Element>
    let context: ClusteringContext<Element>

    /// Whether it stands for more than one element.
    public var isCluster: Bool { count > 1 }

    /// A page of the members, in the index's order.
    /// - Complexity: O(log *n* + `offset` + `limit`); without ``ClusterOptions/shouldCluster``, a
    ///   cluster of several locations skips `offset` members in O(log *n*).
    public func members(offset: Int = 0, limit: Int = .max) -> [Element] {
        context.members(of: self, offset: offset, limit: limit).map(\.element)
    }

    /// A page of the members with their coordinates, in the index's order.
    public func membersWithCoordinates(offset: Int = 0, limit: Int = .max) -> [(
        element: Element, coordinate: Coordinate
    )] {
        context.members(of: self, offset: offset, limit: limit)
    }

    /// The smallest zoom level at which its members no longer show as this one cluster, or `nil`
    /// if they never split: a single element, or members on one location.
    public var expansionZoom: Double? { context.expansionZoom(of: self) }

    /// The clusters it splits into at ``expansionZoom``, whose counts add up to its own; empty if it
    /// never splits.
    public func children() -> [Cluster<Element>] { context.children(of: self) }

    /// The cluster it merges into when the map zooms out, or `nil` if it never merges with others.
    public func parent() -> Cluster<Element>? { context.parent(of: self) }
}

/// The identity of a ``Cluster``.
public enum ClusterID<Element: Hashable & Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// Elements on several locations: the smallest grid cell that holds them all. It stays the same
    /// while the map zooms and pans, as long as the members are the same.
    case cell(GridCell)
    /// Elements that share this coordinate.
    case location(Coordinate)
    /// One element on its own.
    case element(Element)
    /// Clusters whose markers overlapped on screen, merged by a ``ClusterManager``'s overlap pass: their ids, in the
    /// order of their cells.
    case merged([ClusterID<Element>])

    /// The kind of identity and its value, as in `cell 12/2200/1343`.
    public var description: String {
        switch self {
        case .cell(let cell): "cell \(cell)"
        case .location(let coordinate): "location \(coordinate)"
        case .element(let element): "element \(element)"
        case .merged(let parts): "merged [\(parts.map(\.description).joined(separator: ", "))]"
        }
    }
}

/// Which elements of the index a cluster stands for.
enum Membership<Element: Hashable & Sendable>: Sendable {
    /// The members of `cell` that cluster (all of them without a ``ClusterOptions/shouldCluster``).
    case cell(GridCell)
    /// The elements on one coordinate, those that `filter` admits.
    case location(Coordinate, MemberFilter)
    /// One element.
    case element(Element)
    /// The members of several clusters, merged because their markers overlapped; `expansionZoom` is the zoom at
    /// which the first of them stands apart.
    case group([Cluster<Element>], expansionZoom: Double)
}

/// Which elements, by ``ClusterOptions/shouldCluster``, a group takes.
enum MemberFilter: Sendable {
    case all
    case clusterable
    case optedOut
}
