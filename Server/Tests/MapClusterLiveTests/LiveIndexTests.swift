import Foundation
import MapClusterTestSupport
import Testing

@testable import MapCluster
@testable import MapClusterIO
@testable import MapClusterLive
@testable import MapClusterManager

/// Points of a test: `id`s at coordinates, with properties.
func points(_ entries: [(id: String, latitude: Double, longitude: Double, properties: [String: PropertyValue])])
    throws -> PointSet
{
    let names = Array(Set(entries.flatMap(\.properties.keys))).sorted()
    return PointSet(
        propertyNames: names,
        records: try entries.map { entry in
            PointRecord(
                id: entry.id, coordinate: try Coordinate(latitude: entry.latitude, longitude: entry.longitude),
                properties: names.map { entry.properties[$0] ?? .null })
        })
}

/// A live index with a writer over a store in memory, holding `start`.
func liveWriter(_ start: PointSet, aggregation: PointAggregation = PointAggregation()) async throws -> LiveWriter {
    let store = MemoryPointStore()
    let (live, _) = try await LiveIndex.open(store, aggregation: aggregation) { start }
    return LiveWriter(live: live, store: store)
}

/// Every point of a state, by id: its coordinate and properties.
func contents(of state: LiveIndex.State) -> [String: (Coordinate, [String: PropertyValue])] {
    var found: [String: (Coordinate, [String: PropertyValue])] = [:]
    for (slot, coordinate) in state.index.elements {
        let record = state.points.records[slot]
        found[record.id] = (coordinate, state.points.properties(of: record))
    }
    return found
}

struct LiveIndexTests {
    @Test func editsAreCommittedThenAppliedAndSayWhatTheyDid() async throws {
        let writer = try await liveWriter(
            try points([("a", 48.85, 2.35, ["speed": .number(3)]), ("b", 52.52, 13.4, [:])]))
        let live = writer.live

        var receipt = try await writer.write(
            PointEdit(puts: try points([("c", 40.4, -3.7, ["speed": .number(9), "driver": .string("Ana")])])))
        #expect(receipt.inserted == 1 && receipt.moved == 0 && receipt.deleted == 0)
        #expect(receipt.version == 1)
        receipt = try await writer.write(PointEdit(puts: try points([("a", 45.76, 4.83, ["speed": .number(4)])])))
        #expect(receipt.inserted == 0 && receipt.moved == 1)
        receipt = try await writer.write(PointEdit(deletes: [PointKey(id: "b", isNumber: false)]))
        #expect(receipt.deleted == 1)
        #expect(receipt.sequence > 1)

        let state = live.current
        let found = contents(of: state)
        #expect(Set(found.keys) == ["a", "c"])
        #expect(found["a"]?.0 == (try Coordinate(latitude: 45.76, longitude: 4.83)))
        #expect(found["a"]?.1 == ["speed": .number(4)])
        #expect(found["c"]?.1 == ["speed": .number(9), "driver": .string("Ana")])
        #expect(live.point(PointKey(id: "b", isNumber: false)) == nil)
        #expect(live.point(PointKey(id: "c", isNumber: false))?.record.coordinate.latitude == 40.4)

        // The store holds what the index does.
        let stored = try await writer.store.load()
        #expect(stored.sequence == state.sequence)
        let reread = PointEdit(StoreBatch(puts: stored.points, deletes: [])).puts
        #expect(Set(reread.records.map(\.id)) == ["a", "c"])
    }

    @Test func aDeletedSlotIsReusedWithoutConfusingItsPoints() async throws {
        let writer = try await liveWriter(try points([("a", 1, 1, [:]), ("b", 2, 2, [:])]))
        _ = try await writer.write(PointEdit(deletes: [PointKey(id: "a", isNumber: false)]))
        _ = try await writer.write(PointEdit(puts: try points([("z", 3, 3, ["kind": .string("new")])])))
        let state = writer.live.current
        let found = contents(of: state)
        #expect(Set(found.keys) == ["b", "z"])
        #expect(found["z"]?.1 == ["kind": .string("new")])
        #expect(writer.live.point(PointKey(id: "a", isNumber: false)) == nil)
        #expect(writer.live.point(PointKey(id: "z", isNumber: false))?.record.id == "z")
    }

