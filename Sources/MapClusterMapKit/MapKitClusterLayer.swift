#if canImport(MapKit) && !os(watchOS)
    public import MapCluster
    public import MapClusterManager
    public import MapKit

    /// The markers of a `MapMarkerController` on an `MKMapView`, added, refreshed, moved and removed as each
    /// `MarkerTransition` says, through an animator: a ``ClusterAnnotation`` for each cluster, and for each single element
    /// the app's own annotation (an ``AnnotationElement``'s) or, for an element that is none, a ``ClusterAnnotation``.
    ///
    /// MapKit makes an annotation's view lazily, once the annotation is about to show, and reports it in
    /// `mapView(_:didAdd:)`. So an appearing annotation is added where it splits from, and its fade and glide wait
    /// for its view: ``didAdd(_:)`` starts them. Until the app forwards `mapView(_:didAdd:)` (or when it never
    /// does), annotations appear at their places without a fade, as MapKit's own annotations do.
    ///
    /// The app's own annotation keeps its coordinate, which is the app's: where its marker stands elsewhere (split out of
    /// a cluster and gliding, fanned out around a shared coordinate, nudged apart from another), its view is offset
    /// there through `centerOffset`, on top of the app's own offset, and put back when the annotation leaves. A single
    /// that stays alone from one update to the next stays on the map, the same object, whatever its marker.
    @MainActor
    public final class MapKitClusterLayer<Element: Hashable & Sendable>: ClusterMapView, ClusterAnnotationTitles {
        /// The map.
        public private(set) weak var mapView: MKMapView?
        /// How transitions are animated.
        public var animator: any ClusterAnnotationAnimator = FadeAndMoveAnimator()
        /// A cluster's title from the annotation, which can read its members (CCHMapClusterController's
        /// `titleForMapClusterAnnotation`), asked on the main actor whenever MapKit reads the title; `nil` keeps the
        /// manager's (`ClusterManagerOptions.title`).
        public var title: (@MainActor (ClusterAnnotation) -> String?)?
        /// A cluster's subtitle from the annotation, asked as ``title`` is; `nil` keeps the manager's.
        public var subtitle: (@MainActor (ClusterAnnotation) -> String?)?
        /// The adapter's annotation of each marker that shows one: the clusters, and the single elements that are no
        /// annotation of the app's.
        public private(set) var annotations: [ClusterMarker<Element>.ID: ClusterAnnotation] = [:]
        /// The app's own annotation of each single marker that shows one.
        public private(set) var ownAnnotations: [ClusterMarker<Element>.ID: any MKAnnotation] = [:]
        /// The snapshot of the markers shown; `nil` before the first.
        public private(set) var snapshot: ClusterSnapshot<Element>?
        private var gridOverlays: [MKPolygon] = []
        /// The annotations of this layer, both kinds, to tell them from those of other layers on the same map.
        private var owned: Set<ObjectIdentifier> = []
        /// Appearing annotations waiting for MapKit to report their views, with the duration of their transition.
        private var pendingAppearances: [ObjectIdentifier: (move: ClusterAnimation.Move, duration: Double)] = [:]
        /// Whether the app forwards `mapView(_:didAdd:)`: until it does, nothing waits for a view.
        private var hearsDidAdd = false
        /// Where each of the app's annotations shows when that is not its own coordinate.
        private var ownPositions: [ObjectIdentifier: CLLocationCoordinate2D] = [:]
        /// The offset this layer added to a view's `centerOffset`, by view.
        private var addedOffsets: [ObjectIdentifier: CGPoint] = [:]
        /// The app's annotations on their way out: fading, removed when their animation ends unless shown again first.
        private var leaving: Set<ObjectIdentifier> = []

        /// A layer on a map view.
        public init(mapView: MKMapView) {
            self.mapView = mapView
        }

        /// The map's visible rectangle and size; `nil` before it has a size.
        public var visibleViewport: Viewport? {
            mapView.flatMap { Viewport($0) }
        }

        /// The annotation that shows a marker: the app's own or the adapter's; `nil` for a marker not shown.
        public func annotation(of marker: ClusterMarker<Element>.ID) -> (any MKAnnotation)? {
            ownAnnotations[marker] ?? annotations[marker]
        }

        /// Adds, refreshes and removes annotations, animated by ``animator`` unless the duration is 0.
        public func apply(_ transition: MarkerTransition<Element>) {
            guard let mapView else { return }
            settlePendingAppearances()
            snapshot = transition.snapshot
            // The app's annotations that show after this transition: one of them that showed before stays on the map.
            var staying = Set<ObjectIdentifier>()
            for marker in transition.appearances.map(\.marker) + transition.updates.map(\.new) {
                if let own = ownAnnotation(of: marker) { staying.insert(ObjectIdentifier(own)) }
            }
            var handedOver: [ObjectIdentifier: (annotation: any MKAnnotation, at: CLLocationCoordinate2D)] = [:]
            var disappearing: [ClusterAnimation.Move] = []
            var moving: [ClusterAnimation.Move] = []
            var appearing: [ClusterAnimation.Move] = []

            /// Takes an annotation of this layer off a marker: it goes (to `end`), unless it is the app's and stays.
            func release(_ annotation: any MKAnnotation, to end: CLLocationCoordinate2D) {
                let key = ObjectIdentifier(annotation)
                if staying.contains(key), !(annotation is ClusterAnnotation) {
                    handedOver[key] = (annotation, position(of: annotation))
                    return
                }
                owned.remove(key)
                if !(annotation is ClusterAnnotation) { leaving.insert(key) }
                disappearing.append(move(annotation, from: position(of: annotation), to: end))
            }
            /// Shows a marker with an annotation: the app's own, or a new one of the adapter's.
            func show(_ marker: ClusterMarker<Element>, from start: Coordinate) {
                let end = marker.coordinate.clLocationCoordinate
                if let own = ownAnnotation(of: marker) {
                    ownAnnotations[marker.id] = own
                    let key = ObjectIdentifier(own)
                    let onTheMap = owned.contains(key) || leaving.remove(key) != nil
                    if let shownAt = handedOver.removeValue(forKey: key)?.at ?? (onTheMap ? position(of: own) : nil) {
                        owned.insert(key)
                        // On the map already, as itself: it moves, if its place changed, and is never removed.
                        if !Self.same(shownAt, end) { moving.append(move(own, from: shownAt, to: end)) }
                        return
                    }
                    owned.insert(key)
                    appearing.append(move(own, from: start.clLocationCoordinate, to: end))
                } else {
                    let annotation = ClusterAnnotation(marker, of: transition.snapshot, at: start)
                    annotation.titles = self
                    annotations[marker.id] = annotation
                    owned.insert(ObjectIdentifier(annotation))
                    appearing.append(move(annotation, from: start.clLocationCoordinate, to: end))
                }
            }

            for disappearance in transition.disappearances {
                let id = disappearance.marker.id
                if let own = ownAnnotations.removeValue(forKey: id) {
                    release(own, to: disappearance.end.clLocationCoordinate)
                } else if let annotation = annotations.removeValue(forKey: id) {
                    release(annotation, to: disappearance.end.clLocationCoordinate)
                }
            }
            for update in transition.updates {
                let id = update.new.id
                let wanted = ownAnnotation(of: update.new)
                if let own = ownAnnotations[id], let wanted, own === wanted {
                    let (start, end) = (position(of: own), update.new.coordinate.clLocationCoordinate)
                    if !Self.same(start, end) { moving.append(move(own, from: start, to: end)) }
                } else if let annotation = annotations[id], wanted == nil {
                    annotation.refresh(with: update.new, of: transition.snapshot)
                    let view = mapView.view(for: annotation)
                    if update.new.coordinate != update.old.coordinate {
                        moving.append(
                            move(
                                annotation, view: view, from: update.old.coordinate.clLocationCoordinate,
                                to: update.new.coordinate.clLocationCoordinate))
                    }
                    // Let the view show the new count.
                    view?.annotation = annotation
                } else {
                    // The marker is shown by another kind of annotation now (a cluster down to one of the app's
                    // annotations, or back): the old one fades where it stands and the new one appears there.
                    if let own = ownAnnotations.removeValue(forKey: id) {
                        release(own, to: position(of: own))
                    } else if let annotation = annotations.removeValue(forKey: id) {
                        release(annotation, to: annotation.coordinate)
                    }
                    show(update.new, from: update.old.coordinate)
                }
            }
            for appearance in transition.appearances {
                show(appearance.marker, from: appearance.start)
            }
            // A staying annotation is shown again by the markers above; one handed over and shown by none would go as any
            // other.
            let shown = Set(ownAnnotations.values.map { ObjectIdentifier($0) })
            for (key, (annotation, at)) in handedOver where !shown.contains(key) {
                owned.remove(key)
                leaving.insert(key)
                disappearing.append(move(annotation, from: at, to: at))
            }

            let animates = transition.duration > 0
            let visible = mapView.visibleMapRect
            var added: [any MKAnnotation] = []
            for move in appearing {
                added.append(move.annotation)
                // MapKit makes a view only for an annotation in the visible rectangle: one that neither starts nor ends
                // in it waits for nothing, and one that starts outside it starts where it ends (and fades in there).
                let startsInView = visible.contains(MKMapPoint(move.start))
                guard animates, hearsDidAdd, startsInView || visible.contains(MKMapPoint(move.end)) else {
                    move.place(at: move.end)
                    continue
                }
                let start = startsInView ? move.start : move.end
                move.place(at: start)
                pendingAppearances[ObjectIdentifier(move.annotation)] = (
                    self.move(move.annotation, from: start, to: move.end), transition.duration
                )
            }
            // Added where they start: MapKit makes their views later, and ``didAdd(_:)`` animates them from there.
            mapView.addAnnotations(added)
            let gone = disappearing.map(\.annotation)
            let goneViews = disappearing.compactMap(\.view)
            guard animates else {
                for move in moving { move.place(at: move.end) }
                remove(gone, views: goneViews)
                return
            }
            // What goes and what moves already has its views (or none, off screen): they animate now.
            let animation = ClusterAnimation(
                appearing: [], disappearing: disappearing, moving: moving, duration: transition.duration)
            animator.animate(animation, in: mapView) { [weak self] in
                self?.remove(gone, views: goneViews)
            }
        }

        /// Takes annotations off the map, and their views back to where the app placed them, for MapKit to reuse.
        ///
        /// One of the app's annotations that a later transition showed again while it faded stays.
        private func remove(_ gone: [any MKAnnotation], views: [MKAnnotationView]) {
            let gone = gone.filter { annotation in
                annotation is ClusterAnnotation || leaving.remove(ObjectIdentifier(annotation)) != nil
            }
            for annotation in gone where !(annotation is ClusterAnnotation) {
                ownPositions[ObjectIdentifier(annotation)] = nil
            }
            for view in views where view.annotation.map({ !owned.contains(ObjectIdentifier($0)) }) ?? true {
                setAddedOffset(of: view, to: .zero)
            }
            mapView?.removeAnnotations(gone)
        }

        /// Starts the fade and glide of the appearing annotations whose views MapKit has just added; call from
        /// `mapView(_:didAdd:)` (through ``MKMapViewAdapter/didAdd(_:)``).
        public func didAdd(_ views: [MKAnnotationView]) {
            hearsDidAdd = true
            guard let mapView else { return }
            var appearing: [ClusterAnimation.Move] = []
            var duration = 0.0
            for view in views {
                guard let annotation = view.annotation, owned.contains(ObjectIdentifier(annotation)) else { continue }
                if !(annotation is ClusterAnnotation) {
                    // A view of the app's annotation, new or reused: it stands where the marker does.
                    offset(view, of: annotation, to: position(of: annotation))
                }
                guard let pending = pendingAppearances.removeValue(forKey: ObjectIdentifier(annotation)) else {
                    continue
                }
                let move = pending.move
                appearing.append(self.move(annotation, view: view, from: move.start, to: move.end))
                duration = max(duration, pending.duration)
            }
            guard !appearing.isEmpty else { return }
            animator.animate(
                ClusterAnimation(appearing: appearing, disappearing: [], moving: [], duration: duration), in: mapView
            ) {}
        }

        /// Puts the appearing annotations whose views never came (off screen) where they end, before the next
        /// transition moves anything.
        private func settlePendingAppearances() {
            for (move, _) in pendingAppearances.values { move.place(at: move.end) }
            pendingAppearances.removeAll()
        }

        // MARK: - Where annotations stand

        /// The app's annotation of a single marker, for an adapter of ``AnnotationElement``s; `nil` for any other.
        private func ownAnnotation(of marker: ClusterMarker<Element>) -> (any MKAnnotation)? {
            (marker.element as? AnnotationElement)?.annotation
        }

        /// Where an annotation of this layer shows now.
        private func position(of annotation: any MKAnnotation) -> CLLocationCoordinate2D {
            if let cluster = annotation as? ClusterAnnotation { return cluster.coordinate }
            return ownPositions[ObjectIdentifier(annotation)] ?? annotation.coordinate
        }

        /// An annotation's path, with what moves it: its coordinate, or for the app's own, its view's offset.
        private func move(
            _ annotation: any MKAnnotation, view: MKAnnotationView? = nil, from start: CLLocationCoordinate2D,
            to end: CLLocationCoordinate2D
        ) -> ClusterAnimation.Move {
            let view = view ?? mapView?.view(for: annotation)
            if let cluster = annotation as? ClusterAnnotation {
                return .init(annotation: annotation, view: view, start: start, end: end) { cluster.coordinate = $0 }
            }
            return .init(annotation: annotation, view: view, start: start, end: end) { [weak self] coordinate in
                guard let self else { return }
                let key = ObjectIdentifier(annotation)
                ownPositions[key] = Self.same(coordinate, annotation.coordinate) ? nil : coordinate
                if let view = view ?? mapView?.view(for: annotation) { offset(view, of: annotation, to: coordinate) }
            }
        }

        /// Offsets the view of one of the app's annotations so that it stands at `coordinate`, replacing the offset
        /// this layer added before (the app's own `centerOffset` stays under it).
        private func offset(
            _ view: MKAnnotationView, of annotation: any MKAnnotation, to coordinate: CLLocationCoordinate2D
        ) {
            guard let mapView else { return }
            let own = mapView.convert(annotation.coordinate, toPointTo: mapView)
            let shown = mapView.convert(coordinate, toPointTo: mapView)
            setAddedOffset(of: view, to: CGPoint(x: shown.x - own.x, y: shown.y - own.y))
        }

        /// Replaces the offset this layer added to a view's `centerOffset` with `wanted`; `.zero` gives the view back as
        /// the app placed it.
        private func setAddedOffset(of view: MKAnnotationView, to wanted: CGPoint) {
            let key = ObjectIdentifier(view)
            let before = addedOffsets[key] ?? .zero
            guard wanted != before else { return }
            view.centerOffset = CGPoint(
                x: view.centerOffset.x - before.x + wanted.x, y: view.centerOffset.y - before.y + wanted.y)
            addedOffsets[key] = wanted == .zero ? nil : wanted
        }

        private static func same(_ lhs: CLLocationCoordinate2D, _ rhs: CLLocationCoordinate2D) -> Bool {
            lhs.latitude == rhs.latitude && lhs.longitude == rhs.longitude
        }

        /// Whether an annotation is one of this layer's (several layers may share a map).
        public func owns(_ annotation: any MKAnnotation) -> Bool {
            owned.contains(ObjectIdentifier(annotation))
        }

        /// Moves the map to the viewport's rectangle.
        public func show(_ viewport: Viewport, animated: Bool) {
            mapView?.setVisibleMapRect(MKMapRect(viewport.rect), animated: animated)
        }

        /// Selects the marker's annotation: the app's own, for a single one of an adapter of ``AnnotationElement``s.
        public func select(_ marker: ClusterMarker<Element>) {
            guard let annotation = annotation(of: marker.id) else { return }
            mapView?.selectAnnotation(annotation, animated: true)
        }

        /// Replaces the grid overlays: one polygon per cell, drawn by ``ClusterGrid/renderer(for:)``.
        public func showDebugGrid(_ cells: [GridCell]) {
            guard let mapView else { return }
            mapView.removeOverlays(gridOverlays)
            gridOverlays = cells.map { cell in
                let rect = cell.rect
                let corners = [
                    MKMapPoint(x: rect.minX, y: rect.minY), MKMapPoint(x: rect.maxX, y: rect.minY),
                    MKMapPoint(x: rect.maxX, y: rect.maxY), MKMapPoint(x: rect.minX, y: rect.maxY),
                ]
                // An explicit buffer rather than `&corners`: the Linux typecheck (scripts/check-mapkit.sh) has no
                // Objective-C standard library for implicit pointer conversions.
                let polygon = corners.withUnsafeBufferPointer { buffer in
                    buffer.baseAddress.map { MKPolygon(points: $0, count: buffer.count) } ?? MKPolygon()
                }
                polygon.title = ClusterGrid.overlayTitle
                return polygon
            }
            mapView.addOverlays(gridOverlays)
        }
    }

    /// The debug grid's overlays.
    public enum ClusterGrid {
        /// The title of every grid overlay, to tell them from the app's own.
        public static let overlayTitle = "MapCluster debug grid"

        /// A renderer for a grid overlay, or `nil` for other overlays: return it from
        /// `mapView(_:rendererFor:)`.
        @MainActor
        public static func renderer(for overlay: any MKOverlay) -> MKOverlayRenderer? {
            guard let polygon = overlay as? MKPolygon, polygon.title == overlayTitle else { return nil }
            let renderer = MKPolygonRenderer(polygon: polygon)
            renderer.strokeColor = .systemRed
            renderer.lineWidth = 1
            return renderer
        }
    }
#endif
