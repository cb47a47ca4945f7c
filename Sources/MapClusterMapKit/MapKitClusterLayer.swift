#if canImport(MapKit) && !os(watchOS)
    public import MapCluster
    public import MapClusterManager
    public import MapKit

    /// The markers of a `MapMarkerController` on an `MKMapView`: one ``ClusterAnnotation`` per marker, added,
    /// refreshed, moved and removed as each `MarkerTransition` says, through an animator.
    ///
    /// MapKit makes an annotation's view lazily, once the annotation is about to show, and reports it in
    /// `mapView(_:didAdd:)`. So an appearing annotation is added where it splits from, and its fade and glide wait
    /// for its view: ``didAdd(_:)`` starts them. Until the app forwards `mapView(_:didAdd:)` (or when it never
    /// does), annotations appear at their places without a fade, as MapKit's own annotations do.
    @MainActor
    public final class MapKitClusterLayer<Element: Hashable & Sendable>: ClusterMapView {
        /// The map.
        public private(set) weak var mapView: MKMapView?
        /// How transitions are animated.
        public var animator: any ClusterAnnotationAnimator = FadeAndMoveAnimator()
        /// A cluster's title from the annotation, which can read its members (CCHMapClusterController's
        /// `titleForMapClusterAnnotation`); `nil` keeps the manager's (`ClusterManagerOptions.title`).
        public var title: (@MainActor (ClusterAnnotation) -> String?)?
        /// A cluster's subtitle from the annotation; `nil` keeps the manager's.
        public var subtitle: (@MainActor (ClusterAnnotation) -> String?)?
        /// The annotation of each marker on the map.
        public private(set) var annotations: [ClusterMarker<Element>.ID: ClusterAnnotation] = [:]
        private var gridOverlays: [MKPolygon] = []
        /// The annotations of this layer, to tell them from those of other layers on the same map.
        private var owned: Set<ObjectIdentifier> = []
        /// Appearing annotations waiting for MapKit to report their views, with the duration of their transition.
        private var pendingAppearances: [ObjectIdentifier: (move: ClusterAnimation.Move, duration: Double)] = [:]
        /// Whether the app forwards `mapView(_:didAdd:)`: until it does, nothing waits for a view.
        private var hearsDidAdd = false

        /// A layer on a map view.
        public init(mapView: MKMapView) {
            self.mapView = mapView
        }

        /// The map's visible rectangle and size; `nil` before it has a size.
        public var visibleViewport: Viewport? {
            mapView.flatMap { Viewport($0) }
        }

        /// Adds, refreshes and removes annotations, animated by ``animator`` unless the duration is 0.
        public func apply(_ transition: MarkerTransition<Element>) {
            guard let mapView else { return }
            settlePendingAppearances()
            var appearing: [ClusterAnimation.Move] = []
            for appearance in transition.appearances {
                let annotation = ClusterAnnotation(appearance.marker, of: transition.snapshot, at: appearance.start)
                retitle(annotation)
                annotations[appearance.marker.id] = annotation
                owned.insert(ObjectIdentifier(annotation))
                appearing.append(
                    .init(
                        annotation: annotation, view: nil, start: appearance.start.clLocationCoordinate,
                        end: appearance.marker.coordinate.clLocationCoordinate))
            }
            var moving: [ClusterAnimation.Move] = []
            for update in transition.updates {
                guard let annotation = annotations[update.new.id] else { continue }
                annotation.refresh(with: update.new, of: transition.snapshot)
                retitle(annotation)
                let view = mapView.view(for: annotation)
                if update.new.coordinate != update.old.coordinate {
                    moving.append(
                        .init(
                            annotation: annotation, view: view, start: update.old.coordinate.clLocationCoordinate,
                            end: update.new.coordinate.clLocationCoordinate))
                }
                // Let the view show the new count.
                view?.annotation = annotation
            }
            var disappearing: [ClusterAnimation.Move] = []
            for disappearance in transition.disappearances {
                guard let annotation = annotations.removeValue(forKey: disappearance.marker.id) else { continue }
                owned.remove(ObjectIdentifier(annotation))
                disappearing.append(
                    .init(
                        annotation: annotation, view: mapView.view(for: annotation), start: annotation.coordinate,
                        end: disappearance.end.clLocationCoordinate))
            }
            let animates = transition.duration > 0
            let visible = mapView.visibleMapRect
            for move in appearing {
                // MapKit makes a view only for an annotation in the visible rectangle: one that neither starts nor ends
                // in it waits for nothing, and one that starts outside it starts where it ends (and fades in there).
                let startsInView = visible.contains(MKMapPoint(move.start))
                guard animates, hearsDidAdd, startsInView || visible.contains(MKMapPoint(move.end)) else {
                    move.annotation.coordinate = move.end
                    continue
                }
                let start = startsInView ? move.start : move.end
                move.annotation.coordinate = start
                pendingAppearances[ObjectIdentifier(move.annotation)] = (
                    ClusterAnimation.Move(annotation: move.annotation, view: nil, start: start, end: move.end),
                    transition.duration
                )
            }
            // Added where they start: MapKit makes their views later, and ``didAdd(_:)`` animates them from there.
            mapView.addAnnotations(appearing.map(\.annotation))
            let gone = disappearing.map(\.annotation)
            guard animates else {
                for move in moving { move.annotation.coordinate = move.end }
                mapView.removeAnnotations(gone)
                return
            }
            // What goes and what moves already has its views (or none, off screen): they animate now.
            let animation = ClusterAnimation(
                appearing: [], disappearing: disappearing, moving: moving, duration: transition.duration)
            animator.animate(animation, in: mapView) { [weak mapView] in
                mapView?.removeAnnotations(gone)
            }
        }

        /// Starts the fade and glide of the appearing annotations whose views MapKit has just added; call from
        /// `mapView(_:didAdd:)` (through ``MKMapViewAdapter/didAdd(_:)``).
        public func didAdd(_ views: [MKAnnotationView]) {
            hearsDidAdd = true
            guard let mapView else { return }
            var appearing: [ClusterAnimation.Move] = []
            var duration = 0.0
            for view in views {
                guard let annotation = view.annotation as? ClusterAnnotation,
                    let pending = pendingAppearances.removeValue(forKey: ObjectIdentifier(annotation))
                else { continue }
                let move = pending.move
                appearing.append(.init(annotation: annotation, view: view, start: move.start, end: move.end))
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
            for (move, _) in pendingAppearances.values { move.annotation.coordinate = move.end }
            pendingAppearances.removeAll()
        }

        private func retitle(_ annotation: ClusterAnnotation) {
            if let title { annotation.title = title(annotation) }
            if let subtitle { annotation.subtitle = subtitle(annotation) }
        }

        /// Whether an annotation is one of this layer's (several layers may share a map).
        public func owns(_ annotation: ClusterAnnotation) -> Bool {
            owned.contains(ObjectIdentifier(annotation))
        }

        /// Moves the map to the viewport's rectangle.
        public func show(_ viewport: Viewport, animated: Bool) {
            mapView?.setVisibleMapRect(MKMapRect(viewport.rect), animated: animated)
        }

        /// Selects the marker's annotation.
        public func select(_ marker: ClusterMarker<Element>) {
            guard let annotation = annotations[marker.id] else { return }
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
