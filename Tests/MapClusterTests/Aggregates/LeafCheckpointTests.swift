import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster

/// A leaf's prefix totals (``NodeRows/checkpoints``) answer the clusters whose keys end inside the leaf: they follow
/// every insert, move and removal exactly, and a cluster cut anywhere in a leaf adds up to its members.
struct LeafCheckpointTests {
    static let categories = ["a", "b", "c", "d", "e"]
    /// Sums and means only: no minimum or maximum, so the rows keep checkpoints.
    static let schema: AggregateSchema = {
        do {
            return try AggregateSchema(
                categories: categories, weighted: true, reductions: [.sum("value"), .mean("value")])
        } catch { fatalError("\(error)") }
    }()

    /// One element's values, the brute-force model's copy.
    struct Point: ModelPoint {
        var coordinate: Coordinate
        var weight: Double
        var category: Int?
        var value: Double?

        var values: ElementValues {
            ElementValues(
                weight: weight, category: category.map { LeafCheckpointTests.categories[$0] },
                reductions: [Sum(value), Mean(value)])
        }

        static func random(_ shape: DataShape, using rng: inout SplitMix64) -> Point {
            let category = Int.random(in: 0...categories.count, using: &rng)
            return Point(
                coordinate: shape.coordinate(using: &rng), weight: Double(Int.random(in: 0...4, using: &rng)),
                category: category == categories.count ? nil : category,
                value: Int.random(in: 0..<5, using: &rng) == 0 ? nil : Double(Int.random(in: -500...500, using: &rng)))
        }
    }

    /// 10,000 random inserts, moves, new values and removals, one at a time: after each, every node's row and every
    /// leaf's checkpoints equal their recomputation (``MortonTree/_checkInvariants()``); every thousand, the clusters
    /// of random views at every zoom add up to their members.
    @Test(arguments: [DataShape.uniform, .clustered])
    func checkpointsFollowTenThousandEdits(shape: DataShape) throws {
        var rng = SplitMix64(seed: 4_711)
        var index = ClusterIndex<Int>(schema: Self.schema)
        #expect(index.tree.aggregates?.rows.keepsCheckpoints == true)
        var points: [Int: Point] = [:]
        var nextID = 0
        for step in 0..<10_000 {
            // Inserts outweigh removals until about 800 elements (a dozen leaves and more), so that leaves fill, split and
            // merge.
            let grow = points.count < 800 ? 5 : 3
            switch Int.random(in: 0..<(grow + 4), using: &rng) {
            case 0..<grow:
                let point = Point.random(shape, using: &rng)
                try index.insert(nextID, at: point.coordinate, values: point.values)
                points[nextID] = point
                nextID += 1
            case grow, grow + 1:
                index.removeRandomElement(of: &points, using: &rng)
            case grow + 2:
                index.moveRandomElement(of: &points, within: shape, using: &rng)
            default:
                guard let changed = points.keys.randomElement(using: &rng), let old = points[changed] else { continue }
                var point = Point.random(shape, using: &rng)
                point.coordinate = old.coordinate
                try index.insert(changed, at: point.coordinate, values: point.values)
                points[changed] = point
            }
            // The tree's rows and checkpoints after every edit; the element store with the answers.
            index.tree._checkInvariants()
            if step % 1_000 == 999 {
                index._checkInvariants()
                try Self.expectAggregatesMatch(index, points, shape, using: &rng)
            }
        }
        #expect(points.count > 500, "the index grew past a few leaves")
    }

    /// The clusters of random views at zooms 0 to 16, unfiltered (the checkpoints' case) and filtered, each against a
    /// sum over its members.
    static func expectAggregatesMatch(
        _ index: ClusterIndex<Int>, _ points: [Int: Point], _ shape: DataShape, using rng: inout SplitMix64
    ) throws {
        for zoom in 0...16 {
            var options = ClusterOptions<Int>()
            if zoom % 3 == 2 { options.categories = Set(categories.filter { _ in Bool.random(using: &rng) }) }
            let center = points.values.randomElement(using: &rng)?.coordinate ?? shape.coordinate(using: &rng)
            let clustering = index.clustering(options)
            let clusters = clustering.clusters(in: Viewport(center: center, zoom: Double(zoom), size: testScreen))
            let aggregates = try clustering.aggregates(of: clusters) ?? []
            #expect(aggregates.count == clusters.count)
            for (cluster, aggregates) in zip(clusters, aggregates) {
                let members = try clustering.members(of: cluster).compactMap { points[$0] }
                #expect(members.count == cluster.count, "\(cluster.id)")
                var counts = [Int](repeating: 0, count: categories.count)
                for member in members { if let category = member.category { counts[category] += 1 } }
                #expect(Array(aggregates.categoryCounts) == counts, "zoom \(zoom), \(cluster.id): category counts")
                #expect(aggregates.weight == members.reduce(0) { $0 + $1.weight }, "integers add up exactly")
                let values = members.compactMap(\.value)
                #expect(aggregates.number("value_sum") == (values.isEmpty ? nil : values.reduce(0, +)))
                #expect(
                    aggregates.number("value_mean")
                        == (values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)))
            }
        }
    }
}
