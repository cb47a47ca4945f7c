/// How a ``Clustering`` groups elements.
///
/// The names follow the iOS libraries MapCluster replaces (CCHMapClusterController, ClusterMap, Cluster), and so do the
/// defaults.
///
///     var options = ClusterOptions<String>()
///     options.cellSize = 80
///     options.minCountForClustering = 3
public struct ClusterOptions<Element: Hashable & Sendable>: Sendable {
    /// The requested side of a grid cell, in points.
    ///
    /// The grid used is the world-aligned power-of-two subdivision whose cells are nearest to this size (between about
    /// 0.71× and 1.41× of it). Default 60. At least one point, and finite: ``validate()`` names any other value.
    public var cellSize: Double = 60

    /// A cell size for each zoom level, in points, overriding ``cellSize``; `nil` (the default) uses
    /// ``cellSize`` at every zoom.
    ///
    /// The grid level must not decrease as the zoom grows, so the size should not grow faster than the world does
    /// (twice per zoom level). Its sizes are at least one point, and finite: ``validate()`` checks those of zooms 0 to
    /// 30.
    public var cellSizeForZoom: (@Sendable (Double) -> Double)?

    /// How much map around the viewport is clustered too, as a fraction of its width and height on each side.
    ///
    /// 0.5 (the default) clusters twice the width and height, so panning by up to half a screen changes nothing at the
    /// edges. Within 0...10.
    public var marginFactor: Double = 0.5

    /// The largest margin: ten viewports on every side.
    @usableFromInline static var maximumMarginFactor: Double { 10 }

    /// Where a cluster of several locations is placed.
    ///
    /// Default ``ClusterPosition/centerOfMass``.
    public var position: ClusterPosition<Element> = .centerOfMass

    /// The deepest zoom level at which elements are clustered; beyond it every element comes back on
    /// its own (those sharing a coordinate together).
    ///
    /// It is compared with the zoom as ``zoomLevels`` counts it. Default: no limit.
    public var maxZoomLevelForClustering: Double = .infinity

    /// Which coordinates count as one location: only equal ones (``LocationTolerance/exact``, the default), or those
    /// in one grid cell of a deep level (``LocationTolerance/gridLevel(_:)``), so that points a few centimetres apart
    /// from GPS noise are one place, as CCHMapClusterController's 9-character geohash makes them.
    ///
    /// Elements at one location show together, as one marker, at every zoom (clusters of them have
    /// ``Cluster/isSameLocation`` set), count once for ``minUniqueLocationsForClustering``, and fan out together. With
    /// a tolerance of level *N*, the grid never gets finer than level *N*: its cells hold one location each from there
    /// on.
    public var locationTolerance: LocationTolerance = .exact

    /// The grid level whose cells are one location each (``locationTolerance``); `nil` when only equal coordinates
    /// are.
    @inlinable
    public var locationLevel: Int? {
        switch locationTolerance {
        case .exact: nil
        case .gridLevel(let level): min(max(level, 0), GridCell.maxLevel)
        }
    }

    /// How the zoom is counted where options decide by it: ``maxZoomLevelForClustering``, ``cellSizeForZoom`` and the
    /// manager's fan-out start.
    ///
    /// Default ``ZoomLevels/continuous``, as CCHMapClusterController compares it. ``ZoomLevels/whole`` rounds it to
    /// a whole level, as ClusterMap and Cluster do. Either way the grid is laid at the map's real scale.
    public var zoomLevels: ZoomLevels = .continuous

    /// A cell with fewer elements than this is not clustered.
    ///
    /// Default 2.
    public var minCountForClustering = 2

    /// A cell whose elements sit on fewer distinct coordinates than this is not clustered.
    ///
    /// Default 0: never disables clustering.
    public var minUniqueLocationsForClustering = 0

