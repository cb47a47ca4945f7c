#if canImport(MapKit) && !os(watchOS)
    import MapCluster
    public import MapClusterManager
    public import MapKit

    /// What a ``MKMapViewAdapter`` adds to the map for a cluster, and for a single element that is no `MKAnnotation` of
    /// the app's (an adapter of ``AnnotationElement``s shows a single one as the app's own object).
    ///
    /// Its coordinate is observable by MapKit (`dynamic`, and `@objc` as every witness of an Objective-C protocol's
    /// requirement is), so changing it inside an animation block moves its view: that is how markers split out of and
    /// merge into their neighbours. The class is not generic (Objective-C sees it); ``marker(of:)`` and
    /// ``members(of:offset:limit:)`` give back the typed marker.
    ///
    /// MapKit declares `MKAnnotation` without an actor, and reads annotations on the main thread; the conformance is
    /// `@preconcurrency`, so Swift checks that at run time rather than refuse a main-actor class.
    @MainActor
    public final class ClusterAnnotation: NSObject, @preconcurrency MKAnnotation {
        /// Where MapKit draws it.
        public dynamic var coordinate: CLLocationCoordinate2D
        /// The title, made each time MapKit reads it.
        ///
        /// The adapter's ``MKMapViewAdapter/title`` (on the main actor, with the members at hand) if it has one, else
        /// the manager's (`ClusterSnapshot.title(of:)`). A title that depends on what the app changes shows the change
        /// at MapKit's next read.
        public var title: String? {
            if let titles, let title = titles.title?(self) { return title }
            return state.title()
        }
        /// The subtitle, made when MapKit reads it, as ``title`` is.
        public var subtitle: String? {
            if let titles, let subtitle = titles.subtitle?(self) { return subtitle }
            return state.subtitle()
        }
        /// Where the adapter's own title functions are, read at each read (held weakly).
        weak var titles: (any ClusterAnnotationTitles)?

        /// How many elements it stands for.
        public var count: Int { state.count }
        /// Whether it stands for more than one element.
        public var isCluster: Bool { state.count > 1 }
        /// Whether all its members share one coordinate.
        public var isSameLocation: Bool { state.isSameLocation }
        /// The smallest map rectangle holding its members: `mapView.setVisibleMapRect(annotation.mapRect, …)` zooms
        /// to show them.
        public var mapRect: MKMapRect { state.mapRect }

        /// What the marker says, type-erased: the class is not generic, so that Objective-C sees it.
        private struct State {
            let marker: any Sendable
            /// The snapshot the marker comes from, which its members are asked of.
            let snapshot: any Sendable
            let count: Int
            let isSameLocation: Bool
            let mapRect: MKMapRect
            /// The manager's title and subtitle of the marker, made when asked.
            let title: @Sendable () -> String?
            let subtitle: @Sendable () -> String?

            init<Element>(_ marker: ClusterMarker<Element>, of snapshot: ClusterSnapshot<Element>) {
                self.marker = marker
                self.snapshot = snapshot
                title = { snapshot.title(of: marker) }
                subtitle = { snapshot.subtitle(of: marker) }
                count = marker.count
                isSameLocation = marker.isSameLocation
                // The marker is the snapshot's own, which it never refuses.
                mapRect = (try? snapshot.bounds(of: marker)).map(MKMapRect.init) ?? .null
            }
        }

        private var state: State

        init<Element>(
            _ marker: ClusterMarker<Element>, of snapshot: ClusterSnapshot<Element>, at coordinate: Coordinate
        ) {
            self.coordinate = coordinate.clLocationCoordinate
            state = State(marker, of: snapshot)
        }

        /// Shows another state of the same marker (new members, and so a new title).
        func refresh<Element>(with marker: ClusterMarker<Element>, of snapshot: ClusterSnapshot<Element>) {
            state = State(marker, of: snapshot)
        }

        /// The marker, if its elements are of this type.
        public func marker<Element>(of type: Element.Type = Element.self) -> ClusterMarker<Element>?
        where Element: Hashable & Sendable {
            state.marker as? ClusterMarker<Element>
        }

        /// A page of its members, if they are of this type.
        public func members<Element>(of type: Element.Type, offset: Int = 0, limit: Int = .max) -> [Element]
        where Element: Hashable & Sendable {
            guard let marker = marker(of: type), let snapshot = state.snapshot as? ClusterSnapshot<Element> else {
                return []
            }
            // The marker is the snapshot's own, which it never refuses.
            return (try? snapshot.members(of: marker, offset: offset, limit: limit)) ?? []
        }
    }
#endif

#if canImport(MapKit) && !os(watchOS)
    /// The adapter's title functions, which a ``ClusterAnnotation`` asks at each read of its title.
    @MainActor
    protocol ClusterAnnotationTitles: AnyObject {
        var title: (@MainActor (ClusterAnnotation) -> String?)? { get }
        var subtitle: (@MainActor (ClusterAnnotation) -> String?)? { get }
    }
#endif
