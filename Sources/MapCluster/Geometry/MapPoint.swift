/// A point on the Web Mercator plane, on MapKit's scale: the world is ``MapSize/world`` units square,
/// x grows east from the antimeridian and y grows south from the plane's north edge.
///
/// Because the scale is MapKit's, converting to and from `MKMapPoint` is the identity.
public struct MapPoint: Hashable, Sendable, CustomStringConvertible {
    /// Units east of the antimeridian, 0..<268,435,456 for points on the world.
    public var x: Double
    /// Units south of the plane's north edge (latitude 85.05112878°), 0...268,435,456.
    public var y: Double

    /// Makes a point from plane units.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// Projects a coordinate.
    ///
    /// Latitudes beyond the plane's edge land on the edge; longitude 180 lands on x = 0, the same meridian as -180.
    public init(_ coordinate: Coordinate) {
        let (x, y) = WebMercator.unitPoint(coordinate)
        self.init(x: x * MapSize.worldWidth, y: y * MapSize.worldWidth)
    }

    /// The coordinate at this point; x is wrapped onto the world first, so the longitude is in
    /// [-180, 180), and y is clamped to the plane.
    public var coordinate: Coordinate {
        let width = MapSize.worldWidth
        var x = self.x.truncatingRemainder(dividingBy: width)
        if x < 0 { x += width }
        let y = min(max(self.y, 0), width)
        let longitude = x / width * 360 - 180
        let n = .pi * (1 - 2 * y / width)
        let latitude = (2 * mathAtan(mathExp(n)) - .pi / 2) * 180 / .pi
        return Coordinate(uncheckedLatitude: latitude, longitude: longitude)
    }

    /// The coordinates in plane units, as in `(134217728.0, 134217728.0)`.
    public var description: String { "(\(x), \(y))" }
}

/// A width and height on the Web Mercator plane, in plane units.
public struct MapSize: Hashable, Sendable {
    /// The width and height of the whole world: 2^28 = 268,435,456 units, MapKit's `MKMapSize.world`.
    public static let world = MapSize(width: worldWidth, height: worldWidth)
    /// The world's width (and height) in plane units, 2^28.
    @_spi(MapClusterServer) public static let worldWidth: Double = 268_435_456

    /// Width in plane units.
    public var width: Double
    /// Height in plane units.
    public var height: Double

    /// Makes a size from plane units.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// `x` wrapped onto the world: in 0..<``worldWidth``.
    package static func wrappedX(_ x: Double) -> Double {
        let x = x.truncatingRemainder(dividingBy: worldWidth)
        return x < 0 ? x + worldWidth : x
    }

    /// The difference `b - a` along x the shorter way around the world: within ±``worldWidth``/2.
    @_spi(MapClusterServer) public static func wrappedDeltaX(from a: Double, to b: Double) -> Double {
        var delta = (b - a).truncatingRemainder(dividingBy: worldWidth)
        if delta > worldWidth / 2 { delta -= worldWidth }
        if delta < -worldWidth / 2 { delta += worldWidth }
        return delta
    }
}

/// A rectangle on the Web Mercator plane.
///
/// Its x range may run past the world's east edge (x ≥ 2^28) when it crosses the antimeridian, as MapKit's visible map
/// rect does.
public struct MapRect: Hashable, Sendable, CustomStringConvertible {
    /// The whole world.
    public static let world = MapRect(origin: MapPoint(x: 0, y: 0), size: .world)

    /// The north-west corner.
    public var origin: MapPoint
    /// The extent east and south of the origin.
    public var size: MapSize

    /// Makes a rectangle from its north-west corner and size.
    public init(origin: MapPoint, size: MapSize) {
        self.origin = origin
        self.size = size
    }

