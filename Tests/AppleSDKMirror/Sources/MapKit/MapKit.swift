// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation

// Each declaration's documentation is Apple's page, whose URL the comment above it gives.
// The part of MapKit that MapClusterMapKit and its examples use, as Apple documents it: names, argument labels,
// optionality, `open`, main-actor isolation and Sendable conformances as the documentation shows them, each with the
// URL of its page. The map view keeps what it is given (annotations, their views, overlays, its visible rectangle) and
// records the calls a test asks about; it tells its delegate what MapKit tells it.
//
// Where Linux differs:
// - There is no Objective-C runtime to run on, and swift-corelibs-foundation's NSObjectProtocol is no Objective-C
//   protocol. Where the typecheck turns Objective-C interoperability on, MKAnnotation and MKOverlay are @objc protocols
//   (MKAnnotation's title and subtitle optional requirements, as Objective-C declares them), without NSObjectProtocol
//   as their parent; where a test runs, they are Swift protocols whose title and subtitle default to nil.
// - MKMapViewDelegate's parameters are classes that derive from Linux's NSObject, which Objective-C can't represent:
//   it is a Swift protocol, and each of its optional methods has a default implementation that does what MapKit does
//   when a delegate doesn't implement it.
// - The screen is the visible map rectangle scaled to the view's bounds (no camera pitch or heading), and a view stands
//   centred on its annotation's point (no `centerOffset`); that is what collisions are computed from.
// - A coordinate change outside an animation block is seen at the next layout pass, not at once: Linux has no
//   key-value observation to see it sooner.
@_exported import CoreLocation
import Synchronization

#if canImport(UIKit)
    @_exported import UIKit
    /// The mirror's own name for the platform's view: UIKit's on iOS.
    public typealias MirrorPlatformView = UIView
    /// The mirror's own name for the platform's colour: UIKit's on iOS.
    public typealias MirrorPlatformColor = UIColor
    /// The mirror's own name for the platform's edge insets: UIKit's on iOS.
    public typealias MirrorPlatformEdgeInsets = UIEdgeInsets
#elseif canImport(AppKit)
    @_exported import AppKit
    /// The mirror's own name for the platform's view: AppKit's on macOS.
    public typealias MirrorPlatformView = NSView
    /// The mirror's own name for the platform's colour: AppKit's on macOS.
    public typealias MirrorPlatformColor = NSColor
    /// The mirror's own name for the platform's edge insets: Foundation's on macOS.
    public typealias MirrorPlatformEdgeInsets = NSEdgeInsets
#endif

// MARK: - Map geometry

/// A point on a two-dimensional map projection.
///
/// https://developer.apple.com/documentation/mapkit/mkmappoint
public struct MKMapPoint: Hashable, Sendable {
    // https://developer.apple.com/documentation/mapkit/mkmappoint/x
    public var x: Double
    // https://developer.apple.com/documentation/mapkit/mkmappoint/y
    public var y: Double

    // https://developer.apple.com/documentation/mapkit/mkmappoint/init(x:y:)
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The point of a coordinate on the Web Mercator plane MapKit draws on, 2^28 points wide.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmappoint/init(_:)
    public init(_ coordinate: CLLocationCoordinate2D) {
        let sine = sin(coordinate.latitude * .pi / 180)
        x = (coordinate.longitude + 180) / 360 * mirrorWorldWidth
        y = (0.5 - log((1 + sine) / (1 - sine)) / (4 * .pi)) * mirrorWorldWidth
    }

    // https://developer.apple.com/documentation/mapkit/mkmappoint/coordinate
    public var coordinate: CLLocationCoordinate2D {
        let longitude = x / mirrorWorldWidth * 360 - 180
        let latitude = atan(sinh(.pi * (1 - 2 * y / mirrorWorldWidth))) * 180 / .pi
        return CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
    }
}

/// The mirror's own: the width of MapKit's world in map points (`MKMapRect.world`'s).
let mirrorWorldWidth: Double = 268_435_456

/// The width and height of a map region.
///
/// https://developer.apple.com/documentation/mapkit/mkcoordinatespan
public struct MKCoordinateSpan: Hashable, Sendable {
    // https://developer.apple.com/documentation/mapkit/mkcoordinatespan/latitudedelta
    public var latitudeDelta: CLLocationDegrees
    // https://developer.apple.com/documentation/mapkit/mkcoordinatespan/longitudedelta
    public var longitudeDelta: CLLocationDegrees

    // https://developer.apple.com/documentation/mapkit/mkcoordinatespan/init(latitudedelta:longitudedelta:)
    public init(latitudeDelta: CLLocationDegrees, longitudeDelta: CLLocationDegrees) {
        self.latitudeDelta = latitudeDelta
        self.longitudeDelta = longitudeDelta
    }
}

