import Foundation
import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster

/// Random sequences of batches, moves, removes and queries, checked after every step against a brute-force model.
///
/// A failing sequence is shrunk (steps dropped, batches halved) before it is reported, with its seed; replay it alone
/// with `MAPCLUSTER_PROPERTY_SEED=<seed> swift test --filter IndexPropertyTests`. `MAPCLUSTER_PROPERTY_RUNS` sets how
/// many seeds a run tries (default 60).
struct IndexPropertyTests {
    /// One step of a sequence.
    enum Step: CustomStringConvertible, Sendable {
        case insert([(id: Int, coordinate: Coordinate)])
        case move([(id: Int, coordinate: Coordinate)])
        case remove([Int])
        case query(Viewport)
        case snapshot

        var description: String {
            func list(_ items: [(id: Int, coordinate: Coordinate)]) -> String {
                items.map { "\($0.id)@(\($0.coordinate.latitude), \($0.coordinate.longitude))" }.joined(separator: " ")
            }
            return switch self {
            case .insert(let items): "insert \(list(items))"
            case .move(let items): "move \(list(items))"
            case .remove(let ids): "remove \(ids)"
            case .query(let viewport): "query zoom \(viewport.zoom) at \(viewport.rect.center.coordinate)"
            case .snapshot: "snapshot"
            }
        }
    }

    /// How many clusters' hierarchy and steadiness the properties checked: a run that checked none proves nothing.
    final class Coverage {
        var hierarchy = 0
        var steadiness = 0
        var aggregates = 0
        /// Filtered clusters of several members on one coordinate whose place was checked.
        var places = 0
    }

    /// A broken property: which, and at which step.
    struct Failure: Error, CustomStringConvertible {
        var step: Int
        var property: String

        var description: String { "step \(step): \(property)" }
    }

    // MARK: - Generating

