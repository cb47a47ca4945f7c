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
    /// sum over its members; and the one call (``Clustering/clustersWithAggregates(in:)``), which reads the singles it
    /// found where it found them and walks for the rest, against the two calls.
    static func expectAggregatesMatch(
        _ index: ClusterIndex<Int>, _ points: [Int: Point], _ shape: DataShape, using rng: inout SplitMix64
    ) throws {
        for zoom in 0...16 {
            var options = ClusterOptions<Int>()
            if zoom % 3 == 2 { options.categories = Set(categories.filter { _ in Bool.random(using: &rng) }) }
            let center = points.values.randomElement(using: &rng)?.coordinate ?? shape.coordinate(using: &rng)
            let clustering = index.clustering(options)
            let viewport = Viewport(center: center, zoom: Double(zoom), size: testScreen)
            let clusters = clustering.clusters(in: viewport)
            let aggregates = try clustering.aggregates(of: clusters) ?? []
            #expect(aggregates.count == clusters.count)
            let together = clustering.clustersWithAggregates(in: viewport)
            #expect(together.clusters == clusters, "zoom \(zoom): one call")
            // The one call plans from its drafts, the two from the clusters: a walk of other ranges may add a leaf's run
            // up another way (from its checkpoints, entry by entry beside a range that takes no nodes, as its row less
            // another longest run), and weighted centers, quotients of sums of products, differ in their last bits.
            AggregatesTests.expectSame(try #require(together.aggregates), aggregates, "zoom \(zoom): one call")
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

    /// Above 65,536 elements, after edits, with checkpoints: the one call (coarse cells' rows at world levels, singles
    /// where the fold found them, one walk for the rest) answers as the two calls do (the weighted centers to 1e-9) and
    /// as the members add up; also where cells of too few members to cluster leave theirs apart.
    @Test(.tier(.million)) func theOneCallAnswersAsTheTwoWithCheckpoints() throws {
        var rng = SplitMix64(seed: 4_713)
        var points = Dictionary(
            uniqueKeysWithValues: (0..<70_000).map { ($0, Point.random(.clustered, using: &rng)) })
        let ordered = points.sorted { $0.key < $1.key }
        let values = ordered.map(\.value.value)
        var index = try ClusterIndex(
            ordered.map { ($0.key, $0.value.coordinate) },
            values: ElementValueColumns(
                weights: ordered.map(\.value.weight),
                categories: ordered.map { $0.value.category.map { Self.categories[$0] } },
                reductions: [.numbers(values), .numbers(values)]),
            schema: Self.schema)
        for key in 0..<2_000 {
            _ = index.remove(key * 11)
            points[key * 11] = nil
            let point = Point.random(.clustered, using: &rng)
            try index.insert(100_000 + key, at: point.coordinate, values: point.values)
            points[100_000 + key] = point
        }
        #expect(index.tree.coarseCells != nil && index.tree.aggregates?.rows.keepsCheckpoints == true)
        // By default, and with cells of too few members to cluster, whose elements then show apart.
        var few = ClusterOptions<Int>()
        few.minCountForClustering = 6
        let keys = points.keys.sorted()
        var checked = 0
        for (clustering, zoom) in [index.clustering(), index.clustering(few)].flatMap({ clustering in
            stride(from: 0.0, through: 16, by: 1).map { (clustering, $0) }
        }) {
            for _ in 0..<3 {
                let center = try #require(points[keys[Int.random(in: 0..<keys.count, using: &rng)]]).coordinate
                let viewport = Viewport(center: center, zoom: zoom, size: testScreen)
                let together = clustering.clustersWithAggregates(in: viewport)
                #expect(together.clusters == clustering.clusters(in: viewport), "zoom \(zoom)")
                let aggregates = try #require(together.aggregates)
                // Planned from drafts and from clusters: see ``expectAggregatesMatch(_:_:_:using:)``.
                let apart = try #require(try clustering.aggregates(of: together.clusters))
                AggregatesTests.expectSame(aggregates, apart, "zoom \(zoom)")
                for (cluster, answer) in zip(together.clusters, aggregates).prefix(30) {
                    let members = try clustering.members(of: cluster).compactMap { points[$0] }
                    #expect(answer.weight == members.reduce(0) { $0 + $1.weight }, "\(cluster.id) weight")
                    var counts = [Int](repeating: 0, count: Self.categories.count)
                    for member in members { if let category = member.category { counts[category] += 1 } }
                    #expect(Array(answer.categoryCounts) == counts, "\(cluster.id) category counts")
                    let present = members.compactMap(\.value)
                    #expect(answer.number("value_sum") == (present.isEmpty ? nil : present.reduce(0, +)))
                    checked += 1
                }
            }
        }
        #expect(checked > 500, "clusters checked against their members: \(checked)")
    }
}