/// A rectangular geographic region that centers around a specific latitude and longitude.
///
/// https://developer.apple.com/documentation/mapkit/mkcoordinateregion
public struct MKCoordinateRegion: Sendable {
    // https://developer.apple.com/documentation/mapkit/mkcoordinateregion/center
    public var center: CLLocationCoordinate2D
    // https://developer.apple.com/documentation/mapkit/mkcoordinateregion/span
    public var span: MKCoordinateSpan

    // https://developer.apple.com/documentation/mapkit/mkcoordinateregion/init(center:span:)
    public init(center: CLLocationCoordinate2D, span: MKCoordinateSpan) {
        self.center = center
        self.span = span
    }

    /// A region of a north-to-south and an east-to-west distance, in metres, around a centre.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkcoordinateregion/init(center:latitudinalmeters:longitudinalmeters:)
    public init(
        center centerCoordinate: CLLocationCoordinate2D, latitudinalMeters: CLLocationDistance,
        longitudinalMeters: CLLocationDistance
    ) {
        // A degree of latitude is about 111,320 m; one of longitude that times the cosine of the latitude.
        let metresPerDegree = 111_320.0
        center = centerCoordinate
        span = MKCoordinateSpan(
            latitudeDelta: latitudinalMeters / metresPerDegree,
            longitudeDelta: longitudinalMeters / (metresPerDegree * cos(centerCoordinate.latitude * .pi / 180)))
    }
}

/// The width and height information for a map projection.
///
/// https://developer.apple.com/documentation/mapkit/mkmapsize
public struct MKMapSize: Hashable, Sendable {
    // https://developer.apple.com/documentation/mapkit/mkmapsize/width
    public var width: Double
    // https://developer.apple.com/documentation/mapkit/mkmapsize/height
    public var height: Double

    // https://developer.apple.com/documentation/mapkit/mkmapsize/init(width:height:)
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
}

/// A rectangular area on a two-dimensional map projection.
///
/// https://developer.apple.com/documentation/mapkit/mkmaprect
public struct MKMapRect: Hashable, Sendable {
    // https://developer.apple.com/documentation/mapkit/mkmaprect/origin
    public var origin: MKMapPoint
    // https://developer.apple.com/documentation/mapkit/mkmaprect/size
    public var size: MKMapSize

    // https://developer.apple.com/documentation/mapkit/mkmaprect/init(origin:size:)
    public init(origin: MKMapPoint, size: MKMapSize) {
        self.origin = origin
        self.size = size
    }

    // https://developer.apple.com/documentation/mapkit/mkmaprect/init(x:y:width:height:)
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.init(origin: MKMapPoint(x: x, y: y), size: MKMapSize(width: width, height: height))
    }

    // https://developer.apple.com/documentation/mapkit/mkmaprect/null
    // (Its origin is infinite, as MKMapRectNull's is.)
    public static let null = MKMapRect(x: .infinity, y: .infinity, width: 0, height: 0)

    // https://developer.apple.com/documentation/mapkit/mkmaprect/minx
    public var minX: Double { origin.x }
    // https://developer.apple.com/documentation/mapkit/mkmaprect/miny
    public var minY: Double { origin.y }
    // https://developer.apple.com/documentation/mapkit/mkmaprect/maxx
    public var maxX: Double { origin.x + size.width }
    // https://developer.apple.com/documentation/mapkit/mkmaprect/maxy
    public var maxY: Double { origin.y + size.height }
    // https://developer.apple.com/documentation/mapkit/mkmaprect/midx
    public var midX: Double { origin.x + size.width / 2 }
    // https://developer.apple.com/documentation/mapkit/mkmaprect/midy
    public var midY: Double { origin.y + size.height / 2 }
    // https://developer.apple.com/documentation/mapkit/mkmaprect/width
    public var width: Double { size.width }
    // https://developer.apple.com/documentation/mapkit/mkmaprect/height
    public var height: Double { size.height }

    // https://developer.apple.com/documentation/mapkit/mkmaprect/contains(_:)-79tjt
    public func contains(_ point: MKMapPoint) -> Bool {
        point.x >= minX && point.x < maxX && point.y >= minY && point.y < maxY
    }

    // https://developer.apple.com/documentation/mapkit/mkmaprect/intersects(_:)
    public func intersects(_ rect2: MKMapRect) -> Bool {
        minX < rect2.maxX && rect2.minX < maxX && minY < rect2.maxY && rect2.minY < maxY
    }
}

// MARK: - Annotations and overlays

#if _runtime(_ObjC)
    /// An interface for associating your content with a specific map location.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkannotation
    @objc public protocol MKAnnotation {
        // https://developer.apple.com/documentation/mapkit/mkannotation/coordinate
        var coordinate: CLLocationCoordinate2D { get }
        // https://developer.apple.com/documentation/mapkit/mkannotation/title
        @objc optional var title: String? { get }
        // https://developer.apple.com/documentation/mapkit/mkannotation/subtitle
        @objc optional var subtitle: String? { get }
    }

    /// An interface for data objects that contain geographic data for a map overlay.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkoverlay
    @objc public protocol MKOverlay: MKAnnotation {}
