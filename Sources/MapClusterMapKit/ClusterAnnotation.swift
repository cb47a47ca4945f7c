#if canImport(MapKit)
    public import MapCluster
    public import MapKit

    /// What a ``MapClusterController`` adds to the map for each marker: a cluster, or a single element.
    ///
    /// Its coordinate is observable by MapKit (`@objc dynamic`), so changing it inside an animation block moves its
    /// view: that is how markers split out of and merge into their neighbours. The class is not generic (Objective-C
    /// sees it); ``marker(of:)`` and ``members(of:offset:limit:)`` give back the typed marker.
    @MainActor
    public final class ClusterAnnotation: NSObject, MKAnnotation {
        /// Where MapKit draws it.
        @objc public dynamic var coordinate: CLLocationCoordinate2D
        /// The title, from the manager's title function.
        @objc public dynamic var title: String?
        /// The subtitle, from the manager's subtitle function.
        @objc public dynamic var subtitle: String?

        /// How many elements it stands for.
        public private(set) var count: Int
        /// Whether it stands for more than one element.
        public var isCluster: Bool { count > 1 }
        /// Whether all its members share one coordinate.
        public private(set) var isUniqueLocation: Bool
        /// The smallest map rectangle holding its members: `mapView.setVisibleMapRect(annotation.mapRect, …)` zooms
        /// to show them.
        public private(set) var mapRect: MKMapRect

        /// The marker, type-erased: a `ClusterMarker<Element>`.
        private var storedMarker: any Sendable

        init<Element>(_ marker: ClusterMarker<Element>, at coordinate: Coordinate) {
            self.coordinate = coordinate.clLocationCoordinate
            storedMarker = marker
            title = marker.title
            subtitle = marker.subtitle
            count = marker.count
            isUniqueLocation = marker.isUniqueLocation
            mapRect = MKMapRect(marker.cluster.bounds)
        }

        /// Shows another state of the same marker (new members, new title).
        func refresh<Element>(with marker: ClusterMarker<Element>) {
            storedMarker = marker
            title = marker.title
            subtitle = marker.subtitle
            count = marker.count
            isUniqueLocation = marker.isUniqueLocation
            mapRect = MKMapRect(marker.cluster.bounds)
        }

        /// The marker, if its elements are of this type.
        public func marker<Element>(of type: Element.Type = Element.self) -> ClusterMarker<Element>? {
            storedMarker as? ClusterMarker<Element>
        }

        /// A page of its members, if they are of this type.
        public func members<Element>(of type: Element.Type, offset: Int = 0, limit: Int = .max) -> [Element] {
            marker(of: type)?.cluster.members(offset: offset, limit: limit) ?? []
        }
    }
#endif
