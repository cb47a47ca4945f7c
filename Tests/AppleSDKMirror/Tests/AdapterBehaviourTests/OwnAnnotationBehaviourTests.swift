import MapCluster
import MapClusterManager
import MapKit
import MirroredMapKitAdapter
import Synchronization
import Testing

/// The app's own annotations through an adapter of `AnnotationElement`s, as an app coming from
/// CCHMapClusterController, ClusterMap, Cluster or kingpin has them: a single point is the app's own object on the map
/// (`mapView(_:viewFor:)` receives it, `as? Pin` works, selecting and finding its view work), it stays on the map while
/// it stays alone, its title is its own, its view fades and glides as a cluster's does, and nothing the manager runs
/// off the main thread reads it.
@MainActor
@Suite struct OwnAnnotationBehaviourTests {
    @Test func viewForReceivesTheAppsOwnPinForEverySinglePoint() async throws {
        let regions = try Regions()
        let app = try await PinMapApp(showing: regions.europe)
        // Singles on the map are the app's pins, each made a view by the app's delegate, which received the pin
        // itself; clusters are the adapter's.
        let singles = app.mapView.annotations.compactMap { $0 as? Pin }
        #expect(!singles.isEmpty, "no pin stands alone in the view")
        #expect(app.clusters.allSatisfy { $0.count > 1 }, "a single point shown by a ClusterAnnotation")
        #expect(app.clusters.contains { $0.count > 10 })
        for pin in singles where app.mapView.mirrorIsVisible(pin) {
            #expect(app.delegate.viewsAskedFor.contains { $0 === pin })
            let view = try #require(app.mapView.view(for: pin))
            #expect(view is PinView && view.annotation === pin)
        }
        // Every pin in view is on the map as itself or a member of exactly one cluster.
        try app.expectEveryPinInViewShownOnce()
    }

