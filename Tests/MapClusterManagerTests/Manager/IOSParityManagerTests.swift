import MapClusterTestSupport
import Testing

@testable import MapCluster
@testable import MapClusterManager

/// Fan-outs measured on the ground, as ClusterMap's and Cluster's `distanceFromContestedLocation`.
struct FanOutInMetresTests {
    static let location = Coordinate.checked(45, 7)

    static func fanned(zoom: Double, _ fanOut: SameLocationFanOut) async throws -> [ClusterMarker<Int>] {
        var options = ClusterManagerOptions<Int>()
        options.clustering.maxZoomLevelForClustering = 17
        options.sameLocation = fanOut
        let manager = try ClusterManager(options: options)
        try await manager.add((0..<5).map { Placement($0, at: location) })
        let update = try await manager.update(for: Viewport(center: location, zoom: zoom, size: testScreen))
        return update.snapshot.markers
    }

    @Test func elementsOnOneCoordinateStandThreeMetresAwayAtEveryZoom() async throws {
        for zoom in [18.0, 20.0] {
            let markers = try await Self.fanned(zoom: zoom, .clusterMap)
            #expect(markers.count == 5)
            for marker in markers {
                #expect(abs(marker.coordinate.distance(to: Self.location) - 3) < 1e-6, "zoom \(zoom)")
                #expect(marker.clusters[0].coordinate == Self.location, "the element's own coordinate is untouched")
            }
            // The first due north, the others clockwise: the second is east of north.
            #expect(markers[0].coordinate.latitude > Self.location.latitude)
            #expect(abs(markers[0].coordinate.longitude - Self.location.longitude) < 1e-12)
            #expect(markers[1].coordinate.longitude > Self.location.longitude)
        }
        // In points, the ground distance halves with each zoom level instead.
        let near = try await Self.fanned(zoom: 18, SameLocationFanOut(radius: 30))
        let nearer = try await Self.fanned(zoom: 19, SameLocationFanOut(radius: 30))
        let ratio = near[0].coordinate.distance(to: Self.location) / nearer[0].coordinate.distance(to: Self.location)
        #expect(abs(ratio - 2) < 1e-3)
    }

    @Test func fixesOfOneSpotFanOutTogetherWithALocationTolerance() async throws {
        let fixes = [(0.0, 0.0), (2e-7, 1e-7), (-1e-7, 2e-7), (1e-7, -2e-7)].map {
            Coordinate.checked(Self.location.latitude + $0.0, Self.location.longitude + $0.1)
        }
        for tolerance in [LocationTolerance.exact, .geohash9] {
            var options = ClusterManagerOptions<Int>()
            options.clustering.maxZoomLevelForClustering = 17
            options.clustering.locationTolerance = tolerance
            options.sameLocation = .clusterMap
            let manager = try ClusterManager(options: options)
            try await manager.add(fixes.enumerated().map { Placement($0.offset, at: $0.element) })
            let markers = try await manager.update(for: Viewport(center: Self.location, zoom: 19, size: testScreen))
                .snapshot.markers
            #expect(markers.count == 4)
            let distances = markers.map { $0.coordinate.distance(to: Self.location) }
            if tolerance == .exact {
                #expect(distances.allSatisfy { $0 < 0.05 }, "apart by their GPS noise only: \(distances)")
            } else {
                #expect(distances.allSatisfy { abs($0 - 3) < 0.05 }, "on a 3 m circle: \(distances)")
            }
        }
    }

    @Test func aFanOutOfNoMetresIsRefusedInMetres() {
        #expect(SameLocationFanOut.clusterMap.radius == 3 && SameLocationFanOut.clusterMap.unit == .metres)
        do {
            _ = try ClusterManager<Int>(
                options: {
                    var options = ClusterManagerOptions<Int>()
                    options.sameLocation = .init(metres: 0)
                    return options
                }())
            Issue.record("a fan-out of 0 metres was taken")
        } catch {
            #expect(error.description == "sameLocation.radius is 0.0: it must be a positive, finite number of metres")
        }
    }
}

/// Will/did-update events: the manager's `AsyncSequence` and the controller's delegate.
struct ManagerEventTests {
    static let viewport = Viewport(center: .checked(48.8, 2.3), zoom: 5, size: testScreen)

    static func manager() async throws -> ClusterManager<Int> {
        let manager = ClusterManager<Int>()
        try await manager.add(
            DataShape.clustered.coordinates(count: 2_000, seed: 5).enumerated().map {
                Placement($0.offset, at: $0.element)
            })
        return manager
    }

    /// The next `count` events of a stream.
    static func take(_ count: Int, of stream: AsyncStream<ClusterManagerEvent<Int>>) async -> [ClusterManagerEvent<Int>]
    {
        var events: [ClusterManagerEvent<Int>] = []
        for await event in stream {
            events.append(event)
            if events.count == count { break }
        }
        return events
    }

    @Test func everyReaderHearsEachUpdateStartAndEnd() async throws {
        let manager = try await Self.manager()
        let first = await manager.events()
        let second = await manager.events()
        let update = try await manager.update(for: Self.viewport)
        for stream in [first, second] {
            let events = await Self.take(2, of: stream)
            guard events.count == 2, case .willUpdate(let viewport) = events[0], case .didUpdate(let done) = events[1]
            else {
                Issue.record("expected will and did, got \(events)")
                continue
            }
            #expect(viewport == Self.viewport)
            #expect(done.snapshot.markers.map(\.id) == update.snapshot.markers.map(\.id))
            #expect(done.changes.insertions.count == update.snapshot.markers.count)
        }
    }

