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
// - Every annotation gets a view at once, not only those in the visible rectangle.
@_exported import CoreLocation

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
/// https://developer.apple.com/documentation/mapkit/mkpointannotation
open class MKPointAnnotation: MKShape {
    // https://developer.apple.com/documentation/mapkit/mkpointannotation/coordinate
    open override var coordinate: CLLocationCoordinate2D {
        get { shapeCoordinate }
        set { shapeCoordinate = newValue }
    }

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
    // https://developer.apple.com/documentation/mapkit/mkannotationview/collisionmode-swift.property
    open var collisionMode: MKAnnotationView.CollisionMode = .rectangle
    // https://developer.apple.com/documentation/mapkit/mkannotationview/displaypriority
    open var displayPriority: MKFeatureDisplayPriority = .required

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
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:regiondidchangeanimated:)
    func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool)
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:viewfor:)-8humz
    func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView?
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:didselect:)
    func mapView(_ mapView: MKMapView, didSelect view: MKAnnotationView)
    // https://developer.apple.com/documentation/mapkit/mkmapviewdelegate/mapview(_:rendererfor:)
    func mapView(_ mapView: MKMapView, rendererFor overlay: any MKOverlay) -> MKOverlayRenderer
}

extension MKMapViewDelegate {
    /// The mirror's own default, for a delegate without the optional method: it isn't told.
    public func mapView(_ mapView: MKMapView, regionDidChangeAnimated animated: Bool) {}
    /// The mirror's own default, for a delegate without the optional method: `nil`, and the standard marker.
    public func mapView(_ mapView: MKMapView, viewFor annotation: any MKAnnotation) -> MKAnnotationView? { nil }
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
    open var visibleMapRect = MKMapRect(x: 0, y: 0, width: 268_435_456, height: 268_435_456) {
        didSet {
            guard telling else { return }
            mirrorVisibleMapRectChanges.append(visibleMapRect)
            tellRegionDidChange(animated: false)
        }
    }
    // https://developer.apple.com/documentation/mapkit/mkmapview/annotations
    open private(set) var annotations: [any MKAnnotation] = []
    // https://developer.apple.com/documentation/mapkit/mkmapview/selectedannotations
    open private(set) var selectedAnnotations: [any MKAnnotation] = []
    // https://developer.apple.com/documentation/mapkit/mkmapview/overlays
    open private(set) var overlays: [any MKOverlay] = []

    private var views: [ObjectIdentifier: MKAnnotationView] = [:]
    private var reusableViews: [String: [MKAnnotationView]] = [:]

    // https://developer.apple.com/documentation/mapkit/mkmapview/setvisiblemaprect(_:animated:)
    open func setVisibleMapRect(_ mapRect: MKMapRect, animated animate: Bool) {
        setVisibleMapRect(mapRect, edgePadding: MirrorPlatformEdgeInsets(), animated: animate)
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/setvisiblemaprect(_:edgepadding:animated:)
    open func setVisibleMapRect(
        _ mapRect: MKMapRect, edgePadding insets: MirrorPlatformEdgeInsets, animated animate: Bool
    ) {
        // One region change, told once, animated or not.
        telling = false
        visibleMapRect = mapRect
        telling = true
        mirrorVisibleMapRectChanges.append(mapRect)
        tellRegionDidChange(animated: animate)
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/addannotation(_:)
    open func addAnnotation(_ annotation: any MKAnnotation) {
        addAnnotations([annotation])
    }

    /// Adds the annotations and asks the delegate for each one's view.
    ///
    /// https://developer.apple.com/documentation/mapkit/mkmapview/addannotations(_:)
    open func addAnnotations(_ annotations: [any MKAnnotation]) {
        mirrorAddedBatches.append(annotations.map { ($0, $0.coordinate) })
        for annotation in annotations {
            self.annotations.append(annotation)
            let view =
                delegate?.mapView(self, viewFor: annotation)
                ?? MKAnnotationView(annotation: annotation, reuseIdentifier: nil)
            views[ObjectIdentifier(annotation)] = view
            view.prepareForDisplay()
        }
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/removeannotation(_:)
    open func removeAnnotation(_ annotation: any MKAnnotation) {
        removeAnnotations([annotation])
    }

    /// Removes the annotations; their views go to the reuse queue.
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
    }

    // https://developer.apple.com/documentation/mapkit/mkmapview/view(for:)
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
    /// The mirror's own record: every visible rectangle the map was moved to, in order.
    public private(set) var mirrorVisibleMapRectChanges: [MKMapRect] = []
    private var telling = true

    /// Tells the delegate after the current main-actor job, as MapKit does once the map has moved.
    private func tellRegionDidChange(animated: Bool) {
        Task { @MainActor [weak self] in
            guard let self else { return }
            delegate?.mapView(self, regionDidChangeAnimated: animated)
        }
    }
}
