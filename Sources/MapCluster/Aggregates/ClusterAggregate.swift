/// A value that every cluster carries, added up from its members: the general form of a reduction.
///
///     struct WorstAlert: ClusterAggregate {
///         var level = 0
///         static var identity: WorstAlert { WorstAlert() }
///         mutating func merge(_ other: WorstAlert) { level = max(level, other.level) }
///     }
///
/// `merge` must be associative and commutative and `identity` its neutral value: the index keeps one value per node of
/// its tree (and per category), merged from the values below it in whatever order its shape gives, and keeps them
/// current through every insert, removal and move. ``Sum``, ``Minimum``, ``Maximum`` and ``Mean`` are built on it.
public protocol ClusterAggregate: Hashable, Sendable {
    /// The value of no element: merging it changes nothing.
    static var identity: Self { get }
    /// Adds another value's elements to this one's.
    mutating func merge(_ other: Self)
}

/// A reduction of one number per element (present or not): ``Sum``, ``Minimum``, ``Maximum``, ``Mean``.
public protocol NumericAggregate: ClusterAggregate {
    /// One element's value, or an element without one (`nil`).
    init(_ value: Double?)
}

/// The sum of a number over the members that have one, and how many have one.
///
/// The four numeric reductions read negative zero as zero (`-0.0 + 0` is `+0.0`), so no result depends on the order of
/// the merges.
public struct Sum: NumericAggregate {
    /// The sum of the present values; 0 when none is present.
    public var total: Double
    /// How many members have a value.
    public var count: Int

    /// One member's value, or a member without one (`nil`).
    public init(_ value: Double?) {
        total = (value ?? 0) + 0
        count = value == nil ? 0 : 1
    }

    /// The value of no member.
    public static var identity: Sum { Sum(nil) }

    /// Adds another value\'s members.
    public mutating func merge(_ other: Sum) {
        total += other.total
        count += other.count
    }
}

/// The smallest of a number over the members that have one.
public struct Minimum: NumericAggregate {
    /// The smallest present value; `nil` when none is present.
    public var value: Double?

    /// One member's value, or a member without one (`nil`); negative zero is read as zero.
    public init(_ value: Double?) { self.value = value.map { $0 + 0 } }

    /// The value of no member.
    public static var identity: Minimum { Minimum(nil) }

    /// Adds another value\'s members.
    public mutating func merge(_ other: Minimum) {
        guard let theirs = other.value else { return }
        value = value.map { Swift.min($0, theirs) } ?? theirs
    }
}

/// The largest of a number over the members that have one.
public struct Maximum: NumericAggregate {
    /// The largest present value; `nil` when none is present.
    public var value: Double?

    /// One member's value, or a member without one (`nil`); negative zero is read as zero.
    public init(_ value: Double?) { self.value = value.map { $0 + 0 } }

    /// The value of no member.
    public static var identity: Maximum { Maximum(nil) }

    /// Adds another value\'s members.
    public mutating func merge(_ other: Maximum) {
        guard let theirs = other.value else { return }
        value = value.map { Swift.max($0, theirs) } ?? theirs
    }
}

/// The mean of a number over the members that have one: a ``Sum`` read as its average.
public struct Mean: NumericAggregate {
    /// The sum and the count it averages.
    public var sum: Sum

    /// One member's value, or a member without one (`nil`).
    public init(_ value: Double?) { sum = Sum(value) }

    /// The mean of the present values; `nil` when none is present.
    public var value: Double? { sum.count == 0 ? nil : sum.total / Double(sum.count) }

    /// The value of no member.
    public static var identity: Mean { Mean(nil) }

    /// Adds another value\'s members.
    public mutating func merge(_ other: Mean) { sum.merge(other.sum) }
}