    @Test func anEditWithABadValueChangesNothing() async throws {
        let aggregation = PointAggregation(
            weight: "load", category: "kind", reductions: [.init("speed", .sum)])
        let start = try points([
            ("a", 1, 1, ["load": .number(1), "kind": .string("bus"), "speed": .number(3)]),
            ("b", 2, 2, ["load": .number(2), "kind": .string("tram"), "speed": .number(4)]),
        ])
        let writer = try await liveWriter(start, aggregation: aggregation)
        let before = writer.live.current

        for (bad, field) in [
            (["speed": PropertyValue.string("fast")], "speed"),
            (["load": .number(-1)], "load"),
        ] {
            var edit = PointEdit(
                puts: try points([("c", 5, 5, ["speed": .number(1)]), ("d", 6, 6, bad)]))
            edit.puts.records[0].origin = PointOrigin(file: "request body", feature: 0)
            edit.puts.records[1].origin = PointOrigin(file: "request body", feature: 1)
            await #expect {
                try await writer.write(edit)
            } throws: { error in
                guard let error = error as? PointFileError else { return false }
                return error.feature == 1 && error.field == field
            }
        }
        let after = writer.live.current
        #expect(after.version == before.version)
        #expect(Set(contents(of: after).keys) == ["a", "b"])
        #expect(try await writer.store.load().points.count == 2)
    }

    @Test func anEditMayBringCategoriesNotSeenBeforeUpToEachColumnsLimit() async throws {
        let aggregation = PointAggregation(categories: ["kind", "line"], reductions: [.init("speed", .sum)])
        let writer = try await liveWriter(
            try points([
                ("a", 1, 1, ["kind": .string("bus"), "line": .string("L1"), "speed": .number(3)]),
                ("b", 1.001, 1.001, ["kind": .string("tram"), "line": .string("L2"), "speed": .number(4)]),
            ]), aggregation: aggregation)
        _ = try await writer.write(
            PointEdit(
                puts: try points([
                    ("c", 1.002, 1.002, ["kind": .string("ferry"), "line": .string("L9"), "speed": .number(5)])
                ])))
        var state = writer.live.current
        // The new category comes after the others, which keep their places.
        #expect(state.index.schema?.categories == ["bus", "tram", "ferry"])
        let rect = try MapRect(boundingBox: "0,0,2,2")
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: 4))
        let clustering = state.index.clustering(ClusterOptions())
        let cluster = try #require(clustering.clusters(in: viewport).first)
        let aggregates = try #require(try clustering.aggregates(of: [cluster])?.first)
        #expect(
            cluster.count == 3 && aggregates.count(ofCategory: "ferry") == 1 && aggregates.number("speed_sum") == 12)
        let lines = try #require(
            aggregates.reductionNames.firstIndex(of: "line").map(aggregates.reduction(at:)) as? ValueCounts)
        #expect(lines.counts == ["L1": 1, "L2": 1, "L9": 1])

        // Up to 64 kinds, then a clear error that names the point and the column, and nothing changes.
        let more = (0..<61).map { ("k\($0)", 3.0, Double($0) / 100, ["kind": PropertyValue.string("kind \($0)")]) }
        _ = try await writer.write(PointEdit(puts: try points(more)))
        state = writer.live.current
        #expect(state.index.schema?.categories.count == 64)
        var edit = PointEdit(puts: try points([("z", 4, 4, ["kind": .string("one too many")])]))
        edit.puts.records[0].origin = PointOrigin(file: "request body", feature: 0)
        await #expect {
            try await writer.write(edit)
        } throws: { error in
            (error as? PointFileError)?.field == "kind" && "\(error)".contains("category too many")
        }
        #expect(writer.live.current.version == state.version)
        #expect(writer.live.current.index.count == 64)
    }

    @Test func aggregatesFollowTheEdits() async throws {
        let aggregation = PointAggregation(category: "kind", reductions: [.init("speed", .sum)])
        let writer = try await liveWriter(
            try points([("a", 10, 10, ["kind": .string("bus"), "speed": .number(3)])]), aggregation: aggregation)
        _ = try await writer.write(
            PointEdit(puts: try points([("b", 10.001, 10.001, ["kind": .string("bus"), "speed": .number(5)])])))
        _ = try await writer.write(
            PointEdit(puts: try points([("a", 10.002, 10.002, ["kind": .string("bus"), "speed": .number(10)])])))
        let state = writer.live.current
        let rect = try MapRect(boundingBox: "9,9,11,11")
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: 4))
        let cluster = try #require(state.index.clustering().clusters(in: viewport).first)
        #expect(cluster.count == 2)
        let aggregates = try #require(state.index.clustering(ClusterOptions()).aggregates(of: [cluster])?.first)
        #expect(aggregates.number("speed_sum") == 15)
        #expect(aggregates.count(ofCategory: "bus") == 2)
    }

    @Test func editsSentAtOnceAreEachCommittedWholeInOneOrder() async throws {
        let writer = try await liveWriter(try points([]))
        let receipts = try await withThrowingTaskGroup(of: WriteReceipt.self) { group in
            for n in 0..<200 {
                group.addTask {
                    try await writer.write(
                        PointEdit(
                            puts: try points([
                                ("p\(n)", Double(n % 80), Double(n % 170), [:]),
                                ("q\(n)", -Double(n % 80), Double(n % 170), [:]),
                            ])))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(receipts.allSatisfy { $0.inserted == 2 })
        #expect(Set(receipts.map(\.sequence)).count == 200)
        let state = writer.live.current
        #expect(state.index.count == 400)
        #expect(state.sequence == receipts.map(\.sequence).max())
        #expect(try await writer.store.load().points.count == 400)
    }

    @Test func aCommitThatFailsAppliesNothingAndSaysSo() async throws {
        let store = RefusingStore()
        let (live, _) = try await LiveIndex.open(store, aggregation: PointAggregation()) {
            try points([("a", 1, 1, [:])])
        }
        let writer = LiveWriter(live: live, store: store)
        await store.refuse()
        await #expect(throws: StoreFailure.self) {
            try await writer.write(PointEdit(puts: try points([("b", 2, 2, [:])])))
        }
        #expect(live.current.version == 0)
        #expect(live.point(PointKey(id: "b", isNumber: false)) == nil)
        // The server's /readyz says the store doesn't answer, until a commit succeeds again.
        #expect(await writer.storeProblem != nil)
        await store.accept()
        _ = try await writer.write(PointEdit(puts: try points([("b", 2, 2, [:])])))
        #expect(await writer.storeProblem == nil)
    }

    @Test func aFollowerGetsTheChangesOfItsViewport() async throws {
        let writer = try await liveWriter(
            try points([("a", 48.85, 2.35, [:]), ("b", 48.86, 2.36, [:]), ("far", -33.9, 151.2, [:])]))
        let live = writer.live
        let rect = try MapRect(boundingBox: "2,48,3,49")
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: 8))
        var options = ClusterManagerOptions<Int>()
        options.reusesMarkers = false
        var state = live.current
        var follower = ClusterFollower(viewport: viewport, options: options, index: state.index, version: state.version)
        #expect(follower.snapshot.markers.map(\.count) == [2])

        // A point joins the cluster: its marker changes (a new count, and an id of the cell that now holds all three),
        // and the changes take the old markers to the new ones.
        let old = follower.snapshot.markers
        _ = try await writer.write(PointEdit(puts: try points([("c", 48.87, 2.37, [:])])))
        state = live.current
        var update = follower.update(
            index: state.index, version: state.version, changedKeys: live.changedKeys(after: 0, through: state.version))
        #expect(update.snapshot.markers.map(\.count) == [3])
        #expect(Self.applying(update.changes, to: old) == Set(update.snapshot.markers.map(\.id)))
        for removal in update.changes.removals {
            #expect(removal.mergesInto == update.snapshot.markers[0].coordinate)
        }

        // A point far away changes nothing here.
        let far = state.version
        _ = try await writer.write(PointEdit(puts: try points([("far", -33.8, 151.1, [:])])))
        state = live.current
        update = follower.update(
            index: state.index, version: state.version,
            changedKeys: live.changedKeys(after: far, through: state.version))
        #expect(update.changes.isEmpty)

        // Every point deleted: the marker goes.
        let before = state.version
        _ = try await writer.write(PointEdit(deletes: ["a", "b", "c"].map { PointKey(id: $0, isNumber: false) }))
        state = live.current
        update = follower.update(
            index: state.index, version: state.version,
            changedKeys: live.changedKeys(after: before, through: state.version))
        #expect(update.changes.removals.count == 1)
        #expect(update.snapshot.markers.isEmpty)
    }

    /// The ids of markers after changes.
    static func applying(_ changes: ClusterChanges<Int>, to markers: [ClusterMarker<Int>]) -> Set<ClusterMarker<Int>.ID>
    {
        var ids = Set(markers.map(\.id))
        for removal in changes.removals { ids.remove(removal.marker.id) }
        for insertion in changes.insertions { ids.insert(insertion.marker.id) }
        return ids
    }

    @Test func changedKeysAreForgottenAfterEnoughVersions() async throws {
        let writer = try await liveWriter(try points([("a", 1, 1, [:])]))
        for n in 0...LiveIndex.loggedVersions {
            _ = try await writer.write(PointEdit(puts: try points([("a", 1, Double(n % 90), [:])])))
        }
        let latest = writer.live.current.version
        #expect(writer.live.changedKeys(after: 0, through: latest) == nil)
        #expect(writer.live.changedKeys(after: latest - 1, through: latest)?.count == 2)
        #expect(writer.live.changedKeys(after: latest, through: latest) == [])
    }

    @Test func subscribersHearOfNewVersions() async throws {
        let writer = try await liveWriter(try points([("a", 1, 1, [:])]))
        let (id, versions) = writer.live.subscribe()
        _ = try await writer.write(PointEdit(puts: try points([("b", 2, 2, [:])])))
        var iterator = versions.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        writer.live.unsubscribe(id)
        #expect(await iterator.next() == nil)
        #expect(writer.live.subscriberCount == 0)
    }
}

/// A store whose commits fail while told to: what a database that went away does to the writer.
actor RefusingStore: PointStore {
    private let memory = MemoryPointStore()
    private var refusing = false

    nonisolated var description: String { "a store that refuses" }

    func refuse() { refusing = true }

    func accept() { refusing = false }

    func load() async throws -> StoreContents { await memory.load() }

    func commit(_ batches: [StoreBatch], after sequence: Int64) async throws -> StoreCommit {
        struct Refused: Error {}
        if refusing { throw Refused() }
        return await memory.commit(batches, after: sequence)
    }

    func batches(after sequence: Int64) async throws -> [StoreBatch]? { [] }

    nonisolated func commitsByOthers() -> AsyncStream<Void> { AsyncStream { $0.finish() } }

    func close() {}
}
