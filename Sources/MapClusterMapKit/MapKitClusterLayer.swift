#if canImport(MapKit) && !os(watchOS)
    public import MapCluster
    public import MapClusterManager
    public import MapKit

    /// The markers of a ``MapMarkerController`` on an `MKMapView`: one ``ClusterAnnotation`` per marker, added,
    /// refreshed, moved and removed as each ``MarkerTransition`` says, through an animator.
    @MainActor
    public final class MapKitClusterLayer<Element: Hashable & Sendable>: ClusterMapView {
        /// The map.
        public private(set) weak var mapView: MKMapView?
        /// How transitions are animated.
        public var animator: any ClusterAnnotationAnimator = FadeAndMoveAnimator()
        /// The annotation of each marker on the map.
        public private(set) var annotations: [ClusterMarker<Element>.ID: ClusterAnnotation] = [:]
        private var gridOverlays: [MKPolygon] = []
        /// The annotations of this layer, to tell them from those of other layers on the same map.
        private var owned: Set<ObjectIdentifier> = []

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
            var appearing: [ClusterAnimation.Move] = []
            for appearance in transition.appearances {
                let annotation = ClusterAnnotation(appearance.marker, of: transition.snapshot, at: appearance.start)
                annotations[appearance.marker.id] = annotation
                owned.insert(ObjectIdentifier(annotation))
                appearing.append(
                    .init(
                        annotation: annotation, start: appearance.start.clLocationCoordinate,
                        end: appearance.marker.coordinate.clLocationCoordinate))
            }
            var moving: [ClusterAnimation.Move] = []
            for update in transition.updates {
                guard let annotation = annotations[update.new.id] else { continue }
                annotation.refresh(with: update.new, of: transition.snapshot)
                if update.new.coordinate != update.old.coordinate {
                    moving.append(
                        .init(
                            annotation: annotation, start: update.old.coordinate.clLocationCoordinate,
                            end: update.new.coordinate.clLocationCoordinate))
                }
                // Let the view show the new count.
                if let view = mapView.view(for: annotation) { view.annotation = annotation }
            }
            var disappearing: [ClusterAnimation.Move] = []
            for disappearance in transition.disappearances {
                guard let annotation = annotations.removeValue(forKey: disappearance.marker.id) else { continue }
                owned.remove(ObjectIdentifier(annotation))
                disappearing.append(
                    .init(
                        annotation: annotation, start: annotation.coordinate,
                        end: disappearance.end.clLocationCoordinate))
            }
            mapView.addAnnotations(appearing.map(\.annotation))
            let gone = disappearing.map(\.annotation)
            guard transition.duration > 0 else {
                for move in appearing + moving { move.annotation.coordinate = move.end }
                mapView.removeAnnotations(gone)
                return
            }
            let animation = ClusterAnimation(
                appearing: appearing, disappearing: disappearing, moving: moving, duration: transition.duration)
            animator.animate(animation, in: mapView) { [weak mapView] in
                mapView?.removeAnnotations(gone)
            }
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
