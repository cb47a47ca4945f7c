import MapCluster
import MapClusterManager
import MapKit
import MirroredMapKitAdapter
import Testing

/// MKMapViewAdapter driven as an app drives it: a map view of a phone's size, whose delegate is the app's and forwards
/// to the adapter what the README's quick start forwards, over the mirror's MKMapView, which keeps the annotations and
/// views it is given and records each call.
///
/// What the map shows is compared with an independent `ClusterManager` over the same points and viewport: the adapter
/// must put one annotation on the map for each of the manager's markers, where the marker stands, with its count.
@MainActor
@Suite struct AdapterBehaviourTests {
    @Test func addingTenThousandAnnotationsShowsTheClustersOfTheVisibleRegion() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe)
        let shown = app.shown()
        #expect(shown.count > 20)
        #expect(shown.count < app.places.count / 10, "10,000 places shown as \(shown.count) annotations")
        #expect(shown.contains { $0.count > 1 })
        try await app.expectMapShowsTheClusters(of: regions.europe)
        // Each annotation's view is the adapter's own, asked of it by the app's delegate.
        for annotation in app.mapView.annotations {
            #expect(app.mapView.view(for: annotation) is StyledClusterAnnotationView)
        }
    }

    @Test func aRegionChangeReclusters() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe)
        let before = app.shown()
        app.mapView.setVisibleMapRect(regions.alps, animated: true)
        try await app.waitUntilMapShowsTheClusters(of: regions.alps)
        #expect(app.shown() != before)
        #expect(app.delegate.regionChanges >= 1)
    }

    @Test func theLatestRegionWins() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe)
        // Five moves before the adapter can answer any: only the last may stay on the map.
        let moves = [regions.alps, regions.europe, regions.iberia, regions.alps, regions.iberia]
        for region in moves { app.mapView.setVisibleMapRect(region, animated: false) }
        try await app.waitUntilMapShowsTheClusters(of: regions.iberia)
        // Nothing older lands after it: the next updates (if any) are the last region's too.
        for _ in 0..<50 { await Task.yield() }
        try await app.expectMapShowsTheClusters(of: regions.iberia)
        let lastApplied = try #require(app.updates.last?.snapshot.viewport)
        #expect(MKMapRect(lastApplied.rect) == regions.iberia)
    }

    @Test func splitsStartWhereTheirClusterStoodAndMergesEndWhereTheirClusterStands() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe)
        let wide = Set(app.shown().map(\.position))
        let batchesBefore = app.mapView.mirrorAddedBatches.count

        // Zooming in splits clusters: each new annotation is added where a cluster of the wider map stood (or where
        // it will stand itself) and glides to its own place.
        app.mapView.setVisibleMapRect(regions.alps, animated: true)
        try await app.waitUntilMapShowsTheClusters(of: regions.alps)
        let added = app.mapView.mirrorAddedBatches[batchesBefore...].flatMap { $0 }
        #expect(!added.isEmpty)
        var splits = 0
        for (annotation, start) in added {
            let end = Position(annotation.coordinate)
            #expect(wide.contains(Position(start)) || Position(start) == end)
            if Position(start) != end, wide.contains(Position(start)) { splits += 1 }
        }
        #expect(splits > 0, "no annotation split out of a cluster")

        // Zooming out merges them again: each annotation that goes first glides to where the cluster it merges into
        // stands (or stays where it is), and is removed only then.
        let narrow = app.shown()
        let removalsBefore = app.mapView.mirrorRemovedBatches.count
        app.mapView.setVisibleMapRect(regions.europe, animated: true)
        try await app.waitUntilMapShowsTheClusters(of: regions.europe)
        let wideAgain = Set(app.shown().map(\.position))
        let removed = app.mapView.mirrorRemovedBatches[removalsBefore...].flatMap { $0 }
        #expect(!removed.isEmpty)
        let startOf = Dictionary(narrow.map { ($0.id, $0.position) }, uniquingKeysWith: { first, _ in first })
        var merges = 0
        for annotation in removed {
            let end = Position(annotation.coordinate)
            let start = try #require(startOf[ObjectIdentifier(annotation)])
            #expect(wideAgain.contains(end) || end == start)
            if end != start, wideAgain.contains(end) { merges += 1 }
        }
        #expect(merges > 0, "no annotation merged into a cluster")
    }

    @Test func selectAndRevealZoomsToWhereTheElementStandsAlone() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe)
        // A place inside a cluster of the wide map.
        let cluster = try #require(app.clusterAnnotations.first { $0.count > 10 })
        let place = try #require(cluster.members(of: Int.self).first)

        let reveal = try await withCheckedThrowingContinuation { continuation in
            app.adapter.selectAndReveal(place) { continuation.resume(with: $0) }
        }
        #expect(app.mapView.visibleMapRect == MKMapRect(reveal.viewport.rect))
        #expect(reveal.zoom > Viewport(regions.europe, size: phone)?.zoom ?? .infinity)
        let selected = try #require(app.mapView.selectedAnnotations.first as? ClusterAnnotation)
        #expect(app.mapView.selectedAnnotations.count == 1)
        #expect(selected.members(of: Int.self).contains(place))
        // Alone, or only with places on its own coordinate.
        #expect(selected.count == 1 || selected.isSameLocation)
        // The app's delegate hears of the selection, with the adapter's view.
        #expect(app.delegate.selectedViews.last === app.mapView.view(for: selected))
        // And the map shows the clusters of where it went.
        try await app.waitUntilMapShowsTheClusters(of: MKMapRect(reveal.viewport.rect))
    }

    @Test func theAppsDelegateStillHandlesWhatTheAdapterDoesNot() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe)
        #expect(app.mapView.delegate === app.delegate)

        // The app's own annotation: the adapter gives no view for it, so the app's delegate draws it as before.
        let ownPlace = MKPointAnnotation(coordinate: CLLocationCoordinate2D(latitude: 48.85, longitude: 2.35))
        app.mapView.addAnnotation(ownPlace)
        #expect(app.adapter.view(for: ownPlace, in: app.mapView) == nil)
        #expect(app.mapView.view(for: ownPlace)?.reuseIdentifier == MapAppDelegate.ownReuseIdentifier)
        #expect(app.delegate.ownViewsMade == 1)

        // Its selection reaches the app, which sees it is not a cluster.
        app.mapView.selectAnnotation(ownPlace, animated: false)
        #expect(app.delegate.selectedViews.last?.annotation === ownPlace)

        // The app's own overlay is the app's to draw; the debug grid's are the adapter's.
        let corners = [MKMapPoint(x: 0, y: 0), MKMapPoint(x: 10, y: 0), MKMapPoint(x: 10, y: 10)]
        let ownArea = try #require(
            corners.withUnsafeBufferPointer { buffer in buffer.baseAddress.map { MKPolygon(points: $0, count: 3) } })
        #expect(ClusterGrid.renderer(for: ownArea) == nil)
        app.adapter.showsDebugGrid = true
        app.adapter.regionDidChange()
        try await app.waitUntil("the debug grid is drawn") { !app.mapView.overlays.isEmpty }
        for overlay in app.mapView.overlays {
            #expect(ClusterGrid.renderer(for: overlay) is MKPolygonRenderer)
        }

        // Every region change reached the app's delegate, which forwarded it; the adapter never took its place.
        #expect(app.delegate.regionChanges >= 1)
        #expect(app.mapView.delegate === app.delegate)
    }
}