#else
    /// An interface for associating your content with a specific map location.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkannotation
    public protocol MKAnnotation: NSObjectProtocol {
        // https://developer.apple.com/documentation/mapkit/mkannotation/coordinate
        var coordinate: CLLocationCoordinate2D { get }
        // https://developer.apple.com/documentation/mapkit/mkannotation/title
        var title: String? { get }
        // https://developer.apple.com/documentation/mapkit/mkannotation/subtitle
        var subtitle: String? { get }
    }

    extension MKAnnotation {
        /// The mirror's own default: what MapKit reads from an annotation that doesn't implement the optional title.
        public var title: String? { nil }
        /// The mirror's own default: no subtitle.
        public var subtitle: String? { nil }
    }

    /// An interface for data objects that contain geographic data for a map overlay.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkoverlay
    public protocol MKOverlay: MKAnnotation {}
#endif

/// An abstract class that defines the basic behavior for all shape-based overlay objects.
///
/// https://developer.apple.com/documentation/mapkit/mkshape
open class MKShape: NSObject, MKAnnotation {
    // https://developer.apple.com/documentation/mapkit/mkshape/title
    open var title: String?
    // https://developer.apple.com/documentation/mapkit/mkshape/subtitle
    open var subtitle: String?
    /// Where the shape stands: each concrete shape's own.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkannotation/coordinate
    open var coordinate: CLLocationCoordinate2D { shapeCoordinate }
    var shapeCoordinate = CLLocationCoordinate2D(latitude: 0, longitude: 0)

    // https://developer.apple.com/documentation/mapkit/mkshape/init()
    public override init() {}
}

/// A string-based piece of location-specific data that you apply to a specific point on a map.
///
/// MapKit declares its annotations without an actor, as Apple's SDK does, and reads them on the main thread: this one
/// counts each read of its coordinate, title or subtitle from any other thread (``mirrorReadsOffTheMainThread``), so a
/// test can see a background hook that touched it.
///
/// https://developer.apple.com/documentation/mapkit/mkpointannotation
open class MKPointAnnotation: MKShape {
    // https://developer.apple.com/documentation/mapkit/mkpointannotation/coordinate
    open override var coordinate: CLLocationCoordinate2D {
        get {
            mirrorNoteRead()
            return shapeCoordinate
        }
        set { shapeCoordinate = newValue }
    }
    // https://developer.apple.com/documentation/mapkit/mkshape/title
    open override var title: String? {
        get {
            mirrorNoteRead()
            return super.title
        }
        set { super.title = newValue }
    }
    // https://developer.apple.com/documentation/mapkit/mkshape/subtitle
    open override var subtitle: String? {
        get {
            mirrorNoteRead()
            return super.subtitle
        }
        set { super.subtitle = newValue }
    }

    /// The mirror's own record: how many reads of its coordinate, title or subtitle came from a thread other than the
    /// main one.
    public var mirrorReadsOffTheMainThread: Int { mirrorOffMainReads.withLock { $0 } }
    private let mirrorOffMainReads = Mutex(0)

    private func mirrorNoteRead() {
        if !MKPointAnnotation.mirrorRunsOnTheMainQueue() { mirrorOffMainReads.withLock { $0 += 1 } }
    }

    /// The mirror's own: whether the caller runs on the main queue, where the main actor's jobs run (on Linux, a
    /// test runner's main actor need not be the process's first thread, so `Thread.isMainThread` can't tell).
    public static func mirrorRunsOnTheMainQueue() -> Bool {
        _ = mirrorMainQueueMarked
        return DispatchQueue.getSpecific(key: mirrorMainQueueKey) == true
    }
    private static let mirrorMainQueueKey = DispatchSpecificKey<Bool>()
    private static let mirrorMainQueueMarked: Bool = {
        DispatchQueue.main.setSpecific(key: mirrorMainQueueKey, value: true)
        return true
    }()

    // https://developer.apple.com/documentation/mapkit/mkpointannotation/init(coordinate:)
    public convenience init(coordinate: CLLocationCoordinate2D) {
        self.init()
        self.coordinate = coordinate
    }
}

/// An abstract superclass used to define shapes composed of multiple points.
///
/// https://developer.apple.com/documentation/mapkit/mkmultipoint
open class MKMultiPoint: MKShape {
    /// The shape's points: the mirror's own copy of what `points()` points to.
    public fileprivate(set) var mirrorPoints: [MKMapPoint] = []

    // https://developer.apple.com/documentation/mapkit/mkmultipoint/pointcount
    open var pointCount: Int { mirrorPoints.count }
}

/// A closed polygon overlay.
///
/// https://developer.apple.com/documentation/mapkit/mkpolygon
open class MKPolygon: MKMultiPoint, MKOverlay {
    // https://developer.apple.com/documentation/mapkit/mkpolygon/init(points:count:)
    public convenience init(points: UnsafePointer<MKMapPoint>, count: Int) {
        self.init()
        mirrorPoints = (0..<count).map { points[$0] }
    }
}

