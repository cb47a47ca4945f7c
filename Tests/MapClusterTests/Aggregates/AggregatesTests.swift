import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster

/// A user's reduction of the general form: the union of bit flags (which no numeric reduction expresses).
struct Flags: ClusterAggregate {
    var bits: UInt32 = 0
    static var identity: Flags { Flags() }
    mutating func merge(_ other: Flags) { bits |= other.bits }
}

/// A user's reduction that never saturates, unlike ``Flags``: how many members, and the sum of their tags.
///
/// A node that keeps a removed member's tally is wrong whatever its other members are.
struct Tally: ClusterAggregate {
    var count = 0
    var tags = 0
    static var identity: Tally { Tally() }
    mutating func merge(_ other: Tally) {
        count += other.count
        tags += other.tags
    }
}

/// Weights, categories and reductions: every cluster's aggregates, filtered or not, equal a recomputation from its
/// members, after bulk loads and after thousands of edits.
struct AggregatesTests {
    static let categories = ["AF", "AS", "EU", "NA", "OC", "SA", "AN"]
    static let schema: AggregateSchema = {
        do {
            return try AggregateSchema(
                categories: categories, weighted: true,
                reductions: [
                    .sum("value"), .min("value"), .max("value"), .mean("value"), Reduction("flags", Flags.self),
                ])
        } catch { fatalError("\(error)") }
    }()

    /// One element's values, the brute-force model's copy.
    struct Point: Equatable, ModelPoint {
        var coordinate: Coordinate
        var weight: Double
        var category: Int?
        var value: Double?
        var flags: UInt32

        var values: ElementValues {
            ElementValues(
                weight: weight, category: category.map { AggregatesTests.categories[$0] },
                reductions: [Sum(value), Minimum(value), Maximum(value), Mean(value), Flags(bits: flags)])
        }
    }

    static func randomPoint(_ shape: DataShape, using rng: inout SplitMix64) -> Point {
        // The last category ("AN") is left empty; one element in ten has no category, one in five no value.
        let category = Int.random(in: 0..<10, using: &rng)
        let value = Int.random(in: 0..<5, using: &rng) == 0 ? nil : Double(Int.random(in: -1_000...1_000, using: &rng))
        return Point(
            coordinate: shape.coordinate(using: &rng), weight: Double(Int.random(in: 0...4, using: &rng)),
            category: category < 6 ? category : (category == 9 ? nil : category % 6), value: value,
            flags: 1 << UInt32.random(in: 0..<8, using: &rng))
    }

    /// ``schema`` without the user's reduction: the numeric reductions alone.
    static let numericSchema: AggregateSchema = {
        do {
            return try AggregateSchema(
                categories: categories, weighted: true,
                reductions: [.sum("value"), .min("value"), .max("value"), .mean("value")])
        } catch { fatalError("\(error)") }
    }()

    /// The points in one bulk load, under ``schema``, or ``numericSchema`` when `numericOnly`.
    static func bulkIndex(_ points: [Int: Point], numericOnly: Bool = false) throws -> ClusterIndex<Int> {
        let ordered = points.sorted { $0.key < $1.key }
        let values = ordered.map(\.value.value)
        let numeric: [ReductionValues] = [.numbers(values), .numbers(values), .numbers(values), .numbers(values)]
        return try ClusterIndex(
            ordered.map { ($0.key, $0.value.coordinate) },
            values: ElementValueColumns(
                weights: ordered.map(\.value.weight),
                categories: ordered.map { $0.value.category.map { categories[$0] } },
                reductions: numericOnly ? numeric : numeric + [.values(ordered.map { Flags(bits: $0.value.flags) })]),
            schema: numericOnly ? numericSchema : schema)
    }

    /// Every cluster of random viewports, filtered and not, against its members' values.
    static func expectAggregatesMatch(
        _ index: ClusterIndex<Int>, _ points: [Int: Point], using rng: inout SplitMix64, viewports: Int = 12
    ) throws {
        for _ in 0..<viewports {
            var options = ClusterOptions<Int>()
            if Bool.random(using: &rng) {
                options.categories = Set(categories.filter { _ in Bool.random(using: &rng) })
            }
            let zoom = Double(Int.random(in: 0...9, using: &rng))
            let center = DataShape.clustered.coordinate(using: &rng)
            let viewport = Viewport(center: center, zoom: zoom, size: testScreen)
            let clusters = index.clustering(options).clusters(in: viewport)
            let selected = options.categories.map { names in Set(names.compactMap { categories.firstIndex(of: $0) }) }
            // Conservation: the clusters hold exactly the selected points of the covered cells.
            let inCells = elementsInCells(index, viewport, options).filter { id in
                selected.map { set in points[id]?.category.map(set.contains) ?? false } ?? true
            }
            #expect(clusters.reduce(0) { $0 + $1.count } == inCells.count, "zoom \(zoom), filter \(selected ?? [])")
            // Asked in one batch, and in reverse with each cluster twice (the batch's walk must not care).
            let aggregates = try index.clustering(options).aggregates(of: clusters) ?? []
            #expect(aggregates.count == clusters.count)
            // One call gives the same clusters and aggregates as the two.
            let together = index.clustering(options).clustersWithAggregates(in: viewport)
            #expect(together.clusters == clusters && together.aggregates == aggregates, "zoom \(zoom)")
            let doubled = try index.clustering(options).aggregates(of: (clusters + clusters).reversed()) ?? []
            #expect(Array(doubled.reversed().prefix(clusters.count)) == Array(aggregates))
            // Each cluster's same-location flag, coordinate and bounds are its members'.
            let places = try IndexPropertyTests.placesMatch(
                index, clusters, options: options, model: points.mapValues(\.coordinate), coverage: nil)
            #expect(places == nil, "zoom \(zoom), filter \(selected ?? [])")
            for (cluster, aggregates) in zip(clusters, aggregates) {
                let members = try index.clustering(options).members(of: cluster)
                #expect(members.count == cluster.count, "\(cluster.id)")
                if options.categories != nil, !cluster.id.isElement {
                    #expect(cluster.id.categoryFilter != nil, "a filtered cluster's id carries its filter")
                }
                expect(cluster, aggregates, hasAggregatesOf: members.compactMap { points[$0] }, selected: selected)
            }
        }
    }

