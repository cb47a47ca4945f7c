public import MapCluster

/// How a ``ClusterManager`` clusters, places, names and reports its markers.
///
///     var options = ClusterManagerOptions<Place>()
///     options.clustering.cellSize = 80
///     options.overlap = .merge(markerSize: ViewSize(width: 40, height: 40))
///     options.title = { marker in marker.isCluster ? "\(marker.count) places" : nil }
public struct ClusterManagerOptions<Element: Hashable & Sendable>: Sendable {
    /// How the grid groups elements.
    public var clustering = ClusterOptions<Element>()

    /// Whether a cluster whose members change while it stays in its grid cell keeps its marker.
    ///
    /// A kept marker has the same id and the same position, so that markers don't jump while data arrives in
    /// batches; its change is reported in ``ClusterChanges/updates``.
    ///
    /// With `false`, such a cluster is removed and its successor inserted, at its own position. Default `true`.
    public var reusesMarkers = true

    /// Whether markers that leave the clustered region (the viewport and its margin) are removed.
    ///
    /// With `false` they stay, and are left out of ``ClusterChanges/removals``, until the region covers their place
    /// again. Default `true`.
    public var removesMarkersOutsideRegion = true

    /// A second pass over each update's clusters for markers that overlap on screen; `nil` (the default) draws them
    /// where the grid puts them.
    public var overlap: OverlapResolution?

    /// How elements on one coordinate are shown once the grid no longer clusters them with others; `nil` (the
    /// default) shows them as one cluster.
    public var sameLocation: SameLocationFanOut?

    /// Moves markers after the built-in passes; `nil` (the default) keeps their places.
    ///
    /// CCHMapClusterController's custom `fixAnnotationPosition`, beside its own overlap pass: it runs after ``overlap``
    /// and ``sameLocation``.
    ///
    /// It gets the update's markers, laid out, and its viewport, and returns a position for each marker, in the same
    /// order; the map shows each marker there (a cluster's annotation at it, one of the app's own annotations offset
    /// to it). It runs off the main thread, in the update's work, and sees values only: ids, counts, coordinates and
    /// the elements (an `AnnotationElement`'s annotation is the main actor's, out of its reach). Returning another
    /// number of positions than of markers is a programmer's mistake, and traps.
    public var fixPositions: (@Sendable (_ markers: [ClusterMarker<Element>], _ viewport: Viewport) -> [Coordinate])?

    /// A marker's title; `nil` gives the default: "N items" for a cluster, the element's own title for a single
    /// element (``TitledElement/title``, or its description).
    ///
    /// It runs on the main actor when a map reads a title, and on any thread where a server or a test asks; it gets
    /// the marker, values only.
    public var title: (@Sendable (ClusterMarker<Element>) -> String?)?

    /// A marker's subtitle; `nil` gives the default: none for a cluster, the element's own subtitle for a single
    /// element (``TitledElement/subtitle``).
    public var subtitle: (@Sendable (ClusterMarker<Element>) -> String?)?

    /// The default options.
    public init() {}

    /// Checks every option: the clustering's (`ClusterOptions.validate()`), the overlap pass's marker sizes or
    /// diameters, and the fan-out's radius, start zoom and group size.
    ///
    /// ``ClusterManager`` refuses options that fail it, and so does ``MarkerClustering``.
    ///
    /// - Throws: `OptionError` for the first option whose value can't be used.
    public func validate() throws(OptionError) {
        try clustering.validate()
        try overlap?.validate()
        try sameLocation?.validate()
    }

    /// The title a marker shows.
    public func title(for marker: ClusterMarker<Element>) -> String? {
        if let title { return title(marker) }
        if marker.isCluster { return "\(marker.count) items" }
        guard let element = marker.element else { return nil }
        if let titled = element as? any TitledElement { return titled.title }
        return String(describing: element)
    }

    /// The subtitle a marker shows.
    public func subtitle(for marker: ClusterMarker<Element>) -> String? {
        if let subtitle { return subtitle(marker) }
        guard let element = marker.element else { return nil }
        return (element as? any TitledElement)?.subtitle
    }
}

