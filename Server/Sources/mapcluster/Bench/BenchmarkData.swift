@_spi(MapClusterServer) import MapCluster

/// Seeded synthetic point sets, so that anyone who reruns `mapcluster bench` measures the same work.
enum BenchmarkData {
    typealias Generator = SplitMix64

    /// Points spread evenly over longitude and latitude (within the Mercator plane), ids from `firstID`.
    static func uniformPoints(count: Int, seed: UInt64, firstID: Int = 0) -> [(Int, Coordinate)] {
        var rng = Generator(seed: seed)
        return (0..<count).map { i in (firstID + i, uniform(using: &rng)) }
    }

    /// Points in 400 Gaussian blobs of widths from a few metres to a few hundred kilometres, the way
    /// real data crowds into cities.
    static func clusteredPoints(count: Int, seed: UInt64) -> [(Int, Coordinate)] {
        var rng = Generator(seed: seed)
        let blobs = (0..<400).map { _ in
            (center: uniform(using: &rng), spread: pow10(Double.random(in: -4...0.5, using: &rng)))
        }
        return (0..<count).map { i in
            let blob = blobs[Int.random(in: 0..<blobs.count, using: &rng)]
            let (u, v) = (Double.random(in: -1...1, using: &rng), Double.random(in: -1...1, using: &rng))
            // The sum of three uniforms: a cheap bell curve.
            let w = Double.random(in: -1...1, using: &rng)
            let latitude = blob.center.latitude + (u + v + w) * blob.spread
            let longitude = blob.center.longitude + (v - u + Double.random(in: -1...1, using: &rng)) * blob.spread
            return (i, coordinate(latitude: min(max(latitude, -85), 85), longitude: min(max(longitude, -180), 180)))
        }
    }

    /// The peers' `clustered` set (Benchmarks/peers, and scripts/peer_points.py): 100 blobs, the first at Paris, drawn
    /// with mulberry32 from seed 42, the very points supercluster, pysupercluster and tippecanoe are measured on.
    static func peerClusteredPoints(count: Int) -> [(Int, Coordinate)] {
        var rng = Mulberry32(state: 42)
        let blobs = 100
        var (longitudes, latitudes, spreads) = ([2.3522], [48.8566], [0.3])
        for _ in 1..<blobs {
            longitudes.append(-180 + 360 * rng.next())
            latitudes.append(-60 + 130 * rng.next())
            spreads.append(0.5 + 4.5 * rng.next())
        }
        let sqrt3 = 1.732_050_807_568_877_2
        return (0..<count).map { i in
            let blob = Int((Double(blobs) * rng.next()).rounded(.down))
            let gx = (rng.next() + rng.next() + rng.next() + rng.next() - 2) * sqrt3
            let gy = (rng.next() + rng.next() + rng.next() + rng.next() - 2) * sqrt3
            var longitude = longitudes[blob] + spreads[blob] * gx
            if longitude > 180 { longitude -= 360 }
            if longitude < -180 { longitude += 360 }
            let latitude = min(max(latitudes[blob] + spreads[blob] * gy, -85), 85)
            return (i, coordinate(latitude: latitude, longitude: longitude))
        }
    }

    /// The peers' generator: mulberry32, numbers in [0, 1).
    struct Mulberry32 {
        var state: UInt32

        mutating func next() -> Double {
            state = state &+ 0x6D2B_79F5
            var t = state
            t = (t ^ (t >> 15)) &* (t | 1)
            t ^= t &+ ((t ^ (t >> 7)) &* (t | 61))
            return Double(t ^ (t >> 14)) / 4_294_967_296
        }
    }

    /// The schema of the aggregate workloads: weights, 8 categories and one summed value.
    static let aggregateSchema: AggregateSchema = {
        do {
            return try AggregateSchema(
                categories: aggregateCategories, weighted: true, reductions: [.sum("population")])
        } catch {
            preconditionFailure("the benchmark's schema is valid: \(error)")
        }
    }()

    static let aggregateCategories = (0..<8).map { "category\($0)" }

    /// One element's aggregate values: a weight of 0–10, one of the 8 categories, a population of 0–1,000,000.
    static func aggregateValues(using rng: inout Generator) -> ElementValues {
        ElementValues(
            weight: Double(Int.random(in: 0...10, using: &rng)),
            category: aggregateCategories[Int.random(in: 0..<8, using: &rng)],
            reductions: [Sum(Double(Int.random(in: 0...1_000_000, using: &rng)))])
    }

    /// The aggregate values of `count` elements, as the columns a bulk load takes.
    static func aggregateColumns(count: Int, seed: UInt64) -> ElementValueColumns {
        var rng = Generator(seed: seed)
        var weights: [Double] = []
        var categories: [String?] = []
        var populations: [Double?] = []
        for _ in 0..<count {
            weights.append(Double(Int.random(in: 0...10, using: &rng)))
            categories.append(aggregateCategories[Int.random(in: 0..<8, using: &rng)])
            populations.append(Double(Int.random(in: 0...1_000_000, using: &rng)))
        }
        return ElementValueColumns(weights: weights, categories: categories, reductions: [.numbers(populations)])
    }

    /// An index of `points` with the aggregate workloads' values.
    static func aggregatedIndex(_ points: [(Int, Coordinate)], seed: UInt64) -> ClusterIndex<Int> {
        do {
            return try ClusterIndex(
                points, values: aggregateColumns(count: points.count, seed: seed), schema: aggregateSchema)
        } catch {
            preconditionFailure("the benchmark's values are valid: \(error)")
        }
    }

    static func uniform(using rng: inout Generator) -> Coordinate {
        coordinate(latitude: .random(in: -85...85, using: &rng), longitude: .random(in: -180..<180, using: &rng))
    }

    private static func coordinate(latitude: Double, longitude: Double) -> Coordinate {
        do {
            return try Coordinate(latitude: latitude, longitude: longitude)
        } catch {
            preconditionFailure("generated an invalid coordinate: \(error)")
        }
    }

    private static func pow10(_ x: Double) -> Double {
        var result = 1.0
        var remaining = x
        while remaining >= 1 {
            result *= 10
            remaining -= 1
        }
        while remaining <= -1 {
            result /= 10
            remaining += 1
        }
        // 10^r for |r| < 1 by its series around 0 is plenty for picking blob widths.
        let ln10 = 2.302_585_092_994_046
        var term = 1.0
        var sum = 1.0
        for n in 1..<20 {
            term *= remaining * ln10 / Double(n)
            sum += term
        }
        return result * sum
    }
}