    @Test func selectingAPinInsideAClusterRevealsAndSelectsThatPin() async throws {
        let regions = try Regions()
        let app = try await PinMapApp(showing: regions.europe)
        let cluster = try #require(app.clusters.first { $0.count > 10 && !$0.isSameLocation })
        let pin = try #require(app.adapter.annotations(in: cluster).first as? Pin)
        #expect(app.adapter.view(for: pin) === app.mapView.view(for: cluster), "inside, its view is its cluster's")

        let result = await withCheckedContinuation { continuation in
            app.adapter.selectAnnotation(pin) { continuation.resume(returning: $0) }
        }
        let reveal = try #require(try result.get(), "the map had to move")
        #expect(app.mapView.visibleMapRect == MKMapRect(reveal.viewport.rect))
        #expect(app.mapView.selectedAnnotations.count == 1)
        if let shared = app.mapView.selectedAnnotations.first as? ClusterAnnotation {
            #expect(shared.isSameLocation && app.adapter.annotations(in: shared).contains { $0 === pin })
        } else {
            #expect(app.mapView.selectedAnnotations.first === pin)
            #expect(app.delegate.selectedViews.last?.annotation === pin)
            #expect(app.adapter.view(for: pin) === app.mapView.view(for: pin))
            #expect(app.adapter.view(for: pin) is PinView)
        }
        // Selecting it again, now alone on the map, doesn't move the map; deselecting it works through the adapter.
        let again = await withCheckedContinuation { continuation in
            app.adapter.selectAnnotation(pin) { continuation.resume(returning: $0) }
        }
        if app.mapView.selectedAnnotations.first === pin { #expect(try again.get() == nil) }
        app.adapter.deselectAnnotation(pin)
        #expect(app.mapView.selectedAnnotations.isEmpty)
    }

    @Test func annotationsInARectAreThePinsThereAloneOrClustered() async throws {
        let regions = try Regions()
        let app = try await PinMapApp(showing: regions.europe)
        let rect = regions.alps
        let found = app.adapter.annotations(in: rect)
        let expected = app.pins.filter { rect.contains(MKMapPoint($0.coordinate)) }
        #expect(!expected.isEmpty)
        #expect(Set(found.map { ObjectIdentifier($0) }) == Set(expected.map { ObjectIdentifier($0) }))
        #expect(found.contains { pin in app.mapView.annotations.contains { $0 === pin } } || expected.count > 0)
    }

    @Test func aPinThatStaysAloneAcrossZoomsAndEditsIsNeverRemovedFromTheMap() async throws {
        // Reykjavík, alone on the map at every zoom that shows it.
        let iceland = MKMapRect(try MapRect(west: -30, south: 58, east: -5, north: 68))
        let reykjavik = MKMapRect(try MapRect(west: -23, south: 63.5, east: -20.5, north: 64.6))
        let app = try await PinMapApp(showing: iceland)
        let lone = Pin(number: -1, at: CLLocationCoordinate2D(latitude: 64.15, longitude: -21.94))
        try await app.adapter.add(annotations: [lone])
        try await waitUntil("the lone pin is on the map") { app.mapView.annotations.contains { $0 === lone } }
        for rect in [reykjavik, iceland, reykjavik] {
            app.mapView.setVisibleMapRect(rect, animated: true)
            try await app.waitUntilShown(rect)
        }
        // Pins added and removed elsewhere refresh the map; the lone pin stays.
        try await app.adapter.add(annotations: [Pin(number: -2, at: CLLocationCoordinate2D(latitude: 48, longitude: 2))]
        )
        await app.adapter.remove(annotations: Array(app.pins.prefix(100)))
        let added = app.mapView.mirrorAddedBatches.flatMap { $0 }.filter { $0.annotation === lone }
        let removed = app.mapView.mirrorRemovedBatches.flatMap { $0 }.filter { $0 === lone }
        #expect(added.count == 1, "added \(added.count) times")
        #expect(removed.isEmpty, "removed \(removed.count) times")
        #expect(app.mapView.annotations.contains { $0 === lone })
    }

    @Test func aTitleTheAppChangesShowsAtMapKitsNextRead() async throws {
        let regions = try Regions()
        let app = try await PinMapApp(showing: regions.europe) { adapter in
            // A cluster's title from its members, as the app's own objects, on the main actor.
            adapter.title = { [weak adapter] cluster in
                adapter?.annotations(in: cluster).compactMap { $0.title ?? nil }.min()
            }
        }
        let cluster = try #require(app.clusters.first { $0.count > 10 })
        let member = try #require(app.adapter.annotations(in: cluster).first as? Pin)
        #expect(cluster.title == app.adapter.annotations(in: cluster).compactMap { $0.title ?? nil }.min())
        member.title = "  first of all"
        #expect(cluster.title == "  first of all", "the cluster's title was made before the change")
        // A single pin's title is its own.
        let single = try #require(app.mapView.annotations.first { $0 is Pin } as? Pin)
        single.title = "renamed"
        #expect(app.mapView.annotations.contains { $0 === single && $0.title == "renamed" })
    }

    @Test func splitsFadeInAndGlideOnTheAppsOwnViewsAndMergesPutThemBack() async throws {
        let regions = try Regions()
        let app = try await PinMapApp(showing: regions.europe)
        let reportedBefore = app.mapView.mirrorDidAddBatches.count
        let offsetsBefore = app.mapView.mirrorAnimatedOffsets.count
        let addedBefore = app.mapView.mirrorAddedBatches.count
        let wide = app.clusters.map(\.coordinate)

        app.mapView.setVisibleMapRect(regions.alps, animated: true)
        try await app.waitUntilShown(regions.alps)
        let reported = app.mapView.mirrorDidAddBatches[reportedBefore...].flatMap { $0 }
        let glides = app.mapView.mirrorAnimatedOffsets[offsetsBefore...]
        // Where the wide map's clusters stand on the zoomed-in screen.
        let clusterPoints = wide.map { app.mapView.convert($0, toPointTo: app.mapView) }
        var faded = 0
        var glided = 0
        for (annotation, _) in app.mapView.mirrorAddedBatches[addedBefore...].flatMap({ $0 }) {
            guard let pin = annotation as? Pin, let view = reported.first(where: { $0.annotation === pin }) else {
                continue
            }
            #expect(view is PinView)
            let fade = view.mirrorAlphaChanges.suffix(2)
            #expect(fade.map(\.alpha) == [0, 1] && fade.map(\.animated) == [false, true], "popped in: \(fade)")
            faded += 1
            // Out of the cluster it split from: its view offset to where that cluster stood, then back to the pin.
            guard let glide = glides.first(where: { $0.view === view }) else { continue }
            let own = app.mapView.convert(pin.coordinate, toPointTo: app.mapView)
            let start = CGPoint(x: own.x + glide.from.x, y: own.y + glide.from.y)
            #expect(clusterPoints.contains { abs($0.x - start.x) < 1e-6 && abs($0.y - start.y) < 1e-6 })
            #expect(glide.to == .zero && view.centerOffset == .zero)
            glided += 1
        }
        #expect(faded > 0, "no pin's view faded in")
        #expect(glided > 0, "no pin's view glided out of its cluster")

        // Zooming out again: pins merge into clusters, fading on their views, which MapKit gets back as they were.
        let pinViews = app.mapView.annotations.compactMap { annotation in
            (annotation as? Pin).flatMap { app.mapView.view(for: $0) }
        }
        app.mapView.setVisibleMapRect(regions.europe, animated: true)
        try await app.waitUntilShown(regions.europe)
        let gone = pinViews.filter { view in !app.mapView.annotations.contains { $0 === view.annotation } }
        #expect(!gone.isEmpty, "no pin merged into a cluster")
        for view in gone {
            #expect(view.mirrorAlphaChanges.contains { $0.alpha == 0 && $0.animated }, "vanished without a fade")
            #expect(view.alpha == 1 && view.centerOffset == .zero, "a reused view keeps the merge's fade or offset")
        }
    }

    @Test func backgroundHooksSeeValuesAndNoPinIsReadOffTheMainThread() async throws {
        let regions = try Regions()
        let ranOffMain = Counter()
        var options = ClusterManagerOptions<AnnotationElement>()
        // Each hook the manager runs off the main thread: it sees ids and coordinates, and may not reach the pin
        // (`element.annotation` is the main actor's: Swift refuses it here).
        options.clustering.shouldCluster = { element in
            if !MKPointAnnotation.mirrorRunsOnTheMainQueue() { ranOffMain.add() }
            return element.coordinate.latitude < 70
        }
        options.clustering.position = .custom { cluster in
            if !MKPointAnnotation.mirrorRunsOnTheMainQueue() { ranOffMain.add() }
            return cluster.coordinate
        }
        options.fixPositions = { markers, _ in
            if !MKPointAnnotation.mirrorRunsOnTheMainQueue() { ranOffMain.add() }
            return markers.map(\.coordinate)
        }
        options.title = { marker in
            marker.element.map { "pin at \($0.coordinate.latitude)" } ?? "\(marker.count) pins"
        }
        let app = try await PinMapApp(showing: regions.europe, options: options)
        app.mapView.setVisibleMapRect(regions.alps, animated: true)
        try await app.waitUntilShown(regions.alps)
        for cluster in app.clusters { _ = cluster.title }
        #expect(ranOffMain.value > 0, "no hook ran off the main thread: the test shows nothing")
        let reads = app.pins.map(\.mirrorReadsOffTheMainThread).reduce(0, +)
        #expect(reads == 0, "\(reads) reads of the app's pins off the main thread")
    }

    @Test func zoomLevelIsTheMapsWebZoom() async throws {
        let regions = try Regions()
        let app = try await PinMapApp(showing: regions.europe)
        for rect in [regions.europe, regions.alps] {
            app.mapView.setVisibleMapRect(rect, animated: false)
            // The world is 2^28 map points wide and 256 · 2^zoom screen points: 390 points show rect.width of them.
            let expected = log2(268_435_456 / rect.width * 390 / 256)
            let zoom = try #require(app.adapter.zoomLevel)
            #expect(abs(zoom - expected) < 1e-9, "\(zoom) against \(expected)")
        }
        #expect(MKMapViewAdapter<Int>(mapView: MKMapView(frame: .zero)).zoomLevel == nil, "a map with no size")
    }

    @Test func reloadCallsItsCompletionOnceTheMapShowsTheUpdateAndAnimatesAsAsked() async throws {
        let regions = try Regions()
        let app = try await PinMapApp(showing: regions.europe)
        // Pins the manager has and the map doesn't show yet: added to the manager alone, as a batch job would.
        let late = (0..<200).map {
            Pin(number: 100_000 + $0, at: CLLocationCoordinate2D(latitude: 40.4, longitude: -3.7 + Double($0) * 1e-3))
        }
        try await app.adapter.manager.add(late.map { Placement(AnnotationElement($0), at: $0.coordinate) })
        let movesBefore = app.mapView.mirrorAnimatedMoves.count + app.mapView.mirrorAnimatedOffsets.count
        let shownAtCompletion = await withCheckedContinuation { continuation in
            app.adapter.reload(animated: false) {
                continuation.resume(returning: app.adapter.annotations(in: regions.iberia).count)
            }
        }
        #expect(shownAtCompletion == app.pins.filter { regions.iberia.contains(MKMapPoint($0.coordinate)) }.count + 200)
        #expect(
            app.mapView.mirrorAnimatedMoves.count + app.mapView.mirrorAnimatedOffsets.count == movesBefore,
            "a reload asked not to animate animated")
        let madrid = try #require(
            app.clusters.first { cluster in app.adapter.annotations(in: cluster).contains { $0 === late[0] } })
        #expect(madrid.count >= 200)
    }

    @Test func aCustomPositionFixerPlacesEveryMarkerWhereItSays() async throws {
        let regions = try Regions()
        var options = ClusterManagerOptions<AnnotationElement>()
        // Half a degree north of where the built-in passes put each marker.
        options.fixPositions = { markers, _ in
            markers.map { marker in
                (try? Coordinate(latitude: marker.coordinate.latitude + 0.5, longitude: marker.coordinate.longitude))
                    ?? marker.coordinate
            }
        }
        let app = try await PinMapApp(showing: regions.europe, options: options)
        let markers = try #require(app.adapter.layer.snapshot?.markers)
        var checked = 0
        for marker in markers {
            let shown = try #require(app.adapter.layer.annotation(of: marker.id))
            if let cluster = shown as? ClusterAnnotation {
                #expect(Position(cluster.coordinate) == Position(marker.coordinate.clLocationCoordinate))
                #expect(abs(cluster.coordinate.latitude - marker.cluster.coordinate.latitude - 0.5) < 1e-9)
                checked += 1
            } else if let view = app.mapView.view(for: shown) {
                // The pin keeps its coordinate; its view stands where the fixer put its marker.
                let own = app.mapView.convert(shown.coordinate, toPointTo: app.mapView)
                let fixed = app.mapView.convert(marker.coordinate.clLocationCoordinate, toPointTo: app.mapView)
                #expect(abs(own.x + view.centerOffset.x - fixed.x) < 1e-6)
                #expect(abs(own.y + view.centerOffset.y - fixed.y) < 1e-6)
                #expect(view.centerOffset.y < 0, "north is up")
                checked += 1
            }
        }
        #expect(checked > 20)
    }

    @Test func selectingWithASpanInMetresGoesThereAndSelectsWhatShowsThePin() async throws {
        let regions = try Regions()
        let app = try await PinMapApp(showing: regions.europe)
        let pin = try #require(app.pins.first { regions.alps.contains(MKMapPoint($0.coordinate)) })
        let error = await withCheckedContinuation { continuation in
            app.adapter.selectAnnotation(pin, latitudinalMeters: 20_000, longitudinalMeters: 20_000) {
                continuation.resume(returning: $0)
            }
        }
        #expect(error == nil)
        let shown = app.mapView.visibleMapRect
        #expect(shown.contains(MKMapPoint(pin.coordinate)))
        // 20 km north to south: about 0.18° of latitude.
        let north = MKMapPoint(x: shown.midX, y: shown.minY).coordinate.latitude
        let south = MKMapPoint(x: shown.midX, y: shown.maxY).coordinate.latitude
        #expect(abs((north - south) - 20_000 / 111_320) < 0.02)
        let selected = try #require(app.mapView.selectedAnnotations.first)
        if selected !== pin {
            let cluster = try #require(selected as? ClusterAnnotation)
            #expect(app.adapter.annotations(in: cluster).contains { $0 === pin })
        }
    }

    @Test func aStyleGivenPerClusterAndTheCountLabelReachSubclasses() async throws {
        let regions = try Regions()
        let app = try await PinMapApp(showing: regions.europe) { adapter in
            adapter.viewClass = LabelledClusterView.self
            adapter.style = { cluster in cluster.count >= 100 ? .color(LabelledClusterView.big, radius: 20) : nil }
        }
        var styled = 0
        for cluster in app.clusters where app.mapView.mirrorIsVisible(cluster) {
            let view = try #require(app.mapView.view(for: cluster) as? LabelledClusterView)
            #expect(view.countLabel.textColor === LabelledClusterView.ink, "the subclass restyled the count label")
            guard case .color(let color, let radius) = view.style else {
                Issue.record("an image style")
                continue
            }
            if cluster.count >= 100 {
                #expect(color === LabelledClusterView.big && radius == 20)
                styled += 1
            } else {
                #expect(color !== LabelledClusterView.big && radius == 14, "the view class's own style")
            }
        }
        #expect(styled > 0)
    }
}