/// The shared infrastructure used to draw overlays on the map surface.
///
/// https://developer.apple.com/documentation/mapkit/mkoverlayrenderer
open class MKOverlayRenderer: NSObject {
    // https://developer.apple.com/documentation/mapkit/mkoverlayrenderer/overlay
    public let overlay: any MKOverlay

    // https://developer.apple.com/documentation/mapkit/mkoverlayrenderer/init(overlay:)
    public init(overlay: any MKOverlay) {
        self.overlay = overlay
    }
}

/// A renderer that draws an overlay's shape using a path.
///
/// https://developer.apple.com/documentation/mapkit/mkoverlaypathrenderer
open class MKOverlayPathRenderer: MKOverlayRenderer {
    // https://developer.apple.com/documentation/mapkit/mkoverlaypathrenderer/strokecolor
    open var strokeColor: MirrorPlatformColor?
    // https://developer.apple.com/documentation/mapkit/mkoverlaypathrenderer/linewidth
    open var lineWidth: CGFloat = 0
}

/// The visual representation of a polygon overlay.
///
/// https://developer.apple.com/documentation/mapkit/mkpolygonrenderer
open class MKPolygonRenderer: MKOverlayPathRenderer {
    // https://developer.apple.com/documentation/mapkit/mkpolygonrenderer/polygon
    public let polygon: MKPolygon

    // https://developer.apple.com/documentation/mapkit/mkpolygonrenderer/init(polygon:)
    public init(polygon: MKPolygon) {
        self.polygon = polygon
        super.init(overlay: polygon)
    }
}

// MARK: - Annotation views

/// A value that indicates the display priority for an annotation.
///
/// https://developer.apple.com/documentation/mapkit/mkfeaturedisplaypriority
public struct MKFeatureDisplayPriority: RawRepresentable, Hashable, Sendable {
    // https://developer.apple.com/documentation/mapkit/mkfeaturedisplaypriority/rawvalue
    public var rawValue: Float
    // https://developer.apple.com/documentation/mapkit/mkfeaturedisplaypriority/init(rawvalue:)
    public init(rawValue: Float) { self.rawValue = rawValue }

    // https://developer.apple.com/documentation/mapkit/mkfeaturedisplaypriority/required
    public static let required = MKFeatureDisplayPriority(rawValue: 1000)
    // https://developer.apple.com/documentation/mapkit/mkfeaturedisplaypriority/defaulthigh
    public static let defaultHigh = MKFeatureDisplayPriority(rawValue: 750)
    // https://developer.apple.com/documentation/mapkit/mkfeaturedisplaypriority/defaultlow
    public static let defaultLow = MKFeatureDisplayPriority(rawValue: 250)
}

/// The visual representation of one of your annotation objects.
///
/// https://developer.apple.com/documentation/mapkit/mkannotationview
@MainActor
open class MKAnnotationView: MirrorPlatformView {
    // https://developer.apple.com/documentation/mapkit/mkannotationview/collisionmode-swift.enum
    public enum CollisionMode: Int, Sendable {
        // https://developer.apple.com/documentation/mapkit/mkannotationview/collisionmode-swift.enum/rectangle
        case rectangle = 0
        // https://developer.apple.com/documentation/mapkit/mkannotationview/collisionmode-swift.enum/circle
        case circle = 1
        // https://developer.apple.com/documentation/mapkit/mkannotationview/collisionmode-swift.enum/none
        case none = 2
    }

    // https://developer.apple.com/documentation/mapkit/mkannotationview/annotation
    open var annotation: (any MKAnnotation)?
    // https://developer.apple.com/documentation/mapkit/mkannotationview/reuseidentifier
    open private(set) var reuseIdentifier: String?
    // https://developer.apple.com/documentation/mapkit/mkannotationview/canshowcallout
    open var canShowCallout = false
    /// The offset, in points, of the view's centre from its annotation's point.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkannotationview/centeroffset
    open var centerOffset = CGPoint.zero
    // https://developer.apple.com/documentation/mapkit/mkannotationview/collisionmode-swift.property
    open var collisionMode: MKAnnotationView.CollisionMode = .rectangle
    // https://developer.apple.com/documentation/mapkit/mkannotationview/displaypriority
    open var displayPriority: MKFeatureDisplayPriority = .required
    /// `nil` (the default) keeps MapKit from clustering the view; views that share a non-`nil` identifier and collide
    /// are removed from the map and replaced by a cluster view.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkannotationview/clusteringidentifier
    open var clusteringIdentifier: String?

    /// The mirror's own record: why MapKit's last layout pass took the view off the screen, or `nil` if it shows.
    public internal(set) var mirrorHiddenBy: MirrorHiding?

    // https://developer.apple.com/documentation/mapkit/mkannotationview/init(annotation:reuseidentifier:)
    public init(annotation: (any MKAnnotation)?, reuseIdentifier: String?) {
        self.annotation = annotation
        self.reuseIdentifier = reuseIdentifier
        super.init(frame: .zero)
    }