    /// Whether an element takes part in clustering; `nil` (the default) clusters every element.
    ///
    /// Elements it rejects come back on their own (those sharing a coordinate together).
    ///
    /// The predicate is asked at query time, so a query that has one visits every element in the cells it returns:
    /// O(*m*) for *m* such elements, where a query without one is O(*c* log *n*). It runs on whatever thread the query
    /// does (a `ClusterManager`'s, off the main thread), and gets the element: a value, never a map's annotation.
    public var shouldCluster: (@Sendable (Element) -> Bool)?

    /// The categories whose elements are clustered and shown, by name, in an index with an ``AggregateSchema``; `nil`
    /// (the default) shows every element.
    ///
    /// A filtered query costs what an unfiltered one does, O(*c* log *n*): the counts, centers of mass and bounds of
    /// the selected categories come from the index's nodes. Its clusters have ids of their own
    /// (``ClusterID/filtered(_:categories:)``). An element without a category, and a name the schema does not have,
    /// are never selected; an empty set selects nothing.
    public var categories: Set<String>?

    /// The default options.
    public init() {}

    /// Checks every option, so that values from a user or a file are refused with a message rather than clustered
    /// into nonsense.
    ///
    /// Queries never trap on options that fail it: a cell size below one point counts as one point, an infinite or NaN
    /// one gives the coarsest grid, and a margin outside 0...10 counts as the nearest end (NaN as none). `ClusterManager` refuses such
    /// options when it is given them.
    ///
    /// - Throws: ``OptionError`` for the first option whose value can't be used.
    public func validate() throws(OptionError) {
        try OptionCheck.atLeastOne(cellSize, "cellSize", of: "points")
        if let cellSizeForZoom {
            for zoom in 0...30 {
                try OptionCheck.atLeastOne(cellSizeForZoom(Double(zoom)), "cellSizeForZoom(\(zoom))", of: "points")
            }
        }
        try OptionCheck.within(marginFactor, 0...Self.maximumMarginFactor, "marginFactor")
        try OptionCheck.aNumber(maxZoomLevelForClustering, "maxZoomLevelForClustering")
        try OptionCheck.atLeast(minCountForClustering, 0, "minCountForClustering")
        try OptionCheck.atLeast(minUniqueLocationsForClustering, 0, "minUniqueLocationsForClustering")
        if case .gridLevel(let level) = locationTolerance, !(0...GridCell.maxLevel).contains(level) {
            throw OptionError(
                option: "locationTolerance", value: ".gridLevel(\(level))",
                requirement: "a grid level within 0...\(GridCell.maxLevel)")
        }
    }

    /// The requested cell size at a zoom level, in points: ``cellSizeForZoom`` is asked with the zoom as
    /// ``zoomLevels`` counts it.
    public func cellSize(forZoom zoom: Double) -> Double {
        guard let cellSizeForZoom else { return cellSize }
        return cellSizeForZoom(zoomLevel(forZoom: zoom))
    }

    /// The zoom as the options count it (``zoomLevels``): `zoom` itself, or the nearest whole level, at least 0.
    public func zoomLevel(forZoom zoom: Double) -> Double {
        switch zoomLevels {
        case .continuous: zoom
        case .whole: max(0, zoom.rounded(.toNearestOrAwayFromZero))
        }
    }

    /// Whether elements are clustered at a map's zoom: whether ``zoomLevel(forZoom:)`` is at most
    /// ``maxZoomLevelForClustering``.
    public func clusters(atZoom zoom: Double) -> Bool {
        zoomLevel(forZoom: zoom) <= maxZoomLevelForClustering
    }

    /// The smallest map zoom at which clustering is off, -∞ if it never is on, +∞ if it never stops.
    @usableFromInline package var firstZoomPastClustering: Double {
        let limit = maxZoomLevelForClustering
        guard limit.isFinite else { return limit.isNaN ? -.infinity : limit }
        switch zoomLevels {
        case .continuous: return limit.nextUp
        // max(0, round(z)) > limit from z = ⌊limit⌋ + ½ on (rounding half away from zero); never at or below 0.
        case .whole: return limit < 0 ? -.infinity : limit.rounded(.down) + 0.5
        }
    }

