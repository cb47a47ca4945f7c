import MapCluster
import MapClusterManager
import MapKit
import MirroredMapKitAdapter
import SwiftUI
import Testing

/// What apps coming from CCHMapClusterController, ClusterMap, Cluster and kingpin do with their maps, through the
/// adapter and the mirror: the app's own annotations found and selected, a cluster view of the app's own class,
/// titles read from the members, and SwiftUI's tap on a cluster.
@MainActor
@Suite struct MigrationBehaviourTests {
    @Test func selectAndRevealFindsAndSelectsOneOfTheAppsOwnAnnotations() async throws {
        let regions = try Regions()
        let app = AnnotationMapApp(showing: regions.europe)
        let pins = tenThousandPlaces().prefix(3_000).map { place in
            let pin = MKPointAnnotation(coordinate: CLLocationCoordinate2D(place))
            pin.title = "Place \(place.element)"
            return pin
        }
        try await app.adapter.add(annotations: pins)
        // A pin inside a cluster of the wide map. The map's first region change may overtake the add's refresh (the
        // latest wins): its clusters come with that one.
        try await waitUntil("the map shows a cluster of the pins") {
            app.clusterAnnotations.contains { $0.count > 10 && !$0.isSameLocation }
        }
        let cluster = try #require(app.clusterAnnotations.first { $0.count > 10 && !$0.isSameLocation })
        let pin = try #require(app.adapter.annotations(in: cluster).first)

        let reveal = try await withCheckedThrowingContinuation { continuation in
            app.adapter.selectAndReveal(annotation: pin) { continuation.resume(with: $0) }
        }
        #expect(app.mapView.visibleMapRect == MKMapRect(reveal.viewport.rect))
        // The pin itself is selected where it stands alone (as in the four libraries), or the cluster of its
        // coordinate where others share it.
        let selected = try #require(app.mapView.selectedAnnotations.first)
        if let cluster = selected as? ClusterAnnotation {
            #expect(cluster.isSameLocation && app.adapter.annotations(in: cluster).contains { $0 === pin })
        } else {
            #expect(selected === pin)
        }

        // An annotation the adapter never had is refused, and the map stays.
        let stranger = MKPointAnnotation(coordinate: CLLocationCoordinate2D(latitude: 1, longitude: 1))
        let refused = await withCheckedContinuation { continuation in
            app.adapter.selectAndReveal(annotation: stranger) { continuation.resume(returning: $0) }
        }
        #expect(throws: RevealError.notManaged) { try refused.get() }
        #expect(app.mapView.visibleMapRect == MKMapRect(reveal.viewport.rect))
    }