    /// Makes a rectangle from its edges in plane units.
    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.init(origin: MapPoint(x: minX, y: minY), size: MapSize(width: maxX - minX, height: maxY - minY))
    }

    /// The rectangle between two longitudes and two latitudes, in degrees; throws if any value is not
    /// a valid latitude or longitude.
    ///
    /// When `east` is less than `west`, the rectangle crosses the antimeridian and runs past the world's east edge:
    /// `west: 170, east: -170` is 20° wide. `west: -180, east: 180` is the whole width of the world. The latitudes may
    /// come in either order.
    public init(west: Double, south: Double, east: Double, north: Double) throws(CoordinateError) {
        let southWest = try Coordinate(latitude: min(south, north), longitude: west)
        let northEast = try Coordinate(latitude: max(south, north), longitude: east)
        let width = MapSize.worldWidth
        var maxX = (east + 180) / 360 * width
        if east < west { maxX += width }
        self.init(minX: (west + 180) / 360 * width, minY: northEast.mapPoint.y, maxX: maxX, maxY: southWest.mapPoint.y)
    }

    /// The west edge.
    public var minX: Double { origin.x }
    /// The north edge.
    public var minY: Double { origin.y }
    /// The east edge.
    public var maxX: Double { origin.x + size.width }
    /// The south edge.
    public var maxY: Double { origin.y + size.height }
    /// Whether it runs past the world's east edge: a box whose east edge was given west of its west edge.
    public var crossesAntimeridian: Bool { maxX > MapSize.worldWidth }

    /// Its width in degrees of longitude.
    public var longitudeSpan: Double { size.width / MapSize.worldWidth * 360 }

    /// The center.
    public var center: MapPoint { MapPoint(x: origin.x + size.width / 2, y: origin.y + size.height / 2) }

    /// Whether the point lies inside, with the west and north edges included and the others excluded.
    public func contains(_ point: MapPoint) -> Bool {
        point.x >= minX && point.x < maxX && point.y >= minY && point.y < maxY
    }

    /// The rectangle shrunk by `dx` on the west and east sides and by `dy` on the north and south sides; negative values
    /// grow it, as with `CGRect.insetBy(dx:dy:)`.
    public func insetBy(dx: Double, dy: Double) -> MapRect {
        MapRect(minX: minX + dx, minY: minY + dy, maxX: maxX - dx, maxY: maxY - dy)
    }

    /// The smallest rectangle holding both, on the plane (not across the antimeridian).
    public func union(_ other: MapRect) -> MapRect {
        MapRect(
            minX: min(minX, other.minX), minY: min(minY, other.minY), maxX: max(maxX, other.maxX),
            maxY: max(maxY, other.maxY))
    }

    /// The ranges of x and y the rectangle covers.
    public var description: String { "MapRect(x: \(minX)..<\(maxX), y: \(minY)..<\(maxY))" }
}

/// Constants and conversions of the Web Mercator projection and the web-map zoom convention.
public enum WebMercator {
    /// The latitude of the plane's north edge, in degrees; the south edge is its negative.
    public static let maxLatitude = 85.051_128_779_806_59

    /// The length of the equator of the sphere the projection uses (radius 6,378,137 m, WGS 84's semi-major axis), in
    /// metres: the plane's width on the ground at the equator.
    public static let equatorLength = 40_075_016.685_578_5

    /// The zoom level at which `mapWidth` plane units are drawn `pointWidth` points wide: at zoom *z*
    /// the world is 256 · 2^*z* points wide.
    ///
    /// Fractional zoom levels are normal. A width of zero gives an infinite zoom, and one that is negative or NaN a
    /// NaN (an empty ``Viewport``'s), rather than a trap.
    ///
    ///     WebMercator.zoomLevel(mapWidth: MapSize.world.width, pointWidth: 256)  // 0
    public static func zoomLevel(mapWidth: Double, pointWidth: Double) -> Double {
        mathLog2(pointWidth / mapWidth * MapSize.worldWidth / 256)
    }

    /// The projection onto the unit square: x in [0, 1) (longitude 180 wraps to 0), y in [0, 1]
    /// (latitudes beyond the plane's edge land on it).
    ///
    /// Every projection in the package goes through here, so that points and grid positions agree to the bit.
    @inline(__always)
    static func unitPoint(_ coordinate: Coordinate) -> (x: Double, y: Double) {
        var x = (coordinate.longitude + 180) / 360
        if x >= 1 { x -= 1 }
        let latitude = min(max(coordinate.latitude, -maxLatitude), maxLatitude)
        let sine = mathSin(latitude * .pi / 180)
        let y = 0.5 - mathLog((1 + sine) / (1 - sine)) / (4 * .pi)
        return (x, min(max(y, 0), 1))
    }

    /// How many points one plane unit takes at a zoom level.
    public static func pointsPerMapUnit(atZoom zoom: Double) -> Double {
        256 * mathExp2(zoom) / MapSize.worldWidth
    }
}