    /// The deepest map zoom at which elements are clustered: ``maxZoomLevelForClustering`` itself with continuous
    /// zooms, and just below the next half level with whole ones.
    @usableFromInline var deepestClusteringZoom: Double {
        let past = firstZoomPastClustering
        return past.isFinite ? past.nextDown : past
    }

    /// The grid level used at a zoom level: the *k* whose 2^*k* cells across the world are nearest in
    /// size to ``cellSize(forZoom:)``, clamped to 0...32.
    ///
    /// A size below one point counts as one point, and an infinite or NaN size (or zoom) gives level 0. It is never
    /// deeper than ``locationLevel``.
    public func gridLevel(forZoom zoom: Double) -> Int {
        let size = cellSize(forZoom: zoom)
        let exact = zoom + 8 - mathLog2(size >= 1 || size.isNaN ? size : 1)
        let level = (exact + 0.5).rounded(.down)
        guard !level.isNaN else { return 0 }
        return Int(min(max(level, 0), Double(locationLevel ?? GridCell.maxLevel)))
    }

    // MARK: - Presets

    /// ClusterMap's and Cluster's default cell sizes, in points: 88 to zoom 12, 64 to 15, 32 to 18, and 16 beyond, at
    /// the zoom ``cellSizeForZoom`` is asked with (whole levels, there, with ``ZoomLevels/whole``).
    ///
    ///     options.cellSizeForZoom = ClusterOptions.clusterMapCellSize(forZoom:)
    ///
    /// Today's default, ``cellSize`` 60 at every zoom, keeps clusters the same size on screen at every zoom; this one
    /// makes them finer as the map zooms in.
    @Sendable public static func clusterMapCellSize(forZoom zoom: Double) -> Double {
        switch zoom {
        case ...12: 88
        case ...15: 64
        case ...18: 32
        default: 16
        }
    }

    /// Options that cluster as ClusterMap and Cluster do by default: whole zoom levels, their cell sizes
    /// (``clusterMapCellSize(forZoom:)``), clustering up to zoom 20, at least two elements to a cluster, each placed on
    /// the member nearest its cell's center (their `.nearCenter`).
    ///
    /// The grid stays MapCluster's (world-aligned, a power of two across): a cell is the requested size within a
    /// factor of √2, where theirs is the requested size exactly.
    public static var clusterMap: ClusterOptions {
        var options = ClusterOptions()
        options.zoomLevels = .whole
        options.cellSizeForZoom = clusterMapCellSize(forZoom:)
        options.maxZoomLevelForClustering = 20
        options.minCountForClustering = 2
        options.position = .nearestToCellCenter
        return options
    }

    /// The smallest zoom at which the cluster with this id (made with these options) no longer shows as one: the
    /// zoom of the level below its tight cell, or the first past clustering; `nil` for an element or one location.
    func expansionZoom(of id: ClusterID<Element>) -> Double? {
        // A cell at the location tolerance's level or deeper holds one location, which never splits.
        guard case .cell(let tight) = id.unfiltered, tight.level < locationLevel ?? GridCell.maxLevel else {
            return nil
        }
        let split = zoom(forLevel: tight.level + 1)
        let past = firstZoomPastClustering
        return past.isFinite ? min(split, past) : split
    }

    /// The smallest zoom level whose grid level is at least `level`; -∞ for level 0, which every
    /// zoom reaches.
    package func zoom(forLevel level: Int) -> Double {
        precondition(level <= GridCell.maxLevel, "a grid level is at most 32")
        guard level > 0 else { return -.infinity }
        var zoom: Double
        if cellSizeForZoom == nil {
            zoom = Double(level) - 8.5 + mathLog2(cellSize)
        } else {
            // Bisection over a range far wider than any map zooms: the level grows with the zoom.
            var low = -64.0
            var high = 64.0
            for _ in 0..<80 {
                let mid = (low + high) / 2
                if gridLevel(forZoom: mid) >= level { high = mid } else { low = mid }
            }
            zoom = high
        }
        // The closed form and the bisection are within a few ulps: settle on the exact boundary, a step at a time while
        // one is needed (usually none: each test is a logarithm, and a writer asks this of every cluster).
        var steps = 0
        while steps < 16 && gridLevel(forZoom: zoom) < level {
            zoom = zoom.nextUp
            steps += 1
        }
        steps = 0
        while steps < 16 && gridLevel(forZoom: zoom.nextDown) >= level {
            zoom = zoom.nextDown
            steps += 1
        }
        return zoom
    }
}

