// The adapter on Apple's own MapKit, in a window of an iOS simulator: what the mirror's behaviour tests check on Linux
// (Tests/AppleSDKMirror), asked of MapKit itself. The macOS job of .github/workflows/ci.yml runs them with
// `xcodebuild test`; elsewhere (Linux, macOS without UIKit) this file is empty.
#if canImport(MapKit) && canImport(UIKit) && os(iOS)
    import MapClusterMapKit
    import MapKit
    import Testing
    import UIKit

    @MainActor
    @Suite struct MapKitOnDeviceTests {
        @Test func everyMarkerInViewGetsAViewThatMapKitShows() async throws {
            let map = try await DeviceMap()
            for annotation in map.markers where map.isVisible(annotation) {
                let view = try #require(map.mapView.view(for: annotation))
                #expect(!view.isHidden)
                #expect(view.alpha == 1)
                #expect(view.clusteringIdentifier == nil)
                #expect(view.displayPriority == .required)
            }
            // Each place is in exactly one marker.
            let members = map.markers.flatMap { $0.members(of: Int.self) }
            #expect(members.count == Set(members).count)
            #expect(map.markers.map(\.count).reduce(0, +) == members.count)
        }

        @Test func zoomingInSplitsClustersIntoMarkersMapKitShowsWhereTheyStand() async throws {
            let map = try await DeviceMap()
            let before = map.markers.count
            let paris = MKCoordinateRegion(
                center: CLLocationCoordinate2D(latitude: 48.86, longitude: 2.35),
                span: MKCoordinateSpan(latitudeDelta: 1, longitudeDelta: 1))
            map.mapView.setRegion(paris, animated: false)
            try await map.waitUntil("the map shows more markers") { map.markers.count != before }
            try await map.waitUntil("every marker in view has an opaque view") {
                map.markers.filter(map.isVisible).allSatisfy { map.mapView.view(for: $0)?.alpha == 1 }
            }
        }

        @Test func selectAndRevealSelectsTheMarkerOfAPlace() async throws {
            let map = try await DeviceMap()
            let cluster = try #require(map.markers.first { $0.count > 10 })
            let place = try #require(cluster.members(of: Int.self).first)
            let reveal = try await withCheckedThrowingContinuation { continuation in
                map.adapter.selectAndReveal(place) { continuation.resume(with: $0) }
            }
            #expect(reveal.zoom > 4)
            let selected = try #require(map.mapView.selectedAnnotations.first as? ClusterAnnotation)
            #expect(selected.members(of: Int.self).contains(place))
        }
    }

    /// A map view of a phone's size in a window, clustering 5,000 places over Europe through the adapter, with the
    /// delegate the MapKit guide's four steps have.
    @MainActor
    final class DeviceMap: NSObject, MKMapViewDelegate {
        let window = UIWindow(frame: CGRect(x: 0, y: 0, width: 390, height: 844))
        let mapView = MKMapView(frame: CGRect(x: 0, y: 0, width: 390, height: 844))
        let adapter: MKMapViewAdapter<Int>

        init() async throws {
            adapter = MKMapViewAdapter(mapView: mapView)
            super.init()
            window.addSubview(mapView)
            window.isHidden = false
            mapView.delegate = self
            mapView.setRegion(
                MKCoordinateRegion(
                    center: CLLocationCoordinate2D(latitude: 48, longitude: 10),
                    span: MKCoordinateSpan(latitudeDelta: 24, longitudeDelta: 30)),
                animated: false)
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            func next() -> Double {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Double(state >> 11) / Double(1 << 53)
            }
            try await adapter.add(
                (0..<5_000).map { Placement($0, latitude: 40 + next() * 16, longitude: -4 + next() * 28) })
            try await waitUntil("the markers of the region are on the map") { !markers.isEmpty }
            try await waitUntil("MapKit made the views of the markers in view") {
                markers.filter(isVisible).allSatisfy { mapView.view(for: $0) != nil }
            }
        }

        var markers: [ClusterAnnotation] { mapView.annotations.compactMap { $0 as? ClusterAnnotation } }

        func isVisible(_ annotation: ClusterAnnotation) -> Bool {
            mapView.visibleMapRect.contains(MKMapPoint(annotation.coordinate))
        }

        /// Polls every 10 ms, up to 60 s: a bound on a hang, not a timing.
        func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
            for _ in 0..<6_000 {
                if condition() { return }
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            Issue.record("never true: \(what)")
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
#endif
