import MapClusterTestSupport
import Observation
import Testing

@testable @_spi(MapClusterServer) import MapCluster
@testable import MapClusterManager

/// A map view that keeps its markers by id and refuses what a real map would get wrong: removing a marker it doesn't
/// show, adding one twice.
@MainActor
final class FakeMapView: ClusterMapView {
    typealias Element = Int

    var visibleViewport: Viewport?
    var shown: [ClusterMarker<Int>.ID: ClusterMarker<Int>] = [:]
    var transitions: [MarkerTransition<Int>] = []
    var requestedViewports: [(viewport: Viewport, animated: Bool)] = []
    var selected: [ClusterMarker<Int>] = []
    var grid: [GridCell] = []
    var mistakes: [String] = []
    /// Called after each move, once the current main-actor job is done, as MapKit tells its delegate that the region
    /// changed.
    var regionDidChange: (@MainActor () -> Void)?

    init(_ viewport: Viewport?) {
        visibleViewport = viewport
    }

    func apply(_ transition: MarkerTransition<Int>) {
        transitions.append(transition)
        for gone in transition.disappearances where shown.removeValue(forKey: gone.marker.id) == nil {
            mistakes.append("removed \(gone.marker.id), which was not shown")
        }
        for update in transition.updates {
            if shown[update.new.id] == nil { mistakes.append("updated \(update.new.id), which was not shown") }
            shown[update.new.id] = update.new
        }
        for new in transition.appearances where shown.updateValue(new.marker, forKey: new.marker.id) != nil {
            mistakes.append("added \(new.marker.id) twice")
        }
    }

    func show(_ viewport: Viewport, animated: Bool) {
        requestedViewports.append((viewport, animated))
        visibleViewport = viewport
        if let regionDidChange { Task { regionDidChange() } }
    }

    func select(_ marker: ClusterMarker<Int>) { selected.append(marker) }

    func showDebugGrid(_ cells: [GridCell]) { grid = cells }
}

@MainActor
struct MapMarkerControllerTests {
    static let screen = testScreen

    static func controller(_ count: Int = 5_000, at viewport: Viewport) async throws -> (
        MapMarkerController<FakeMapView>, FakeMapView
    ) {
        let view = FakeMapView(viewport)
        let controller = MapMarkerController(view: view)
        try await controller.add(
            DataShape.clustered.coordinates(count: count, seed: 71).enumerated().map {
                Placement($0.offset, at: $0.element)
            })
        return (controller, view)
    }

    static func expectInStep(_ controller: MapMarkerController<FakeMapView>, _ view: FakeMapView) {
        #expect(view.mistakes.isEmpty, "\(view.mistakes.prefix(3))")
        #expect(Set(view.shown.keys) == Set(controller.markers.map(\.id)))
    }

    @Test func addingElementsShowsTheirClusters() async throws {
        let viewport = Viewport(center: .checked(48.8, 2.3), zoom: 5, size: Self.screen)
        let (controller, view) = try await Self.controller(at: viewport)
        Self.expectInStep(controller, view)
        #expect(view.transitions.count == 1)
        #expect(view.transitions[0].appearances.count == controller.markers.count)
        #expect(view.transitions[0].duration == 0.2)
        // The same region again changes nothing, so the view is left alone.
        await controller.refresh()
        #expect(controller.appliedTransitions == 1)
    }

    @Test func zoomingMovesMarkersOutOfAndIntoTheirParents() async throws {
        let far = Viewport(center: .checked(48.8, 2.3), zoom: 11, size: Self.screen)
        let (controller, view) = try await Self.controller(at: far)
        let before = Dictionary(uniqueKeysWithValues: controller.markers.map { ($0.coordinate, $0) })

        view.visibleViewport = Viewport(center: .checked(48.8, 2.3), zoom: 12, size: Self.screen)
        await controller.refresh()
        let zoomIn = try #require(view.transitions.last)
        #expect(!zoomIn.appearances.isEmpty)
        for appearance in zoomIn.appearances {
            // Each new marker starts where the cluster it came out of stood.
            #expect(before[appearance.start]?.isCluster == true, "\(appearance.marker.id)")
        }
        Self.expectInStep(controller, view)

        view.visibleViewport = far
        await controller.refresh()
        let zoomOut = try #require(view.transitions.last)
        let after = Set(controller.markers.map(\.coordinate))
        #expect(!zoomOut.disappearances.isEmpty)
        for disappearance in zoomOut.disappearances {
            #expect(after.contains(disappearance.end), "\(disappearance.marker.id)")
        }
        Self.expectInStep(controller, view)
    }

    @Test func regionChangesInQuickSuccessionEndOnTheLastRegion() async throws {
        var rng = SplitMix64(seed: 72)
        let start = Viewport(center: .checked(40.7, -74), zoom: 6, size: Self.screen)
        let (controller, view) = try await Self.controller(20_000, at: start)
        var last = start
        for _ in 0..<30 {
            last = Viewport(
                center: DataShape.clustered.coordinate(using: &rng), zoom: Double.random(in: 3...14, using: &rng),
                size: Self.screen)
            view.visibleViewport = last
            controller.regionDidChange()
        }
        await controller.refreshTask?.value
        Self.expectInStep(controller, view)
        let fresh = await controller.manager.index.clustering(controller.manager.options.clustering).clusters(in: last)
        #expect(Set(controller.markers.map(\.id)) == Set(fresh.map { ClusterMarker<Int>.ID.cluster($0.id) }))
    }