/// An element that names itself, for the default titles of a ``ClusterManager``'s markers.
public protocol TitledElement {
    /// The title of the element's marker when it stands alone.
    var title: String? { get }
    /// The subtitle of the element's marker when it stands alone.
    var subtitle: String? { get }
}

extension TitledElement {
    /// No subtitle.
    public var subtitle: String? { nil }
}

/// What to do with cluster markers that overlap on screen.
public enum OverlapResolution: Hashable, Sendable {
    /// Markers that overlap (or touch) become one cluster, placed at the mean of their positions weighted by their
    /// counts; repeated until none overlap. kingpin's two-phase clustering.
    case merge(markerSize: ViewSize)
    /// Markers drawn as circles whose size grows with their count, as web maps draw clusters, become one cluster when
    /// their circles overlap (or touch); repeated until none do.
    case mergeCircles(MarkerDiameters)
    /// Markers that overlap are nudged apart until they don't; their members and counts don't change.
    case separate(markerSize: ViewSize)

    /// Checks the marker size or the diameters.
    ///
    /// - Throws: `OptionError` naming the first size that isn't a positive, finite number of points (or, for a
    ///   step or a gap, zero or one).
    public func validate() throws(OptionError) {
        switch self {
        case .merge(let size), .separate(let size):
            try OptionCheck.positive(size.width, "overlap.markerSize.width", of: "points")
            try OptionCheck.positive(size.height, "overlap.markerSize.height", of: "points")
        case .mergeCircles(let diameters):
            try OptionCheck.positive(diameters.single, "overlap.diameters.single", of: "points")
            try OptionCheck.positive(diameters.cluster, "overlap.diameters.cluster", of: "points")
            try OptionCheck.notNegative(diameters.perDecade, "overlap.diameters.perDecade", of: "points")
            try OptionCheck.notNegative(diameters.gap, "overlap.diameters.gap", of: "points")
        }
    }

    /// The box a marker of `count` elements covers on screen, in points: its size, or its circle's.
    func extent(ofCount count: Int) -> ViewSize {
        switch self {
        case .merge(let size), .separate(let size): size
        case .mergeCircles(let diameters):
            ViewSize(width: diameters.reach(ofCount: count), height: diameters.reach(ofCount: count))
        }
    }

    /// How far a marker of `count` elements keeps its center from an edge that markers on either side of never cross,
    /// in points: two markers that each keep it stand apart across the edge, by the gap.
    func inset(ofCount count: Int) -> ViewSize {
        switch self {
        case .merge(let size), .separate(let size):
            ViewSize(width: size.width / 2, height: size.height / 2)
        case .mergeCircles(let diameters):
            ViewSize(
                width: (diameters.diameter(ofCount: count) + diameters.gap) / 2,
                height: (diameters.diameter(ofCount: count) + diameters.gap) / 2)
        }
    }

    /// By how much the map must grow for two markers `dx`, `dy` points apart (of `a` and `b` elements) to stand
    /// apart: 1 or more while they overlap or touch.
    func separatingScale(dx: Double, dy: Double, counts a: Int, _ b: Int) -> Double {
        switch self {
        case .merge(let size), .separate(let size):
            // Apart once either axis is longer than the marker.
            return min(
                abs(dx) > 0 ? size.width / abs(dx) : .infinity, abs(dy) > 0 ? size.height / abs(dy) : .infinity)
        case .mergeCircles(let diameters):
            let distance = (dx * dx + dy * dy).squareRoot()
            let needed = (diameters.diameter(ofCount: a) + diameters.diameter(ofCount: b)) / 2 + diameters.gap
            return distance > 0 ? needed / distance : .infinity
        }
    }
}

/// The diameters of markers drawn as circles that grow with the count they show: a fixed size for a single element,
/// and for a cluster a base size plus a step for each tenfold of its count.
///
/// A web map draws its markers with the same numbers (`mapcluster serve` gives them to its page), so that the
/// server's overlap pass and the page agree on what overlaps.
public struct MarkerDiameters: Hashable, Sendable, Codable {
    /// The diameter of a single element's marker, in points.
    public var single: Double
    /// The diameter of a cluster's marker before its growth, in points.
    public var cluster: Double
    /// How much a cluster's diameter grows for each tenfold of its count, in points.
    public var perDecade: Double
    /// The empty space kept between two markers, in points.
    public var gap: Double