// MARK: - The regions

/// A phone's map view, in points.
let phone = CGSize(width: 390, height: 844)

/// Europe, the Alps, Iberia: regions of the map by their corners, as MapKit's map rectangles.
struct Regions {
    let europe: MKMapRect
    let alps: MKMapRect
    let iberia: MKMapRect

    init() throws {
        europe = MKMapRect(try MapRect(west: -12, south: 35, east: 32, north: 62))
        alps = MKMapRect(try MapRect(west: 5, south: 44, east: 12, north: 48.5))
        iberia = MKMapRect(try MapRect(west: -10, south: 36, east: 4, north: 44))
    }
}

/// A coordinate that can be compared and hashed, to the precision the adapter passes through (it copies doubles).
struct Position: Hashable, CustomStringConvertible {
    let latitude: Double
    let longitude: Double

    init(_ coordinate: CLLocationCoordinate2D) {
        latitude = coordinate.latitude
        longitude = coordinate.longitude
    }

    var description: String { "(\(latitude), \(longitude))" }
}

/// What one annotation on the map says: where, how many, and which object.
struct Shown: Hashable {
    let position: Position
    let count: Int
    let id: ObjectIdentifier
}

// MARK: - The app

/// The app's side of the map: its delegate, which forwards to the adapter as the README's quick start does, draws its
/// own annotations, and counts what it was told.
@MainActor
final class MapAppDelegate: NSObject, MKMapViewDelegate {
    static let ownReuseIdentifier = "the app's own"
    weak var adapter: MKMapViewAdapter<Int>?
    private(set) var regionChanges = 0
    private(set) var ownViewsMade = 0
    private(set) var selectedViews: [MKAnnotationView] = []

    func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {
        regionChanges += 1
        adapter?.regionDidChange()
    }

