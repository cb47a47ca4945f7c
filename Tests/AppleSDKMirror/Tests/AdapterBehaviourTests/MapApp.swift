import MapCluster
import MapClusterManager
import MapKit
import MirroredMapKitAdapter
import Testing

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

/// The app's side of the map: its delegate, which forwards to the adapter as the MapKit guide's four steps do, draws its
/// own annotations, and counts what it was told.
@MainActor
final class MapAppDelegate: NSObject, MKMapViewDelegate {
    static let ownReuseIdentifier = "the app's own"
    weak var adapter: MKMapViewAdapter<Int>?
    /// Whether it passes on `mapView(_:didAdd:)`, as the MapKit guide's four steps do.
    var forwardsDidAdd = true
    private(set) var regionWillChanges = 0
    private(set) var regionChanges = 0
    private(set) var ownViewsMade = 0
    private(set) var selectedViews: [MKAnnotationView] = []

    func mapView(_ mapView: MKMapView, regionWillChangeAnimated animated: Bool) {
        regionWillChanges += 1
    }

    func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {
        regionChanges += 1
        adapter?.regionDidChange()
    }

    func mapView(_ mapView: MKMapView, didAdd views: [MKAnnotationView]) {
        if forwardsDidAdd { adapter?.didAdd(views) }
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
    /// The reference's markers for the region last asked of it.
    private var lastExpected: [Position: [Int]] = [:]

    var updates: [ClusterUpdate<Int>] { recorder.updates }

    /// The app, its places added and shown.
    ///
    /// - Parameters:
    ///   - rect: the region the map shows.
    ///   - forwardsDidAdd: whether the app's delegate passes on `mapView(_:didAdd:)`.
    ///   - setUp: what the app sets on the adapter before it adds its places.
    /// - Throws: the batch's error, or ``NeverTrue`` if the map never shows the clusters.
    init(
        showing rect: MKMapRect, forwardsDidAdd: Bool = true, setUp: (MKMapViewAdapter<Int>) -> Void = { _ in }
    ) async throws {
        delegate.forwardsDidAdd = forwardsDidAdd
        mapView = MKMapView(frame: CGRect(origin: .zero, size: phone))
        adapter = MKMapViewAdapter(mapView: mapView)
        setUp(adapter)
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
        lastExpected = Dictionary(grouping: markers) { Position($0.coordinate.clLocationCoordinate) }
            .mapValues { $0.map(\.count).sorted() }
        return lastExpected
    }

    /// The sum of the reference's counts of the markers standing in a rectangle, from the last expected region.
    private func expectedOnScreen(in rect: MKMapRect) -> Int {
        lastExpected.filter { position, _ in
            rect.contains(
                MKMapPoint(CLLocationCoordinate2D(latitude: position.latitude, longitude: position.longitude)))
        }.values.flatMap { $0 }.reduce(0, +)
    }

    func actual() -> [Position: [Int]] {
        Dictionary(grouping: shown(), by: \.position).mapValues { $0.map(\.count).sorted() }
    }

    func expectMapShowsTheClusters(of rect: MKMapRect) async throws {
        #expect(mapView.visibleMapRect == rect)
        #expect(actual() == (try await expected(for: rect)))
    }

    /// Waits until the map shows exactly the reference's markers for a region, its animations done, and MapKit has
    /// made the views of those in view.
    func waitUntilMapShowsTheClusters(of rect: MKMapRect) async throws {
        let expected = try await expected(for: rect)
        try await waitUntil("the map shows the clusters of \(rect)") {
            mapView.visibleMapRect == rect && actual() == expected
        }
        mapView.mirrorLayOutIfNeeded()
    }

    /// What the screen shows: every annotation in the visible rectangle has a view, MapKit hides none of them, and
    /// the counts of those views add up to the places in view (each place in view is counted by exactly one).
    func expectScreenAddsUp(_ step: String) throws {
        mapView.mirrorLayOutIfNeeded()
        var countedOnScreen = 0
        for annotation in clusterAnnotations where mapView.mirrorIsVisible(annotation) {
            let view = try #require(mapView.view(for: annotation), "\(step): an annotation in view has no view")
            #expect(view.mirrorHiddenBy == nil, "\(step): MapKit hides a marker of \(annotation.count)")
            #expect(view.clusteringIdentifier == nil, "\(step): MapKit would cluster the adapter's views itself")
            countedOnScreen += annotation.count
        }
        // Each place in view is a member of exactly one annotation on the map: none lost, none counted twice.
        var owners: [Int: Int] = [:]
        for annotation in clusterAnnotations {
            for place in annotation.members(of: Int.self) { owners[place, default: 0] += 1 }
        }
        let rect = mapView.visibleMapRect
        let inView = places.filter { rect.contains(MKMapPoint(CLLocationCoordinate2D($0))) }
        #expect(!inView.isEmpty, "\(step): no place in view")
        let miscounted = inView.filter { owners[$0.element] != 1 }
        #expect(miscounted.isEmpty, "\(step): \(miscounted.count) places in view are not in exactly one marker")
        #expect(owners.values.reduce(0, +) == clusterAnnotations.map(\.count).reduce(0, +))
        // And what the screen shows is what an independent manager says it should.
        #expect(countedOnScreen == expectedOnScreen(in: rect))
    }
}

/// Gives the main actor's tasks (the adapter's, the mirror's layout passes) the main actor until `condition` holds,
/// looking again every millisecond.
///
/// It fails after `looks` looks: a bound on a hang, far beyond what a correct adapter needs on a loaded machine (an
/// update of 10,000 places takes milliseconds), so no test depends on how fast the machine is.
@MainActor
func waitUntil(_ what: String, looks: Int = 60_000, _ condition: () -> Bool) async throws {
    for _ in 0..<looks {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(1))
    }
    throw NeverTrue(what: what)
}

/// A condition a test waited for in vain.
struct NeverTrue: Error, CustomStringConvertible {
    let what: String
    var description: String { "never true: \(what)" }
}

extension CLLocationCoordinate2D {
    init(_ placement: Placement<Int>) {
        self.init(latitude: placement.latitude, longitude: placement.longitude)
    }
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
