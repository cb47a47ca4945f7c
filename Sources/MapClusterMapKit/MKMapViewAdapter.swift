#if canImport(MapKit) && !os(watchOS)
    public import MapCluster
    public import MapClusterManager
    public import MapKit

    /// Clustering for an `MKMapView`.
    ///
    /// Integration takes a few lines:
    ///
    ///     let clusters = MKMapViewAdapter<Place.ID>(mapView: mapView)
    ///     clusters.add(places.map { Placement($0.id, at: $0.coordinate) })
    ///
    ///     func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {
    ///         clusters.regionDidChange()
    ///     }
    ///     func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView? {
    ///         clusters.view(for: annotation, in: mapView)
    ///     }
    ///     func mapView(_ mapView: MKMapView, didAdd views: [MKAnnotationView]) {
    ///         clusters.didAdd(views)
    ///     }
    ///
    /// The map view's delegate stays the app's: the app calls ``regionDidChange()`` from its own
    /// `mapView(_:regionDidChangeAnimated:)`, asks ``view(for:in:)`` for the views of cluster annotations, and
    /// passes on the views MapKit added, whose fades and glides start then (MapKit makes views lazily, after the
    /// annotations are added).
    ///
    /// For the app's own `MKAnnotation` objects, use an adapter of ``AnnotationElement``s and
    /// ``MKMapViewAdapter/add(annotations:completion:)``: a single one is shown as the app's own object, as
    /// CCHMapClusterController, ClusterMap, Cluster and kingpin show it, so `mapView(_:viewFor:)` receives it (the
    /// adapter's ``view(for:in:)`` answers `nil`, and the app's delegate makes its view as before), and `as? MyPlace`,
    /// `selectAnnotation(_:animated:)` and `view(for:)` work on it. Clusters are ``ClusterAnnotation``s.
    ///
    /// Everything here runs on the main actor. What the manager runs off it (clustering, `ClusterOptions.shouldCluster`,
    /// a custom position, `ClusterManagerOptions.title`, `ClusterManagerOptions.fixPositions`) sees values only.
    @MainActor
    public final class MKMapViewAdapter<Element: Hashable & Sendable> {
        /// The platform-neutral controller: what is shown, and when.
        public let controller: MapMarkerController<MapKitClusterLayer<Element>>
        /// The annotations on the map.
        public let layer: MapKitClusterLayer<Element>

        /// A controller for a map view, with the default options.
        public init(mapView: MKMapView) {
            layer = MapKitClusterLayer(mapView: mapView)
            controller = MapMarkerController(view: layer)
        }

        /// A controller for a map view.
        ///
        /// - Throws: `OptionError` naming the first option that fails `ClusterManagerOptions.validate()`.
        public init(mapView: MKMapView, options: ClusterManagerOptions<Element>) throws(OptionError) {
            layer = MapKitClusterLayer(mapView: mapView)
            controller = try MapMarkerController(view: layer, options: options)
        }

        /// The manager: elements, options, snapshots, `reveal`.
        public var manager: ClusterManager<Element> { controller.manager }

        /// Told before each update and after the map shows it (Cluster's `willUpdate`/`didUpdate`); held weakly.
        public var delegate: (any MapMarkerControllerDelegate<Element>)? {
            get { controller.delegate }
            set { controller.delegate = newValue }
        }
        /// The class of the views ``view(for:in:)`` makes: ``StyledClusterAnnotationView`` or a subclass of it.
        public var viewClass: StyledClusterAnnotationView.Type = StyledClusterAnnotationView.self
        /// A cluster's title from its annotation; `nil` (the default) keeps `ClusterManagerOptions.title`.
        ///
        /// It can read the members (as the app's own objects, through `annotations(in:)`), as
        /// CCHMapClusterController's delegate did. It is asked on the main actor each time MapKit reads the title, so a
        /// title made from what the app changes shows the change.
        public var title: (@MainActor (ClusterAnnotation) -> String?)? {
            get { layer.title }
            set { layer.title = newValue }
        }
        /// A cluster's subtitle from its annotation; `nil` keeps `ClusterManagerOptions.subtitle`.
        public var subtitle: (@MainActor (ClusterAnnotation) -> String?)? {
            get { layer.subtitle }
            set { layer.subtitle = newValue }
        }
        /// How each cluster is drawn, by its annotation (Cluster's style given per annotation); `nil` (the default)
        /// keeps the view class's own ``StyledClusterAnnotationView/style``.
        ///
        /// Asked on the main actor by ``view(for:in:)``, each time it hands MapKit a view.
        public var style: (@MainActor (ClusterAnnotation) -> ClusterStyle?)?
        /// How annotations appear, move and go; default ``FadeAndMoveAnimator``.
        public var animator: any ClusterAnnotationAnimator {
            get { layer.animator }
            set { layer.animator = newValue }
        }
        /// How long fades and moves take, in seconds; 0 turns animation off.
        ///
        /// Default 0.2.
        public var animationDuration: Double {
            get { controller.animationDuration }
            set { controller.animationDuration = newValue }
        }
        /// Whether the grid of each update is drawn.
        ///
        /// Return ``ClusterGrid/renderer(for:)`` from `mapView(_:rendererFor:)` to draw it. Default `false`.
        public var showsDebugGrid: Bool {
            get { controller.showsDebugGrid }
            set { controller.showsDebugGrid = newValue }
        }

        // MARK: - Elements

        /// Adds elements (or moves those already there); `completion` gets the batch's error, if it was rejected.
        public func add(
            _ placements: [Placement<Element>], completion: (@MainActor (BatchError<Element>?) -> Void)? = nil
        ) {
            Task {
                do throws(BatchError<Element>) {
                    try await controller.add(placements)
                    completion?(nil)
                } catch {
                    completion?(error)
                }
            }
        }

        /// Adds elements (or moves those already there), and returns once the map is refreshed.
        ///
        /// A region change during that refresh overtakes it, and its own update shows the change instead.
        ///
        /// - Throws: `BatchError` naming the first invalid placement; nothing is added then.
        public func add(_ placements: [Placement<Element>]) async throws(BatchError<Element>) {
            try await controller.add(placements)
        }

        /// Removes elements, and returns once the map is refreshed.
        ///
        /// A region change during that refresh overtakes it, and its own update shows the change instead.
        public func remove(_ elements: [Element]) async {
            await controller.remove(elements)
        }

        /// Replaces every element, and returns once the map is refreshed.
        ///
        /// A region change during that refresh overtakes it, and its own update shows the change instead.
        ///
        /// - Throws: `BatchError` naming the first invalid placement; nothing changes then.
        public func replaceAll(with placements: [Placement<Element>]) async throws(BatchError<Element>) {
            try await controller.replaceAll(with: placements)
        }

        /// Removes elements.
        public func remove(_ elements: [Element], completion: (@MainActor () -> Void)? = nil) {
            Task {
                await controller.remove(elements)
                completion?()
            }
        }

        /// Replaces every element; `completion` gets the batch's error, if it was rejected.
        public func replaceAll(
            with placements: [Placement<Element>], completion: (@MainActor (BatchError<Element>?) -> Void)? = nil
        ) {
            Task {
                do throws(BatchError<Element>) {
                    try await controller.replaceAll(with: placements)
                    completion?(nil)
                } catch {
                    completion?(error)
                }
            }
        }

        /// Changes the options (cell size, positions, overlap, titles…) and re-clusters.
        ///
        /// - Throws: `OptionError` naming the first option that fails `ClusterManagerOptions.validate()`, before
        ///   anything changes; `completion` is then not called.
        public func setOptions(
            _ options: ClusterManagerOptions<Element>, completion: (@MainActor () -> Void)? = nil
        ) throws(OptionError) {
            try options.validate()
            Task {
                // Checked above: it can't fail.
                try? await controller.setOptions(options)
                completion?()
            }
        }

        // MARK: - The map

        /// Call from `mapView(_:regionDidChangeAnimated:)`.
        public func regionDidChange() {
            controller.regionDidChange()
        }

        /// The view for one of this controller's annotations, or `nil` for other annotations (the app's own, or the
        /// user location), which the app's delegate then handles as it would.
        public func view(for annotation: any MKAnnotation, in mapView: MKMapView) -> MKAnnotationView? {
            guard let annotation = annotation as? ClusterAnnotation, layer.owns(annotation) else { return nil }
            let identifier = viewClass.reuseIdentifier
            let view =
                mapView.dequeueReusableAnnotationView(withIdentifier: identifier) as? StyledClusterAnnotationView
                ?? viewClass.init(annotation: annotation, reuseIdentifier: identifier)
            view.annotation = annotation
            if let style, let chosen = style(annotation) { view.style = chosen }
            return view
        }

        /// The map's zoom level now, as the web's maps count it (at zoom *z* the world is 256 · 2^*z* points wide):
        /// ClusterMap's, Cluster's and CCHMapClusterController's `zoomLevel`; `nil` while the map has no size.
        public var zoomLevel: Double? {
            layer.visibleViewport?.zoom
        }

        /// Clusters the map again now, animated or not, and calls `completion` once the map shows the update:
        /// ClusterMap's and Cluster's `reload(mapView:completion:)`, and kingpin's refresh that says whether to
        /// animate, per call.
        ///
        /// A region change while it runs overtakes it; `completion` then waits for the map to show that one.
        public func reload(animated: Bool = true, completion: (@MainActor () -> Void)? = nil) {
            Task {
                await controller.reload(animated: animated)
                completion?()
            }
        }

        /// Clusters the map again now, animated or not, and returns once the map shows the update.
        public func reload(animated: Bool = true) async {
            await controller.reload(animated: animated)
        }

        /// Starts the fade and glide of the annotations whose views MapKit has just added.
        ///
        /// Call from `mapView(_:didAdd:)`: MapKit makes views lazily, after the annotations are added. Views that
        /// aren't the adapter's are left alone. Without it, annotations appear in place, without animation.
        public func didAdd(_ views: [MKAnnotationView]) {
            layer.didAdd(views)
        }

        /// Zooms to the smallest zoom at which an element stands alone (or with only the elements on its coordinate)
        /// and selects its annotation.
        ///
        /// `completion` gets where the map went, or why it didn't move (`RevealError`: an element that isn't
        /// managed, or a map without a size).
        public func selectAndReveal(
            _ element: Element, animated: Bool = true,
            completion: (@MainActor (Result<Reveal, RevealError>) -> Void)? = nil
        ) {
            Task {
                do throws(RevealError) {
                    completion?(.success(try await controller.selectAndReveal(element, animated: animated)))
                } catch {
                    completion?(.failure(error))
                }
            }
        }
    }

    extension MKMapViewAdapter where Element == AnnotationElement {
        /// Adds `MKAnnotation`s, at their coordinates now; `completion` gets the batch's error (naming the annotation
        /// with an invalid coordinate), if it was rejected.
        public func add(
            annotations: [any MKAnnotation], completion: (@MainActor (BatchError<Element>?) -> Void)? = nil
        ) {
            add(Self.placements(of: annotations), completion: completion)
        }

        /// Removes `MKAnnotation`s.
        public func remove(annotations: [any MKAnnotation], completion: (@MainActor () -> Void)? = nil) {
            remove(annotations.map { AnnotationElement($0) }, completion: completion)
        }

        /// Replaces every annotation.
        public func replaceAll(
            annotations: [any MKAnnotation], completion: (@MainActor (BatchError<Element>?) -> Void)? = nil
        ) {
            replaceAll(
                with: Self.placements(of: annotations), completion: completion)
        }

        /// Tells the adapter that annotations moved (their `coordinate` changed): CCHMapClusterController's
        /// `annotations(_:didChangeCoordinate:)`; `completion` runs once the map shows them where they are.
        public func annotationsDidMove(_ annotations: [any MKAnnotation], completion: (@MainActor () -> Void)? = nil) {
            let placements = Self.placements(of: annotations)
            Task {
                try? await controller.move(placements)
                completion?()
            }
        }

        /// Adds `MKAnnotation`s, at their coordinates now, and returns once the map is refreshed.
        ///
        /// A region change during that refresh overtakes it, and its own update shows the change instead.
        ///
        /// - Throws: `BatchError` naming the annotation with an invalid coordinate; nothing is added then.
        public func add(annotations: [any MKAnnotation]) async throws(BatchError<Element>) {
            try await add(Self.placements(of: annotations))
        }

        /// Removes `MKAnnotation`s, and returns once the map is refreshed.
        ///
        /// A region change during that refresh overtakes it, and its own update shows the change instead.
        public func remove(annotations: [any MKAnnotation]) async {
            await remove(annotations.map { AnnotationElement($0) })
        }

        /// Replaces every annotation, and returns once the map is refreshed.
        ///
        /// A region change during that refresh overtakes it, and its own update shows the change instead.
        ///
        /// - Throws: `BatchError` naming the annotation with an invalid coordinate; nothing changes then.
        public func replaceAll(annotations: [any MKAnnotation]) async throws(BatchError<Element>) {
            try await replaceAll(with: Self.placements(of: annotations))
        }

        /// Zooms to the smallest zoom at which one of the app's annotations stands alone (or with only those on its
        /// coordinate) and selects the marker that shows it: CCHMapClusterController's
        /// `selectAnnotation(_:andZoomToRegionWithLatitudinalMeters:longitudinalMeters:)`.
        public func selectAndReveal(
            annotation: any MKAnnotation, animated: Bool = true,
            completion: (@MainActor (Result<Reveal, RevealError>) -> Void)? = nil
        ) {
            selectAndReveal(AnnotationElement(annotation), animated: animated, completion: completion)
        }

        /// Each annotation as an element, at its coordinate now.
        private static func placements(of annotations: [any MKAnnotation]) -> [Placement<AnnotationElement>] {
            annotations.map { Placement(AnnotationElement($0), at: $0.coordinate) }
        }

        /// The app's annotations a cluster annotation stands for.
        public func annotations(in cluster: ClusterAnnotation) -> [any MKAnnotation] {
            cluster.members(of: AnnotationElement.self).map(\.annotation)
        }

        /// The app's annotations whose coordinates are in a rectangle, whether each shows alone or inside a cluster:
        /// `MKMapView.annotations(in:)` for the annotations the adapter holds, of the region the last update
        /// clustered (the visible one and its margin).
        ///
        /// - Complexity: O(*m* + *k*) for *m* markers and the *k* members of those whose bounds meet the rectangle.
        public func annotations(in rect: MKMapRect) -> [any MKAnnotation] {
            guard let snapshot = layer.snapshot else { return [] }
            var found: [any MKAnnotation] = []
            for marker in snapshot.markers {
                // Compared here rather than by MKMapRect.intersects: a single's bounds have no width.
                guard let bounds = try? snapshot.bounds(of: marker), bounds.minX <= rect.maxX, rect.minX <= bounds.maxX,
                    bounds.minY <= rect.maxY, rect.minY <= bounds.maxY
                else { continue }
                let members = (try? snapshot.membersWithCoordinates(of: marker)) ?? []
                for member in members where rect.contains(MKMapPoint(member.coordinate.clLocationCoordinate)) {
                    found.append(member.element.annotation)
                }
            }
            return found
        }

        /// The annotation on the map that shows one of the app's: itself when it stands alone, or the
        /// ``ClusterAnnotation`` that holds it; `nil` when no marker of the last update shows it.
        public func annotation(showing annotation: any MKAnnotation) -> (any MKAnnotation)? {
            guard let marker = layer.snapshot?.marker(holding: AnnotationElement(annotation)) else { return nil }
            return layer.annotation(of: marker.id)
        }

        /// The view of what shows one of the app's annotations: its own view when it stands alone, or the view of the
        /// cluster that holds it; `nil` while MapKit has made none (off screen) or no marker shows it.
        public func view(for annotation: any MKAnnotation) -> MKAnnotationView? {
            self.annotation(showing: annotation).flatMap { layer.mapView?.view(for: $0) }
        }

        /// Selects one of the app's annotations, wherever it is.
        ///
        /// At once when it stands alone on the map; otherwise the map first goes to where it stands alone
        /// (``selectAndReveal(annotation:animated:completion:)``), then selects it. `completion` gets where the map
        /// went (`nil` when it didn't move), or why it couldn't.
        public func selectAnnotation(
            _ annotation: any MKAnnotation, animated: Bool = true,
            completion: (@MainActor (Result<Reveal?, RevealError>) -> Void)? = nil
        ) {
            if let shown = self.annotation(showing: annotation), shown === annotation, let mapView = layer.mapView {
                mapView.selectAnnotation(annotation, animated: animated)
                completion?(.success(nil))
                return
            }
            selectAndReveal(annotation: annotation, animated: animated) { completion?($0.map { $0 }) }
        }

        /// Deselects one of the app's annotations, or the cluster that shows it, whichever is selected.
        public func deselectAnnotation(_ annotation: any MKAnnotation, animated: Bool = true) {
            guard let mapView = layer.mapView else { return }
            for shown in [annotation, self.annotation(showing: annotation)].compactMap({ $0 })
            where mapView.selectedAnnotations.contains(where: { $0 === shown }) {
                mapView.deselectAnnotation(shown, animated: animated)
            }
        }

        /// Moves the map to a region of a span in metres around one of the app's annotations and selects what shows
        /// it there (itself, or the cluster that holds it): CCHMapClusterController's
        /// `selectAnnotation(_:andZoomToRegionWithLatitudinalMeters:longitudinalMeters:)`.
        ///
        /// `completion` gets `nil`, or why the map didn't move (`RevealError`).
        public func selectAnnotation(
            _ annotation: any MKAnnotation, latitudinalMeters: CLLocationDistance,
            longitudinalMeters: CLLocationDistance, animated: Bool = true,
            completion: (@MainActor (RevealError?) -> Void)? = nil
        ) {
            let region = MKCoordinateRegion(
                center: annotation.coordinate, latitudinalMeters: latitudinalMeters,
                longitudinalMeters: longitudinalMeters)
            guard let size = layer.mapView?.bounds.size, let viewport = Viewport(MKMapRect(region), size: size) else {
                completion?(.noVisibleMap)
                return
            }
            let element = AnnotationElement(annotation)
            Task {
                do throws(RevealError) {
                    try await controller.select(element, showing: viewport, animated: animated)
                    completion?(nil)
                } catch {
                    completion?(error)
                }
            }
        }
    }
#endif