    static func expect(
        _ cluster: Cluster<Int>, _ aggregates: ClusterAggregates, hasAggregatesOf members: [Point], selected: Set<Int>?
    ) {
        if let selected, !cluster.id.isElement {
            #expect(members.allSatisfy { $0.category.map(selected.contains) ?? false }, "only selected members")
        }
        let weight = members.reduce(0) { $0 + $1.weight }
        #expect(abs(aggregates.weight - weight) <= 1e-9 * max(1, weight), "\(cluster.id) weight")
        var counts = [Int](repeating: 0, count: categories.count)
        for member in members { if let category = member.category { counts[category] += 1 } }
        #expect(Array(aggregates.categoryCounts) == counts, "\(cluster.id) category counts")
        let values = members.compactMap(\.value)
        let sum = aggregates[reduction: "value_sum"] as? Sum
        #expect(sum?.count == values.count)
        #expect(sum?.total == values.reduce(0, +), "sums of integers are exact")
        #expect((aggregates[reduction: "value_min"] as? Minimum)?.value == values.min())
        #expect((aggregates[reduction: "value_max"] as? Maximum)?.value == values.max())
        #expect(aggregates.number("value_mean") == (values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)))
        #expect((aggregates[reduction: "flags"] as? Flags)?.bits == members.reduce(0) { $0 | $1.flags })
        if weight > 0, let center = aggregates.weightedCenter {
            let latitude = members.reduce(0) { $0 + $1.weight * $1.coordinate.latitude } / weight
            #expect(abs(center.latitude - latitude) < 1e-9)
        } else {
            #expect(aggregates.weightedCenter == nil, "weight 0: no weighted center")
        }
    }

    @Test(arguments: [DataShape.uniform, .clustered, .antimeridian, .oneLocation])
    func aggregatesOfABulkLoadEqualTheirMembers(shape: DataShape) throws {
        var rng = SplitMix64(seed: 101)
        let points = Dictionary(uniqueKeysWithValues: (0..<3_000).map { ($0, Self.randomPoint(shape, using: &rng)) })
        let index = try Self.bulkIndex(points)
        index._checkInvariants()
        try Self.expectAggregatesMatch(index, points, using: &rng)
    }

