import Foundation
import MapClusterTestSupport
import Testing

@testable import MapCluster
@testable import MapClusterIO
@testable import MapClusterLive
@testable import MapClusterManager

/// Readers and writers at once, for a while: `MAPCLUSTER_LIVE_SECONDS` (5 by default; `.ci/run` runs 60 under the
/// thread sanitizer).
///
/// Each writer owns a group of points and moves the whole group, in one edit, to a place and a `round` property
/// that encode the edit's number. A reader that ever saw two places in one group, or a place and a round that
/// disagree, saw half an edit.
struct LiveConcurrencyTests {
    static let writers = 4
    static let readers = 32
    static let groupSize = 50
    static let minimumRounds = 20

    static var seconds: Double {
        ProcessInfo.processInfo.environment["MAPCLUSTER_LIVE_SECONDS"].flatMap(Double.init) ?? 5
    }

    /// Where group `group` stands after its edit number `round`: a place of its own, one step east per round.
    static func place(group: Int, round: Int) -> (latitude: Double, longitude: Double) {
        (Double(group) * 10 - 20, Double(round % 3_000) * 0.05 - 75)
    }

    @Test func readersNeverSeeHalfAnEditWhileWritersWrite() async throws {
        var start: [(id: String, latitude: Double, longitude: Double, properties: [String: PropertyValue])] = []
        for group in 0..<Self.writers {
            let place = Self.place(group: group, round: 0)
            for member in 0..<Self.groupSize {
                start.append(("g\(group)-\(member)", place.latitude, place.longitude, ["round": .number(0)]))
            }
        }
        // Others, elsewhere, which nobody moves.
        for n in 0..<1_000 {
            start.append(("other\(n)", Double(n % 60) - 30, Double(n % 300) * 0.1 + 60, [:]))
        }
        let writer = try await liveWriter(try points(start))
        let live = writer.live
        // Timed from when the first writer starts (the tasks may wait for a thread while other suites run), and
        // long enough for some edits whatever the machine: the readers read until every writer is done.
        let clock = Clock()
        let writing = Counter(Self.writers)
        let rect = try MapRect(boundingBox: "-80,-40,80,40")
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: 3))

        let (edits, reads, problems) = try await withThrowingTaskGroup(of: (Int, Int, [String]).self) { tasks in
            for group in 0..<Self.writers {
                tasks.addTask {
                    defer { writing.decrement() }
                    let deadline = clock.start() + .seconds(Self.seconds)
                    var round = 0
                    while ContinuousClock.now < deadline || round < Self.minimumRounds {
                        round += 1
                        let place = Self.place(group: group, round: round)
                        let members = (0..<Self.groupSize).map {
                            (
                                "g\(group)-\($0)", place.latitude, place.longitude,
                                ["round": PropertyValue.number(Double(round))]
                            )
                        }
                        let receipt = try await writer.write(PointEdit(puts: try points(members)))
                        guard receipt.moved == Self.groupSize else {
                            return (round, 0, ["edit \(round) of group \(group) moved \(receipt.moved)"])
                        }
                    }
                    return (round, 0, [])
                }
            }
            for reader in 0..<Self.readers {
                tasks.addTask {
                    var reads = 0
                    var problems: [String] = []
                    var options = ClusterManagerOptions<Int>()
                    options.reusesMarkers = false
                    while (writing.value > 0 || reads == 0) && problems.isEmpty {
                        let state = live.current
                        reads += 1
                        if reader % 2 == 0 {
                            problems += Self.check(state)
                        } else {
                            // A query, as the API makes: its counts add up to every point.
                            let markers = try MarkerClustering(state.index, options: options).markers(in: viewport)
                                .markers
                            let total = markers.reduce(0) { $0 + $1.count }
                            if total != state.index.count { problems.append("markers hold \(total) points") }
                        }
                        await Task.yield()
                    }
                    return (0, reads, problems)
                }
            }
            return try await tasks.reduce(into: (0, 0, [String]())) { total, result in
                total.0 += result.0
                total.1 += result.1
                total.2 += result.2
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(edits >= Self.writers * Self.minimumRounds)
        #expect(reads > Self.readers)
        #expect(Self.check(live.current).isEmpty)
    }

    /// What is wrong with a state: a group whose members stand in more than one place, or whose place and round
    /// disagree.
    static func check(_ state: LiveIndex.State) -> [String] {
        var problems: [String] = []
        var places: [Int: Set<[Double]>] = [:]
        var rounds: [Int: Set<Int>] = [:]
        var counts: [Int: Int] = [:]
        for (slot, coordinate) in state.index.elements {
            let record = state.points.records[slot]
            guard record.id.hasPrefix("g"), let group = Int(record.id.dropFirst().prefix { $0 != "-" }) else {
                continue
            }
            counts[group, default: 0] += 1
            places[group, default: []].insert([coordinate.latitude, coordinate.longitude])
            if case .number(let round) = state.points.property("round", of: record) {
                rounds[group, default: []].insert(Int(round))
            }
        }
        for group in 0..<writers {
            guard counts[group] == groupSize, let place = places[group], place.count == 1,
                let round = rounds[group], round.count == 1, let only = round.first, let at = place.first
            else {
                problems.append("group \(group): \(counts[group] ?? 0) points in \(places[group]?.count ?? 0) places")
                continue
            }
            let expected = Self.place(group: group, round: only)
            if at != [expected.latitude, expected.longitude] {
                problems.append("group \(group): round \(only) at \(at)")
            }
        }
        return problems
    }
}

/// When the first of several tasks started.
final class Clock: @unchecked Sendable {
    private let lock = NSLock()
    private var started: ContinuousClock.Instant?

    /// The first call's time, for every caller.
    func start() -> ContinuousClock.Instant {
        lock.withLock {
            if let started { return started }
            let now = ContinuousClock.now
            started = now
            return now
        }
    }
}

/// A count shared by tasks.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count: Int

    init(_ count: Int) {
        self.count = count
    }

    var value: Int { lock.withLock { count } }

    func decrement() { lock.withLock { count -= 1 } }
}
