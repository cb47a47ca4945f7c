import Foundation
import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster
@testable import MapClusterManager

struct ClusterManagerTests {
    static let screen = testScreen

    static func placements(_ coordinates: [Coordinate], firstID: Int = 0) -> [Placement<Int>] {
        coordinates.enumerated().map { Placement(firstID + $0.offset, at: $0.element) }
    }

    static func manager(
        _ coordinates: [Coordinate], configure: (inout ClusterManagerOptions<Int>) -> Void = { _ in }
    ) async throws -> ClusterManager<Int> {
        var options = ClusterManagerOptions<Int>()
        configure(&options)
        let manager = try ClusterManager(options: options)
        try await manager.add(placements(coordinates))
        return manager
    }

    // MARK: - The scenarios of the libraries we replace

    @Test func sixAnnotationsMakeTwoClustersThenOneThenNone() async throws {
        let manager = try ClusterManager<Int>(
            options: {
                var options = ClusterManagerOptions<Int>()
                options.clustering.cellSize = 100
                options.clustering.marginFactor = 0
                return options
            }())
        let southWest = Placement(0, latitude: 51.1, longitude: 12.1)
        let northEast =
            (1...4).map { Placement($0, latitude: 53.9, longitude: 14.9) } + [
                Placement(5, latitude: 53.9, longitude: 14.6)
            ]
        try await manager.add([southWest] + northEast)
        // The region centered on (52.5, 13.5) spanning 3° each way, in a view 300 points wide.
        let rect = try MapRect(west: 12, south: 51, east: 15, north: 54)
        let viewport = Viewport(
            rect: rect, size: ViewSize(width: 300, height: 300 * rect.size.height / rect.size.width))

        let first = try await manager.update(for: viewport)
        let counts = first.snapshot.markers.map { ($0.count, $0.coordinate) }
        #expect(counts.count == 2)
        #expect(counts.contains { $0.0 == 1 && $0.1 == .checked(51.1, 12.1) })
        #expect(counts.contains { $0.0 == 5 && $0.1.latitude > 53 && $0.1.longitude > 14 })
        #expect(first.changes.insertions.count == 2)

        await manager.remove([0])
        let second = try await manager.update(for: viewport)
        #expect(second.snapshot.markers.map(\.count) == [5])
        #expect(second.changes.removals.map(\.marker.count) == [1])
        #expect(second.changes.insertions.isEmpty && second.changes.updates.isEmpty)

        await manager.removeAll()
        let third = try await manager.update(for: viewport)
        #expect(third.snapshot.markers.isEmpty)
        #expect(third.changes.removals.map(\.marker.count) == [5])
    }

    @Test func removeAllAddTenRemoveAllAddHundredLeavesAHundred() async throws {
        let manager = ClusterManager<Int>()
        var rng = SplitMix64(seed: 5)
        await manager.removeAll()
        try await manager.add(Self.placements(DataShape.uniform.coordinates(count: 10, seed: 1)))
        await manager.removeAll()
        try await manager.add(
            Self.placements((0..<100).map { _ in DataShape.uniform.coordinate(using: &rng) }, firstID: 10))
        #expect(await manager.count == 100)
        let world = Viewport(rect: .world, size: ViewSize(width: 1024, height: 1024))
        let update = try await manager.update(for: world)
        #expect(update.snapshot.markers.reduce(0) { $0 + $1.count } == 100)
    }

