#if canImport(MapKit) && !os(watchOS)
    public import MapKit
    #if canImport(UIKit)
        public import UIKit
        /// The platform's colour type.
        public typealias ClusterColor = UIColor
        /// The platform's image type.
        public typealias ClusterImage = UIImage
    #elseif canImport(AppKit)
        public import AppKit
        /// The platform's colour type.
        public typealias ClusterColor = NSColor
        /// The platform's image type.
        public typealias ClusterImage = NSImage
    #endif

    /// How a ``StyledClusterAnnotationView`` draws a cluster.
    public enum ClusterStyle {
        /// A disc of a colour, `radius` points plus a little per order of magnitude of the count, with the count
        /// inside in white.
        case color(ClusterColor, radius: CGFloat)
        /// An image, with the count over it.
        case image(ClusterImage)
    }

    /// A view for ``ClusterAnnotation``s.
    ///
    /// A disc (or image) with the count for a cluster, a small dot for a single element: Cluster's
    /// `StyledClusterAnnotationView`, for MapCluster. Subclass it for a look of your own: override ``configure()``
    /// (call `super`'s, then draw over it) and set ``MKMapViewAdapter/viewClass`` to the subclass.
    ///
    /// Its `displayPriority` is `.required`, so MapKit never hides it when it collides with another: the counts on
    /// screen add up to the elements in view. Lower it (in ``configure()``) to let MapKit hide colliding markers.
    @MainActor
    open class StyledClusterAnnotationView: MKAnnotationView {
        /// The identifier ``MKMapViewAdapter/view(for:in:)`` dequeues views of this class by: one per subclass.
        public class var reuseIdentifier: String { "MapCluster." + String(reflecting: self) }

        /// How clusters are drawn; default a blue disc of radius 14.
        public var style: ClusterStyle = .color(.systemBlue, radius: 14) {
            didSet { configure() }
        }
        /// How single elements are drawn: the colour of their dot.
        public var singleColor: ClusterColor = .systemBlue {
            didSet { configure() }
        }

        #if canImport(UIKit)
            /// The label that shows a cluster's count: a subclass restyles it (font, colour) in ``configure()``, as
            /// Cluster's `countLabel`.
            public let countLabel = UILabel()
            /// The view that shows a ``ClusterStyle/image(_:)`` style's image.
            public let imageView = UIImageView()
        #else
            /// The label that shows a cluster's count: a subclass restyles it (font, colour) in ``configure()``, as
            /// Cluster's `countLabel`.
            public let countLabel = NSTextField(labelWithString: "")
            /// The view that shows a ``ClusterStyle/image(_:)`` style's image.
            public let imageView = NSImageView()
        #endif

        /// A view for an annotation.
        public required override init(annotation: (any MKAnnotation)?, reuseIdentifier: String?) {
            super.init(annotation: annotation, reuseIdentifier: reuseIdentifier)
            #if canImport(UIKit)
                countLabel.textAlignment = .center
                countLabel.textColor = .white
                countLabel.font = .boldSystemFont(ofSize: 13)
                countLabel.adjustsFontSizeToFitWidth = true
            #else
                wantsLayer = true
                countLabel.alignment = .center
                countLabel.textColor = .white
                countLabel.font = .boldSystemFont(ofSize: 13)
            #endif
            addSubview(imageView)
            addSubview(countLabel)
            collisionMode = .circle
            configure()
        }

        /// Not available: these views are made in code.
        public required init?(coder: NSCoder) {
            nil
        }

        /// The annotation shown; setting it redraws the view.
        open override var annotation: (any MKAnnotation)? {
            didSet { configure() }
        }

        /// Redraws for the annotation about to be shown.
        open override func prepareForDisplay() {
            super.prepareForDisplay()
            configure()
        }

        /// Draws the annotation: called when it, its style or its colour changes, and before the view shows.
        ///
        /// Override to draw more (a ring by category, an image by a member's kind), calling `super`'s first; the
        /// annotation is ``annotation`` (a ``ClusterAnnotation`` of this library's, whose members
        /// ``ClusterAnnotation/members(of:offset:limit:)`` gives).
        open func configure() {
            guard let cluster = annotation as? ClusterAnnotation, cluster.isCluster else {
                let side: CGFloat = 12
                frame.size = CGSize(width: side, height: side)
                imageView.isHidden = true
                countLabel.isHidden = true
                paint(singleColor, cornerRadius: side / 2)
                return
            }
            let text = cluster.count < 1_000 ? "\(cluster.count)" : "\(cluster.count / 1_000)k"
            countLabel.isHidden = false
            #if canImport(UIKit)
                countLabel.text = text
            #else
                countLabel.stringValue = text
            #endif
            switch style {
            case .color(let color, let radius):
                let side = 2 * (radius + 4 * CGFloat(log10(Double(cluster.count))))
                frame.size = CGSize(width: side, height: side)
                imageView.isHidden = true
                paint(color, cornerRadius: side / 2)
            case .image(let image):
                frame.size = image.size
                imageView.isHidden = false
                imageView.image = image
                imageView.frame = bounds
                paint(nil, cornerRadius: 0)
            }
            countLabel.frame = bounds.insetBy(dx: 3, dy: (bounds.height - 16) / 2)
        }

        private func paint(_ color: ClusterColor?, cornerRadius: CGFloat) {
            // A CALayer on UIKit, an optional one on AppKit (layer-backed since init).
            let target: CALayer? = layer
            target?.backgroundColor = color?.cgColor
            target?.cornerRadius = cornerRadius
            target?.borderWidth = color == nil ? 0 : 2
            target?.borderColor = ClusterColor.white.cgColor
        }
    }
#endif
