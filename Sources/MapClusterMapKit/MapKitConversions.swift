#if canImport(MapKit)
    public import MapCluster
    public import MapClusterManager
    public import MapKit

    // MapKit's map points use the same plane as MapCluster's (the world is 2^28 units wide, y grows southward), so
    // rectangles convert field by field.

    extension MapRect {
        /// The same rectangle as a MapKit one.
        public init(_ rect: MKMapRect) {
            self.init(minX: rect.minX, minY: rect.minY, maxX: rect.maxX, maxY: rect.maxY)
        }
    }

    extension MKMapRect {
        /// The same rectangle as a MapCluster one.
        public init(_ rect: MapRect) {
            self.init(x: rect.minX, y: rect.minY, width: rect.size.width, height: rect.size.height)
        }

        /// The rectangle of a region: from its north-west corner to its south-east one.
        init(_ region: MKCoordinateRegion) {
            let northWest = MKMapPoint(
                CLLocationCoordinate2D(
                    latitude: region.center.latitude + region.span.latitudeDelta / 2,
                    longitude: region.center.longitude - region.span.longitudeDelta / 2))
            let southEast = MKMapPoint(
                CLLocationCoordinate2D(
                    latitude: region.center.latitude - region.span.latitudeDelta / 2,
                    longitude: region.center.longitude + region.span.longitudeDelta / 2))
            self.init(
                x: northWest.x, y: northWest.y, width: southEast.x - northWest.x, height: southEast.y - northWest.y)
        }
    }

    extension Viewport {
        /// The viewport of a map showing `rect` (with a heading, the upright rectangle around the turned view, as
        /// `MKMapView.visibleMapRect` gives it) in a view of `size` points; `nil` for an empty view.
        public init?(_ rect: MKMapRect, size: CGSize, heading: CLLocationDirection = 0) {
            guard rect.size.width > 0, rect.size.height > 0, size.width > 0, size.height > 0 else { return nil }
            self.init(
                rect: MapRect(rect), size: ViewSize(width: Double(size.width), height: Double(size.height)),
                heading: heading)
        }

    }

    #if !os(watchOS)
        extension Viewport {
            /// The viewport an `MKMapView` shows now, turned as its camera is; `nil` before it has a size.
            @MainActor
            public init?(_ mapView: MKMapView) {
                self.init(mapView.visibleMapRect, size: mapView.bounds.size, heading: mapView.camera.heading)
            }
        }
    #endif

    extension Coordinate {
        /// The coordinate as Core Location's.
        public var clLocationCoordinate: CLLocationCoordinate2D {
            CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
        }
    }

    extension Placement {
        /// An element at a Core Location coordinate; an invalid one (`kCLLocationCoordinate2DInvalid`) makes the
        /// batch fail with an error naming the element.
        public init(_ element: Element, at coordinate: CLLocationCoordinate2D) {
            self.init(element, latitude: coordinate.latitude, longitude: coordinate.longitude)
        }
    }
#endif