    // https://developer.apple.com/documentation/mapkit/mkannotationview/init(coder:)
    public required init?(coder aDecoder: NSCoder) {
        nil
    }

    // https://developer.apple.com/documentation/mapkit/mkannotationview/preparefordisplay()
    open func prepareForDisplay() {}

    // https://developer.apple.com/documentation/mapkit/mkannotationview/prepareforreuse()
    open func prepareForReuse() {}
}

/// The mirror's own: why MapKit keeps a view it made off the screen.
public enum MirrorHiding: Hashable, Sendable {
    /// It collided with a view of a higher priority, or of the same priority nearer the map's centre, and its own is
    /// below `.required` (https://developer.apple.com/documentation/mapkit/mkfeaturedisplaypriority/defaulthigh).
    case collision
    /// It collided with a view of the same `clusteringIdentifier`, and MapKit clustered them
    /// (https://developer.apple.com/documentation/mapkit/mkannotationview/clusteringidentifier).
    case clusteredByMapKit
}

// MARK: - The map view

/// A viewing angle, heading and altitude above the map.
///
/// https://developer.apple.com/documentation/mapkit/mkmapcamera
@MainActor
open class MKMapCamera: NSObject {
    // https://developer.apple.com/documentation/mapkit/mkmapcamera/heading
    open var heading: CLLocationDirection = 0
}

/// An optional delegate that receives messages about changes to a map view.
///
/// https://developer.apple.com/documentation/mapkit/mkmapviewdelegate
@MainActor
public protocol MKMapViewDelegate: NSObjectProtocol {
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:regionwillchangeanimated:)
    func mapView(_ mapView: MKMapView, regionWillChangeAnimated animated: Bool)
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:regiondidchangeanimated:)
    func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool)
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:viewfor:)-8humz
    func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView?
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:didadd:)-44xon
    func mapView(_ mapView: MKMapView, didAdd views: [MKAnnotationView])
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:didselect:)
    func mapView(_ mapView: MKMapView, didSelect view: MKAnnotationView)
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:rendererfor:)
    func mapView(_ mapView: MKMapView, rendererFor overlay: any MKOverlay) -> MKOverlayRenderer
}

extension MKMapViewDelegate {
    /// The mirror's own default, for a delegate without the optional method: it isn't told.
    public func mapView(_ mapView: MKMapView, regionWillChangeAnimated animated: Bool) {}
    /// The mirror's own default, for a delegate without the optional method: it isn't told.
    public func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {}
    /// The mirror's own default, for a delegate without the optional method: `nil`, and the standard marker.
    public func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView? { nil }
    /// The mirror's own default, for a delegate without the optional method: it isn't told.
    public func mapView(_ mapView: MKMapView, didAdd views: [MKAnnotationView]) {}
    /// The mirror's own default, for a delegate without the optional method: it isn't told.
    public func mapView(_ mapView: MKMapView, didSelect view: MKAnnotationView) {}
    /// The mirror's own default, for a delegate without the optional method: a renderer that draws nothing.
    public func mapView(_ mapView: MKMapView, rendererFor overlay: any MKOverlay) -> MKOverlayRenderer {
        MKOverlayRenderer(overlay: overlay)
    }
}

/// An embeddable map interface, similar to the one that the Maps app provides.
///
/// https://developer.apple.com/documentation/mapkit/mkmapview
@MainActor
open class MKMapView: MirrorPlatformView {
    // https://developer.apple.com/documentation/mapkit/mkmapview/delegate
    open weak var delegate: (any MKMapViewDelegate)?
    // https://developer.apple.com/documentation/mapkit/mkmapview/camera
    open var camera = MKMapCamera()
    // https://developer.apple.com/documentation/mapkit/mkmapview/visiblemaprect
    open var visibleMapRect: MKMapRect {
        get { shownRect }
        set { move(to: newValue, animated: false) }
    }
    /// The region shown, as a centre and span of degrees.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmapview/region
    open var region: MKCoordinateRegion {
        get {
            let northWest = MKMapPoint(x: shownRect.minX, y: shownRect.minY).coordinate
            let southEast = MKMapPoint(x: shownRect.maxX, y: shownRect.maxY).coordinate
            return MKCoordinateRegion(
                center: MKMapPoint(x: shownRect.midX, y: shownRect.midY).coordinate,
                span: MKCoordinateSpan(
                    latitudeDelta: northWest.latitude - southEast.latitude,
                    longitudeDelta: southEast.longitude - northWest.longitude))
        }
        set { setRegion(newValue, animated: false) }
    }
    // https://developer.apple.com/documentation/mapkit/mkmapview/annotations
    open private(set) var annotations: [any MKAnnotation] = []
    // https://developer.apple.com/documentation/mapkit/mkmapview/selectedannotations
    open private(set) var selectedAnnotations: [any MKAnnotation] = []
    // https://developer.apple.com/documentation/mapkit/mkmapview/overlays
    open private(set) var overlays: [any MKOverlay] = []

