#if canImport(MapKit) && canImport(SwiftUI)
    public import MapCluster
    public import MapClusterManager
    public import MapKit
    public import SwiftUI

    extension Viewport {
        /// The viewport of a SwiftUI `Map`'s camera, turned as the camera is, in a map view of `size` points (from a
        /// `GeometryReader`).
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
        public init?(_ context: MapCameraUpdateContext, size: CGSize) {
            self.init(context.rect, size: size, heading: context.camera.heading)
        }
    }

    // The model is iOS 17's and macOS 14's (Observation): so is every extension of it.
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    extension ClusterMapModel {
        /// Clusters what a SwiftUI `Map` shows after its camera moved.
        ///
        /// From `onMapCameraChange`, with the size of the map from a `GeometryReader`:
        ///
        ///     GeometryReader { geometry in
        ///         Map { ForEach(model.markers) { marker in Annotation(…) } }
        ///             .onMapCameraChange { context in model.cameraDidChange(context, size: geometry.size) }
        ///     }
        public func cameraDidChange(_ context: MapCameraUpdateContext, size: CGSize) {
            guard let viewport = Viewport(context, size: size) else { return }
            cameraDidChange(to: viewport)
        }

        /// Where a tap on a marker takes a `Map(position:)`: the rectangle of ``viewport(expanding:)``, where the
        /// marker's members no longer show as one marker; `nil` for a marker that never splits.
        ///
        ///     Annotation(…, coordinate: marker.coordinate.clLocationCoordinate) {
        ///         Button { if let next = model.cameraPosition(expanding: marker) { position = next } } label: { … }
        ///     }
        public func cameraPosition(expanding marker: ClusterMarker<Element>) -> MapCameraPosition? {
            viewport(expanding: marker).map { .rect(MKMapRect($0.rect)) }
        }
    }
#endif