// MARK: - The app

/// One of the app's annotations: an `MKPointAnnotation` of its own class, as migrating apps have.
final class Pin: MKPointAnnotation {
    let number: Int

    init(number: Int, at coordinate: CLLocationCoordinate2D) {
        self.number = number
        super.init()
        self.coordinate = coordinate
        title = "Pin \(number)"
    }
}

/// The app's view of its own pins.
final class PinView: MKAnnotationView {
    static let identifier = "the app's pin"
}

/// A cluster view whose subclass restyles the count label.
final class LabelledClusterView: StyledClusterAnnotationView {
    /// The count label's colour, and the big clusters' (colours compare by identity).
    static let ink = UIColor.systemIndigo
    static let big = UIColor.systemRed

    override func configure() {
        super.configure()
        countLabel.textColor = Self.ink
    }
}

/// A count that background hooks add to.
final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}

/// The app's delegate: forwards to the adapter what the MapKit guide's four steps forward, makes its own pins' views,
/// and records what MapKit asked and told it.
@MainActor
final class PinMapDelegate: NSObject, MKMapViewDelegate {
    weak var adapter: MKMapViewAdapter<AnnotationElement>?
    private(set) var viewsAskedFor: [any MKAnnotation] = []
    private(set) var selectedViews: [MKAnnotationView] = []