    private var shownRect = MKMapRect(x: 0, y: 0, width: mirrorWorldWidth, height: mirrorWorldWidth)
    private var views: [ObjectIdentifier: MKAnnotationView] = [:]
    private var reusableViews: [String: [MKAnnotationView]] = [:]
    private var layoutPending = false

    // https://developer.apple.com/documentation/mapkit/mkmapview/init(frame:)
    public override init(frame: CGRect) {
        super.init(frame: frame)
        #if canImport(UIKit)
            UIView.mirrorAnimationWatchers.append(MirrorWeakWatcher(self))
        #endif
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/init(coder:)
    public required init?(coder: NSCoder) {
        nil
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/setvisiblemaprect(_:animated:)
    open func setVisibleMapRect(_ mapRect: MKMapRect, animated animate: Bool) {
        move(to: mapRect, animated: animate)
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/setvisiblemaprect(_:edgepadding:animated:)
    open func setVisibleMapRect(
        _ mapRect: MKMapRect, edgePadding insets: MirrorPlatformEdgeInsets, animated animate: Bool
    ) {
        move(to: mapRect, animated: animate)
    }

    /// Shows a region, widened to the view's proportions: "the map may adjust the value in the region parameter so
    /// that it fits the visible area of the map precisely".
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmapview/setregion(_:animated:)
    open func setRegion(_ region: MKCoordinateRegion, animated: Bool) {
        let northWest = MKMapPoint(
            CLLocationCoordinate2D(
                latitude: region.center.latitude + region.span.latitudeDelta / 2,
                longitude: region.center.longitude - region.span.longitudeDelta / 2))
        let southEast = MKMapPoint(
            CLLocationCoordinate2D(
                latitude: region.center.latitude - region.span.latitudeDelta / 2,
                longitude: region.center.longitude + region.span.longitudeDelta / 2))
        var width = southEast.x - northWest.x
        var height = southEast.y - northWest.y
        let size = bounds.size
        if size.width > 0, size.height > 0 {
            let aspect = Double(size.width / size.height)
            if width / height < aspect { width = height * aspect } else { height = width / aspect }
        }
        let center = MKMapPoint(region.center)
        move(
            to: MKMapRect(x: center.x - width / 2, y: center.y - height / 2, width: width, height: height),
            animated: animated)
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/addannotation(_:)
    open func addAnnotation(_ annotation: any MKAnnotation) {
        addAnnotations([annotation])
    }

    /// Adds the annotations; their views come later, from a layout pass after this returns, for the annotations in
    /// the visible rectangle only ("the annotation view or nil if the view has not yet been created",
    /// https://developer.apple.com/documentation/mapkit/mkmapview/view(for:)).
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmapview/addannotations(_:)
    open func addAnnotations(_ annotations: [any MKAnnotation]) {
        mirrorAddedBatches.append(annotations.map { ($0, $0.coordinate) })
        self.annotations += annotations
        setNeedsLayOut()
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/removeannotation(_:)
    open func removeAnnotation(_ annotation: any MKAnnotation) {
        removeAnnotations([annotation])
    }

    /// Removes the annotations and their views; the views go to the reuse queue.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmapview/removeannotations(_:)
    open func removeAnnotations(_ annotations: [any MKAnnotation]) {
        mirrorRemovedBatches.append(annotations)
        let gone = Set(annotations.map { ObjectIdentifier($0) })
        self.annotations.removeAll { gone.contains(ObjectIdentifier($0)) }
        selectedAnnotations.removeAll { gone.contains(ObjectIdentifier($0)) }
        for id in gone {
            guard let view = views.removeValue(forKey: id) else { continue }
            if let identifier = view.reuseIdentifier { reusableViews[identifier, default: []].append(view) }
        }
        setNeedsLayOut()
    }

    /// The annotation's view, or `nil` if the view has not yet been created.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmapview/view(for:)
    open func view(for annotation: any MKAnnotation) -> MKAnnotationView? {
        views[ObjectIdentifier(annotation)]
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/dequeuereusableannotationview(withidentifier:)
    open func dequeueReusableAnnotationView(withIdentifier identifier: String) -> MKAnnotationView? {
        guard let view = reusableViews[identifier]?.popLast() else { return nil }
        view.prepareForReuse()
        return view
    }

    /// Selects the annotation and tells the delegate, with its view.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmapview/selectannotation(_:animated:)
    open func selectAnnotation(_ annotation: any MKAnnotation, animated: Bool) {
        selectedAnnotations = [annotation]
        if let view = view(for: annotation) { delegate?.mapView(self, didSelect: view) }
    }

    /// Deselects the annotation, if it is selected.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmapview/deselectannotation(_:animated:)
    open func deselectAnnotation(_ annotation: (any MKAnnotation)?, animated: Bool) {
        guard let annotation else { return }
        selectedAnnotations.removeAll { $0 === annotation }
    }

    /// The point, in a view's coordinates, where a coordinate shows on the map: the visible rectangle scaled to the
    /// map view's bounds (the mirror's map view is its own coordinate space; no other view is placed on it).
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmapview/convert(_:topointto:)
    open func convert(_ coordinate: CLLocationCoordinate2D, toPointTo view: MirrorPlatformView?) -> CGPoint {
        mirrorScreenPoint(of: MKMapPoint(coordinate))
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/addoverlays(_:)
    open func addOverlays(_ overlays: [any MKOverlay]) {
        self.overlays += overlays
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/removeoverlays(_:)
    open func removeOverlays(_ overlays: [any MKOverlay]) {
        let gone = Set(overlays.map { ObjectIdentifier($0) })
        self.overlays.removeAll { gone.contains(ObjectIdentifier($0)) }
    }

    // MARK: The mirror's own: what a test reads back

    /// The mirror's own record: each `addAnnotations` call's annotations, with the coordinate each had when it was added.
    public private(set) var mirrorAddedBatches: [[(annotation: any MKAnnotation, coordinate: CLLocationCoordinate2D)]] =
        []
    /// The mirror's own record: each `removeAnnotations` call's annotations.
    public private(set) var mirrorRemovedBatches: [[any MKAnnotation]] = []
    /// The mirror's own record: every visible rectangle the map was moved to, in order, and whether it was animated.
    public private(set) var mirrorRegionChanges: [(rect: MKMapRect, animated: Bool)] = []
    /// The mirror's own record: each batch of views `mapView(_:didAdd:)` reported, in order.
    public private(set) var mirrorDidAddBatches: [[MKAnnotationView]] = []
    /// The mirror's own record: each move of a view that an animation block made (its annotation's coordinate changed
    /// inside it while the view was on the map), in order.
    public private(set) var mirrorAnimatedMoves:
        [(view: MKAnnotationView, from: CLLocationCoordinate2D, to: CLLocationCoordinate2D)] = []

    /// The mirror's own record: each change of a view's `centerOffset` that an animation block made while the view was
    /// on the map (UIKit animates it, as it moves the view), in order.
    public private(set) var mirrorAnimatedOffsets: [(view: MKAnnotationView, from: CGPoint, to: CGPoint)] = []

    /// The mirror's own: whether an annotation is inside the visible rectangle, where MapKit makes views.
    public func mirrorIsVisible(_ annotation: any MKAnnotation) -> Bool {
        shownRect.contains(MKMapPoint(annotation.coordinate))
    }

    /// The mirror's own: runs the layout pass now if one is due (MapKit runs it on its next turn of the run loop).
    public func mirrorLayOutIfNeeded() {
        guard layoutPending else { return }
        layOut()
    }

    // MARK: The mirror's own: MapKit's behaviour

    /// Tells the delegate the region will change, changes it, and tells it the region did change once the move is
    /// over (https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:regionwillchangeanimated:)).
    private func move(to rect: MKMapRect, animated: Bool) {
        delegate?.mapView(self, regionWillChangeAnimated: animated)
        shownRect = rect
        mirrorRegionChanges.append((rect, animated))
        setNeedsLayOut()
        Task { @MainActor [weak self] in
            guard let self else { return }
            delegate?.mapView(self, regionDidChangeAnimated: animated)
        }
    }

    private func setNeedsLayOut() {
        guard !layoutPending else { return }
        layoutPending = true
        Task { @MainActor [weak self] in self?.mirrorLayOutIfNeeded() }
    }

    /// Makes the views of the visible annotations that have none (asking the delegate, through the reuse queue), then
    /// hides what collides, then reports the new views to the delegate.
    private func layOut() {
        layoutPending = false
        var added: [MKAnnotationView] = []
        for annotation in annotations where views[ObjectIdentifier(annotation)] == nil && mirrorIsVisible(annotation) {
            let view =
                delegate?.mapView(self, viewFor: annotation)
                ?? MKAnnotationView(annotation: annotation, reuseIdentifier: nil)
            views[ObjectIdentifier(annotation)] = view
            view.prepareForDisplay()
            added.append(view)
        }
        resolveCollisions()
        guard !added.isEmpty else { return }
        mirrorDidAddBatches.append(added)
        delegate?.mapView(self, didAdd: added)
    }

    /// Hides views that collide, in the order MapKit documents.
    ///
    /// A `.required` view always shows; otherwise the higher priority wins, and of equal priorities the view nearer the
    /// centre of the visible region (https://developer.apple.com/documentation/mapkit/mkfeaturedisplaypriority/defaulthigh).
    /// Views of one `clusteringIdentifier` that collide are clustered, whatever their priority.
    private func resolveCollisions() {
        let size = bounds.size
        let center = CGPoint(x: size.width / 2, y: size.height / 2)
        var placed: [(view: MKAnnotationView, shape: MirrorShape)] = []
        for annotation in annotations {
            guard let view = views[ObjectIdentifier(annotation)] else { continue }
            view.mirrorHiddenBy = nil
            guard mirrorIsVisible(annotation) else { continue }
            let point = mirrorScreenPoint(of: MKMapPoint(annotation.coordinate))
            let screen = CGPoint(x: point.x + view.centerOffset.x, y: point.y + view.centerOffset.y)
            let frame = CGRect(
                x: screen.x - view.frame.width / 2, y: screen.y - view.frame.height / 2, width: view.frame.width,
                height: view.frame.height)
            placed.append((view, MirrorShape(frame: frame, mode: view.collisionMode)))
        }
        placed.sort { lhs, rhs in
            if lhs.view.displayPriority.rawValue != rhs.view.displayPriority.rawValue {
                return lhs.view.displayPriority.rawValue > rhs.view.displayPriority.rawValue
            }
            return lhs.shape.distance(to: center) < rhs.shape.distance(to: center)
        }
        var shown: [(view: MKAnnotationView, shape: MirrorShape)] = []
        for candidate in placed {
            let colliding = shown.filter { candidate.shape.collides(with: $0.shape) }
            if let identifier = candidate.view.clusteringIdentifier,
                colliding.contains(where: { $0.view.clusteringIdentifier == identifier })
            {
                candidate.view.mirrorHiddenBy = .clusteredByMapKit
            } else if candidate.view.displayPriority.rawValue < MKFeatureDisplayPriority.required.rawValue,
                !colliding.isEmpty
            {
                candidate.view.mirrorHiddenBy = .collision
            } else {
                shown.append(candidate)
            }
        }
    }

    /// Where a map point shows in the view, in points.
    private func mirrorScreenPoint(of point: MKMapPoint) -> CGPoint {
        let size = bounds.size
        return CGPoint(
            x: (point.x - shownRect.minX) / shownRect.width * Double(size.width),
            y: (point.y - shownRect.minY) / shownRect.height * Double(size.height))
    }

    /// Notes where each annotation with a view stands before an animation block.
    ///
    /// What it returns, called after the block, records each that moved.
    fileprivate func mirrorAnimationWillBegin() -> @MainActor () -> Void {
        let before = annotations.compactMap { annotation in
            views[ObjectIdentifier(annotation)].map { (annotation, $0, annotation.coordinate, $0.centerOffset) }
        }
        return { [weak self] in
            guard let self else { return }
            for (annotation, view, from, offset) in before where views[ObjectIdentifier(annotation)] === view {
                let to = annotation.coordinate
                if from.latitude != to.latitude || from.longitude != to.longitude {
                    mirrorAnimatedMoves.append((view, from, to))
                }
                if view.centerOffset != offset {
                    mirrorAnimatedOffsets.append((view, offset, view.centerOffset))
                }
            }
            setNeedsLayOut()
        }
    }
}

/// The mirror's own: a view's collision frame, as its collision mode reads it.
struct MirrorShape {
    let frame: CGRect
    let mode: MKAnnotationView.CollisionMode

    var center: CGPoint { CGPoint(x: frame.midX, y: frame.midY) }

    func distance(to point: CGPoint) -> Double {
        Double(hypot(center.x - point.x, center.y - point.y))
    }

    /// Whether two shapes overlap: rectangles, or circles inscribed in them
    /// (https://developer.apple.com/documentation/mapkit/mkannotationview/collisionmode-swift.enum); `.none` never does.
    func collides(with other: MirrorShape) -> Bool {
        guard mode != .none, other.mode != .none, frame.width > 0, frame.height > 0, other.frame.width > 0,
            other.frame.height > 0
        else { return false }
        switch (mode, other.mode) {
        case (.circle, .circle):
            let radii = min(frame.width, frame.height) / 2 + min(other.frame.width, other.frame.height) / 2
            return hypot(center.x - other.center.x, center.y - other.center.y) < radii
        case (.circle, _):
            return Self.circle(self, meets: other.frame)
        case (_, .circle):
            return Self.circle(other, meets: frame)
        default:
            return frame.intersection(other.frame).width > 0 && frame.intersection(other.frame).height > 0
        }
    }

    private static func circle(_ shape: MirrorShape, meets rect: CGRect) -> Bool {
        let radius = min(shape.frame.width, shape.frame.height) / 2
        let nearest = CGPoint(
            x: min(max(shape.center.x, rect.minX), rect.maxX), y: min(max(shape.center.y, rect.minY), rect.maxY))
        return hypot(shape.center.x - nearest.x, shape.center.y - nearest.y) < radius
    }
}

#if canImport(UIKit)
    /// The mirror's own: a map view, held weakly, that watches UIKit's animation blocks as key-value observation of
    /// its annotations' coordinates would.
    final class MirrorWeakWatcher: MirrorAnimationWatcher {
        weak var mapView: MKMapView?

        init(_ mapView: MKMapView) {
            self.mapView = mapView
        }

        var isGone: Bool { mapView == nil }

        func animationWillBegin() -> @MainActor () -> Void {
            guard let mapView else { return {} }
            return mapView.mirrorAnimationWillBegin()
        }
    }
#endif
