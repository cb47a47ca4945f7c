/// What an index adds up for every cluster besides its count, center of mass and bounds: categories, weights and
/// reductions.
///
///     let schema = try AggregateSchema(
///         categories: ["AF", "AN", "AS", "EU", "NA", "OC", "SA"], weighted: true,
///         reductions: [.sum("population"), .max("population")])
///     var index = ClusterIndex<Int>(schema: schema)
///     try index.insert(1, at: paris, values: ElementValues(category: "EU", reductions: [Sum(2.1e6), Maximum(2.1e6)]))
///
/// Each aggregate is kept in the index's nodes, per category, beside the counts: a cluster's aggregates cost no visit
/// of its members, and an insert, removal or move updates them in O(log *n*). An index without a schema spends nothing
/// on them.
public struct AggregateSchema: Sendable {
    /// The most categories an index can have.
    public static let maximumCategoryCount = 64

    /// The categories an element may belong to, in the order clusters count them.
    public let categories: [String]
    /// Whether elements carry weights (otherwise every element weighs 1).
    public let isWeighted: Bool
    /// The reductions every cluster carries, in the order of ``ElementValues/reductions``.
    public let reductions: [Reduction]
    /// Category name to position.
    let categoryPositions: [String: Int]

    /// A schema; throws when there are more than ``maximumCategoryCount`` categories, or a category or reduction
    /// name occurs twice.
    public init(categories: [String] = [], weighted: Bool = false, reductions: [Reduction] = []) throws(AggregateError)
    {
        guard categories.count <= Self.maximumCategoryCount else {
            throw .tooManyCategories(count: categories.count)
        }
        var positions: [String: Int] = [:]
        for (position, category) in categories.enumerated() {
            guard positions.updateValue(position, forKey: category) == nil else {
                throw .duplicateName(category, kind: "category")
            }
        }
        var names: Set<String> = []
        for reduction in reductions where !names.insert(reduction.name).inserted {
            throw .duplicateName(reduction.name, kind: "reduction")
        }
        self.categories = categories
        self.categoryPositions = positions
        self.isWeighted = weighted
        self.reductions = reductions
    }

    /// The schema of nothing.
    static let none = AggregateSchema(categories: [], positions: [:], weighted: false, reductions: [])

    private init(categories: [String], positions: [String: Int], weighted: Bool, reductions: [Reduction]) {
        self.categories = categories
        self.categoryPositions = positions
        self.isWeighted = weighted
        self.reductions = reductions
    }

    /// This schema with one more category, after the others: their places, and so the ids of clusters filtered by
    /// them, stay as they were.
    ///
    /// - Throws: ``AggregateError`` when the schema has ``maximumCategoryCount`` categories already, or this one.
    public func adding(category: String) throws(AggregateError) -> AggregateSchema {
        try AggregateSchema(categories: categories + [category], weighted: isWeighted, reductions: reductions)
    }

    /// Whether the schema asks for nothing: an index with it keeps no aggregates.
    public var isEmpty: Bool { categories.isEmpty && !isWeighted && reductions.isEmpty }

    /// The categories named in `names`, as a set; throws for a name the schema does not have.
    public func categorySet(_ names: some Sequence<String>) throws(AggregateError) -> CategorySet {
        if let unknown = names.first(where: { categoryPositions[$0] == nil }) {
            throw .unknownCategory(unknown, known: categories)
        }
        return selection(of: names)
    }

    /// The set of the categories named in `names` that the schema has; the others select nothing.
    func selection(of names: some Sequence<String>) -> CategorySet {
        var set = CategorySet()
        for name in names { if let position = categoryPositions[name] { set.insert(position) } }
        return set
    }

    /// The names of the categories in `set`.
    func names(in set: CategorySet) -> Set<String> {
        Set(set.positions.filter { $0 < categories.count }.map { categories[$0] })
    }

    /// The category byte an entry carries: 0 for none, else the category's position + 1.
    func categoryCode(of values: ElementValues) throws(AggregateError) -> UInt8 {
        try categoryCode(of: values.category)
    }

    /// The category byte of a category name (or none); throws for a name the schema does not have.
    ///
    /// A few categories are found by comparing short strings, faster than hashing each (a bulk load asks once per
    /// element).
    @inline(__always) func categoryCode(of category: String?) throws(AggregateError) -> UInt8 {
        guard let category else { return 0 }
        let position = categories.count <= 16 ? categories.firstIndex(of: category) : categoryPositions[category]
        guard let position else { throw .unknownCategory(category, known: categories) }
        return UInt8(position + 1)
    }
}

/// A reduction every cluster carries: a name and the ``ClusterAggregate`` type that adds it up.
public struct Reduction: Sendable {
    /// The name clusters report it under (in GeoJSON, the property's name).
    public let name: String
    /// The type of its values.
    public let valueType: any ClusterAggregate.Type

    /// A reduction of any ``ClusterAggregate`` type: the general form.
    public init<Value: ClusterAggregate>(_ name: String, _ type: Value.Type) {
        self.name = name
        self.valueType = type
    }

    /// The sum of a number, reported as `<column>_sum`.
    public static func sum(_ column: String) -> Reduction { Reduction("\(column)_sum", Sum.self) }
    /// The smallest value of a number, reported as `<column>_min`.
    public static func min(_ column: String) -> Reduction { Reduction("\(column)_min", Minimum.self) }
    /// The largest value of a number, reported as `<column>_max`.
    public static func max(_ column: String) -> Reduction { Reduction("\(column)_max", Maximum.self) }
    /// The mean of a number, reported as `<column>_mean`.
    public static func mean(_ column: String) -> Reduction { Reduction("\(column)_mean", Mean.self) }
}