    @Test func editsRefreshTheView() async throws {
        let viewport = Viewport(center: .checked(48.8, 2.3), zoom: 4, size: Self.screen)
        let (controller, view) = try await Self.controller(1_000, at: viewport)
        await controller.remove(Array(0..<500))
        Self.expectInStep(controller, view)
        try await controller.move([Placement(900, latitude: 48.85, longitude: 2.35)])
        try await controller.replaceAll(with: [Placement(1, latitude: 48.85, longitude: 2.35)])
        Self.expectInStep(controller, view)
        #expect(controller.markers.map(\.count) == [1])
        await #expect(throws: BatchError<Int>.self) {
            try await controller.add([Placement(2, latitude: 100, longitude: 0)])
        }
        #expect(controller.markers.map(\.count) == [1])
    }

    @Test func selectAndRevealZoomsToTheElementAndSelectsIt() async throws {
        let viewport = Viewport(center: .checked(48.8, 2.3), zoom: 3, size: Self.screen)
        let (controller, view) = try await Self.controller(at: viewport)
        let revealed = try await controller.selectAndReveal(42)
        let reveal = try #require(await controller.manager.reveal(42, in: Self.screen))
        #expect(revealed == reveal)
        #expect(view.requestedViewports.last?.viewport == reveal.viewport)
        #expect(view.requestedViewports.last?.animated == true)
        let selected = try #require(view.selected.last)
        let members = try await controller.manager.snapshot.members(of: selected)
        #expect(selected.element == 42 || (selected.isSameLocation && members.contains(42)))
        Self.expectInStep(controller, view)
    }

    @Test func selectAndRevealSelectsWhatTheMapShowsWhenTheMapReportsItsMove() async throws {
        // MapKit tells the app that the region changed, and the app asks for a refresh, while the reveal's own refresh
        // is still running: the selection must be of a marker the map shows after both, not of the wide map's cluster.
        let viewport = Viewport(center: .checked(48.8, 2.3), zoom: 3, size: Self.screen)
        let (controller, view) = try await Self.controller(at: viewport)
        view.regionDidChange = { [weak controller] in controller?.regionDidChange() }
        let wide = try #require(await controller.marker(holding: 42))
        #expect(wide.count > 1)
        try await controller.selectAndReveal(42)
        let selected = try #require(view.selected.last)
        #expect(view.shown[selected.id] != nil, "selected \(selected.id), which the map doesn't show")
        let members = try await controller.manager.snapshot.members(of: selected)
        #expect(selected.element == 42 || (selected.isSameLocation && members.contains(42)))
        Self.expectInStep(controller, view)
    }

    @Test func revealingAnElementThatWasNeverAddedSaysSoAndLeavesTheMap() async throws {
        let viewport = Viewport(center: .checked(48.8, 2.3), zoom: 3, size: Self.screen)
        let (controller, view) = try await Self.controller(at: viewport)
        let requested = view.requestedViewports.count
        let selected = view.selected.count
        await #expect(throws: RevealError.notManaged) { try await controller.selectAndReveal(-5) }
        // Removed elements are not managed either.
        await controller.remove([42])
        await #expect(throws: RevealError.notManaged) { try await controller.selectAndReveal(42) }
        #expect(view.requestedViewports.count == requested && view.selected.count == selected)
        #expect(RevealError.notManaged.description.contains("never added"))
    }

    @Test func theDebugGridFollowsTheUpdatesWhenAskedFor() async throws {
        let viewport = Viewport(center: .checked(48.8, 2.3), zoom: 6, size: Self.screen)
        let (controller, view) = try await Self.controller(at: viewport)
        #expect(view.grid.isEmpty)
        controller.showsDebugGrid = true
        await controller.refresh()
        let cells = await controller.manager.snapshot.gridCells
        #expect(view.grid == cells)
        #expect(!view.grid.isEmpty)
        controller.showsDebugGrid = false
        #expect(view.grid.isEmpty)
    }

    @Test func animationCanBeTurnedOff() async throws {
        let view = FakeMapView(Viewport(center: .checked(48.8, 2.3), zoom: 6, size: Self.screen))
        let controller = MapMarkerController(view: view)
        controller.animationDuration = 0
        try await controller.add([Placement(1, latitude: 48.8, longitude: 2.3)])
        #expect(view.transitions.map(\.duration) == [0])
    }

    @Test func aViewWithoutASizeIsLeftAlone() async throws {
        let view = FakeMapView(nil)
        let controller = MapMarkerController(view: view)
        try await controller.add([Placement(1, latitude: 48.8, longitude: 2.3)])
        #expect(view.transitions.isEmpty)
        await #expect(throws: RevealError.noVisibleMap) { try await controller.selectAndReveal(1) }
    }

    // The model is Observation's, iOS 17's and macOS 14's: the test skips on older systems.
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    @Test func theObservableModelPublishesTheLastCamerasMarkers() async throws {
        let model = ClusterMapModel<Int>()
        try await model.add(
            DataShape.uniform.coordinates(count: 2_000, seed: 73).enumerated().map {
                Placement($0.offset, at: $0.element)
            })
        #expect(model.markers.isEmpty)  // no camera yet
        let world = Viewport(rect: .world, size: ViewSize(width: 1024, height: 1024))
        await model.update(for: world)
        #expect(model.markers.reduce(0) { $0 + $1.count } == 2_000)
        #expect(!model.gridCells.isEmpty)
        await model.remove(Array(0..<1_000))
        #expect(model.markers.reduce(0) { $0 + $1.count } == 1_000)
        // Observation tells SwiftUI when the markers change.
        let changed = Gate()
        withObservationTracking {
            _ = model.markers
        } onChange: {
            changed.release()
        }
        try await model.replaceAll(with: [Placement(1, latitude: 0, longitude: 0)])
        #expect(changed.state.released)
        #expect(model.markers.map(\.count) == [1])
    }
}
