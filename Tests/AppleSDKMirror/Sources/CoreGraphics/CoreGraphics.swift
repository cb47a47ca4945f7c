// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation

// Each declaration's documentation is Apple's page, whose URL the comment above it gives.
// The part of Core Graphics that MapClusterMapKit uses, as Apple documents it. CGFloat, CGPoint, CGSize and CGRect are
// swift-corelibs-foundation's on Linux, with the same API; the colour is the mirror's.
@_exported import Foundation

/// A colour, as Core Animation layers take it.
///
/// https://developer.apple.com/documentation/coregraphics/cgcolor
public final class CGColor: @unchecked Sendable {
    /// Red, green, blue and alpha, 0 to 1: the mirror's own, for a test to read back.
    public let components: [CGFloat]?

    package init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        components = [red, green, blue, alpha]
    }
}