    func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {
        adapter?.regionDidChange()
    }

    func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView? {
        viewsAskedFor.append(annotation)
        if let view = adapter?.view(for: annotation, in: mapView) { return view }
        guard annotation is Pin else { return nil }
        let view =
            mapView.dequeueReusableAnnotationView(withIdentifier: PinView.identifier)
            ?? PinView(annotation: annotation, reuseIdentifier: PinView.identifier)
        view.annotation = annotation
        return view
    }

    func mapView(_ mapView: MKMapView, didAdd views: [MKAnnotationView]) {
        adapter?.didAdd(views)
    }

    func mapView(_ mapView: MKMapView, didSelect view: MKAnnotationView) {
        selectedViews.append(view)
    }
}

/// A map whose adapter shows 3,000 of the app's pins over Europe.
@MainActor
final class PinMapApp {
    let mapView = MKMapView(frame: CGRect(origin: .zero, size: phone))
    let adapter: MKMapViewAdapter<AnnotationElement>
    let delegate = PinMapDelegate()
    let pins: [Pin]

    init(
        showing rect: MKMapRect, options: ClusterManagerOptions<AnnotationElement> = .init(),
        setUp: (MKMapViewAdapter<AnnotationElement>) -> Void = { _ in }
    ) async throws {
        adapter = try MKMapViewAdapter(mapView: mapView, options: options)
        setUp(adapter)
        pins = tenThousandPlaces().prefix(3_000).map { Pin(number: $0.element, at: CLLocationCoordinate2D($0)) }
        mapView.visibleMapRect = rect
        delegate.adapter = adapter
        mapView.delegate = delegate
        try await adapter.add(annotations: pins)
        try await waitUntilShown(rect)
    }

