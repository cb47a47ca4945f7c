/// A position on the Earth in degrees of latitude and longitude (WGS 84), validated when made.
///
///     let berlin = try Coordinate(latitude: 52.52, longitude: 13.405)
///
/// Latitude must lie in -90...90 and longitude in -180...180; NaN and infinities are rejected, never clamped. A
/// coordinate keeps the values it was given: latitudes beyond ±85.05112878° (the edge of the Web Mercator plane)
/// project onto the plane's edge, and longitude 180 projects onto the same meridian as -180, but the coordinate itself
/// is unchanged.
public struct Coordinate: Hashable, Sendable, CustomStringConvertible {
    /// Degrees north of the equator, -90...90.
    public let latitude: Double
    /// Degrees east of Greenwich, -180...180.
    public let longitude: Double

    /// Makes a coordinate, or throws if either value is not finite or out of range.
    public init(latitude: Double, longitude: Double) throws(CoordinateError) {
        guard latitude.isFinite, (-90.0...90.0).contains(latitude) else {
            throw .invalidLatitude(latitude)
        }
        guard longitude.isFinite, (-180.0...180.0).contains(longitude) else {
            throw .invalidLongitude(longitude)
        }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Makes a coordinate from values the caller has already checked.
    init(uncheckedLatitude latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The longitude wrapped into [-180, 180): 180 becomes -180, the same meridian.
    public var wrappedLongitude: Double { longitude == 180 ? -180 : longitude }

    /// The coordinate's position on the Web Mercator plane.
    public var mapPoint: MapPoint { MapPoint(self) }

    /// The latitude and longitude in parentheses, as in `(52.52, 13.405)`.
    public var description: String { "(\(latitude), \(longitude))" }
}

/// Why a latitude or longitude was rejected.
public enum CoordinateError: Error, Sendable, CustomStringConvertible {
    /// The latitude is NaN, infinite, or outside -90...90.
    case invalidLatitude(Double)
    /// The longitude is NaN, infinite, or outside -180...180.
    case invalidLongitude(Double)

    /// Which value was rejected and why, as in `latitude 91.0 is outside -90...90`.
    public var description: String {
        switch self {
        case .invalidLatitude(let value):
            value.isFinite
                ? "latitude \(value) is outside -90...90" : "latitude \(value) is not a finite number"
        case .invalidLongitude(let value):
            value.isFinite
                ? "longitude \(value) is outside -180...180" : "longitude \(value) is not a finite number"
        }
    }
}
