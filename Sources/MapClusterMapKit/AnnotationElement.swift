#if canImport(MapKit) && !os(watchOS)
    public import MapKit

    /// One of the app's `MKAnnotation`s as the element of an ``MKMapViewAdapter``, which shows it, when it stands
    /// alone, as itself: `mapView(_:viewFor:)` receives the app's own object.
    ///
    /// Compared and hashed by the annotation's identity. The manager clusters off the main thread, and so run the hooks
    /// an app gives it (`ClusterOptions.shouldCluster`, a custom position, `ClusterManagerOptions.title` and
    /// `fixPositions`): what they see of an element is values, its ``id`` and the ``coordinate`` it was added or moved
    /// at. The annotation itself is MapKit's, which reads it on the main thread only, and so is ``annotation``: it is
    /// isolated to the main actor, and Swift refuses a read of it from a background hook.
    public struct AnnotationElement: Hashable, @unchecked Sendable, CustomStringConvertible {
        /// The annotation's identity.
        public let id: ObjectIdentifier
        /// Its coordinate when it was added or last moved (``MKMapViewAdapter/annotationsDidMove(_:completion:)``).
        public let coordinate: CLLocationCoordinate2D
        /// The annotation, read on the main actor only: `@unchecked Sendable` rests on that.
        private let storage: any MKAnnotation

        /// The app's annotation.
        @MainActor public var annotation: any MKAnnotation { storage }

        /// The element of an annotation, at its coordinate now.
        @MainActor
        public init(_ annotation: any MKAnnotation) {
            id = ObjectIdentifier(annotation)
            coordinate = annotation.coordinate
            storage = annotation
        }

        /// The same annotation object.
        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
        /// Hashes the object's identity.
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }

        /// The annotation's identity and coordinate, as in `annotation 0x600… at (48.85, 2.35)`: no title, which only
        /// the main actor may read.
        public var description: String {
            "annotation \(id) at (\(coordinate.latitude), \(coordinate.longitude))"
        }
    }
#endif