    var clusters: [ClusterAnnotation] { mapView.annotations.compactMap { $0 as? ClusterAnnotation } }

    /// Waits until the adapter's last update is the region's, its transition applied and its views made.
    func waitUntilShown(_ rect: MKMapRect) async throws {
        try await waitUntil("the map shows \(rect)") {
            mapView.visibleMapRect == rect && adapter.layer.snapshot?.viewport.map { MKMapRect($0.rect) } == rect
        }
        // The region change's own refresh may still come: let the main actor run until nothing is left to do.
        for _ in 0..<20 { await Task.yield() }
        mapView.mirrorLayOutIfNeeded()
    }

    /// Each pin in view is on the map as itself, or a member of exactly one cluster on the map.
    func expectEveryPinInViewShownOnce() throws {
        var shown: [ObjectIdentifier: Int] = [:]
        for annotation in mapView.annotations {
            if let cluster = annotation as? ClusterAnnotation {
                for member in adapter.annotations(in: cluster) { shown[ObjectIdentifier(member), default: 0] += 1 }
            } else if annotation is Pin {
                shown[ObjectIdentifier(annotation), default: 0] += 1
            }
        }
        let inView = pins.filter { mapView.visibleMapRect.contains(MKMapPoint($0.coordinate)) }
        #expect(!inView.isEmpty)
        let wrong = inView.filter { shown[ObjectIdentifier($0)] != 1 }
        #expect(wrong.isEmpty, "\(wrong.count) pins in view shown other than once")
    }
}
