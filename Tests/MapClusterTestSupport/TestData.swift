// Testable: the thread-sanitized package (Tests/ThreadSanitizer) builds this target too, and from there the engine's
// package-level SplitMix64 is reached only so.
@testable @_spi(MapClusterServer) public import MapCluster

/// Shapes of test data; each names what it stresses.
public enum DataShape: String, CaseIterable, CustomStringConvertible, Sendable {
    /// Spread over the whole world.
    case uniform
    /// Gaussian blobs of very different sizes: dense cells beside empty ones.
    case clustered
    /// Every point on one coordinate: nothing can ever split them.
    case oneLocation
    /// Points within a degree of the antimeridian, on both sides, and exactly on ±180.
    case antimeridian

    /// The shape's name, for test output.
    public var description: String { rawValue }

    /// `count` coordinates of this shape, the same for the same seed.
    public func coordinates(count: Int, seed: UInt64) -> [Coordinate] {
        var rng = SplitMix64(seed: seed &+ UInt64(count))
        return (0..<count).map { _ in coordinate(using: &rng) }
    }

    /// One coordinate of this shape.
    package func coordinate(using rng: inout SplitMix64) -> Coordinate {
        switch self {
        case .uniform:
            return .checked(Double.random(in: -85...85, using: &rng), Double.random(in: -180...180, using: &rng))
        case .clustered:
            let blob = Int.random(in: 0..<6, using: &rng)
            let centers = [(48.8, 2.3), (40.7, -74.0), (35.7, 139.7), (-33.9, 151.2), (-1.3, 36.8), (64.1, -21.9)]
            let spread = [0.01, 0.1, 0.5, 2, 5, 0.001][blob]
            let (lat, lon) = centers[blob]
            return .checked(
                min(max(lat + gaussian(using: &rng) * spread, -85), 85),
                min(max(lon + gaussian(using: &rng) * spread, -180), 180))
        case .oneLocation:
            return .checked(12.5, -45.25)
        case .antimeridian:
            let side = Int.random(in: 0..<5, using: &rng)
            let lat = Double.random(in: -60...60, using: &rng)
            switch side {
            case 0: return .checked(lat, 180)
            case 1: return .checked(lat, -180)
            case 2: return .checked(lat, Double.random(in: 179...180, using: &rng))
            default: return .checked(lat, Double.random(in: -180...(-179), using: &rng))
            }
        }
    }

    private func gaussian(using rng: inout SplitMix64) -> Double {
        let u = Double.random(in: Double.ulpOfOne...1, using: &rng)
        let v = Double.random(in: 0...1, using: &rng)
        return (-2 * mathLog(u)).squareRoot() * cosine(2 * .pi * v)
    }
}

extension Coordinate {
    /// A coordinate the test knows to be valid.
    public static func checked(_ latitude: Double, _ longitude: Double) -> Coordinate {
        do { return try Coordinate(latitude: latitude, longitude: longitude) } catch { fatalError("\(error)") }
    }
}

/// cos through the core's own sine, so the tests need no platform math import.
public func cosine(_ x: Double) -> Double { mathSin(x + .pi / 2) }

/// The screen the tests cluster for, in points.
public let testScreen = ViewSize(width: 1024, height: 768)

/// Everything an index holds in the cells a viewport's clustering covers, found the slow way.
public func elementsInCells<Element>(
    _ index: ClusterIndex<Element>, _ viewport: Viewport, _ options: ClusterOptions<Element>
) -> Set<Element> {
    let cells = Set(index.clustering(options).gridCells(in: viewport))
    let level = options.gridLevel(forZoom: viewport.zoom)
    return Set(
        index.elements.filter { cells.contains(GridCell(containing: $0.coordinate.mapPoint, level: level)) }.map(
            \.element))
}

extension ClusterIndex {
    /// The index clustered with options the test knows to be valid.
    public func clustering(_ options: ClusterOptions<Element> = .init()) -> Clustering<Element> {
        do { return try Clustering(self, options: options) } catch { fatalError("\(error)") }
    }
}
