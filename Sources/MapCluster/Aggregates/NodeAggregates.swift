/// The aggregates a tree keeps in its nodes for an ``AggregateSchema``: one column each for the categories' totals, the
/// weights, and every reduction.
@usableFromInline
struct NodeAggregates: Sendable {
    let schema: AggregateSchema
    /// Per category (no group of all: the tree's summaries are that).
    var categories: NodeColumn<CategoryTotals>?
    /// Per category: the counts alone, for unfiltered queries.
    var categoryCounts: NodeColumn<CategoryCount>?
    /// Per category and all.
    var weights: NodeColumn<WeightTotals>?
    /// Per category and all, in the schema's order.
    var reductions: [AggregateColumn]
    /// The reductions' names, in order, for every cluster's aggregates to share.
    let reductionNames: [String]

    @usableFromInline
    init(schema: AggregateSchema) {
        self.schema = schema
        let categoryCount = schema.categories.count
        categories =
            categoryCount > 0 ? NodeColumn(categoryCount: categoryCount, hasAllGroup: false, defaultStored: ()) : nil
        categoryCounts =
            categoryCount > 0 ? NodeColumn(categoryCount: categoryCount, hasAllGroup: false, defaultStored: ()) : nil
        weights =
            schema.isWeighted ? NodeColumn(categoryCount: categoryCount, hasAllGroup: true, defaultStored: 1) : nil
        reductions = schema.reductions.map { $0.valueType.column(categoryCount: categoryCount) }
        reductionNames = schema.reductions.map(\.name)
    }

    /// Calls `body` with every column.
    func forEachColumn(_ body: (AggregateColumn) -> Void) {
        if let categories { body(categories) }
        if let categoryCounts { body(categoryCounts) }
        if let weights { body(weights) }
        for column in reductions { body(column) }
    }

    /// Copies each column that another tree shares: what every mutation of the tree does first.
    mutating func makeUnique() {
        if categories != nil, !isKnownUniquelyReferenced(&categories) { categories = categories?.copy() as? NodeColumn }
        if categoryCounts != nil, !isKnownUniquelyReferenced(&categoryCounts) {
            categoryCounts = categoryCounts?.copy() as? NodeColumn
        }
        if weights != nil, !isKnownUniquelyReferenced(&weights) { weights = weights?.copy() as? NodeColumn }
        for i in reductions.indices where !isKnownUniquelyReferenced(&reductions[i]) {
            reductions[i] = reductions[i].copy()
        }
    }

    /// Computes every node's values of a tree built in bulk.
    func build(_ tree: MortonTree) {
        forEachColumn { $0.build(tree) }
    }

    /// Checks an element's values against the schema, and returns its category byte.
    func validate(_ values: ElementValues) throws(AggregateError) -> UInt8 {
        guard values.weight.isFinite && values.weight >= 0 else { throw .invalidWeight(values.weight) }
        guard values.reductions.count <= schema.reductions.count else {
            throw .tooManyReductionValues(count: values.reductions.count, declared: schema.reductions.count)
        }
        for (value, reduction) in zip(values.reductions, schema.reductions)
        where type(of: value) != reduction.valueType {
            throw .wrongReductionValue(reduction: reduction.name, expected: "\(reduction.valueType)")
        }
        return try schema.categoryCode(of: values)
    }

    /// Makes the next inserted entry store validated values.
    func prepare(_ values: ElementValues) {
        weights?.prepare(values.weight)
        for (i, column) in reductions.enumerated() {
            if i < values.reductions.count {
                column.prepare(erased: values.reductions[i])
            } else {
                column.prepareDefault()
            }
        }
    }

    /// Makes the next inserted entry store the default values (a new element inserted without values).
    func prepareDefaults() {
        forEachColumn { $0.prepareDefault() }
    }

    /// Makes the next inserted entry store what the last removed entry stored (an element moved).
    func prepareLastRemoved() {
        forEachColumn { $0.prepareLastRemoved() }
    }