    func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView? {
        if let view = adapter?.view(for: annotation, in: mapView) { return view }
        ownViewsMade += 1
        return MKAnnotationView(annotation: annotation, reuseIdentifier: Self.ownReuseIdentifier)
    }

    func mapView(_ mapView: MKMapView, didSelect view: MKAnnotationView) {
        selectedViews.append(view)
    }
}

/// What the adapter's controller tells: each update the map applied.
@MainActor
final class UpdateRecorder: MapMarkerControllerDelegate {
    private(set) var updates: [ClusterUpdate<Int>] = []

    func markerController(didUpdate update: ClusterUpdate<Int>) {
        updates.append(update)
    }
}

/// A map view, the app's delegate, the adapter, and 10,000 places added through it.
@MainActor
final class MapApp {
    let mapView: MKMapView
    let delegate = MapAppDelegate()
    let recorder = UpdateRecorder()
    let adapter: MKMapViewAdapter<Int>
    let places: [Placement<Int>]
    /// The same places in a manager of its own: what the map should show.
    private let reference = ClusterManager<Int>()

    var updates: [ClusterUpdate<Int>] { recorder.updates }

    init(showing rect: MKMapRect) async throws {
        mapView = MKMapView(frame: CGRect(origin: .zero, size: phone))
        adapter = MKMapViewAdapter(mapView: mapView)
        places = tenThousandPlaces()
        mapView.visibleMapRect = rect
        mapView.delegate = delegate
        adapter.delegate = recorder
        delegate.adapter = adapter
        try await reference.add(places)
        let error = await withCheckedContinuation { continuation in
            adapter.add(places) { continuation.resume(returning: $0) }
        }
        if let error { throw error }
        try await waitUntilMapShowsTheClusters(of: rect)
    }

    var clusterAnnotations: [ClusterAnnotation] {
        mapView.annotations.compactMap { $0 as? ClusterAnnotation }
    }

    /// The adapter's annotations on the map, in a stable order.
    func shown() -> [Shown] {
        clusterAnnotations.map { Shown(position: Position($0.coordinate), count: $0.count, id: ObjectIdentifier($0)) }
            .sorted {
                ($0.position.latitude, $0.position.longitude, $0.count) < (
                    $1.position.latitude, $1.position.longitude, $1.count
                )
            }
    }

    /// What the map should show for a region: the reference manager's markers, as positions and counts.
    func expected(for rect: MKMapRect) async throws -> [Position: [Int]] {
        let viewport = try #require(Viewport(rect, size: phone))
        let markers = try await reference.update(for: viewport).snapshot.markers
        return Dictionary(grouping: markers) { Position($0.coordinate.clLocationCoordinate) }
            .mapValues { $0.map(\.count).sorted() }
    }

    func actual() -> [Position: [Int]] {
        Dictionary(grouping: shown(), by: \.position).mapValues { $0.map(\.count).sorted() }
    }

    func expectMapShowsTheClusters(of rect: MKMapRect) async throws {
        #expect(mapView.visibleMapRect == rect)
        #expect(actual() == (try await expected(for: rect)))
    }

    /// Waits until the map shows exactly the reference's markers for a region, its animations done.
    func waitUntilMapShowsTheClusters(of rect: MKMapRect) async throws {
        let expected = try await expected(for: rect)
        try await waitUntil("the map shows the clusters of \(rect)") {
            mapView.visibleMapRect == rect && actual() == expected
        }
    }

    /// Gives the adapter's tasks the main actor until `condition` holds, looking again every millisecond.
    ///
    /// It fails after 60,000 looks: a bound on a hang, far beyond what a correct adapter needs on a loaded machine
    /// (an update of these 10,000 places takes milliseconds), so no test depends on how fast the machine is.
    func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<60_000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw NeverTrue(what: what)
    }
}

/// A condition a test waited for in vain.
struct NeverTrue: Error, CustomStringConvertible {
    let what: String
    var description: String { "never true: \(what)" }
}

/// 10,000 places over Europe, dense in a few cities and spread thinly between, the same on every run.
func tenThousandPlaces() -> [Placement<Int>] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(state >> 11) / Double(1 << 53)
    }
    let cities = [(48.86, 2.35), (52.52, 13.40), (41.39, 2.17), (45.46, 9.19), (46.95, 7.45), (40.42, -3.70)]
    return (0..<10_000).map { id in
        if id % 2 == 0 {
            let city = cities[id / 2 % cities.count]
            return Placement(id, latitude: city.0 + (next() - 0.5) * 0.6, longitude: city.1 + (next() - 0.5) * 0.9)
        }
        return Placement(id, latitude: 36 + next() * 24, longitude: -9 + next() * 38)
    }
}
