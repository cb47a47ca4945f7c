// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation

// Each declaration's documentation is Apple's page, whose URL the comment above it gives.
// The part of Core Animation that MapClusterMapKit uses, as Apple documents it: the layer under every view, with the
// properties the styled cluster view paints.
@_exported import CoreGraphics

/// An object that manages image-based content.
///
/// https://developer.apple.com/documentation/quartzcore/calayer
open class CALayer: NSObject {
    // https://developer.apple.com/documentation/quartzcore/calayer/backgroundcolor
    open var backgroundColor: CGColor?
    // https://developer.apple.com/documentation/quartzcore/calayer/cornerradius
    open var cornerRadius: CGFloat = 0
    // https://developer.apple.com/documentation/quartzcore/calayer/borderwidth
    open var borderWidth: CGFloat = 0
    // https://developer.apple.com/documentation/quartzcore/calayer/bordercolor
    open var borderColor: CGColor?

    // https://developer.apple.com/documentation/quartzcore/calayer/init()
    public override init() {}
}