    @Test func aBatchWithOneBadElementChangesNothing() async throws {
        let manager = try await Self.manager([.checked(10, 10), .checked(20, 20)])
        let before = await manager.index.elements.map(\.element).sorted()
        let bad = [
            Placement(7, latitude: 1, longitude: 1), Placement(8, latitude: 91, longitude: 0),
            Placement(9, latitude: 2, longitude: 2),
        ]
        await #expect {
            try await manager.add(bad)
        } throws: { error in
            "\(error)" == "batch item 1 (element 8): latitude 91.0 is outside -90...90; the batch was not applied"
        }
        await #expect(throws: BatchError<Int>.self) {
            try await manager.replaceAll(with: [Placement(1, latitude: 0, longitude: .nan)])
        }
        await #expect {
            try await manager.move([Placement(0, latitude: 5, longitude: 5), Placement(42, latitude: 5, longitude: 5)])
        } throws: { error in
            "\(error)" == "batch item 1 (element 42): not managed, so it can't be moved; the batch was not applied"
        }
        #expect(await manager.index.elements.map(\.element).sorted() == before)
        #expect(await manager.index.coordinate(of: 0) == .checked(10, 10))
        #expect(await manager.index.coordinate(of: 7) == nil)
    }

    @Test func elementsMoveAndDuplicatesAreOneElement() async throws {
        let manager = try await Self.manager([.checked(10, 10), .checked(20, 20)])
        try await manager.move([Placement(0, latitude: -10, longitude: -10)])
        try await manager.add([Placement(1, latitude: 30, longitude: 30)])
        #expect(await manager.count == 2)
        #expect(await manager.index.coordinate(of: 0) == .checked(-10, -10))
        #expect(await manager.index.coordinate(of: 1) == .checked(30, 30))
        #expect(await manager.remove([0, 5]) == 1)
    }

    @Test func aPositionFixerMovesEveryMarkerAfterTheBuiltInPasses() async throws {
        let coordinates = DataShape.clustered.coordinates(count: 2_000, seed: 45)
        let viewport = Viewport(rect: .world, size: ViewSize(width: 1024, height: 1024))
        let plain = try await Self.manager(coordinates) {
            $0.overlap = .separate(markerSize: ViewSize(width: 30, height: 30))
        }
        let expected = try await plain.update(for: viewport).snapshot.markers
        let seen = FixerCall()
        // CCHMapClusterController's fixAnnotationPosition: here, a tenth of a degree further east each.
        let fixed = try await Self.manager(coordinates) { options in
            options.overlap = .separate(markerSize: ViewSize(width: 30, height: 30))
            options.fixPositions = { markers, viewport in
                seen.record(markers: markers.count, viewport: viewport)
                return markers.map { .checked($0.coordinate.latitude, $0.coordinate.longitude + 0.1) }
            }
        }
        let markers = try await fixed.update(for: viewport).snapshot.markers
        #expect(seen.last?.markers == expected.count)
        #expect(seen.last?.viewport == viewport)
        #expect(markers.map(\.id) == expected.map(\.id))
        for (marker, laidOut) in zip(markers, expected) {
            #expect(marker.coordinate.latitude == laidOut.coordinate.latitude)
            #expect(abs(marker.coordinate.longitude - laidOut.coordinate.longitude - 0.1) < 1e-9)
            #expect(marker.count == laidOut.count)
        }
        #expect(markers.count > 10)
    }

    @Test func aPositionFixerThatLosesMarkersTraps() async {
        await #expect(processExitsWith: .failure) {
            var options = ClusterManagerOptions<Int>()
            options.fixPositions = { markers, _ in Array(markers.dropFirst().map(\.coordinate)) }
            let manager = try ClusterManager(options: options)
            try await manager.add([
                Placement(1, latitude: 10, longitude: 10), Placement(2, latitude: -10, longitude: 20),
            ])
            _ = try await manager.update(for: Viewport(rect: .world, size: ViewSize(width: 1024, height: 1024)))
        }
    }

    // MARK: - Changes

    @Test func reloadingTheSameDataAndViewportChangesNothing() async throws {
        for shape in DataShape.allCases {
            let manager = try await Self.manager(shape.coordinates(count: 3_000, seed: 11))
            let viewport = Viewport(center: shape.coordinates(count: 1, seed: 12)[0], zoom: 4, size: Self.screen)
            _ = try await manager.update(for: viewport)
            let again = try await manager.update(for: viewport)
            #expect(again.changes.isEmpty, "\(shape)")
            let reloaded = try await manager.reload()
            #expect(reloaded.changes.isEmpty, "\(shape)")
        }
    }

    @Test func panningWithinTheMarginChangesOnlyTheMargin() async throws {
        let manager = try await Self.manager(DataShape.uniform.coordinates(count: 20_000, seed: 13))
        let start = Viewport(center: .checked(40, -70), zoom: 5, size: Self.screen)
        _ = try await manager.update(for: start)
        var panned = start
        panned.rect.origin.x += start.rect.size.width / 4
        panned.rect.origin.y -= start.rect.size.height / 5
        let update = try await manager.update(for: panned)
        #expect(update.changes.updates.isEmpty)
        #expect(!update.changes.insertions.isEmpty && !update.changes.removals.isEmpty)
        for insertion in update.changes.insertions {
            #expect(!panned.rect.contains(insertion.marker.coordinate.mapPoint))
            #expect(insertion.splitFrom == nil)
        }
        for removal in update.changes.removals {
            #expect(!start.rect.contains(removal.marker.coordinate.mapPoint))
            #expect(removal.mergesInto == nil)
        }
    }

    @Test(arguments: [DataShape.uniform, .clustered])
    func zoomingInSplitsFromParentsAndZoomingOutMergesIntoThem(shape: DataShape) async throws {
        let manager = try await Self.manager(shape.coordinates(count: 20_000, seed: 14))
        let center = shape == .uniform ? Coordinate.checked(40, -70) : .checked(48.8, 2.3)
        let far = Viewport(center: center, zoom: shape == .uniform ? 4 : 13, size: Self.screen)
        let near = Viewport(center: center, zoom: far.zoom + 1, size: Self.screen)
        let before = try await manager.update(for: far).snapshot

        let zoomIn = try await manager.update(for: near)
        #expect(!zoomIn.changes.insertions.isEmpty)
        for insertion in zoomIn.changes.insertions {
            let from = try #require(insertion.splitFrom, "\(insertion.marker.id)")
            // The marker it came from holds its members.
            let parent = try #require(before.markers.first { $0.coordinate == from })
            let witness = try #require(zoomIn.snapshot.members(of: insertion.marker, limit: 1).first)
            #expect(before.marker(holding: witness)?.id == parent.id)
        }

        let zoomOut = try await manager.update(for: far)
        #expect(!zoomOut.changes.removals.isEmpty)
        for removal in zoomOut.changes.removals {
            let into = try #require(removal.mergesInto, "\(removal.marker.id)")
            let parent = try #require(zoomOut.snapshot.markers.first { $0.coordinate == into })
            let witness = try #require(before.members(of: removal.marker, limit: 1).first)
            #expect(zoomOut.snapshot.marker(holding: witness)?.id == parent.id)
        }
        // Back where it started.
        #expect(zoomOut.snapshot.markers.map(\.id) == before.markers.map(\.id))
    }

    @Test func aReusedClusterKeepsItsIdAndPlaceWhileDataArrives() async throws {
        var rng = SplitMix64(seed: 15)
        let batch = { (count: Int) in
            (0..<count).map { _ in
                Coordinate.checked(Double.random(in: 30...30.5, using: &rng), Double.random(in: 10...10.5, using: &rng))
            }
        }
        let first = batch(50)
        let second = batch(50)
        let viewport = Viewport(center: .checked(30.2, 10.2), zoom: 3, size: Self.screen)

        for reuse in [true, false] {
            let manager = try await Self.manager(first) { $0.reusesMarkers = reuse }
            let before = try await manager.update(for: viewport)
            let cluster = try #require(before.snapshot.markers.first { $0.count == 50 })
            try await manager.add(Self.placements(second, firstID: 50))
            let after = try await manager.update(for: viewport)
            if reuse {
                #expect(after.changes.insertions.isEmpty && after.changes.removals.isEmpty)
                let update = try #require(after.changes.updates.first)
                #expect(update.new.id == cluster.id && update.old.id == cluster.id)
                #expect(update.new.coordinate == cluster.coordinate)
                #expect(update.new.count == 100)
                // Panning without new data keeps it as it is.
                var panned = viewport
                panned.rect.origin.x += 1_000
                #expect(try await manager.update(for: panned).changes.isEmpty)
            } else {
                let moved = after.snapshot.markers.first { $0.count == 100 }
                #expect(moved?.coordinate != cluster.coordinate)
                #expect(after.changes.updates.count + after.changes.insertions.count == 1)
            }
        }
    }

    @Test func changedMembersOfAKeptClusterAreReported() async throws {
        let manager = try await Self.manager([.checked(10, 10), .checked(10.5, 10.5), .checked(10.2, 10.3)]) {
            $0.reusesMarkers = false
        }
        let viewport = Viewport(center: .checked(10, 10), zoom: 3, size: Self.screen)
        _ = try await manager.update(for: viewport)
        // Same tight cell, same count: the members differ.
        await manager.remove([2])
        try await manager.add([Placement(3, latitude: 10.2, longitude: 10.3)])
        let update = try await manager.update(for: viewport)
        #expect(update.changes.updates.count == 1)
        let updated = try #require(update.changes.updates.first?.new)
        #expect(try update.snapshot.members(of: updated).sorted() == [0, 1, 3])
    }

    @Test func invisibleMarkersStayWhenAsked() async throws {
        let coordinates = DataShape.uniform.coordinates(count: 5_000, seed: 16)
        for remove in [true, false] {
            let manager = try await Self.manager(coordinates) { $0.removesMarkersOutsideRegion = remove }
            let here = Viewport(center: .checked(40, -70), zoom: 5, size: Self.screen)
            let before = try await manager.update(for: here).snapshot
            let there = try await manager.update(for: Viewport(center: .checked(-30, 100), zoom: 5, size: Self.screen))
            let removed = Set(there.changes.removals.map(\.marker.id))
            if remove {
                #expect(removed == Set(before.markers.map(\.id)))
            } else {
                #expect(removed.isEmpty)
                #expect(Set(before.markers.map(\.id)).isSubset(of: Set(there.snapshot.markers.map(\.id))))
                // Coming back, the kept markers are still right: nothing to change.
                #expect(try await manager.update(for: here).changes.removals.isEmpty)
            }
        }
    }

    /// Applies every update's changes to a model of the map: nothing is removed that isn't there, nothing added twice,
    /// and the map always equals the snapshot.
    @Test(arguments: [(true, true), (false, true), (true, false)])
    func changesKeepAMapInStepThroughEditsAndMoves(reuse: Bool, removeInvisible: Bool) async throws {
        var rng = SplitMix64(seed: 17)
        let manager = try await Self.manager(DataShape.clustered.coordinates(count: 4_000, seed: 18)) {
            $0.reusesMarkers = reuse
            $0.removesMarkersOutsideRegion = removeInvisible
        }
        var map: [ClusterMarker<Int>.ID: ClusterMarker<Int>] = [:]
        var nextID = 4_000
        let centers: [Coordinate] = [.checked(48.8, 2.3), .checked(40.7, -74.0), .checked(35.7, 139.7)]
        var viewport = Viewport(center: centers[0], zoom: 6, size: Self.screen)
        for step in 0..<120 {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0:
                let coordinates = (0..<Int.random(in: 1...200, using: &rng)).map { _ in
                    DataShape.clustered.coordinate(using: &rng)
                }
                try await manager.add(Self.placements(coordinates, firstID: nextID))
                nextID += coordinates.count
            case 1:
                await manager.remove((0..<50).map { _ in Int.random(in: 0..<nextID, using: &rng) })
            case 2:
                viewport = Viewport(
                    center: centers.randomElement(using: &rng) ?? centers[0],
                    zoom: Double.random(in: 2...14, using: &rng), size: Self.screen)
            default:
                viewport.rect.origin.x += Double.random(in: -0.3...0.3, using: &rng) * viewport.rect.size.width
            }
            let update = try await manager.update(for: viewport)
            for removal in update.changes.removals {
                #expect(map.removeValue(forKey: removal.marker.id) != nil, "step \(step): removed \(removal.marker.id)")
            }
            for change in update.changes.updates {
                #expect(map[change.new.id] != nil, "step \(step): updated \(change.new.id)")
                map[change.new.id] = change.new
            }
            for insertion in update.changes.insertions {
                #expect(map.updateValue(insertion.marker, forKey: insertion.marker.id) == nil, "step \(step)")
            }
            let ids = update.snapshot.markers.map(\.id)
            #expect(Set(ids).count == ids.count, "step \(step): a marker twice")
            #expect(Set(map.keys) == Set(ids), "step \(step)")
            for marker in update.snapshot.markers {
                #expect(map[marker.id]?.coordinate == marker.coordinate && map[marker.id]?.count == marker.count)
            }
        }
    }
}

/// What a position fixer was last given, from whatever thread the manager ran it on.
final class FixerCall: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: (markers: Int, viewport: Viewport)?

    var last: (markers: Int, viewport: Viewport)? { lock.withLock { recorded } }

    func record(markers: Int, viewport: Viewport) { lock.withLock { recorded = (markers, viewport) } }
}