    @Test(arguments: [DataShape.uniform, .clustered])
    func aggregatesFollowThousandsOfInsertsRemovesAndMoves(shape: DataShape) throws {
        var rng = SplitMix64(seed: 202)
        var points = Dictionary(uniqueKeysWithValues: (0..<2_000).map { ($0, Self.randomPoint(shape, using: &rng)) })
        var index = try Self.bulkIndex(points)
        // A reader's copy, which shares every node's rows until the edits copy those on their paths.
        let snapshot = index
        let world = Viewport(rect: .world, size: testScreen)
        let snapshotAnswer = snapshot.clustering().clustersWithAggregates(in: world)
        let snapshotPoints = points
        var nextID = points.count
        for step in 0..<4_000 {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0, 1:
                let point = Self.randomPoint(shape, using: &rng)
                try index.insert(nextID, at: point.coordinate, values: point.values)
                points[nextID] = point
                nextID += 1
            case 2:
                index.removeRandomElement(of: &points, using: &rng)
            case 3:
                index.moveRandomElement(of: &points, within: shape, using: &rng)
            default:
                // New values in place, or somewhere else.
                guard let changed = points.keys.randomElement(using: &rng) else { continue }
                var point = Self.randomPoint(shape, using: &rng)
                if Bool.random(using: &rng), let old = points[changed] { point.coordinate = old.coordinate }
                try index.insert(changed, at: point.coordinate, values: point.values)
                points[changed] = point
            }
            if step % 1_000 == 999 {
                index._checkInvariants()
                try Self.expectAggregatesMatch(index, points, using: &rng, viewports: 4)
            }
        }
        try Self.expectAggregatesMatch(index, points, using: &rng)
        let after = snapshot.clustering().clustersWithAggregates(in: world)
        #expect(after.clusters == snapshotAnswer.clusters && after.aggregates == snapshotAnswer.aggregates)
        snapshot._checkInvariants()
        try Self.expectAggregatesMatch(snapshot, snapshotPoints, using: &rng, viewports: 4)
    }

    /// A batch of 9,000 elements with values, over several of the steps that two threads share, is all applied.
    ///
    /// It holds new elements, present ones given new values and places, and identities that occur twice (the last
    /// wins). Afterwards every aggregate is its members', and the clusters are a fresh bulk load's. A batch with one
    /// refused value changes nothing, and its error names the value's position.
    @Test func aBatchOfValuesOverManyStepsEqualsItsMembers() throws {
        var rng = SplitMix64(seed: 404)
        var points = Dictionary(
            uniqueKeysWithValues: (0..<3_000).map { ($0, Self.randomPoint(.clustered, using: &rng)) })
        var index = try Self.bulkIndex(points)
        var batch: [(Int, Point)] = []
        for id in 1_000..<7_000 { batch.append((id, Self.randomPoint(.clustered, using: &rng))) }
        for _ in 0..<3_000 {
            batch.append((Int.random(in: 0..<7_000, using: &rng), Self.randomPoint(.uniform, using: &rng)))
        }
        batch.shuffle(using: &rng)
        #expect(ClusterIndex<Int>.steps(for: batch.count) > 2, "the batch spans several steps")

        var refused = batch.map { ($0.0, $0.1.coordinate, $0.1.values) }
        refused[8_000].2.category = "XX"
        let before = index
        #expect(throws: AggregateError.element(position: 8_000, .unknownCategory("XX", known: Self.categories))) {
            try index.insert(contentsOf: refused)
        }
        #expect(index.count == before.count)
        let world = Viewport(rect: .world, size: testScreen)
        #expect(index.clustering().clusters(in: world) == before.clustering().clusters(in: world))

        try index.insert(contentsOf: batch.map { ($0.0, $0.1.coordinate, $0.1.values) })
        for (id, point) in batch { points[id] = point }
        #expect(index.count == points.count)
        index._checkInvariants()
        try Self.expectAggregatesMatch(index, points, using: &rng)
        let fresh = try Self.bulkIndex(points)
        for zoom in [1.0, 4, 8] {
            let viewport = Viewport(center: DataShape.clustered.coordinate(using: &rng), zoom: zoom, size: testScreen)
            let clusters = index.clustering().clusters(in: viewport)
            #expect(clusters == fresh.clustering().clusters(in: viewport), "zoom \(zoom)")
            #expect(!clusters.isEmpty)
            Self.expectSame(
                try #require(try index.clustering().aggregates(of: clusters)),
                try #require(try fresh.clustering().aggregates(of: clusters)),
                "zoom \(zoom)")
        }
    }

    /// Above 65,536 elements world maps read the coarse cells' rows, which stay exact through thousands of edits.
    ///
    /// They stay what a recomputation gives, and a world map's aggregates are those of a fresh bulk load of the same
    /// elements, to the last bit (the values are whole numbers; the weighted center, a quotient, to 1e-9). A copy taken
    /// before the edits (a reader's snapshot, which shares every cell's row until an edit copies it) answers as it did.
    @Test(.tier(.million)) func coarseCellsKeepExactAggregatesThroughEdits() throws {
        var rng = SplitMix64(seed: 303)
        var points = Dictionary(
            uniqueKeysWithValues: (0..<70_000).map { ($0, Self.randomPoint(.clustered, using: &rng)) })
        var index = try Self.bulkIndex(points)
        let snapshot = index
        let snapshotAnswers = try Self.worldAnswers(snapshot)
        var edits = 0
        for id in 0..<3_000 {
            switch id % 3 {
            case 0:
                _ = index.remove(id)
                points[id] = nil
            case 1:
                let coordinate = DataShape.clustered.coordinate(using: &rng)
                _ = index.move(id, to: coordinate)
                points[id]?.coordinate = coordinate
            default:
                let point = Self.randomPoint(.uniform, using: &rng)
                try index.insert(id, at: point.coordinate, values: point.values)
                points[id] = point
            }
            edits += 1
        }
        #expect(edits == 3_000)
        // Batches, which bring the coarse rows above the deepest level up to date once, at their end: new values for
        // 4,000 elements (present ones moved, new ones added), then 5,000 removals.
        let batch = (0..<4_000).map { _ in
            (Int.random(in: 0..<72_000, using: &rng), Self.randomPoint(.clustered, using: &rng))
        }
        try index.insert(contentsOf: batch.map { ($0.0, $0.1.coordinate, $0.1.values) })
        for (id, point) in batch { points[id] = point }
        let removals = (0..<5_000).map { _ in Int.random(in: 0..<72_000, using: &rng) }
        index.remove(contentsOf: removals)
        for id in removals { points[id] = nil }
        #expect(index.count == points.count && index.tree.coarseCells != nil, "world maps still read the coarse cells")
        index._checkInvariants()
        let fresh = try Self.bulkIndex(points)
        for ((context, clusters, mine), (_, freshClusters, theirs)) in zip(
            try Self.worldAnswers(index), try Self.worldAnswers(fresh))
        {
            #expect(clusters == freshClusters, "\(context)")
            #expect(mine.count == clusters.count && !clusters.isEmpty)
            Self.expectSame(mine, theirs, context)
        }
        snapshot._checkInvariants()
        for ((context, clusters, aggregates), (_, before, beforeAggregates)) in zip(
            try Self.worldAnswers(snapshot), snapshotAnswers)
        {
            #expect(clusters == before && aggregates == beforeAggregates, "the snapshot's \(context)")
        }
    }

    /// The clusters and aggregates of world maps at zooms 0 to 3, of every category and of two, each with what it is.
    static func worldAnswers(_ index: ClusterIndex<Int>) throws
        -> [(context: String, clusters: [Cluster<Int>], aggregates: ClusterAggregateTable)]
    {
        var answers: [(context: String, clusters: [Cluster<Int>], aggregates: ClusterAggregateTable)] = []
        for zoom in [0.0, 1, 2, 3] {
            var options = ClusterOptions<Int>()
            for categories in [nil, Set(["EU", "AS"])] {
                options.categories = categories
                let viewport = Viewport(rect: .world, size: ViewSize(showing: .world, atZoom: zoom))
                let clusters = index.clustering(options).clusters(in: viewport)
                let aggregates = try #require(try index.clustering(options).aggregates(of: clusters))
                answers.append(("zoom \(zoom), categories \(categories?.sorted() ?? [])", clusters, aggregates))
            }
        }
        return answers
    }

    /// Two answers' aggregates, row by row: the same counts, weights and reductions to the last bit (the values are
    /// whole numbers), the weighted centers (quotients) to 1e-9.
    static func expectSame(_ mine: ClusterAggregateTable, _ theirs: ClusterAggregateTable, _ context: String) {
        #expect(mine.count == theirs.count, "\(context)")
        for (a, b) in zip(mine, theirs) {
            #expect(a.categoryCounts == b.categoryCounts && a.weight == b.weight, "\(context)")
            #expect(a.reductions.map { AnyHashable($0) } == b.reductions.map { AnyHashable($0) }, "\(context)")
            switch (a.weightedCenter, b.weightedCenter) {
            case (nil, nil): break  // members that all weigh 0
            case (let p?, let q?):
                #expect(abs(p.latitude - q.latitude) < 1e-9 && abs(p.longitude - q.longitude) < 1e-9, "\(context)")
            default: Issue.record("one weighted center is missing: \(context)")
            }
        }
    }

    /// Removing the member that holds a cluster's minimum or maximum leaves the next one, in the nodes and in the
    /// coarse cells.
    @Test func minimaAndMaximaFollowRemovalsOfTheirHolders() throws {
        var index = ClusterIndex<Int>(schema: Self.schema)
        let values: [Double] = [1, 5, 9, 5]
        for (id, value) in values.enumerated() {
            try index.insert(
                id, at: .checked(10 + Double(id) * 0.01, 10),
                values: ElementValues(reductions: [Sum(value), Minimum(value), Maximum(value)]))
        }
        func extremes() throws -> (Double?, Double?, Double?) {
            let world = Viewport(rect: .world, size: testScreen)
            let cluster = try #require(index.clustering().clusters(in: world).first)
            let aggregates = try #require(try index.clustering().aggregates(of: cluster))
            return (aggregates.number("value_min"), aggregates.number("value_max"), aggregates.number("value_sum"))
        }
        #expect(try extremes() == (1, 9, 20))
        index.remove(2)
        #expect(try extremes() == (1, 5, 11))
        index.remove(0)
        #expect(try extremes() == (5, 5, 10))
        index.remove(1)
        #expect(try extremes() == (5, 5, 5), "the other 5 is still there")
        index._checkInvariants()
    }

    /// A user's reduction is kept in its own column, per category and for all: through 3,000 random inserts, moves and
    /// removals every node's values stay a recomputation's, and every cluster's tally, filtered or not, is its
    /// members'.
    ///
    /// A copy taken halfway keeps its own values through the edits after it.
    @Test(arguments: [DataShape.uniform, .clustered])
    func aUserReductionFollowsEveryEdit(shape: DataShape) throws {
        struct Tagged: ModelPoint {
            var coordinate: Coordinate
            var category: Int?
            var tag: Int
        }
        let categories = ["a", "b", "c"]
        let schema = try AggregateSchema(categories: categories, reductions: [Reduction("tally", Tally.self)])
        var rng = SplitMix64(seed: 331)
        var index = ClusterIndex<Int>(schema: schema)
        var points: [Int: Tagged] = [:]
        func values(_ point: Tagged) -> ElementValues {
            ElementValues(
                category: point.category.map { categories[$0] }, reductions: [Tally(count: 1, tags: point.tag)])
        }
        let world = Viewport(rect: .world, size: testScreen)
        var snapshot: (index: ClusterIndex<Int>, clusters: [Cluster<Int>], aggregates: ClusterAggregateTable?)?
        for step in 0..<3_000 {
            if step == 1_500 {
                let answer = index.clustering().clustersWithAggregates(in: world)
                snapshot = (index, answer.clusters, answer.aggregates)
            }
            switch Int.random(in: 0..<6, using: &rng) {
            case 0, 1, 2:
                // One in four without a category.
                let category = Int.random(in: 0...categories.count, using: &rng)
                let point = Tagged(
                    coordinate: shape.coordinate(using: &rng), category: category < categories.count ? category : nil,
                    tag: Int.random(in: 1...1_000, using: &rng))
                // A present key moves and takes new values.
                let key = Int.random(in: 0..<1_000, using: &rng)
                try index.insert(key, at: point.coordinate, values: values(point))
                points[key] = point
            case 3:
                index.moveRandomElement(of: &points, within: shape, using: &rng)
            default:
                index.removeRandomElement(of: &points, using: &rng)
            }
            index.tree._checkInvariants()
            guard step % 500 == 499 else { continue }
            for selected: Set<Int>? in [nil, [0, 2]] {
                var options = ClusterOptions<Int>()
                options.categories = selected.map { Set($0.map { categories[$0] }) }
                let clustering = try Clustering(index, options: options)
                let clusters = clustering.clusters(in: Viewport(rect: .world, size: testScreen))
                let answers = try #require(try clustering.aggregates(of: clusters))
                for (cluster, answer) in zip(clusters, answers) {
                    let members = try clustering.members(of: cluster).compactMap { points[$0] }
                    let counted = members.filter { member in
                        selected.map { member.category.map($0.contains) ?? false } ?? true
                    }
                    let tally = try #require(answer[reduction: "tally"] as? Tally)
                    #expect(
                        tally == Tally(count: counted.count, tags: counted.reduce(0) { $0 + $1.tag }),
                        "step \(step), \(cluster.id)")
                }
            }
        }
        #expect(points.count > 100)
        let (copy, clusters, aggregates) = try #require(snapshot)
        copy.tree._checkInvariants()
        let now = copy.clustering().clustersWithAggregates(in: world)
        #expect(now.clusters == clusters && now.aggregates == aggregates)
    }

    @Test func severalClustersCombinedAddUpToTheirMembersTogether() throws {
        var rng = SplitMix64(seed: 23)
        var points: [Int: Point] = [:]
        for key in 0..<3_000 { points[key] = Self.randomPoint(.clustered, using: &rng) }
        let index = try Self.bulkIndex(points)
        let viewport = Viewport(center: .checked(20, 0), zoom: 2, size: testScreen)
        let clusters = index.clustering().clusters(in: viewport)
        let aggregates = try #require(try index.clustering().aggregates(of: clusters))
        // Neighbours in threes, as an overlap pass merges them; then all of them as one.
        for start in stride(from: 0, to: clusters.count - 2, by: 3) {
            let parts = Array(start..<(start + 3))
            let combined = try #require(ClusterAggregates.combined(parts.map { aggregates[$0] }))
            let members = try parts.flatMap { try index.clustering().members(of: clusters[$0]) }.compactMap {
                points[$0]
            }
            #expect(combined.weight == members.map(\.weight).reduce(0, +))
            #expect(combined.categoryCounts.reduce(0, +) == members.filter { $0.category != nil }.count)
            let values = members.compactMap(\.value)
            #expect(combined.number("value_sum") == (values.isEmpty ? nil : values.reduce(0, +)))
            #expect(combined.number("value_min") == values.min())
            #expect(combined.number("value_max") == values.max())
            #expect(combined[reduction: "flags"] as? Flags == Flags(bits: members.reduce(0) { $0 | $1.flags }))
        }
        let all = try #require(ClusterAggregates.combined(aggregates))
        #expect(all.weight == points.values.map(\.weight).reduce(0, +))
        #expect(ClusterAggregates.combined([ClusterAggregates]()) == nil)
    }

    @Test func anIndexWithoutASchemaHasNoAggregates() throws {
        let index = ClusterIndex([(1, Coordinate.checked(0, 0)), (2, .checked(0, 0.001))])
        let clusters = index.clustering().clusters(in: Viewport(rect: .world, size: testScreen))
        #expect(try index.clustering().aggregates(of: clusters) == nil)
        let together = index.clustering().clustersWithAggregates(in: Viewport(rect: .world, size: testScreen))
        #expect(together.clusters == clusters && together.aggregates == nil)
        #expect(index.schema == nil)
    }

    /// ``Clustering/clustersWithAggregates(in:)`` answers as ``Clustering/clusters(in:)`` and then
    /// ``Clustering/aggregates(of:)`` do, whatever the options make of the clusters: a predicate's opted-out elements
    /// and clusterable members, too few members to cluster, custom positions, category filters, bounding boxes.
    @Test(arguments: [DataShape.uniform, .clustered, .oneLocation])
    func oneCallAnswersAsClustersAndThenTheirAggregates(shape: DataShape) throws {
        var rng = SplitMix64(seed: 303)
        let points = Dictionary(uniqueKeysWithValues: (0..<2_000).map { ($0, Self.randomPoint(shape, using: &rng)) })
        let index = try Self.bulkIndex(points)
        var variants: [ClusterOptions<Int>] = []
        for variant in 0..<5 {
            var options = ClusterOptions<Int>()
            switch variant {
            case 0: options.shouldCluster = { $0 % 3 != 0 }
            case 1: options.minCountForClustering = 4
            case 2: options.position = .custom { $0.coordinate }
            case 3: options.categories = ["EU", "AS", "AN"]
            default: options.position = .weightedCenterOfMass
            }
            variants.append(options)
        }
        for options in variants {
            let clustering = try Clustering(index, options: options)
            for zoom in stride(from: 0.0, through: 16, by: 2) {
                let center = shape.coordinate(using: &rng)
                let viewport = Viewport(center: center, zoom: zoom, size: testScreen)
                let clusters = clustering.clusters(in: viewport)
                let together = clustering.clustersWithAggregates(in: viewport)
                #expect(together.clusters == clusters, "zoom \(zoom)")
                #expect(together.aggregates == (try clustering.aggregates(of: clusters)), "zoom \(zoom)")
                let box = viewport.rect
                let boxed = clustering.clustersWithAggregates(in: box, zoom: zoom)
                #expect(boxed.clusters == clustering.clusters(in: box, zoom: zoom))
                #expect(boxed.aggregates == (try clustering.aggregates(of: boxed.clusters)))
            }
        }
    }

    /// A single element's aggregates in the one call are read where the query found its entry, not by a walk: after
    /// edits that split, shift and empty leaves, every single of close views answers its own values, as
    /// ``Clustering/aggregates(of:)`` (a walk) does.
    @Test(arguments: [DataShape.uniform, .clustered])
    func singlesInOneCallAnswerTheirOwnValuesAfterEdits(shape: DataShape) throws {
        var rng = SplitMix64(seed: 311)
        var points = Dictionary(uniqueKeysWithValues: (0..<3_000).map { ($0, Self.randomPoint(shape, using: &rng)) })
        var index = try Self.bulkIndex(points)
        for key in 3_000..<4_500 {
            let point = Self.randomPoint(shape, using: &rng)
            try index.insert(key, at: point.coordinate, values: point.values)
            points[key] = point
        }
        for key in stride(from: 0, to: 3_000, by: 3) {
            let removed = index.remove(key)
            #expect(removed)
            points[key] = nil
        }
        for key in stride(from: 1, to: 3_000, by: 7) where points[key] != nil {
            let coordinate = shape.coordinate(using: &rng)
            let moved = index.move(key, to: coordinate)
            #expect(moved)
            points[key]?.coordinate = coordinate
        }
        let keys = points.keys.sorted()
        var singles = 0
        try Self.withEachFilter(index) { clustering, selected in
            for _ in 0..<40 {
                let zoom = Double(Int.random(in: 10...16, using: &rng))
                // Centered on an element, so that no view is empty.
                let center = try #require(points[keys[Int.random(in: 0..<keys.count, using: &rng)]]).coordinate
                let viewport = Viewport(center: center, zoom: zoom, size: testScreen)
                let together = clustering.clustersWithAggregates(in: viewport)
                let aggregates = try #require(together.aggregates)
                #expect(aggregates == (try clustering.aggregates(of: together.clusters)), "zoom \(zoom)")
                for (cluster, answer) in zip(together.clusters, aggregates) {
                    guard case .element(let key) = cluster.id, let point = points[key] else { continue }
                    singles += 1
                    Self.expect(cluster, answer, hasAggregatesOf: [point], selected: selected)
                }
            }
        }
        #expect(singles >= 50, "close views of single elements: \(singles)")
    }

    /// Calls `body` with a clustering of `index`, unfiltered and then showing two categories, and the positions of the
    /// categories shown (`nil` for all).
    static func withEachFilter(
        _ index: ClusterIndex<Int>, _ body: (Clustering<Int>, Set<Int>?) throws -> Void
    ) throws {
        try withEachFilter { options, selected in try body(try Clustering(index, options: options), selected) }
    }

    /// Calls `body` with options unfiltered and then showing two categories, and the positions of the categories shown
    /// (`nil` for all).
    static func withEachFilter(_ body: (ClusterOptions<Int>, Set<Int>?) throws -> Void) throws {
        for categories: Set<String>? in [nil, ["EU", "AS"]] {
            var options = ClusterOptions<Int>()
            options.categories = categories
            try body(options, categories.map { names in Set(names.compactMap { Self.categories.firstIndex(of: $0) }) })
        }
    }

    /// Leaves whose entries each lie in a cell of their own, all in view: the fold adds each leaf up as its longest run
    /// (one entry) and the others, and every single still answers its own values.
    @Test func singlesOfLeavesInViewAnswerTheirOwnValues() throws {
        var rng = SplitMix64(seed: 313)
        // 9 × 9 points 0.0016° apart, about 75 pixels at zoom 16: wider apart than a cell.
        var points: [Int: Point] = [:]
        for row in 0..<9 {
            for column in 0..<9 {
                var point = Self.randomPoint(.uniform, using: &rng)
                point.coordinate = .checked(10 + Double(row) * 0.0016, 10 + Double(column) * 0.0016)
                points[row * 9 + column] = point
            }
        }
        let index = try Self.bulkIndex(points)
        let clustering = Clustering(index)
        let together = clustering.clustersWithAggregates(
            in: Viewport(center: .checked(10.0064, 10.0064), zoom: 16, size: testScreen))
        let aggregates = try #require(together.aggregates)
        #expect(together.clusters.count == points.count && together.clusters.allSatisfy(\.id.isElement))
        #expect(aggregates == (try clustering.aggregates(of: together.clusters)))
        for (cluster, answer) in zip(together.clusters, aggregates) {
            guard case .element(let key) = cluster.id else { continue }
            Self.expect(cluster, answer, hasAggregatesOf: [try #require(points[key])], selected: nil)
        }
    }

    /// Element clusters that an earlier version of the index made, asked of a later one: each answers the values the
    /// later index holds for it, wherever its entry now lies (moved, or among new entries of its key, or beside an
    /// entry of its key that the filter hides), and nothing once it is removed.
    @Test func elementClustersAskedOfALaterIndexAnswerWhatItHolds() throws {
        var rng = SplitMix64(seed: 331)
        // One or two elements on each location: under a filter, one of two often shows alone, its key shared.
        var points: [Int: Point] = [:]
        var locations: [[Int]] = []
        for _ in 0..<2_000 {
            let coordinate = DataShape.clustered.coordinate(using: &rng)
            locations.append([])
            for _ in 0..<Int.random(in: 1...2, using: &rng) {
                var point = Self.randomPoint(.clustered, using: &rng)
                point.coordinate = coordinate
                locations[locations.count - 1].append(points.count)
                points[points.count] = point
            }
        }
        let earlierPoints = points
        let earlier = try Self.bulkIndex(points)
        var index = earlier
        // By location: all removed, the first moved, a new element added, or all kept.
        for (number, keys) in locations.enumerated() {
            switch number % 4 {
            case 0:
                for key in keys {
                    let removed = index.remove(key)
                    #expect(removed)
                    points[key] = nil
                }
            case 1:
                let coordinate = DataShape.clustered.coordinate(using: &rng)
                let moved = index.move(keys[0], to: coordinate)
                #expect(moved)
                points[keys[0]]?.coordinate = coordinate
            case 2:
                var point = Self.randomPoint(.clustered, using: &rng)
                point.coordinate = try #require(points[keys[0]]).coordinate
                try index.insert(10_000 + number, at: point.coordinate, values: point.values)
                points[10_000 + number] = point
            default:
                break
            }
        }
        let keys = earlierPoints.keys.sorted()
        // The elements that shared their location, and so their key, in the earlier index.
        let sharing = Set(locations.filter { $0.count > 1 }.joined())
        index._checkInvariants()
        var answered = (removed: 0, moved: 0, kept: 0, sharingTheirKey: 0)
        try Self.withEachFilter { options, selected in
            let before = try Clustering(earlier, options: options)
            let after = try Clustering(index, options: options)
            for _ in 0..<60 {
                let center = try #require(earlierPoints[keys[Int.random(in: 0..<keys.count, using: &rng)]]).coordinate
                let singles = before.clusters(in: Viewport(center: center, zoom: 16, size: testScreen))
                    .filter(\.id.isElement)
                let answers = try #require(try after.aggregates(of: singles))
                #expect(answers.count == singles.count)
                for (cluster, answer) in zip(singles, answers) {
                    guard case .element(let key) = cluster.id else { continue }
                    let now = points[key]
                    Self.expect(cluster, answer, hasAggregatesOf: now.map { [$0] } ?? [], selected: selected)
                    #expect(answer.memberCount == (now == nil ? 0 : 1), "\(cluster.id)")
                    if now == nil {
                        answered.removed += 1
                    } else if now?.coordinate != earlierPoints[key]?.coordinate {
                        answered.moved += 1
                    } else {
                        answered.kept += 1
                    }
                    if sharing.contains(key) { answered.sharingTheirKey += 1 }
                }
            }
        }
        #expect(
            answered.removed >= 20 && answered.moved >= 20 && answered.kept >= 20 && answered.sharingTheirKey >= 20,
            "\(answered)")
    }

    /// Without a user's reduction, the one call plans its answer from the drafts (coarse cells' rows, the singles where
    /// the fold found them, one walk for the rest): it answers as ``Clustering/aggregates(of:)``, which plans from the
    /// clusters and finds each single by its key, at every zoom, filtered or not, after edits; and as the members add up.
    @Test(.tier(.million)) func oneCallWithoutUserReductionsAnswersAsTheClustersDo() throws {
        var rng = SplitMix64(seed: 317)
        var points = Dictionary(
            uniqueKeysWithValues: (0..<70_000).map { ($0, Self.randomPoint(.clustered, using: &rng)) })
        var index = try Self.bulkIndex(points, numericOnly: true)
        for key in 0..<1_000 {
            let removed = index.remove(key * 7)
            #expect(removed)
            points[key * 7] = nil
            let point = Self.randomPoint(.clustered, using: &rng)
            try index.insert(
                100_000 + key, at: point.coordinate,
                values: ElementValues(
                    weight: point.weight, category: point.category.map { Self.categories[$0] },
                    reductions: Array(point.values.reductions.prefix(4))))
            points[100_000 + key] = point
        }
        #expect(index.tree.coarseCells != nil, "world maps read the coarse cells")
        let keys = points.keys.sorted()
        var singles = 0
        try Self.withEachFilter(index) { clustering, selected in
            for zoom in stride(from: 0.0, through: 16, by: 1) {
                let center = try #require(points[keys[Int.random(in: 0..<keys.count, using: &rng)]]).coordinate
                let viewport = Viewport(center: center, zoom: zoom, size: testScreen)
                let together = clustering.clustersWithAggregates(in: viewport)
                #expect(together.clusters == clustering.clusters(in: viewport), "zoom \(zoom)")
                let aggregates = try #require(together.aggregates)
                #expect(aggregates == (try clustering.aggregates(of: together.clusters)), "zoom \(zoom)")
                for (cluster, answer) in zip(together.clusters, aggregates).prefix(40) {
                    let members = try clustering.members(of: cluster).compactMap { points[$0] }
                    if cluster.id.isElement { singles += 1 }
                    let weight = members.reduce(0) { $0 + $1.weight }
                    #expect(abs(answer.weight - weight) <= 1e-9 * max(1, weight), "\(cluster.id) weight")
                    var counts = [Int](repeating: 0, count: Self.categories.count)
                    for member in members {
                        if let category = member.category, selected?.contains(category) ?? true {
                            counts[category] += 1
                        }
                    }
                    #expect(Array(answer.categoryCounts) == counts, "\(cluster.id) category counts")
                    let values = members.compactMap(\.value)
                    #expect(answer.number("value_sum") == (values.isEmpty ? nil : values.reduce(0, +)))
                }
            }
        }
        #expect(singles >= 50, "close views of single elements: \(singles)")
    }

    @Test func plainInsertsOfNewElementsGetTheDefaultValues() throws {
        var index = ClusterIndex<Int>(schema: Self.schema)
        index.insert(1, at: .checked(10, 10))
        index.insert(contentsOf: [(2, .checked(10.001, 10)), (3, .checked(10, 10.001))])
        let cluster = try #require(
            index.clustering().clusters(in: Viewport(center: .checked(10, 10), zoom: 3, size: testScreen)).first)
        #expect(cluster.count == 3)
        let aggregates = try index.clustering().aggregates(of: cluster)
        #expect(aggregates?.weight == 3, "weight 1 each")
        #expect(aggregates.map { Array($0.categoryCounts) } == [0, 0, 0, 0, 0, 0, 0], "no category")
        #expect(aggregates?.number("value_sum") == nil, "no value")
        #expect((aggregates?[reduction: "flags"] as? Flags) == Flags.identity)
    }

    @Test func refusedValuesThrowAndChangeNothing() throws {
        var index = ClusterIndex<Int>(schema: Self.schema)
        try index.insert(1, at: .checked(1, 1), values: ElementValues(weight: 2, category: "EU"))
        let before = index.clustering().clusters(in: Viewport(rect: .world, size: testScreen))
        #expect(throws: AggregateError.invalidWeight(-1)) {
            try index.insert(2, at: .checked(2, 2), values: ElementValues(weight: -1))
        }
        #expect(throws: AggregateError.self) {
            try index.insert(2, at: .checked(2, 2), values: ElementValues(weight: .nan))
        }
        #expect(throws: AggregateError.unknownCategory("XX", known: Self.categories)) {
            try index.insert(1, at: .checked(2, 2), values: ElementValues(category: "XX"))
        }
        #expect(throws: AggregateError.wrongReductionValue(reduction: "value_sum", expected: "Sum")) {
            try index.insert(2, at: .checked(2, 2), values: ElementValues(reductions: [Maximum(3)]))
        }
        #expect(throws: AggregateError.invalidValue(reduction: "value_min", .infinity)) {
            try index.insert(2, at: .checked(2, 2), values: ElementValues(reductions: [Sum(1), Minimum(.infinity)]))
        }
        // Each numeric type's number is read for the check, a NaN too (which a row would take for no value).
        let nan = try #require(
            throws: AggregateError.self,
            performing: { try index.insert(2, at: .checked(2, 2), values: ElementValues(reductions: [Sum(.nan)])) })
        guard case .invalidValue("value_sum", let number) = nan else { throw nan }
        #expect(number.isNaN)
        #expect(throws: AggregateError.invalidValue(reduction: "value_max", -.infinity)) {
            try index.insert(
                2, at: .checked(2, 2), values: ElementValues(reductions: [Sum(1), Minimum(1), Maximum(-.infinity)]))
        }
        #expect(throws: AggregateError.invalidValue(reduction: "value_mean", .infinity)) {
            try index.insert(
                2, at: .checked(2, 2),
                values: ElementValues(reductions: [Sum(nil), Minimum(nil), Maximum(nil), Mean(.infinity)]))
        }
        #expect(throws: AggregateError.element(position: 1, .invalidValue(reduction: "value_mean", -.infinity))) {
            try ClusterIndex(
                [(1, Coordinate.checked(0, 0)), (2, .checked(1, 1))],
                values: ElementValueColumns(reductions: [
                    .numbers([1, 2]), .numbers([1, 2]), .numbers([1, 2]),
                    .values([Mean(1), Mean(-.infinity)]),
                ]),
                schema: Self.schema)
        }
        #expect(throws: AggregateError.self) {
            try ClusterIndex(
                [(1, Coordinate.checked(0, 0)), (2, .checked(1, 1))],
                values: ElementValueColumns(reductions: [.numbers([1, .nan])]), schema: Self.schema)
        }
        #expect(index.count == 1)
        #expect(index.clustering().clusters(in: Viewport(rect: .world, size: testScreen)) == before)
        #expect(throws: AggregateError.noSchema) {
            var plain = ClusterIndex<Int>()
            try plain.insert(1, at: .checked(0, 0), values: ElementValues())
        }
        #expect(throws: AggregateError.element(position: 1, .invalidWeight(-2))) {
            try ClusterIndex(
                [(1, Coordinate.checked(0, 0)), (2, .checked(1, 1))], values: ElementValueColumns(weights: [1, -2]),
                schema: Self.schema)
        }
    }

    @Test func moreThanSixtyFourCategoriesIsAnErrorThatNamesTheLimit() {
        let names = (0..<65).map { "c\($0)" }
        #expect(throws: AggregateError.tooManyCategories(count: 65)) { try AggregateSchema(categories: names) }
        #expect(AggregateError.tooManyCategories(count: 65).description.contains("at most 64"))
        #expect(throws: Never.self) { try AggregateSchema(categories: Array(names.prefix(64))) }
    }

    @Test func negativeZeroIsReadAsZero() throws {
        var index = ClusterIndex<Int>(schema: Self.schema)
        try index.insert(
            1, at: .checked(5, 5), values: ElementValues(reductions: [Sum(-0.0), Minimum(-0.0), Maximum(-0.0)]))
        try index.insert(
            2, at: .checked(5, 5.001), values: ElementValues(reductions: [Sum(0), Minimum(0), Maximum(0)]))
        for cluster in index.clustering().clusters(in: Viewport(center: .checked(5, 5), zoom: 1, size: testScreen)) {
            let aggregates = try index.clustering().aggregates(of: cluster)
            let minimum = try #require((aggregates?[reduction: "value_min"] as? Minimum)?.value)
            #expect(minimum == 0 && minimum.sign == .plus)
            let sum = try #require(aggregates?.number("value_sum"))
            #expect(sum.sign == .plus)
        }
    }

    @Test func weightZeroPlacesAtTheCenterOfMassAndWeightsMoveTheWeightedCenter() throws {
        var index = ClusterIndex<Int>(schema: Self.schema)
        try index.insert(1, at: .checked(0, 0), values: ElementValues(weight: 0))
        try index.insert(2, at: .checked(0, 1), values: ElementValues(weight: 0))
        var options = ClusterOptions<Int>()
        options.position = .weightedCenterOfMass
        let viewport = Viewport(center: .checked(0, 0.5), zoom: 1, size: testScreen)
        var cluster = try #require(index.clustering(options).clusters(in: viewport).first)
        #expect(try index.clustering(options).aggregates(of: cluster)?.weight == 0)
        #expect(try index.clustering(options).aggregates(of: cluster)?.weightedCenter == nil)
        #expect(cluster.coordinate == .checked(0, 0.5), "weight 0 in all: the center of mass")
        try index.insert(2, at: .checked(0, 1), values: ElementValues(weight: 3))
        cluster = try #require(index.clustering(options).clusters(in: viewport).first)
        #expect(cluster.coordinate.longitude == 1, "all the weight on one member")
        #expect(
            index.clustering().clusters(in: viewport).first?.coordinate == .checked(0, 0.5),
            "the default ignores weights")
    }

    @Test func filtersThatSelectNothingOrAnEmptyCategoryGiveNoClusters() throws {
        var rng = SplitMix64(seed: 5)
        let points = Dictionary(uniqueKeysWithValues: (0..<500).map { ($0, Self.randomPoint(.uniform, using: &rng)) })
        let index = try Self.bulkIndex(points)
        var options = ClusterOptions<Int>()
        for filter in [Set<String>(), ["AN"], ["nowhere"]] {
            options.categories = filter
            #expect(
                index.clustering(options).clusters(in: Viewport(rect: .world, size: testScreen)).isEmpty, "\(filter)")
        }
        let world = index.clustering().clusters(in: Viewport(rect: .world, size: testScreen))
        let aggregates = try index.clustering().aggregates(of: world) ?? []
        #expect(aggregates.count == world.count && aggregates.allSatisfy { $0.count(ofCategory: "AN") == 0 })
    }

    @Test func filteredClustersHaveIdsOfTheirOwnAndAnswerForTheirMembers() throws {
        var rng = SplitMix64(seed: 9)
        let points = Dictionary(
            uniqueKeysWithValues: (0..<4_000).map { ($0, Self.randomPoint(.clustered, using: &rng)) })
        let index = try Self.bulkIndex(points)
        var options = ClusterOptions<Int>()
        options.categories = ["EU", "AS"]
        let viewport = Viewport(center: .checked(48.8, 2.3), zoom: 4, size: testScreen)
        let filtered = index.clustering(options).clusters(in: viewport)
        let unfiltered = Set(index.clustering().clusters(in: viewport).map(\.id))
        let selected: Set<Int> = [1, 2]
        for cluster in filtered where cluster.isCluster {
            #expect(!unfiltered.contains(cluster.id), "\(cluster.id)")
            let text = ClusterIDText.text(of: cluster.id)
            #expect(text.hasPrefix("f6-"), "\(text)")
            #expect(ClusterIDText(text)?.parts == [cluster.id], "the text reads back")
            // Asked with the default options, the id's own filter answers.
            let found = index.clustering().cluster(id: cluster.id)
            #expect(found?.count == cluster.count, "\(cluster.id)")
            #expect(
                try found.flatMap { try index.clustering().aggregates(of: $0) }
                    == index.clustering(options).aggregates(of: cluster),
                "asked with the default options, the id's own filter answers")
            let children = try index.clustering().children(of: cluster)
            #expect(children.reduce(0) { $0 + $1.count } == cluster.count, "children add up")
            let members = try index.clustering().membersWithCoordinates(of: cluster)
            #expect(members.allSatisfy { points[$0.element]?.category.map(selected.contains) == true })
            let bounds = try index.clustering().bounds(of: cluster)
            #expect(members.allSatisfy { bounds.insetBy(dx: -1, dy: -1).contains($0.coordinate.mapPoint) })
        }
    }
}

/// An element of a brute-force model that random edits move.
protocol ModelPoint {
    var coordinate: Coordinate { get set }
}

extension ClusterIndex where Element == Int {
    /// Removes a random element of `points` from the index and from `points`.
    mutating func removeRandomElement(of points: inout [Int: some ModelPoint], using rng: inout SplitMix64) {
        guard let victim = points.keys.randomElement(using: &rng) else { return }
        let removed = remove(victim)
        #expect(removed)
        points[victim] = nil
    }

    /// Moves a random element of `points` to a random place of `shape`, in the index and in `points`; it keeps its
    /// values.
    mutating func moveRandomElement(
        of points: inout [Int: some ModelPoint], within shape: DataShape, using rng: inout SplitMix64
    ) {
        guard let mover = points.keys.randomElement(using: &rng) else { return }
        let coordinate = shape.coordinate(using: &rng)
        let moved = move(mover, to: coordinate)
        #expect(moved)
        points[mover]?.coordinate = coordinate
    }
}
