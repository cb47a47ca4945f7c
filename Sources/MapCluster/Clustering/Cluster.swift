/// What a map draws for one group of elements: a cluster of several, or a single element.
///
///     let clustering = try Clustering(index, options: options)
///     for cluster in clustering.clusters(in: viewport) {
///         print(cluster.coordinate, cluster.count, cluster.isCluster ? "cluster" : "single")
///         let firstTen = try clustering.members(of: cluster, limit: 10)
///     }
///
/// A cluster is plain data: what it is, not a handle to the index. Its members, children, parent, bounds, expansion
/// zoom and aggregates are asked of the ``Clustering`` that made it (or one of a later state of the index, with the
/// same options); a clustering with other options refuses, with a ``ClusteringMismatch``.
public struct Cluster<Element: Hashable & Sendable>: Identifiable, Hashable, Sendable {
    /// A stable identity: the same members give the same id at every zoom and viewport that shows them.
    public let id: ClusterID<Element>
    /// Where to draw it, by ``ClusterOptions/position`` for a cluster of several locations.
    public let coordinate: Coordinate
    /// How many elements it stands for.
    public let count: Int
    /// Whether every member has the same coordinate: such a cluster never splits, however far one zooms.
    public let isSameLocation: Bool
    /// The grid cell it was made in, at the zoom it was made for.
    public let cell: GridCell
    /// The zoom level it was made for.
    public let zoom: Double
    /// Which of the elements its id names it holds: for a ``ClusterID/location(_:)``, those that
    /// ``ClusterOptions/shouldCluster`` admits, rejects, or all of them.
    @usableFromInline let filter: MemberFilter
    /// What of the options of the clustering that made it shapes it: another clustering refuses to answer for it.
    @usableFromInline let stamp: ClusteringStamp

    @usableFromInline
    init(
        id: ClusterID<Element>, coordinate: Coordinate, count: Int, isSameLocation: Bool, cell: GridCell, zoom: Double,
        filter: MemberFilter, stamp: ClusteringStamp
    ) {
        self.id = id
        self.coordinate = coordinate
        self.count = count
        self.isSameLocation = isSameLocation
        self.cell = cell
        self.zoom = zoom
        self.filter = filter
        self.stamp = stamp
    }

    /// Whether it stands for more than one element.
    public var isCluster: Bool { count > 1 }

    /// The same cluster, drawn at another coordinate.
    @usableFromInline
    func placed(at coordinate: Coordinate) -> Cluster {
        Cluster(
            id: id, coordinate: coordinate, count: count, isSameLocation: isSameLocation, cell: cell, zoom: zoom,
            filter: filter, stamp: stamp)
    }

    /// A member of a same-location cluster on its own, as a manager's fan-out draws it.
    package static func single(_ element: Element, at coordinate: Coordinate, in cluster: Cluster) -> Cluster {
        Cluster(
            id: .element(element), coordinate: coordinate, count: 1, isSameLocation: true, cell: cluster.cell,
            zoom: cluster.zoom, filter: .all, stamp: cluster.stamp)
    }

    /// The keys of the index's grid that its members lie in: the tight cell of a cluster of several locations, the key
    /// of its coordinate otherwise.
    package var keyRange: ClosedRange<UInt64> {
        if case .cell(let tight) = id.unfiltered { return tight.keyRange }
        let key = GridPosition(coordinate).key
        return key...key
    }
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
    /// A ``cell(_:)`` cluster of a query filtered by categories (``ClusterOptions/categories``): the filter is part of
    /// what the cluster is, so the same cell's clusters with and without it differ. (A single element is itself
    /// whatever the filter.)
    case filteredCell(GridCell, categories: CategorySet)
    /// A ``location(_:)`` cluster of a query filtered by categories.
    case filteredLocation(Coordinate, categories: CategorySet)

    /// The id of `id`'s cluster in a query filtered by `categories`: a single element's id is its own.
    public static func filtered(_ id: ClusterID, categories: CategorySet) -> ClusterID {
        switch id.unfiltered {
        case .cell(let cell): .filteredCell(cell, categories: categories)
        case .location(let coordinate): .filteredLocation(coordinate, categories: categories)
        default: id
        }
    }

    /// The kind of identity and its value, as in `cell 12/2200/1343`.
    public var description: String {
        switch self {
        case .cell(let cell): "cell \(cell)"
        case .location(let coordinate): "location \(coordinate)"
        case .element(let element): "element \(element)"
        case .filteredCell(let cell, let categories): "cell \(cell) of categories \(categories)"
        case .filteredLocation(let coordinate, let categories): "location \(coordinate) of categories \(categories)"
        }
    }

    /// The id without its category filter: ``cell(_:)``, ``location(_:)`` or ``element(_:)``.
    public var unfiltered: ClusterID {
        switch self {
        case .filteredCell(let cell, _): .cell(cell)
        case .filteredLocation(let coordinate, _): .location(coordinate)
        default: self
        }
    }

    /// Whether it names one element.
    @inlinable public var isElement: Bool {
        if case .element = self { return true }
        return false
    }

    /// The categories of a filtered cluster's id; `nil` for an unfiltered one.
    public var categoryFilter: CategorySet? {
        switch self {
        case .filteredCell(_, let categories), .filteredLocation(_, let categories): categories
        default: nil
        }
    }
}

/// Which elements a cluster, or a pass over a cell, takes, by ``ClusterOptions/shouldCluster``.
///
/// Without a predicate every element is clusterable, so ``clusterable`` takes them all and ``optedOut`` none.
@usableFromInline
enum MemberFilter: Hashable, Sendable {
    case all
    case clusterable
    case optedOut
}