    /// Places that make clusters: a few blobs, one shared coordinate, the antimeridian and the poles' edges.
    static func coordinate(using rng: inout SplitMix64) -> Coordinate {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return .checked(12.5, -45.25)
        case 1: return DataShape.antimeridian.coordinate(using: &rng)
        case 2: return .checked(Double.random(in: 84...85.05, using: &rng), Double.random(in: -180...180, using: &rng))
        case 3...5: return DataShape.uniform.coordinate(using: &rng)
        default: return DataShape.clustered.coordinate(using: &rng)
        }
    }

    static func steps(seed: UInt64, count: Int = 30) -> [Step] {
        var rng = SplitMix64(seed: seed)
        let pool = 0..<Int.random(in: 20...400, using: &rng)
        return (0..<count).map { _ in
            let size = Int.random(in: 1...60, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...3:
                return .insert((0..<size).map { _ in (Int.random(in: pool, using: &rng), coordinate(using: &rng)) })
            case 4, 5:
                return .move((0..<size).map { _ in (Int.random(in: pool, using: &rng), coordinate(using: &rng)) })
            case 6: return .remove((0..<size).map { _ in Int.random(in: pool, using: &rng) })
            case 7: return .snapshot
            default:
                let center = coordinate(using: &rng)
                let zoom = Double.random(in: 0...18, using: &rng)
                return .query(Viewport(center: center, zoom: zoom, size: ViewSize(width: 800, height: 600)))
            }
        }
    }

    // MARK: - Checking

    /// A property of an index and its model after a step: what is broken, or `nil`.
    typealias Property = (ClusterIndex<Int>, [Int: Coordinate]) -> String?

    /// Runs the steps on an index and a model, checking every property (and `extra`) after each; the first broken one.
    static func check(_ steps: [Step], extra: Property? = nil, coverage: Coverage? = nil) throws -> Failure? {
        var index = ClusterIndex<Int>(schema: schema)
        var model: [Int: Coordinate] = [:]
        var values: [Int: Values] = [:]
        var snapshots: [(index: ClusterIndex<Int>, model: [Int: Coordinate])] = []
        for (number, step) in steps.enumerated() {
            switch step {
            case .insert(let items):
                // Each insert gives its elements values of their own, so that a re-insert changes them.
                let batch = items.map { ($0.id, $0.coordinate, Values(id: $0.id, step: number)) }
                do {
                    try index.insert(contentsOf: batch.map { ($0.0, $0.1, $0.2.elementValues) })
                } catch {
                    return Failure(step: number, property: "valid values were refused: \(error)")
                }
                for (id, coordinate, value) in batch {
                    model[id] = coordinate
                    values[id] = value
                }
            case .move(let items):
                // Only managed elements move; the others are left out, as a manager's move refuses them.
                let known = items.filter { model[$0.id] != nil }
                for item in known {
                    _ = index.move(item.id, to: item.coordinate)
                    model[item.id] = item.coordinate
                }
            case .remove(let ids):
                let removed = index.remove(contentsOf: ids)
                let expected = Set(ids).filter { model[$0] != nil }.count
                for id in ids {
                    model[id] = nil
                    values[id] = nil
                }
                if removed != expected { return Failure(step: number, property: "removed \(removed), not \(expected)") }
            case .snapshot:
                snapshots.append((index, model))
            case .query(let viewport):
                if let broken = try properties(
                    of: index, model: model, values: values, in: viewport, coverage: coverage)
                {
                    return Failure(step: number, property: broken)
                }
            }
            index._checkInvariants()
            if let broken = extra?(index, model) { return Failure(step: number, property: broken) }
            if index.count != model.count {
                return Failure(step: number, property: "count \(index.count), model \(model.count)")
            }
            // Value semantics: a snapshot still answers as it did when taken.
            for (taken, (copy, copyModel)) in snapshots.enumerated() {
                let world = Viewport(rect: .world, size: ViewSize(showing: .world, atZoom: 2))
                if copy.count != copyModel.count
                    || copy.clustering().clusters(in: world).reduce(0, { $0 + $1.count }) != copy.count
                {
                    return Failure(step: number, property: "snapshot \(taken) changed")
                }
                for (id, coordinate) in copyModel.prefix(5) where copy.coordinate(of: id) != coordinate {
                    return Failure(step: number, property: "snapshot \(taken) lost \(id)'s coordinate")
                }
            }
        }
        return nil
    }

    /// Conservation, hierarchy and steadiness in one viewport; what is broken, or `nil`.
    static func properties(
        of index: ClusterIndex<Int>, model: [Int: Coordinate], values: [Int: Values], in viewport: Viewport,
        coverage: Coverage? = nil
    ) throws -> String? {
        var options = ClusterOptions<Int>()
        options.marginFactor = 0
        // Every other viewport (as its position falls) with near-equal locations as one: a tolerance two levels below
        // the grid's, or a deep one.
        if Int(viewport.rect.origin.x.magnitude) % 2 == 1 {
            let level = options.gridLevel(forZoom: viewport.zoom)
            options.locationTolerance =
                Int(viewport.rect.origin.y.magnitude) % 2 == 1 ? .gridLevel(min(level + 2, 32)) : .geohash9
        }
        let clusters = index.clustering(options).clusters(in: viewport)
        let region = CellRegion(viewport, options: options)
        // Conservation: the clusters hold exactly the model's points in the region's cells.
        let inCells = model.values.filter { region.contains(GridCell(containing: $0.mapPoint, level: region.level)) }
        let held = clusters.reduce(0) { $0 + $1.count }
        if held != inCells.count { return "the clusters hold \(held) points, the region's cells \(inCells.count)" }
        if Set(clusters.map(\.id)).count != clusters.count { return "a cluster id came twice" }
        // Aggregates: every cluster's, unfiltered and filtered by two categories, is what its members add up to.
        if let broken = try aggregatesMatch(index, clusters, options: options, values: values, coverage: coverage) {
            return broken
        }
        var filtered = options
        filtered.categories = ["a", "c"]
        let filteredClusters = index.clustering(filtered).clusters(in: viewport)
        if let broken = try aggregatesMatch(
            index, filteredClusters, options: filtered, values: values, coverage: coverage)
        {
            return "filtered by a and c: \(broken)"
        }
        if let broken = try placesMatch(index, filteredClusters, options: filtered, model: model, coverage: coverage) {
            return "filtered by a and c: \(broken)"
        }
        // Hierarchy: children add up to their parent, and a child's parent holds it.
        for cluster in clusters.prefix(6) where cluster.isCluster {
            let children = try index.clustering(options).children(of: cluster)
            guard !children.isEmpty else { continue }
            let sum = children.reduce(0) { $0 + $1.count }
            if sum != cluster.count { return "\(cluster.id)'s children hold \(sum), it \(cluster.count)" }
            coverage?.hierarchy += 1
            if let child = children.first, let parent = try index.clustering(options).parent(of: child),
                parent.count < child.count
            {
                return "\(child.id)'s parent \(parent.id) holds fewer points than it"
            }
        }
        // Steadiness: a pan of a third of a cell changes no cluster of a cell that stays in view.
        let cellSide = MapSize.worldWidth / Double(1 << region.level)
        var panned = viewport
        panned.rect.origin.x += cellSide / 3
        let after = index.clustering(options).clusters(in: panned)
        let before = Dictionary(clusters.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for cluster in after {
            guard let old = before[cluster.id] else { continue }
            if old.count != cluster.count || old.coordinate != cluster.coordinate {
                return "\(cluster.id) changed when the map panned within its cell"
            }
            coverage?.steadiness += 1
        }
        return nil
    }

    // MARK: - Aggregates

    /// Three categories, weights, and a sum, minimum, maximum and mean of one number.
    static let schema: AggregateSchema = {
        do {
            return try AggregateSchema(
                categories: ["a", "b", "c"], weighted: true,
                reductions: [.sum("v"), .min("v"), .max("v"), .mean("v")])
        } catch {
            preconditionFailure("the suite's schema is valid: \(error)")
        }
    }()

    /// What one element brings to its clusters, made from its id and the step that inserted it: whole numbers (whose
    /// sums are exact), some elements without a category or a value.
    struct Values: Equatable {
        var category: String?
        var value: Double?
        var weight: Double

        init(id: Int, step: Int) {
            let mix = id &* 31 &+ step &* 17
            category = [nil, "a", "b", "c"][mix % 4]
            value = mix % 7 == 0 ? nil : Double(mix % 1_000) - 300
            weight = Double(mix % 5)
        }

        var elementValues: ElementValues {
            ElementValues(
                weight: weight, category: category,
                reductions: [Sum(value), Minimum(value), Maximum(value), Mean(value)])
        }
    }

    /// Whether each cluster's aggregates are what its members' values add up to; what differs, or `nil`.
    static func aggregatesMatch(
        _ index: ClusterIndex<Int>, _ clusters: [Cluster<Int>], options: ClusterOptions<Int>, values: [Int: Values],
        coverage: Coverage?
    ) throws -> String? {
        guard let table = try index.clustering(options).aggregates(of: clusters), table.count == clusters.count else {
            return "no table of aggregates, or one of another size"
        }
        for (cluster, aggregates) in zip(clusters, table) {
            let members = try index.clustering(options).members(of: cluster).map {
                values[$0] ?? Values(id: 0, step: 0)
            }
            let present = members.compactMap(\.value)
            let counts = ["a", "b", "c"].map { category in members.filter { $0.category == category }.count }
            let expected: [(String, Double?, Double?)] = [
                ("weight", members.reduce(0) { $0 + $1.weight }, aggregates.weight),
                ("v_sum", present.isEmpty ? nil : present.reduce(0, +), aggregates.number("v_sum")),
                ("v_min", present.min(), aggregates.number("v_min")),
                ("v_max", present.max(), aggregates.number("v_max")),
                (
                    "v_mean", present.isEmpty ? nil : present.reduce(0, +) / Double(present.count),
                    aggregates.number("v_mean")
                ),
            ]
            for (name, want, got) in expected where want != got {
                return "\(cluster.id) \(name) is \(got.map(String.init(describing:)) ?? "none"), its members' "
                    + "\(want.map(String.init(describing:)) ?? "none")"
            }
            if Array(aggregates.categoryCounts) != counts {
                return "\(cluster.id) counts \(Array(aggregates.categoryCounts)) by category, its members \(counts)"
            }
            coverage?.aggregates += 1
        }
        return nil
    }

    /// Whether each cluster's same-location flag, coordinate and bounds are its members' (`model` has their
    /// coordinates); what differs, or `nil`.
    static func placesMatch(
        _ index: ClusterIndex<Int>, _ clusters: [Cluster<Int>], options: ClusterOptions<Int>,
        model: [Int: Coordinate], coverage: Coverage?
    ) throws -> String? {
        let clustering = index.clustering(options)
        for cluster in clusters {
            let coordinates = try clustering.members(of: cluster).compactMap { model[$0] }
            guard let first = coordinates.first else { return "\(cluster.id) has no members in the model" }
            let isOneCoordinate = coordinates.allSatisfy { $0 == first }
            // A location tolerance shows near-equal coordinates as one location too.
            let isExact = if case .exact = options.locationTolerance { true } else { false }
            if isOneCoordinate != cluster.isSameLocation && (isOneCoordinate || isExact) {
                return "\(cluster.id) says isSameLocation \(cluster.isSameLocation), its members' coordinates "
                    + (isOneCoordinate ? "are one" : "differ")
            }
            if isOneCoordinate && cluster.coordinate != first {
                return "\(cluster.id) is at \(cluster.coordinate), its members at \(first)"
            }
            let bounds = try clustering.bounds(of: cluster)
            let expected = BruteForce<Int>.bounds(of: coordinates)
            if bounds != expected { return "\(cluster.id)'s bounds are \(bounds), its members' \(expected)" }
            coverage?.places += isOneCoordinate && cluster.isCluster ? 1 : 0
        }
        return nil
    }

    // MARK: - Shrinking

    /// A smaller sequence that still fails: steps dropped in halves, then quarters, down to one by one; then each
    /// batch cut to either half, down to one item.
    static func shrink(_ steps: [Step], extra: Property? = nil) throws -> (steps: [Step], failure: Failure)? {
        guard var failure = try check(steps, extra: extra) else { return nil }
        var steps = Array(steps.prefix(failure.step + 1))
        func keep(_ candidate: [Step]) throws -> Bool {
            guard let smaller = try check(candidate, extra: extra) else { return false }
            steps = Array(candidate.prefix(smaller.step + 1))
            failure = smaller
            return true
        }
        var chunk = max(1, steps.count / 2)
        while chunk >= 1 {
            var start = 0
            while start < steps.count {
                var candidate = steps
                candidate.removeSubrange(start..<min(start + chunk, steps.count))
                if try !keep(candidate) { start += chunk }
            }
            chunk /= 2
        }
        var position = 0
        while position < steps.count {
            let halves: [Step]
            switch steps[position] {
            case .insert(let items) where items.count > 1:
                halves = [
                    .insert(Array(items.prefix(items.count / 2))), .insert(Array(items.dropFirst(items.count / 2))),
                ]
            case .move(let items) where items.count > 1:
                halves = [.move(Array(items.prefix(items.count / 2))), .move(Array(items.dropFirst(items.count / 2)))]
            case .remove(let ids) where ids.count > 1:
                halves = [.remove(Array(ids.prefix(ids.count / 2))), .remove(Array(ids.dropFirst(ids.count / 2)))]
            default:
                position += 1
                continue
            }
            var shrunk = false
            for half in halves {
                var candidate = steps
                candidate[position] = half
                if try keep(candidate) {
                    shrunk = true
                    break
                }
            }
            if !shrunk { position += 1 }
        }
        return (steps, failure)
    }

    // MARK: - The suite

    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let seed = environment["MAPCLUSTER_PROPERTY_SEED"].flatMap(UInt64.init) { return [seed] }
        let runs = environment["MAPCLUSTER_PROPERTY_RUNS"].flatMap(Int.init) ?? 60
        return (0..<UInt64(runs)).map { 1_000 + $0 }
    }

    @Test func randomSequencesKeepConservationHierarchySteadinessAndValueSemantics() throws {
        let coverage = Coverage()
        for seed in Self.seeds {
            let steps = Self.steps(seed: seed)
            guard try Self.check(steps, coverage: coverage) != nil, let (shrunk, failure) = try Self.shrink(steps)
            else {
                continue
            }
            Issue.record(
                """
                seed \(seed) broke a property at \(failure); shrunk to \(shrunk.count) of \(steps.count) steps:
                \(shrunk.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n"))
                replay: MAPCLUSTER_PROPERTY_SEED=\(seed) swift test --filter IndexPropertyTests
                """)
            return
        }
        #expect(coverage.hierarchy > 0, "no cluster's children were checked")
        #expect(coverage.steadiness > 0, "no cluster was checked across a pan")
        #expect(coverage.aggregates > 0, "no cluster's aggregates were checked")
        #expect(coverage.places > 0, "no filtered cluster on one coordinate was checked")
    }

    /// The shrinker itself, on a property broken on purpose (no element 13 north of 60°): of a long sequence, it must
    /// leave the one insert of the one element that breaks it.
    @Test func theShrinkerLeavesTheOneStepThatBreaksAProperty() throws {
        let property: Property = { index, _ in
            guard let coordinate = index.coordinate(of: 13), coordinate.latitude > 60 else { return nil }
            return "13 is north of 60°"
        }
        var steps = Self.steps(seed: 3, count: 25).filter {
            // Only the planted step puts 13 anywhere.
            switch $0 {
            case .insert(let items), .move(let items): !items.contains { $0.id == 13 }
            default: true
            }
        }
        let planted = (0..<40).map { (id: 100 + $0, coordinate: Coordinate.checked(10, Double($0))) }
        steps.insert(
            .insert(planted + [(13, .checked(70, 5))] + planted.map { (id: $0.id + 40, $0.coordinate) }), at: 14)
        let (shrunk, failure) = try #require(try Self.shrink(steps, extra: property))
        #expect(failure.property == "13 is north of 60°")
        #expect(shrunk.count == 1)
        guard case .insert(let items) = try #require(shrunk.first) else {
            Issue.record("the shrunk step is \(shrunk.first.map(String.init(describing:)) ?? "none"), not an insert")
            return
        }
        #expect(items.map(\.id) == [13])
        // And the same property on the unbroken sequence holds: the check itself isn't what fails.
        #expect(
            try Self.check(
                steps.filter { if case .insert(let items) = $0 { !items.contains { $0.id == 13 } } else { true } },
                extra: property) == nil)
    }
}