    /// Diameters in points: `single` for one element, `cluster + perDecade · log10(count)` for a cluster.
    public init(single: Double, cluster: Double, perDecade: Double, gap: Double = 0) {
        self.single = single
        self.cluster = cluster
        self.perDecade = perDecade
        self.gap = gap
    }

    /// The diameter of the marker of `count` elements, in points, rounded to a whole point as a page draws it.
    public func diameter(ofCount count: Int) -> Double {
        count <= 1 ? single : (cluster + perDecade * mathLog2(Double(count)) / mathLog2(10)).rounded()
    }

    /// The diameter with the gap: how close another marker's edge may come to this one's center, doubled.
    func reach(ofCount count: Int) -> Double { diameter(ofCount: count) + 2 * gap }

    enum CodingKeys: String, CodingKey {
        case single, cluster, gap
        case perDecade = "per_decade"
    }
}

/// Elements on one coordinate drawn apart, on a circle around it, once clustering has stopped for them.
///
/// Clustering has stopped for a coordinate's elements when the grid leaves them on their own: beyond
/// `ClusterOptions.maxZoomLevelForClustering`, or from ``startZoom`` on. The positions are for display only: the
/// elements' coordinates never change.
///
/// The radius is in points by default, so that the circle reads the same at every zoom; in metres (``Unit/metres``)
/// it is a distance on the ground, as ClusterMap's and Cluster's `distanceFromContestedLocation` (3 m by default) and
/// CCHMapClusterController's distribution of annotations at one location: the members then sit on
/// `Coordinate.destination(metres:bearing:)` of the group's place, the first due north, the others
/// clockwise.
public struct SameLocationFanOut: Hashable, Sendable {
    /// What the radius is measured in.
    public enum Unit: Hashable, Sendable {
        /// Points on screen: the circle keeps its size on screen as the map zooms.
        case points
        /// Metres on the ground: the circle grows on screen as the map zooms in.
        case metres
    }

    /// The radius of the circle, in ``unit``s.
    public var radius: Double
    /// What ``radius`` is measured in; default ``Unit/points``.
    public var unit: Unit
    /// The zoom from which a coordinate's elements are fanned out even while clustering is on, as
    /// `ClusterOptions.zoomLevels` counts it; default: never (only beyond the maximum clustering zoom).
    public var startZoom: Double
    /// Groups larger than this stay one cluster; default 64.
    public var maximumCount: Int

    /// A fan-out on a circle of `radius` points; ``validate()`` checks the values.
    public init(radius: Double, startZoom: Double = .infinity, maximumCount: Int = 64) {
        self.radius = radius
        unit = .points
        self.startZoom = startZoom
        self.maximumCount = maximumCount
    }

    /// A fan-out on a circle of `metres` on the ground; ``validate()`` checks the values.
    public init(metres: Double, startZoom: Double = .infinity, maximumCount: Int = 64) {
        self.init(radius: metres, startZoom: startZoom, maximumCount: maximumCount)
        unit = .metres
    }

    /// ClusterMap's and Cluster's fan-out: 3 metres from the shared coordinate, once clustering has stopped.
    public static var clusterMap: SameLocationFanOut { SameLocationFanOut(metres: 3) }

    /// Checks the radius (a positive, finite number of points), the start zoom (not NaN) and the group size (at least
    /// two).
    ///
    /// - Throws: `OptionError` for the first value that can't be used.
    public func validate() throws(OptionError) {
        try OptionCheck.positive(radius, "sameLocation.radius", of: unit == .points ? "points" : "metres")
        try OptionCheck.aNumber(startZoom, "sameLocation.startZoom")
        try OptionCheck.atLeast(maximumCount, 2, "sameLocation.maximumCount")
    }
}
