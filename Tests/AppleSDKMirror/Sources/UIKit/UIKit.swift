// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation

// Each declaration's documentation is Apple's page, whose URL the comment above it gives.
// The part of UIKit that MapClusterMapKit and the UIKit example use, as Apple documents it: names, argument labels,
// optionality, `open`, main-actor isolation and Sendable conformances as the documentation shows them, each with the
// URL of its page. Bodies are plain stored properties, and animations run their changes at once, so that a test can
// drive the adapter through it.
//
// Where Linux differs: NSObject is swift-corelibs-foundation's Swift class, so these classes are not Objective-C
// classes, and the selectors of target-action (UIBarButtonItem) exist only where the typecheck's Objective-C module
// does.
@_exported import QuartzCore

#if canImport(ObjectiveC)
    @_exported import ObjectiveC
#endif

/// An abstract interface for responding to and handling events.
///
/// https://developer.apple.com/documentation/uikit/uiresponder
@MainActor
open class UIResponder: NSObject {
    // https://developer.apple.com/documentation/uikit/uiresponder/init()
    public override init() {}
}

/// An object that manages the content for a rectangular area on the screen.
///
/// https://developer.apple.com/documentation/uikit/uiview
@MainActor
open class UIView: UIResponder {
    // https://developer.apple.com/documentation/uikit/uiview/frame
    open var frame: CGRect
    // https://developer.apple.com/documentation/uikit/uiview/bounds
    open var bounds: CGRect {
        get { CGRect(origin: .zero, size: frame.size) }
        set { frame.size = newValue.size }
    }
    // https://developer.apple.com/documentation/uikit/uiview/alpha
    open var alpha: CGFloat = 1 {
        didSet { mirrorAlphaChanges.append((alpha, UIView.mirrorAnimationDepth > 0)) }
    }
    /// The mirror's own record: each value `alpha` was set to, and whether inside an animation block (where UIKit
    /// animates the change from the value shown).
    public private(set) var mirrorAlphaChanges: [(alpha: CGFloat, animated: Bool)] = []
    // https://developer.apple.com/documentation/uikit/uiview/ishidden
    open var isHidden = false
    // https://developer.apple.com/documentation/uikit/uiview/autoresizingmask
    open var autoresizingMask: UIView.AutoresizingMask = []
    // https://developer.apple.com/documentation/uikit/uiview/layer
    open var layer: CALayer { ownLayer }
    // https://developer.apple.com/documentation/uikit/uiview/subviews
    open private(set) var subviews: [UIView] = []
    private let ownLayer = CALayer()

    // https://developer.apple.com/documentation/uikit/uiview/init(frame:)
    public init(frame: CGRect) {
        self.frame = frame
    }

    // https://developer.apple.com/documentation/uikit/uiview/init(coder:)
    public required init?(coder: NSCoder) {
        nil
    }

    /// `UIView()`: Objective-C's `init`, inherited from NSObject, is `init(frame: .zero)`.
    ///
    /// https://developer.apple.com/documentation/objectivec/nsobject-swift.class/init()
    public override convenience init() {
        self.init(frame: .zero)
    }

    // https://developer.apple.com/documentation/uikit/uiview/addsubview(_:)
    open func addSubview(_ view: UIView) {
        subviews.append(view)
    }

    /// Runs `animations` at once, as UIKit sets a view's model values at once, and `completion` after the current
    /// main-actor job, as UIKit calls it when the animation ends.
    ///
    /// https://developer.apple.com/documentation/uikit/uiview/animate(withduration:delay:options:animations:completion:)
    open class func animate(
        withDuration duration: TimeInterval, delay: TimeInterval, options: UIView.AnimationOptions = [],
        animations: @escaping () -> Void, completion: ((Bool) -> Void)? = nil
    ) {
        mirrorAnimationWatchers.removeAll { $0.isGone }
        let ends = mirrorAnimationWatchers.map { $0.animationWillBegin() }
        mirrorAnimationDepth += 1
        animations()
        mirrorAnimationDepth -= 1
        for end in ends { end() }
        guard let completion else { return }
        nonisolated(unsafe) let finish = completion
        Task { @MainActor in finish(true) }
    }
}

/// The mirror's own: what watches animation blocks (a map view, for its annotations' coordinates).
@MainActor
public protocol MirrorAnimationWatcher: AnyObject {
    /// Whether what it watches for is gone.
    var isGone: Bool { get }
    /// Called before an animation block runs; what it returns is called after.
    func animationWillBegin() -> @MainActor () -> Void
}

