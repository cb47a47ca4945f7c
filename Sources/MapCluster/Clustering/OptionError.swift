/// An option whose value can't be used: zero, negative, not a number, infinite or out of its range.
///
///     do {
///         try options.validate()
///     } catch {
///         print(error)  // "cellSize is 0: it must be a positive, finite number of points"
///     }
public struct OptionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The option's name, as its property is spelled (`cellSize`, `overlap.markerSize.width`).
    public let option: String
    /// The value it was given, as text.
    public let value: String
    /// What the option needs.
    public let requirement: String

    /// An error for `option`, whose `value` doesn't meet `requirement`.
    public init(option: String, value: String, requirement: String) {
        self.option = option
        self.value = value
        self.requirement = requirement
    }

    /// The option, its value and what it needs, in one line.
    public var description: String { "\(option) is \(value): it must be \(requirement)" }
}

/// Checks of the values options take, each throwing an ``OptionError`` that names the option.
///
/// The name is made only for an error: a `Clustering` validates its options when it is made, and
/// a `cellSizeForZoom` is checked at 31 zooms, each with a name of its own.
package enum OptionCheck {
    /// A positive, finite number.
    package static func positive(_ value: Double, _ option: @autoclosure () -> String, of unit: String? = nil)
        throws(OptionError)
    {
        guard value > 0 && value.isFinite else {
            throw OptionError(option: option(), value: "\(value)", requirement: "a positive, finite number" + of(unit))
        }
    }

    /// A finite number, at least 1.
    package static func atLeastOne(_ value: Double, _ option: @autoclosure () -> String, of unit: String)
        throws(OptionError)
    {
        guard value >= 1 && value.isFinite else {
            throw OptionError(
                option: option(), value: "\(value)", requirement: "a finite number of \(unit), at least 1")
        }
    }

    /// A number within a range.
    package static func within(_ value: Double, _ range: ClosedRange<Double>, _ option: @autoclosure () -> String)
        throws(OptionError)
    {
        guard range.contains(value) else {
            let bounds = "\(range.lowerBound)...\(range.upperBound)"
            throw OptionError(option: option(), value: "\(value)", requirement: "a number within \(bounds)")
        }
    }

    /// Zero or a positive, finite number.
    package static func notNegative(_ value: Double, _ option: @autoclosure () -> String, of unit: String? = nil)
        throws(OptionError)
    {
        guard value >= 0 && value.isFinite else {
            throw OptionError(
                option: option(), value: "\(value)", requirement: "zero or a positive, finite number" + of(unit))
        }
    }

    private static func of(_ unit: String?) -> String { unit.map { " of \($0)" } ?? "" }

    /// A number or an infinity, not NaN.
    package static func aNumber(_ value: Double, _ option: @autoclosure () -> String) throws(OptionError) {
        guard !value.isNaN else {
            throw OptionError(option: option(), value: "nan", requirement: "a number or ±infinity")
        }
    }

    /// An integer at least `minimum`.
    package static func atLeast(_ value: Int, _ minimum: Int, _ option: @autoclosure () -> String) throws(OptionError) {
        guard value >= minimum else {
            throw OptionError(option: option(), value: "\(value)", requirement: "at least \(minimum)")
        }
    }
}