/// Which coordinates a ``ClusterOptions`` counts as one location.
public enum LocationTolerance: Hashable, Sendable {
    /// Only equal coordinates.
    case exact
    /// Coordinates in one cell of this grid level (0...32) of the Web Mercator plane: at level *N* a cell is
    /// 40,075 km / 2^*N* wide at the equator, and narrower by the cosine of the latitude away from it.
    case gridLevel(Int)

    /// Cells of about 4.8 m at the equator (level 23), as the 4.8 × 4.8 m cells of the 9-character geohash that
    /// CCHMapClusterController compares locations by; 2.4 m at 60° of latitude.
    public static var geohash9: LocationTolerance { .gridLevel(23) }

    /// The deepest level whose cells are at least `metres` wide at the equator (at 60° of latitude they are half
    /// that); ``exact`` for a distance that isn't positive and finite.
    public static func metres(_ metres: Double) -> LocationTolerance {
        guard metres > 0 && metres.isFinite else { return .exact }
        let level = mathLog2(WebMercator.equatorLength / metres).rounded(.down)
        return .gridLevel(Int(min(max(level, 0), Double(GridCell.maxLevel))))
    }
}

/// How ``ClusterOptions`` counts the zoom where it decides by it.
///
/// At zoom *z* the world is 256 · 2^*z* points wide. A map rarely sits on a whole level; the iOS libraries differ in
/// what they compare.
public enum ZoomLevels: Hashable, Sendable {
    /// The zoom as it is, 11.4 or 12.7 (CCHMapClusterController's `zoomLevel`).
    case continuous
    /// The nearest whole level, halves rounded up, never below 0: ClusterMap's and Cluster's
    /// `max(0, 20 + round(log2(widthInPoints / visibleMapWidth)))` with their 2^28-unit world, which is the same
    /// number.
    case whole
}

/// Where a cluster of elements on several locations is placed.
///
/// A cluster on one coordinate is always placed on it, one of near-equal coordinates (one location by
/// ``ClusterOptions/locationTolerance``) on their mean, and a single element on its own coordinate.
public enum ClusterPosition<Element: Hashable & Sendable>: Sendable {
    /// The mean latitude and longitude of the members: no member is visited (the default;
    /// CCHMapClusterController's `CCHCenterOfMassMapClusterer`).
    case centerOfMass
    /// The mean latitude and longitude of the members weighted by their weights (``ElementValues/weight``), from the
    /// index's nodes; the center of mass when the index keeps no weights or the members weigh 0 in all.
    case weightedCenterOfMass
    /// The member nearest to the center of the grid cell, on the plane (`CCHNearCenterMapClusterer`).
    case nearestToCellCenter
    /// The center of the grid cell at the query's zoom.
    case cellCenter
    /// The coordinate of the member added first (a move keeps an element's place in that order): ClusterMap's and
    /// Cluster's `.first`. The members are visited: O(*m*) for *m* of them.
    case firstMember
    /// The coordinate of the member that comes first along the index's Z-order curve: no visit, and steady under
    /// additions elsewhere in the cluster, but a corner of it rather than any member a user would name.
    case firstInZOrder
    /// A function of the cluster, given with its center of mass as its coordinate. It runs on whatever thread the
    /// query does (a `ClusterManager`'s, off the main thread), and sees values only.
    case custom(@Sendable (Cluster<Element>) -> Coordinate)
}
