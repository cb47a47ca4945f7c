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
    /// annotations are added). For annotations that are `MKAnnotation` objects, use
    /// ``MKMapViewAdapter/add(annotations:completion:)`` on a controller of ``AnnotationElement``.
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
        /// A cluster's title from its annotation, which can read its members, as CCHMapClusterController's delegate
        /// did; `nil` (the default) keeps `ClusterManagerOptions.title`.
        public var title: (@MainActor (ClusterAnnotation) -> String?)? {
            get { layer.title }
            set { layer.title = newValue }
        }
        /// A cluster's subtitle from its annotation; `nil` keeps `ClusterManagerOptions.subtitle`.
        public var subtitle: (@MainActor (ClusterAnnotation) -> String?)? {
            get { layer.subtitle }
            set { layer.subtitle = newValue }
        }
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
            return view
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

    /// An `MKAnnotation` as a cluster element: compared by object identity, with the title it had when added.
    ///
    /// MapKit annotations are main-actor objects; the manager works off the main actor, so it keeps them only as
    /// elementSlots, and their titles as strings.
    public struct AnnotationElement: Hashable, @unchecked Sendable, TitledElement {
        /// The annotation.
        ///
        /// Touch it on the main actor only.
        public let annotation: any MKAnnotation
        /// Its title when added.
        public let title: String?
        /// Its subtitle when added.
        public let subtitle: String?

        /// The element of an annotation, with its title and subtitle now.
        @MainActor
        public init(_ annotation: any MKAnnotation) {
            self.annotation = annotation
            title = annotation.title ?? nil
            subtitle = annotation.subtitle ?? nil
        }

        /// The same annotation object.
        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.annotation === rhs.annotation }
        /// Hashes the object's identity.
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(annotation)) }
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

        /// Tells the controller that annotations moved (their `coordinate` changed).
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
    }
#endif
