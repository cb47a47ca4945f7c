/// What a map view shows: a rectangle of the Web Mercator plane and its size on screen, in points.
///
///     let viewport = Viewport(center: try Coordinate(latitude: 48.85, longitude: 2.35), zoom: 10,
///                             size: ViewSize(width: 1024, height: 768))
///
/// The rectangle may cross the antimeridian (its x range then runs past the world's east edge).
public struct Viewport: Hashable, Sendable {
    /// The visible part of the plane.
    public var rect: MapRect
    /// The size of the view in points.
    public var size: ViewSize

    /// Makes a viewport from a visible rectangle and the view's size in points.
    public init(rect: MapRect, size: ViewSize) {
        precondition(rect.size.width > 0 && rect.size.height > 0, "a viewport needs a non-empty rect")
        precondition(size.width > 0 && size.height > 0, "a viewport needs a positive size in points")
        self.rect = rect
        self.size = size
    }

    /// The viewport of a view of `size` points centered on `center` at a zoom level.
    public init(center: Coordinate, zoom: Double, size: ViewSize) {
        let unitsPerPoint = 1 / WebMercator.pointsPerMapUnit(atZoom: zoom)
        let point = center.mapPoint
        let width = size.width * unitsPerPoint
        let height = size.height * unitsPerPoint
        self.init(
            rect: MapRect(
                minX: point.x - width / 2, minY: point.y - height / 2, maxX: point.x + width / 2,
                maxY: point.y + height / 2),
            size: size)
    }

    /// The continuous zoom level: at zoom *z* the world is 256 · 2^*z* points wide.
    public var zoom: Double { WebMercator.zoomLevel(mapWidth: rect.size.width, pointWidth: size.width) }

    /// How many points one plane unit takes on screen.
    public var pointsPerMapUnit: Double { size.width / rect.size.width }
}

/// A size on screen, in points.
public struct ViewSize: Hashable, Sendable {
    /// Width in points.
    public var width: Double
    /// Height in points.
    public var height: Double

    /// Makes a size from points.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// The size in points that a rectangle of the plane takes on screen at a zoom level: with it, a viewport of
    /// `rect` is at exactly that zoom.
    public init(showing rect: MapRect, atZoom zoom: Double) {
        let scale = WebMercator.pointsPerMapUnit(atZoom: zoom)
        self.init(width: rect.size.width * scale, height: rect.size.height * scale)
    }
}