    /// Checks the columns of a bulk load of `count` elements against the schema, and returns each element's category
    /// byte.
    @usableFromInline
    func validate(_ columns: ElementValueColumns, count: Int) throws(AggregateError) -> ContiguousArray<UInt8> {
        if let weights = columns.weights {
            guard weights.count == count else { throw .columnLength("weights", count: weights.count, elements: count) }
            if let bad = weights.firstIndex(where: { !($0.isFinite && $0 >= 0) }) {
                throw .element(position: bad, .invalidWeight(weights[bad]))
            }
        }
        guard columns.reductions.count <= schema.reductions.count else {
            throw .tooManyReductionValues(count: columns.reductions.count, declared: schema.reductions.count)
        }
        for (values, reduction) in zip(columns.reductions, schema.reductions) {
            guard values.count == count else {
                throw .columnLength(reduction.name, count: values.count, elements: count)
            }
            switch values {
            case .numbers:
                guard reduction.valueType is any NumericAggregate.Type else {
                    throw .wrongReductionValue(reduction: reduction.name, expected: "\(reduction.valueType)")
                }
            case .values(let values):
                if let bad = values.firstIndex(where: { type(of: $0) != reduction.valueType }) {
                    throw .element(
                        position: bad,
                        .wrongReductionValue(reduction: reduction.name, expected: "\(reduction.valueType)"))
                }
            }
        }
        guard let categories = columns.categories else { return ContiguousArray(repeating: 0, count: count) }
        guard categories.count == count else {
            throw .columnLength("categories", count: categories.count, elements: count)
        }
        var codes = ContiguousArray<UInt8>(repeating: 0, count: count)
        for (position, category) in categories.enumerated() {
            do throws(AggregateError) {
                codes[position] = try schema.categoryCode(of: category)
            } catch {
                throw .element(position: position, error)
            }
        }
        return codes
    }

    /// Stores validated columns as the values of slots 0..<count, for ``MortonTree/attach(_:)`` to lay out.
    @usableFromInline
    func store(_ columns: ElementValueColumns) {
        weights?.input = columns.weights.map { weights in { weights[$0] } }
        for (i, column) in reductions.enumerated() {
            column.storeInput(i < columns.reductions.count ? columns.reductions[i] : nil)
        }
    }
}

extension ClusterAggregate {
    /// A column of this reduction for an index with `categoryCount` categories.
    static func column(categoryCount: Int) -> AggregateColumn {
        if let numeric = Self.self as? any NumericAggregate.Type {
            return numeric.numericColumn(categoryCount: categoryCount)
        }
        return ReductionColumn<Self>(categoryCount: categoryCount, hasAllGroup: true, defaultStored: .identity)
    }
}

extension NumericAggregate {
    /// A column of this numeric reduction, which makes a bulk load's values from numbers in specialized code.
    @_specialize(where Self == Sum)
    @_specialize(where Self == Minimum)
    @_specialize(where Self == Maximum)
    @_specialize(where Self == Mean)
    static func numericColumn(categoryCount: Int) -> AggregateColumn {
        let column = ReductionColumn<Self>(categoryCount: categoryCount, hasAllGroup: true, defaultStored: .identity)
        column.fromNumbers = { numbers in { Self(numbers[$0]) } }
        return column
    }
}

/// A column of a user's reduction, which answers with its values type-erased.
final class ReductionColumn<Value: ClusterAggregate>: NodeColumn<Reduced<Value>>, @unchecked Sendable {
    /// The values of numbers, for a ``NumericAggregate`` reduction.
    var fromNumbers: (@Sendable ([Double?]) -> (Int) -> Value)?

    override func copy() -> AggregateColumn {
        let copy = ReductionColumn(categoryCount: categoryCount, hasAllGroup: hasAllGroup, defaultStored: defaultStored)
        copy.copyState(of: self)
        copy.fromNumbers = fromNumbers
        return copy
    }

    override func prepare(erased value: any ClusterAggregate) {
        guard let value = value as? Value else { preconditionFailure("values are validated before they are stored") }
        prepare(value)
    }

    override func storeInput(_ values: ReductionValues?) {
        switch values {
        case nil:
            input = nil
        case .values(let values):
            input = { values[$0] as? Value ?? .identity }
        case .numbers(let numbers):
            guard let fromNumbers else { preconditionFailure("values are validated before they are stored") }
            input = fromNumbers(numbers)
        }
    }

    @_specialize(where Value == Sum)
    @_specialize(where Value == Minimum)
    @_specialize(where Value == Maximum)
    @_specialize(where Value == Mean)
    override func reductions(
        ranges: [ClosedRange<UInt64>], groups: [Int], where takes: ((IndexEntry) -> Bool)?, tree: MortonTree
    ) -> [any ClusterAggregate] {
        merged(ranges: ranges, groups: groups, where: takes, tree: tree).map(\.value)
    }
}