extension UIView {
    /// The mirror's own: how many animation blocks are running.
    public private(set) static var mirrorAnimationDepth = 0
    /// The mirror's own: what watches animation blocks.
    public static var mirrorAnimationWatchers: [any MirrorAnimationWatcher] = []

    // https://developer.apple.com/documentation/uikit/uiview/autoresizingmask-swift.struct
    public struct AutoresizingMask: OptionSet, Sendable {
        // https://developer.apple.com/documentation/uikit/uiview/autoresizingmask-swift.struct/rawvalue
        public let rawValue: UInt
        // https://developer.apple.com/documentation/uikit/uiview/autoresizingmask-swift.struct/init(rawvalue:)
        public init(rawValue: UInt) { self.rawValue = rawValue }
        // https://developer.apple.com/documentation/uikit/uiview/autoresizingmask-swift.struct/flexiblewidth
        public static let flexibleWidth = AutoresizingMask(rawValue: 1 << 1)
        // https://developer.apple.com/documentation/uikit/uiview/autoresizingmask-swift.struct/flexibleheight
        public static let flexibleHeight = AutoresizingMask(rawValue: 1 << 4)
    }

    // https://developer.apple.com/documentation/uikit/uiview/animationoptions
    public struct AnimationOptions: OptionSet, Sendable {
        // https://developer.apple.com/documentation/uikit/uiview/animationoptions/rawvalue
        public let rawValue: UInt
        // https://developer.apple.com/documentation/uikit/uiview/animationoptions/init(rawvalue:)
        public init(rawValue: UInt) { self.rawValue = rawValue }
        // https://developer.apple.com/documentation/uikit/uiview/animationoptions/beginfromcurrentstate
        public static let beginFromCurrentState = AnimationOptions(rawValue: 1 << 2)
        // https://developer.apple.com/documentation/uikit/uiview/animationoptions/curveeaseinout
        public static let curveEaseInOut = AnimationOptions(rawValue: 0 << 16)
    }
}

/// The alignment of text: UIKit's on iOS.
///
/// https://developer.apple.com/documentation/uikit/nstextalignment
public enum NSTextAlignment: Int, Sendable {
    // https://developer.apple.com/documentation/uikit/nstextalignment/left
    case left = 0
    // https://developer.apple.com/documentation/uikit/nstextalignment/center
    case center = 1
    // https://developer.apple.com/documentation/uikit/nstextalignment/right
    case right = 2
}

/// A view that displays one or more lines of informational text.
///
/// https://developer.apple.com/documentation/uikit/uilabel
@MainActor
open class UILabel: UIView {
    // https://developer.apple.com/documentation/uikit/uilabel/text
    open var text: String?
    // https://developer.apple.com/documentation/uikit/uilabel/textalignment
    open var textAlignment: NSTextAlignment = .left
    // https://developer.apple.com/documentation/uikit/uilabel/textcolor
    open var textColor: UIColor! = .black
    // https://developer.apple.com/documentation/uikit/uilabel/font
    open var font: UIFont! = .systemFont(ofSize: 17)
    // https://developer.apple.com/documentation/uikit/uilabel/adjustsfontsizetofitwidth
    open var adjustsFontSizeToFitWidth = false
}

/// An object that displays a single image or a sequence of animated images in your interface.
///
/// https://developer.apple.com/documentation/uikit/uiimageview
@MainActor
open class UIImageView: UIView {
    // https://developer.apple.com/documentation/uikit/uiimageview/image
    open var image: UIImage?
}

/// An object that stores image data in your app.
///
/// https://developer.apple.com/documentation/uikit/uiimage
open class UIImage: NSObject, @unchecked Sendable {
    // https://developer.apple.com/documentation/uikit/uiimage/size
    open private(set) var size: CGSize

    /// An image of a size: the mirror's own, for tests.
    public init(size: CGSize) {
        self.size = size
    }
}

/// An object that stores color data and sometimes opacity.
///
/// https://developer.apple.com/documentation/uikit/uicolor
open class UIColor: NSObject, @unchecked Sendable {
    private let red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat

    // https://developer.apple.com/documentation/uikit/uicolor/init(red:green:blue:alpha:)
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }

    // https://developer.apple.com/documentation/uikit/uicolor/cgcolor
    open var cgColor: CGColor {
        CGColor(red: red, green: green, blue: blue, alpha: alpha)
    }

    // https://developer.apple.com/documentation/uikit/uicolor/white
    open class var white: UIColor { UIColor(red: 1, green: 1, blue: 1, alpha: 1) }
    // https://developer.apple.com/documentation/uikit/uicolor/black
    open class var black: UIColor { UIColor(red: 0, green: 0, blue: 0, alpha: 1) }
    // https://developer.apple.com/documentation/uikit/uicolor/systemblue
    open class var systemBlue: UIColor { UIColor(red: 0, green: 0.478, blue: 1, alpha: 1) }
    // https://developer.apple.com/documentation/uikit/uicolor/systemred
    open class var systemRed: UIColor { UIColor(red: 1, green: 0.231, blue: 0.188, alpha: 1) }
    // https://developer.apple.com/documentation/uikit/uicolor/systemindigo
    open class var systemIndigo: UIColor { UIColor(red: 0.345, green: 0.337, blue: 0.839, alpha: 1) }
}

