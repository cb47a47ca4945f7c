/// What a map view shows: a rectangle of the Web Mercator plane, the view's size on screen in points, and the
/// map's heading.
///
///     let viewport = Viewport(center: try Coordinate(latitude: 48.85, longitude: 2.35), zoom: 10,
///                             size: ViewSize(width: 1024, height: 768))
///
/// The rectangle may cross the antimeridian (its x range then runs past the world's east edge).
///
/// A rotated map (MapKit's `camera.heading`) shows a rotated rectangle of the plane: ``rect`` is then the smallest
/// upright rectangle around it, which is what is clustered, and the scale (``zoom``, ``pointsPerMapUnit``) is the
/// view's, so grid cells keep their size in points whatever the heading.
///
/// A viewport of no size (a view before layout) is ``isEmpty``: queries of it answer nothing, and a manager does no
/// work for it.
public struct Viewport: Hashable, Sendable {
    /// The visible part of the plane: with a heading, the upright rectangle around it.
    public var rect: MapRect
    /// The size of the view in points.
    public var size: ViewSize
    /// The map's heading, in degrees clockwise from north to the view's up direction.
    ///
    /// MapKit's `camera.heading`. Default 0.
    public var heading: Double

    /// Makes a viewport from a visible rectangle (with a heading, the upright rectangle around the rotated view) and
    /// the view's size in points.
    ///
    /// A rectangle or size that is empty or not finite makes an empty viewport (``isEmpty``).
    public init(rect: MapRect, size: ViewSize, heading: Double = 0) {
        self.rect = rect
        self.size = size
        self.heading = heading.isFinite ? heading : 0
    }

    /// The viewport of a view of `size` points centered on `center` at a zoom level, with the map turned to
    /// `heading` degrees.
    public init(center: Coordinate, zoom: Double, size: ViewSize, heading: Double = 0) {
        let unitsPerPoint = 1 / WebMercator.pointsPerMapUnit(atZoom: zoom)
        let point = center.mapPoint
        let turned = Self.uprightSize(of: size, heading: heading)
        let width = turned.width * unitsPerPoint
        let height = turned.height * unitsPerPoint
        self.init(
            rect: MapRect(
                minX: point.x - width / 2, minY: point.y - height / 2, maxX: point.x + width / 2,
                maxY: point.y + height / 2),
            size: size, heading: heading)
    }

    /// Whether the viewport shows nothing: its rectangle or its size is empty, or not finite.
    public var isEmpty: Bool {
        !(rect.size.width > 0 && rect.size.height > 0 && size.width > 0 && size.height > 0)
            || !(rect.size.width.isFinite && rect.size.height.isFinite && size.width.isFinite && size.height.isFinite)
    }

    /// The continuous zoom level: at zoom *z* the world is 256 · 2^*z* points wide.
    public var zoom: Double {
        WebMercator.zoomLevel(mapWidth: rect.size.width, pointWidth: Self.uprightSize(of: size, heading: heading).width)
    }

    /// How many points one plane unit takes on screen.
    public var pointsPerMapUnit: Double { Self.uprightSize(of: size, heading: heading).width / rect.size.width }

    /// The size, in points, of the upright rectangle around a view of `size` turned by `heading` degrees.
    static func uprightSize(of size: ViewSize, heading: Double) -> ViewSize {
        guard heading.isFinite, heading.truncatingRemainder(dividingBy: 360) != 0 else { return size }
        let radians = heading * Double.pi / 180
        let cosine = abs(mathCos(radians))
        let sine = abs(mathSin(radians))
        return ViewSize(
            width: size.width * cosine + size.height * sine, height: size.width * sine + size.height * cosine)
    }
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
