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

    /// The Earth's mean radius, in metres (IUGG): the sphere ``destination(metres:bearing:)`` and
    /// ``distance(to:)`` work on.
    public static var earthRadius: Double { 6_371_008.8 }

    /// The coordinate `metres` away along a great circle that leaves this one at `bearing` degrees clockwise from
    /// north; its longitude is wrapped into -180...180, and a path over a pole comes down the other side.
    ///
    ///     let east = try Coordinate(latitude: 0, longitude: 0).destination(metres: 111_195, bearing: 90)  // (0, 1)
    public func destination(metres: Double, bearing: Double) -> Coordinate {
        let radians = Double.pi / 180
        let angle = metres / Self.earthRadius
        let heading = bearing * radians
        let phi = latitude * radians
        let sinPhi2 = mathSin(phi) * mathCos(angle) + mathCos(phi) * mathSin(angle) * mathCos(heading)
        let phi2 = mathAsin(min(max(sinPhi2, -1), 1))
        let lambda2 =
            longitude * radians
            + mathAtan2(mathSin(heading) * mathSin(angle) * mathCos(phi), mathCos(angle) - mathSin(phi) * sinPhi2)
        var longitude2 = lambda2 / radians
        longitude2 -= 360 * ((longitude2 + 180) / 360).rounded(.down)
        return Coordinate(
            uncheckedLatitude: min(max(phi2 / radians, -90), 90), longitude: min(max(longitude2, -180), 180))
    }

    /// The great-circle distance to another coordinate, in metres, on a sphere of ``earthRadius`` (the haversine
    /// formula).
    public func distance(to other: Coordinate) -> Double {
        let radians = Double.pi / 180
        let dPhi = (other.latitude - latitude) * radians
        let dLambda = (other.longitude - longitude) * radians
        let a =
            mathSin(dPhi / 2) * mathSin(dPhi / 2)
            + mathCos(latitude * radians) * mathCos(other.latitude * radians) * mathSin(dLambda / 2)
            * mathSin(dLambda / 2)
        return 2 * Self.earthRadius * mathAsin(min(1, a.squareRoot()))
    }
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