    /// The events of a manager that is gone as soon as they are asked for.
    static func eventsOfAManagerThatGoes() async -> AsyncStream<ClusterManagerEvent<Int>> {
        let manager = ClusterManager<Int>()
        return await manager.events()
    }

    @Test func aReadersLoopEndsWithTheManager() async {
        let stream = await Self.eventsOfAManagerThatGoes()
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in stream {}
                return true
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: 20_000_000_000)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(ended, "the loop still waited 20 s after the manager went")
    }

    @Test func aViewportOfNoSizeDoesNoWorkAndSendsNoEvent() async throws {
        let manager = try await Self.manager()
        let before = try await manager.update(for: Self.viewport)
        let events = await manager.events()
        for empty in [
            Viewport(rect: Self.viewport.rect, size: ViewSize(width: 0, height: 0)),
            Viewport(rect: MapRect(minX: 5, minY: 5, maxX: 5, maxY: 5), size: testScreen),
            Viewport(rect: Self.viewport.rect, size: ViewSize(width: .nan, height: 768)),
        ] {
            #expect(empty.isEmpty)
            let answer = try await manager.update(for: empty)
            #expect(answer.changes.insertions.isEmpty && answer.changes.removals.isEmpty)
            #expect(answer.snapshot.viewport == Self.viewport, "the last update's snapshot, unchanged")
            #expect(await manager.snapshot.viewport == Self.viewport)
            #expect(await manager.index.clustering().clusters(in: empty).isEmpty)
        }
        // The next event is the next real update's: the empty ones sent none.
        let moved = Viewport(center: .checked(45, 5), zoom: 6, size: testScreen)
        _ = try await manager.update(for: moved)
        let next = await Self.take(1, of: events)
        guard case .willUpdate(let viewport)? = next.first else {
            Issue.record("expected willUpdate, got \(next)")
            return
        }
        #expect(viewport == moved)
        #expect(before.snapshot.viewport == Self.viewport)
    }

    @Test func aSupersededUpdateEndsInDidNotUpdate() async throws {
        let manager = ClusterManager<Int>()
        try await manager.add(
            DataShape.uniform.coordinates(count: 200_000, seed: 9).enumerated().map {
                Placement($0.offset, at: $0.element)
            })
        let events = await manager.events()
        let world = Viewport(center: .checked(0, 0), zoom: 2.5, size: testScreen)
        // Many updates at once: every one but the latest may be overtaken, and each ends in exactly one event.
        await withTaskGroup(of: Void.self) { group in
            for step in 0..<6 {
                group.addTask {
                    var viewport = world
                    viewport.rect.origin.x += Double(step) * 1_000
                    _ = try? await manager.update(for: viewport)
                }
            }
        }
        let all = await Self.take(12, of: events)
        let started = all.filter { if case .willUpdate = $0 { true } else { false } }.count
        let ended = all.filter {
            switch $0 {
            case .didUpdate, .didNotUpdate(_, .superseded): true
            default: false
            }
        }.count
        #expect(started == 6 && ended == 6)
    }
}

/// A UIKit-style delegate of the marker controller.
@MainActor
final class RecordingDelegate: MapMarkerControllerDelegate {
    typealias Element = Int

    var calls: [String] = []
    weak var view: FakeMapView?

    func markerController(willUpdateFor viewport: Viewport) {
        calls.append("will \(viewport.zoom.rounded())")
    }

    func markerController(didUpdate update: ClusterUpdate<Int>) {
        calls.append("did \(update.snapshot.markers.count), view applied \(view?.transitions.count ?? -1)")
    }
}

@MainActor
struct MarkerControllerDelegateTests {
    @Test func theDelegateHearsBeforeAndAfterTheViewChanges() async throws {
        let view = FakeMapView(Viewport(center: .checked(48.8, 2.3), zoom: 5, size: testScreen))
        let controller = MapMarkerController(view: view)
        let delegate = RecordingDelegate()
        delegate.view = view
        controller.delegate = delegate
        try await controller.add(
            DataShape.clustered.coordinates(count: 500, seed: 3).enumerated().map {
                Placement($0.offset, at: $0.element)
            })
        #expect(delegate.calls == ["will 5.0", "did \(controller.markers.count), view applied 1"])
    }

    @Test func aViewWithNoSizeGetsNoRefreshAndTheDelegateNoCall() async throws {
        let view = FakeMapView(
            Viewport(rect: MapRect(minX: 0, minY: 0, maxX: 1_000, maxY: 1_000), size: ViewSize(width: 0, height: 0)))
        let controller = MapMarkerController(view: view)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try await controller.add([
            Placement(1, latitude: 10, longitude: 10), Placement(2, latitude: 10.1, longitude: 10),
        ])
        #expect(delegate.calls.isEmpty)
        #expect(view.transitions.isEmpty)
        #expect(await controller.manager.snapshot.viewport == nil, "no update was made")
    }
}