/// What one element brings to its clusters' aggregates.
public struct ElementValues: Sendable {
    /// Its weight, finite and not negative; default 1.
    public var weight: Double
    /// Its category, one of the schema's; `nil` for none: the element counts in clusters' counts, but in no
    /// category's, and a query filtered by categories never shows it.
    public var category: String?
    /// Its value of each of the schema's reductions, in order; missing ones (a shorter array) are the reduction's
    /// identity.
    public var reductions: [any ClusterAggregate]

    /// An element's values.
    public init(weight: Double = 1, category: String? = nil, reductions: [any ClusterAggregate] = []) {
        self.weight = weight
        self.category = category
        self.reductions = reductions
    }
}

/// The values of many elements, by position: what a bulk load of an aggregated index takes, column by column, so
/// that a million elements need no million small arrays.
public struct ElementValueColumns: Sendable {
    /// Each element's weight; `nil`: every element weighs 1.
    public var weights: [Double]?
    /// Each element's category; `nil`: no element has one.
    public var categories: [String?]?
    /// The values of each of the schema's reductions, in order; missing columns are the reductions' identities.
    public var reductions: [ReductionValues]

    /// Columns of values.
    public init(weights: [Double]? = nil, categories: [String?]? = nil, reductions: [ReductionValues] = []) {
        self.weights = weights
        self.categories = categories
        self.reductions = reductions
    }
}

/// The values of one reduction for many elements.
public enum ReductionValues: Sendable {
    /// Numbers (or none) for a ``NumericAggregate`` reduction: ``Sum``, ``Minimum``, ``Maximum``, ``Mean``.
    case numbers([Double?])
    /// Values of the reduction's own type.
    case values([any ClusterAggregate])

    var count: Int {
        switch self {
        case .numbers(let numbers): numbers.count
        case .values(let values): values.count
        }
    }
}

/// A set of an index's categories, by position in its schema.
public struct CategorySet: Hashable, Sendable, CustomStringConvertible {
    /// One bit per category position.
    public var bits: UInt64

    /// The empty set.
    public init() { bits = 0 }

    /// The set of these bits.
    public init(bits: UInt64) { self.bits = bits }

    /// Adds the category at `position` (0..<64).
    public mutating func insert(_ position: Int) {
        precondition((0..<AggregateSchema.maximumCategoryCount).contains(position), "a category position is 0..<64")
        bits |= 1 << UInt64(position)
    }

    /// Whether the set holds the category at `position`.
    public func contains(_ position: Int) -> Bool {
        position >= 0 && position < 64 && bits & (1 << UInt64(position)) != 0
    }

    /// Whether it holds an entry's category byte (0 is none, which no set holds).
    @inline(__always) func admits(code: UInt8) -> Bool { code != 0 && bits & (1 << UInt64(code &- 1)) != 0 }

    /// The positions it holds, in order.
    public var positions: [Int] { (0..<64).filter { contains($0) } }

    /// Calls `body` with each position it holds below `limit` (a schema's category count), in order, without a test of
    /// the positions it doesn't.
    @inline(__always) func forEach(below limit: Int, _ body: (Int) -> Void) {
        var rest = bits
        while rest != 0 {
            let position = rest.trailingZeroBitCount
            guard position < limit else { return }
            rest &= rest &- 1
            body(position)
        }
    }

    /// The bits in hexadecimal, as cluster ids write them.
    public var description: String { String(bits, radix: 16) }
}

/// Why an aggregate schema or an element's values are refused.
public enum AggregateError: Error, Equatable, CustomStringConvertible {
    /// More categories than ``AggregateSchema/maximumCategoryCount``.
    case tooManyCategories(count: Int)
    /// A category or reduction named twice.
    case duplicateName(String, kind: String)
    /// A category the schema does not have.
    case unknownCategory(String, known: [String])
    /// A weight that is negative, infinite or NaN.
    case invalidWeight(Double)
    /// A numeric reduction's value that is infinite or NaN.
    case invalidValue(reduction: String, Double)
    /// A reduction's value of another type than the schema declares, or more values than reductions.
    case wrongReductionValue(reduction: String, expected: String)
    /// More reduction values than the schema has reductions.
    case tooManyReductionValues(count: Int, declared: Int)
    /// Values for an index that has no aggregate schema.
    case noSchema
    /// A column of values whose length is not the number of elements.
    case columnLength(String, count: Int, elements: Int)
    /// Bad values of the element at a position of a bulk load.
    indirect case element(position: Int, AggregateError)

    /// What is wrong, in a sentence.
    public var description: String {
        switch self {
        case .tooManyCategories(let count):
            "\(count) categories: an index has at most \(AggregateSchema.maximumCategoryCount)"
        case .duplicateName(let name, let kind):
            "the \(kind) \"\(name)\" is declared twice"
        case .unknownCategory(let name, let known):
            "unknown category \"\(name)\"; the categories are \(known.joined(separator: ", "))"
        case .invalidWeight(let weight):
            "weight \(weight): a weight is a finite number, not negative"
        case .invalidValue(let reduction, let value):
            "\(reduction) value \(value): a reduced value is a finite number"
        case .wrongReductionValue(let reduction, let expected):
            "the reduction \(reduction) takes values of type \(expected)"
        case .tooManyReductionValues(let count, let declared):
            "\(count) reduction values for \(declared) reductions"
        case .noSchema:
            "the index keeps no aggregates: create it with an AggregateSchema"
        case .columnLength(let name, let count, let elements):
            "\(count) values of \(name) for \(elements) elements"
        case .element(let position, let reason):
            "element \(position): \(reason)"
        }
    }
}
