// swift-format-ignore-file: AllPublicDeclarationsHaveDocumentation
// Each declaration's documentation is Apple's page, whose URL the comment above it gives.
// What `#selector` needs: the Objective-C module's Selector. Only the typecheck (scripts/check-mapkit.sh, with
// Objective-C interoperability on) builds it; Linux has no Objective-C runtime to run it on.

/// A method's Objective-C name.
///
/// https://developer.apple.com/documentation/objectivec/selector
public struct Selector: ExpressibleByStringLiteral, Hashable, Sendable {
    private let name: String

    // https://developer.apple.com/documentation/objectivec/selector/init(stringliteral:)
    public init(stringLiteral value: String) {
        name = value
    }
}
