import MapCluster
import MapClusterManager
import MapKit
import MirroredMapKitAdapter
import Testing

/// MKMapViewAdapter driven as an app drives it: a map view of a phone's size, whose delegate is the app's and forwards
/// to the adapter what the MapKit guide's four steps forward, over the mirror's MKMapView, which keeps the annotations and
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
        // Each annotation in view has a view, the adapter's own, asked of it by the app's delegate; MapKit made them
        // after the annotations were added, and reported them to the app's delegate.
        for annotation in app.mapView.annotations where app.mapView.mirrorIsVisible(annotation) {
            #expect(app.mapView.view(for: annotation) is StyledClusterAnnotationView)
        }
        #expect(!app.mapView.mirrorDidAddBatches.isEmpty)
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
        #expect(app.mapView.view(for: ownPlace) == nil, "MapKit makes views after addAnnotation returns")
        app.mapView.mirrorLayOutIfNeeded()
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
        try await waitUntil("the debug grid is drawn") { !app.mapView.overlays.isEmpty }
        for overlay in app.mapView.overlays {
            #expect(ClusterGrid.renderer(for: overlay) is MKPolygonRenderer)
        }

        // Every region change reached the app's delegate, which forwarded it; the adapter never took its place.
        #expect(app.delegate.regionChanges >= 1)
        #expect(app.mapView.delegate === app.delegate)
    }

    // MARK: What is on screen, through MapKit's lazy views and collisions

    @Test func everyMarkerInViewHasAViewMapKitDoesNotHideAfterEachAddPanZoomSplitAndMerge() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe)
        try app.expectScreenAddsUp("added")
        let panned = MKMapRect(
            x: regions.europe.minX + regions.europe.width / 5, y: regions.europe.minY,
            width: regions.europe.width, height: regions.europe.height)
        let steps = [
            ("panned east", panned), ("zoomed into the Alps: clusters split", regions.alps),
            ("zoomed out: markers merge", regions.europe), ("moved to Iberia", regions.iberia),
        ]
        for (step, region) in steps {
            app.mapView.setVisibleMapRect(region, animated: true)
            try await app.waitUntilMapShowsTheClusters(of: region)
            try app.expectScreenAddsUp(step)
        }
    }

    @Test func theCountsOnScreenAddUpAfterSetRegionWhichTellsWillAndDidChange() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe)
        let willBefore = app.delegate.regionWillChanges
        let didBefore = app.delegate.regionChanges
        // Paris, 3° by 3°: MapKit widens the region to the view's proportions, animated.
        let paris = MKCoordinateRegion(
            center: CLLocationCoordinate2D(latitude: 48.86, longitude: 2.35),
            span: MKCoordinateSpan(latitudeDelta: 3, longitudeDelta: 3))
        app.mapView.setRegion(paris, animated: true)
        let shown = app.mapView.visibleMapRect
        #expect(abs(shown.width / shown.height - Double(phone.width / phone.height)) < 1e-9)
        #expect(app.mapView.mirrorRegionChanges.last?.animated == true)
        try await app.waitUntilMapShowsTheClusters(of: shown)
        try app.expectScreenAddsUp("Paris")
        #expect(app.delegate.regionWillChanges == willBefore + 1)
        #expect(app.delegate.regionChanges >= didBefore + 1)
    }

    // MARK: Split and merge, on the views MapKit made

    @Test func splitsFadeInAndGlideOnTheViewsMapKitReportedAdded() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.europe)
        let addedBefore = app.mapView.mirrorAddedBatches.count
        let reportedBefore = app.mapView.mirrorDidAddBatches.count
        let movesBefore = app.mapView.mirrorAnimatedMoves.count

        app.mapView.setVisibleMapRect(regions.alps, animated: true)
        try await app.waitUntilMapShowsTheClusters(of: regions.alps)

        let added = app.mapView.mirrorAddedBatches[addedBefore...].flatMap { $0 }
        let reported = app.mapView.mirrorDidAddBatches[reportedBefore...].flatMap { $0 }
        let moves = app.mapView.mirrorAnimatedMoves[movesBefore...]
        var faded = 0
        var glided = 0
        for (annotation, start) in added {
            guard let annotation = annotation as? ClusterAnnotation,
                let view = reported.first(where: { $0.annotation === annotation })
            else { continue }
            // Hidden as MapKit reported it, then shown inside an animation block: a fade in.
            let fade = view.mirrorAlphaChanges.suffix(2)
            #expect(fade.map(\.alpha) == [0, 1] && fade.map(\.animated) == [false, true], "popped in: \(fade)")
            faded += 1
            // Out of the cluster it split from, to its own place, while its view was on the map.
            guard Position(start) != Position(annotation.coordinate) else { continue }
            let glide = moves.first { $0.view === view }
            #expect(glide.map { Position($0.from) } == Position(start))
            #expect(glide.map { Position($0.to) } == Position(annotation.coordinate))
            if glide != nil { glided += 1 }
        }
        #expect(faded > 0, "no view MapKit added faded in")
        #expect(glided > 0, "no view MapKit added glided out of its cluster")
    }

    @Test func mergesGlideAndFadeOutOnTheirViewsBeforeMapKitRemovesThem() async throws {
        let regions = try Regions()
        let app = try await MapApp(showing: regions.alps)
        let viewsBefore = Dictionary(
            uniqueKeysWithValues: app.clusterAnnotations.compactMap { annotation in
                app.mapView.view(for: annotation).map {
                    (ObjectIdentifier(annotation), ($0, Position(annotation.coordinate)))
                }
            })
        let removedBefore = app.mapView.mirrorRemovedBatches.count
        let movesBefore = app.mapView.mirrorAnimatedMoves.count

        app.mapView.setVisibleMapRect(regions.europe, animated: true)
        try await app.waitUntilMapShowsTheClusters(of: regions.europe)

        let removed = app.mapView.mirrorRemovedBatches[removedBefore...].flatMap { $0 }
        let moves = app.mapView.mirrorAnimatedMoves[movesBefore...]
        var merged = 0
        for annotation in removed {
            guard let (view, start) = viewsBefore[ObjectIdentifier(annotation)] else { continue }
            // Faded out inside an animation block, and opaque again once removed, for MapKit to reuse.
            let alphas = view.mirrorAlphaChanges
            #expect(alphas.contains { $0.alpha == 0 && $0.animated }, "vanished without a fade")
            #expect(view.alpha == 1)
            let end = Position(annotation.coordinate)
            guard end != start else { continue }
            #expect(moves.contains { $0.view === view && Position($0.from) == start && Position($0.to) == end })
            merged += 1
        }
        #expect(merged > 0, "no view glided into the cluster it merged with")
    }

    @Test func withoutDidAddMarkersAppearInPlaceAndNoneStaysInvisible() async throws {
        let regions = try Regions()
        // An app that never passes on mapView(_:didAdd:): nothing waits for a view that it won't hear of.
        let app = try await MapApp(showing: regions.europe, forwardsDidAdd: false)
        app.mapView.setVisibleMapRect(regions.alps, animated: true)
        try await app.waitUntilMapShowsTheClusters(of: regions.alps)
        try app.expectScreenAddsUp("zoomed in, without didAdd")
        for annotation in app.clusterAnnotations {
            #expect((app.mapView.view(for: annotation)?.alpha ?? 1) == 1)
        }
    }

    // MARK: The async forms

    @Test func theAsyncFormsReturnOnceTheMapHasTheirMarkers() async throws {
        let regions = try Regions()
        let mapView = MKMapView(frame: CGRect(origin: .zero, size: phone))
        mapView.visibleMapRect = regions.europe
        let adapter = MKMapViewAdapter<Int>(mapView: mapView)
        let places = tenThousandPlaces()
        func members() -> Set<Int> {
            Set(adapter.layer.annotations.values.flatMap { $0.members(of: Int.self) })
        }

        try await adapter.add(places)
        let shown = members()
        #expect(!shown.isEmpty)
        let gone = Array(shown.prefix(500))
        await adapter.remove(gone)
        #expect(members().isDisjoint(with: gone))

        // A bad batch is refused whole, naming the placement; the map keeps what it showed.
        let before = members()
        let bad = [Placement(-1, latitude: 48, longitude: 2), Placement(-2, latitude: 91, longitude: 2)]
        await #expect(throws: BatchError<Int>.self) { try await adapter.add(bad) }
        #expect(members() == before)

        try await adapter.replaceAll(with: Array(places.prefix(100)))
        #expect(members().isSubset(of: Set(places.prefix(100).map(\.element))))
        #expect(!members().isEmpty)
    }
}
