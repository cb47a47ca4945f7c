// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation

// Each declaration's documentation is Apple's page, whose URL the comment above it gives.
// The part of AppKit that MapClusterMapKit's macOS paths use, as Apple documents it: names, argument labels,
// optionality, `open`, main-actor isolation and Sendable conformances as the documentation shows them, each with the
// URL of its page. Only the typecheck builds it (scripts/check-mapkit.sh); bodies are plain stored properties.
@_exported import QuartzCore

/// An abstract class that forms the basis of event and command processing in AppKit.
///
/// https://developer.apple.com/documentation/appkit/nsresponder
@MainActor
open class NSResponder: NSObject {
    // https://developer.apple.com/documentation/appkit/nsresponder/init()
    public override init() {}
}

/// The infrastructure for drawing, printing, and handling events in an app.
///
/// https://developer.apple.com/documentation/appkit/nsview
@MainActor
open class NSView: NSResponder {
    // https://developer.apple.com/documentation/appkit/nsview/frame
    open var frame: NSRect
    // https://developer.apple.com/documentation/appkit/nsview/bounds
    open var bounds: NSRect {
        get { NSRect(origin: .zero, size: frame.size) }
        set { frame.size = newValue.size }
    }
    // https://developer.apple.com/documentation/appkit/nsview/alphavalue
    open var alphaValue: CGFloat = 1
    // https://developer.apple.com/documentation/appkit/nsview/ishidden
    open var isHidden = false
    // https://developer.apple.com/documentation/appkit/nsview/wantslayer
    open var wantsLayer = false
    // https://developer.apple.com/documentation/appkit/nsview/layer
    open var layer: CALayer?
    // https://developer.apple.com/documentation/appkit/nsview/subviews
    open private(set) var subviews: [NSView] = []

    // https://developer.apple.com/documentation/appkit/nsview/init(frame:)
    public init(frame frameRect: NSRect) {
        frame = frameRect
    }

    // https://developer.apple.com/documentation/appkit/nsview/init(coder:)
    public required init?(coder: NSCoder) {
        nil
    }

    /// `NSView()`: Objective-C's `init`, inherited from NSObject, is `init(frame: .zero)`.
    ///
    /// https://developer.apple.com/documentation/objectivec/nsobject-swift.class/init()
    public override convenience init() {
        self.init(frame: .zero)
    }

    // https://developer.apple.com/documentation/appkit/nsview/addsubview(_:)
    open func addSubview(_ view: NSView) {
        subviews.append(view)
    }
}

/// Constants that specify text alignment: AppKit's on macOS.
///
/// https://developer.apple.com/documentation/appkit/nstextalignment
public enum NSTextAlignment: Int, Sendable {
    // https://developer.apple.com/documentation/appkit/nstextalignment/left
    case left = 0
    // https://developer.apple.com/documentation/appkit/nstextalignment/right
    case right = 1
    // https://developer.apple.com/documentation/appkit/nstextalignment/center
    case center = 2
}

/// A definition of the fundamental behavior for controls.
///
/// https://developer.apple.com/documentation/appkit/nscontrol
@MainActor
open class NSControl: NSView {
    // https://developer.apple.com/documentation/appkit/nscontrol/stringvalue
    open var stringValue = ""
    // https://developer.apple.com/documentation/appkit/nscontrol/alignment
    open var alignment: NSTextAlignment = .left
    // https://developer.apple.com/documentation/appkit/nscontrol/font
    open var font: NSFont?
}

/// Text that the user can select or edit.
///
/// https://developer.apple.com/documentation/appkit/nstextfield
@MainActor
open class NSTextField: NSControl {
    // https://developer.apple.com/documentation/appkit/nstextfield/textcolor
    open var textColor: NSColor?

    // https://developer.apple.com/documentation/appkit/nstextfield/init(labelwithstring:)
    public convenience init(labelWithString stringValue: String) {
        self.init(frame: .zero)
        self.stringValue = stringValue
    }
}

/// A display of image data in a frame.
///
/// https://developer.apple.com/documentation/appkit/nsimageview
@MainActor
open class NSImageView: NSControl {
    // https://developer.apple.com/documentation/appkit/nsimageview/image
    open var image: NSImage?
}

/// A high-level interface for manipulating image data.
///
/// https://developer.apple.com/documentation/appkit/nsimage
open class NSImage: NSObject, @unchecked Sendable {
    // https://developer.apple.com/documentation/appkit/nsimage/size
    open var size: NSSize

    // https://developer.apple.com/documentation/appkit/nsimage/init(size:)
    public init(size: NSSize) {
        self.size = size
    }
}

/// An object that stores color data and sometimes opacity.
///
/// https://developer.apple.com/documentation/appkit/nscolor
open class NSColor: NSObject, @unchecked Sendable {
    private let red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat

    // https://developer.apple.com/documentation/appkit/nscolor/init(red:green:blue:alpha:)
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }

    // https://developer.apple.com/documentation/appkit/nscolor/cgcolor
    open var cgColor: CGColor {
        CGColor(red: red, green: green, blue: blue, alpha: alpha)
    }

    // https://developer.apple.com/documentation/appkit/nscolor/white
    open class var white: NSColor { NSColor(red: 1, green: 1, blue: 1, alpha: 1) }
    // https://developer.apple.com/documentation/appkit/nscolor/systemblue
    open class var systemBlue: NSColor { NSColor(red: 0, green: 0.478, blue: 1, alpha: 1) }
    // https://developer.apple.com/documentation/appkit/nscolor/systemred
    open class var systemRed: NSColor { NSColor(red: 1, green: 0.231, blue: 0.188, alpha: 1) }
}

/// The representation of a font in an app.
///
/// https://developer.apple.com/documentation/appkit/nsfont
open class NSFont: NSObject, @unchecked Sendable {
    /// The point size.
    ///
    /// https://developer.apple.com/documentation/appkit/nsfont/pointsize
    public let pointSize: CGFloat

    private init(pointSize: CGFloat) {
        self.pointSize = pointSize
    }

    // https://developer.apple.com/documentation/appkit/nsfont/boldsystemfont(ofsize:)
    open class func boldSystemFont(ofSize fontSize: CGFloat) -> NSFont { NSFont(pointSize: fontSize) }
}

/// An animation context, which contains information about environment and state.
///
/// https://developer.apple.com/documentation/appkit/nsanimationcontext
open class NSAnimationContext: NSObject {
    // https://developer.apple.com/documentation/appkit/nsanimationcontext/duration
    open var duration: TimeInterval = 0.25
    // https://developer.apple.com/documentation/appkit/nsanimationcontext/allowsimplicitanimation
    open var allowsImplicitAnimation = false

    // https://developer.apple.com/documentation/appkit/nsanimationcontext/runanimationgroup(_:completionhandler:)
    open class func runAnimationGroup(
        _ changes: (NSAnimationContext) -> Void, completionHandler: (@Sendable () -> Void)? = nil
    ) {
        changes(NSAnimationContext())
        completionHandler?()
    }
}