    @Test func aClusterViewOfTheAppsOwnClassDrawsEveryMarkerAndIsReused() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe) { $0.viewClass = RingedClusterView.self }
        func expectRinged(_ step: String) throws {
            for annotation in app.clusterAnnotations where app.mapView.mirrorIsVisible(annotation) {
                let view = try #require(app.mapView.view(for: annotation) as? RingedClusterView, "\(step)")
                #expect(view.reuseIdentifier == RingedClusterView.reuseIdentifier)
                #expect(view.drawnCounts.last == annotation.count, "\(step): drawn for another annotation")
                #expect(view.layer.borderWidth == (annotation.count >= 100 ? 4 : 2))
            }
        }
        try expectRinged("added")
        #expect(RingedClusterView.reuseIdentifier != StyledClusterAnnotationView.reuseIdentifier)
        // Through a split and a merge: the views MapKit recycles come back as the app's class, redrawn.
        for region in [regions.alps, regions.europe] {
            app.mapView.setVisibleMapRect(region, animated: true)
            try await app.waitUntilMapShowsTheClusters(of: region)
            try expectRinged("moved to \(region)")
        }
        try app.expectScreenAddsUp("with the app's view class")
    }

    @Test func titlesAndSubtitlesAreReadFromTheMembers() async throws {
        let regions = try Regions()
        let title: @MainActor (ClusterAnnotation) -> String? = { cluster in
            let members = cluster.members(of: Int.self)
            guard let first = members.min() else { return nil }
            return cluster.isCluster ? "\(members.count) places from #\(first)" : "Place #\(first)"
        }
        let subtitle: @MainActor (ClusterAnnotation) -> String? = { cluster in
            cluster.members(of: Int.self, limit: 3).map { "#\($0)" }.joined(separator: ", ")
        }
        let app = try await MapApp(showing: regions.europe) { adapter in
            adapter.title = title
            adapter.subtitle = subtitle
        }
        func expectTitled(_ step: String) {
            for annotation in app.clusterAnnotations {
                let members = annotation.members(of: Int.self)
                let first = members.min() ?? -1
                let expected = annotation.isCluster ? "\(members.count) places from #\(first)" : "Place #\(first)"
                #expect(annotation.title == expected, "\(step)")
                #expect(annotation.subtitle == members.prefix(3).map { "#\($0)" }.joined(separator: ", "), "\(step)")
            }
        }
        expectTitled("added")
        #expect(app.clusterAnnotations.contains { $0.isCluster })
        // Markers kept through a zoom get new members, and their titles follow.
        app.mapView.setVisibleMapRect(regions.alps, animated: true)
        try await app.waitUntilMapShowsTheClusters(of: regions.alps)
        expectTitled("zoomed in")
    }

    @Test func aTapOnAClusterInSwiftUIZoomsToWhereItSplits() async throws {
        let regions = try Regions()
        let places = tenThousandPlaces()
        let model = ClusterMapModel<Int>()
        try await model.add(places)
        let europe = try #require(Viewport(regions.europe, size: phone))
        await model.update(for: europe)
        // What the model's markers stand for, from a manager of its own.
        let reference = ClusterManager<Int>()
        try await reference.add(places)
        let wide = try await reference.update(for: europe).snapshot

        let clusters = model.markers.filter { $0.isCluster && !$0.isSameLocation }
        #expect(clusters.count > 5)
        for marker in clusters.prefix(8) {
            // The tap: `position = model.cameraPosition(expanding: marker)`, as the SwiftUI map of the README and the MapKit guide does.
            let position = try #require(model.cameraPosition(expanding: marker))
            let rect = try #require(position.rect)
            let members = try Set(wide.members(of: try #require(wide.marker(id: marker.id))))
            #expect(members.count == marker.count)
            let zoomed = try #require(Viewport(rect, size: phone))
            #expect(zoomed.zoom > europe.zoom)
            // Where the camera goes, every member is in view and they no longer show as one marker.
            for place in places where members.contains(place.element) {
                #expect(rect.contains(MKMapPoint(CLLocationCoordinate2D(place))))
            }
            let there = try await reference.update(for: zoomed).snapshot
            let holding = try there.markers.filter { try !Set(there.members(of: $0)).isDisjoint(with: members) }
            #expect(holding.count >= 2, "marker of \(marker.count) still one marker at zoom \(zoomed.zoom)")
        }
        // A marker whose members share one coordinate never splits: no camera position.
        let sameLocation = ClusterMapModel<Int>()
        try await sameLocation.add((0..<5).map { Placement($0, latitude: 48.85, longitude: 2.35) })
        await sameLocation.update(for: europe)
        let stack = try #require(sameLocation.markers.first)
        #expect(stack.count == 5 && sameLocation.cameraPosition(expanding: stack) == nil)
    }
}

/// A cluster view of an app's own class: Cluster's subclassing of its annotation view.
final class RingedClusterView: StyledClusterAnnotationView {
    /// The count of each annotation it drew.
    private(set) var drawnCounts: [Int] = []

    override func configure() {
        super.configure()
        guard let cluster = annotation as? ClusterAnnotation else { return }
        drawnCounts.append(cluster.count)
        layer.borderWidth = cluster.count >= 100 ? 4 : 2
    }
}

/// A map whose adapter clusters the app's own `MKAnnotation`s, with the delegate the MapKit guide's four steps have.
@MainActor
final class AnnotationMapApp {
    let mapView = MKMapView(frame: CGRect(origin: .zero, size: phone))
    let adapter: MKMapViewAdapter<AnnotationElement>
    private let delegate: AnnotationMapDelegate

    init(showing rect: MKMapRect) {
        adapter = MKMapViewAdapter(mapView: mapView)
        delegate = AnnotationMapDelegate(adapter)
        mapView.visibleMapRect = rect
        mapView.delegate = delegate
    }

    var clusterAnnotations: [ClusterAnnotation] {
        mapView.annotations.compactMap { $0 as? ClusterAnnotation }
    }
}

@MainActor
final class AnnotationMapDelegate: NSObject, MKMapViewDelegate {
    private let adapter: MKMapViewAdapter<AnnotationElement>

    init(_ adapter: MKMapViewAdapter<AnnotationElement>) {
        self.adapter = adapter
    }

    func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {
        adapter.regionDidChange()
    }

    func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView? {
        adapter.view(for: annotation, in: mapView)
    }

    func mapView(_ mapView: MKMapView, didAdd views: [MKAnnotationView]) {
        adapter.didAdd(views)
    }
}
