import MapKit
import Testing

/// The mirror's MapKit behaviours on their own, without the adapter: what the behaviour tests rely on to fail when
/// an adapter reaches for a view too early or lets MapKit hide a marker.
@MainActor
@Suite struct MirrorBehaviourTests {
    @Test func viewsAreMadeAfterAddAnnotationsReturnsForTheVisibleAnnotationsOnly() async throws {
        let map = SmallMap()
        let inside = MKPointAnnotation(coordinate: MKMapPoint(x: 500, y: 500).coordinate)
        let outside = MKPointAnnotation(coordinate: CLLocationCoordinate2D(latitude: 60, longitude: 120))
        map.mapView.addAnnotations([inside, outside])
        #expect(map.mapView.view(for: inside) == nil)
        #expect(map.delegate.viewsMade == 0)
        // The layout pass runs on the next turn of the main actor.
        try await waitUntil("the layout pass made the view", looks: 10_000) { map.mapView.view(for: inside) != nil }
        #expect(map.mapView.view(for: outside) == nil)
        #expect(map.delegate.added.map { $0.map(\.annotation) }.count == 1)
        #expect(map.delegate.added.first?.first?.annotation === inside)
        // Moving the map to the other one makes its view; removing an annotation sends its view to the reuse queue.
        map.mapView.setVisibleMapRect(
            MKMapRect(origin: MKMapPoint(outside.coordinate), size: MKMapSize(width: 1, height: 1)), animated: false)
        map.mapView.mirrorLayOutIfNeeded()
        let outsideView = try #require(map.mapView.view(for: outside))
        map.mapView.removeAnnotation(outside)
        #expect(map.mapView.view(for: outside) == nil)
        #expect(map.mapView.dequeueReusableAnnotationView(withIdentifier: SmallMapDelegate.identifier) === outsideView)
    }

    @Test func aPointAnnotationReadOffTheMainThreadIsCounted() async {
        let pin = MKPointAnnotation(coordinate: CLLocationCoordinate2D(latitude: 1, longitude: 2))
        pin.title = "read off the main thread"
        _ = pin.title
        #expect(pin.mirrorReadsOffTheMainThread == 0, "a read on the main thread is not counted")
        // What a background hook that reached an annotation would do: Swift needs an unsafe escape to let it.
        nonisolated(unsafe) let reached = pin
        await Task.detached {
            _ = reached.title
            _ = reached.coordinate
        }.value
        #expect(pin.mirrorReadsOffTheMainThread == 2)
    }

    @Test func collidingViewsBelowRequiredAreHiddenAndSharedIdentifiersAreClustered() {
        func hidden(
            priority: MKFeatureDisplayPriority, mode: MKAnnotationView.CollisionMode, identifier: String? = nil
        ) -> [MirrorHiding?] {
            let map = SmallMap()
            map.delegate.configure = { view in
                view.frame.size = CGSize(width: 30, height: 30)
                view.displayPriority = priority
                view.collisionMode = mode
                view.clusteringIdentifier = identifier
            }
            // Two annotations 10 points apart on a 100-point map of a 1,000-unit square.
            let a = MKPointAnnotation(coordinate: MKMapPoint(x: 500, y: 500).coordinate)
            let b = MKPointAnnotation(coordinate: MKMapPoint(x: 600, y: 500).coordinate)
            map.mapView.addAnnotations([a, b])
            map.mapView.mirrorLayOutIfNeeded()
            return [a, b].map { map.mapView.view(for: $0)?.mirrorHiddenBy }
        }
        #expect(hidden(priority: .defaultHigh, mode: .circle).filter { $0 == .collision }.count == 1)
        #expect(hidden(priority: .defaultLow, mode: .rectangle).filter { $0 == .collision }.count == 1)
        #expect(hidden(priority: .required, mode: .circle) == [nil, nil])
        #expect(hidden(priority: .defaultLow, mode: .none) == [nil, nil])
        #expect(
            hidden(priority: .required, mode: .circle, identifier: "places").filter { $0 == .clusteredByMapKit }.count
                == 1)
    }

    @Test func regionChangesAreToldBeforeAndAfterAndSetRegionFitsTheView() async throws {
        let map = SmallMap()
        // The map's first rectangle was set before it had a delegate, which hears of it once the move is over.
        try await waitUntil("the first move was told", looks: 10_000) { map.delegate.regionDidChanges == [false] }
        map.delegate.regionDidChanges.removeAll()
        map.mapView.setRegion(
            MKCoordinateRegion(
                center: CLLocationCoordinate2D(latitude: 10, longitude: 10),
                span: MKCoordinateSpan(latitudeDelta: 2, longitudeDelta: 8)),
            animated: true)
        #expect(map.delegate.regionWillChanges == [true])
        #expect(map.delegate.regionDidChanges.isEmpty, "told after the move, not during it")
        try await waitUntil("setRegion was told", looks: 10_000) { map.delegate.regionDidChanges == [true] }
        // A square view: the region widened to a square.
        let rect = map.mapView.visibleMapRect
        #expect(abs(rect.width - rect.height) < 1e-6 * rect.width)
        #expect(abs(map.mapView.region.center.latitude - 10) < 1e-6)
        #expect(map.mapView.region.span.longitudeDelta >= 8 - 1e-9)
    }
}

/// A 100-point square map of a 1,000-unit square of the world, with a delegate that records what it is told.
@MainActor
final class SmallMap {
    let mapView = MKMapView(frame: CGRect(x: 0, y: 0, width: 100, height: 100))
    let delegate = SmallMapDelegate()

    init() {
        mapView.visibleMapRect = MKMapRect(x: 0, y: 0, width: 1_000, height: 1_000)
        mapView.delegate = delegate
    }
}

@MainActor
final class SmallMapDelegate: NSObject, MKMapViewDelegate {
    static let identifier = "pin"
    var configure: (MKAnnotationView) -> Void = { _ in }
    private(set) var viewsMade = 0
    private(set) var added: [[MKAnnotationView]] = []
    private(set) var regionWillChanges: [Bool] = []
    var regionDidChanges: [Bool] = []

    func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView? {
        viewsMade += 1
        let view = MKAnnotationView(annotation: annotation, reuseIdentifier: Self.identifier)
        configure(view)
        return view
    }

    func mapView(_ mapView: MKMapView, didAdd views: [MKAnnotationView]) {
        added.append(views)
    }

    func mapView(_ mapView: MKMapView, regionWillChangeAnimated animated: Bool) {
        regionWillChanges.append(animated)
    }

    func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {
        regionDidChanges.append(animated)
    }
}