/// An object that provides access to the font's characteristics.
///
/// https://developer.apple.com/documentation/uikit/uifont
open class UIFont: NSObject, @unchecked Sendable {
    /// The point size.
    ///
    /// https://developer.apple.com/documentation/uikit/uifont/pointsize
    public let pointSize: CGFloat

    private init(pointSize: CGFloat) {
        self.pointSize = pointSize
    }

    // https://developer.apple.com/documentation/uikit/uifont/systemfont(ofsize:)
    open class func systemFont(ofSize fontSize: CGFloat) -> UIFont { UIFont(pointSize: fontSize) }
    // https://developer.apple.com/documentation/uikit/uifont/boldsystemfont(ofsize:)
    open class func boldSystemFont(ofSize fontSize: CGFloat) -> UIFont { UIFont(pointSize: fontSize) }
}

/// The inset distances for views.
///
/// https://developer.apple.com/documentation/uikit/uiedgeinsets
public struct UIEdgeInsets: Hashable, Sendable {
    // https://developer.apple.com/documentation/uikit/uiedgeinsets/top
    public var top: CGFloat
    // https://developer.apple.com/documentation/uikit/uiedgeinsets/left
    public var left: CGFloat
    // https://developer.apple.com/documentation/uikit/uiedgeinsets/bottom
    public var bottom: CGFloat
    // https://developer.apple.com/documentation/uikit/uiedgeinsets/right
    public var right: CGFloat

    // https://developer.apple.com/documentation/uikit/uiedgeinsets/init()
    public init() {
        self.init(top: 0, left: 0, bottom: 0, right: 0)
    }

    // https://developer.apple.com/documentation/uikit/uiedgeinsets/init(top:left:bottom:right:)
    public init(top: CGFloat, left: CGFloat, bottom: CGFloat, right: CGFloat) {
        (self.top, self.left, self.bottom, self.right) = (top, left, bottom, right)
    }
}

/// An object that manages a view hierarchy for your UIKit app.
///
/// https://developer.apple.com/documentation/uikit/uiviewcontroller
@MainActor
open class UIViewController: UIResponder {
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/view
    open var view: UIView! = UIView()
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/navigationitem
    open private(set) var navigationItem = UINavigationItem()

    // https://developer.apple.com/documentation/uikit/uiviewcontroller/init(nibname:bundle:)
    public init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) {}

    // https://developer.apple.com/documentation/uikit/uiviewcontroller/init(coder:)
    public required init?(coder: NSCoder) {
        nil
    }

    /// `UIViewController()`: Objective-C's `init`, inherited from NSObject.
    ///
    /// https://developer.apple.com/documentation/objectivec/nsobject-swift.class/init()
    public override convenience init() {
        self.init(nibName: nil, bundle: nil)
    }

    // https://developer.apple.com/documentation/uikit/uiviewcontroller/viewdidload()
    open func viewDidLoad() {}
}

/// The content a navigation bar displays for a view controller.
///
/// https://developer.apple.com/documentation/uikit/uinavigationitem
@MainActor
open class UINavigationItem: NSObject {
    // https://developer.apple.com/documentation/uikit/uinavigationitem/rightbarbuttonitems
    open var rightBarButtonItems: [UIBarButtonItem]?
}

/// A specialized button for placement in a toolbar or tab bar.
///
/// https://developer.apple.com/documentation/uikit/uibarbuttonitem
@MainActor
open class UIBarButtonItem: NSObject {
    // https://developer.apple.com/documentation/uikit/uibarbuttonitem/style-swift.enum
    public enum Style: Int, Sendable {
        // https://developer.apple.com/documentation/uikit/uibarbuttonitem/style-swift.enum/plain
        case plain = 0
    }

    // https://developer.apple.com/documentation/uikit/uibarbuttonitem/title
    open var title: String?

    #if canImport(ObjectiveC)
        // https://developer.apple.com/documentation/uikit/uibarbuttonitem/init(title:style:target:action:)
        public convenience init(title: String?, style: UIBarButtonItem.Style, target: Any?, action: Selector?) {
            self.init()
            self.title = title
        }
    #endif
}
