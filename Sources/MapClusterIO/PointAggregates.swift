public import MapCluster

/// What a file's points add up to in every cluster, by column: a weight, columns of categories, and named reductions of
/// numbers, as the command line's `--weight`, `--category` and `--reduce` ask for them, and as MapLibre's
/// `clusterProperties` name them.
///
///     let aggregation = PointAggregation(
///         categories: ["continent", "feature"], reductions: [.init("population", .sum, name: "people")])
///     let index = try points.indexByRecord(aggregating: aggregation)
///
/// The first column of categories is the index's own (`AggregateSchema.categories`): queries can select
/// by it, and clusters carry `categories` in GeoJSON and `category_<value>` in tiles. Each further one is counted by a
/// ``ValueCounts`` reduction named after its column: `<column>_<value>` in GeoJSON and tiles alike.
public struct PointAggregation: Sendable, Hashable {
    /// One reduction of a numeric column.
    public struct ColumnReduction: Sendable, Hashable, CustomStringConvertible {
        /// The column.
        public var column: String
        /// What is computed of it.
        public var operation: Operation
        /// The name clusters report it under: by default `population_sum`.
        public var name: String

        /// A reduction of a column, named `name`, or `<column>_<operation>` without one.
        public init(_ column: String, _ operation: Operation, name: String? = nil) {
            self.column = column
            self.operation = operation
            self.name = name ?? "\(column)_\(operation.rawValue)"
        }

        /// Reads `[NAME=]COLUMN:OPERATION`, as in `population:sum` or `people=population:sum`; `nil` if the text is
        /// not one.
        public init?(text: String) {
            var rest = Substring(text)
            var name: String?
            if let equals = rest.firstIndex(of: "=") {
                name = String(rest[..<equals])
                rest = rest[rest.index(after: equals)...]
                guard name?.isEmpty == false else { return nil }
            }
            guard let colon = rest.lastIndex(of: ":"),
                let operation = Operation(rawValue: String(rest[rest.index(after: colon)...])),
                colon > rest.startIndex
            else { return nil }
            self.init(String(rest[..<colon]), operation, name: name)
        }

        /// `population:sum`, or `people=population:sum` for one named otherwise.
        public var description: String {
            let plain = "\(column):\(operation.rawValue)"
            return name == "\(column)_\(operation.rawValue)" ? plain : "\(name)=\(plain)"
        }

        var reduction: Reduction {
            switch operation {
            case .sum: Reduction(name, Sum.self)
            case .min: Reduction(name, Minimum.self)
            case .max: Reduction(name, Maximum.self)
            case .mean: Reduction(name, Mean.self)
            }
        }
    }

    /// What a reduction computes.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        case sum, min, max, mean
    }

    /// The column of weights (finite numbers, not negative; a point without one weighs 1); `nil` for none.
    public var weight: String?
    /// The columns of categories, each counted per cluster (a point without a value belongs to none of its
    /// categories): the first has at most `AggregateSchema.maximumCategoryCount` distinct values, each
    /// further one at most ``maximumCountedValues``.
    public var categories: [String]
    /// The reductions, in order.
    public var reductions: [ColumnReduction]

    /// The most distinct values of a column of categories after the first.
    public static let maximumCountedValues = 256

    /// An aggregation of these columns; `nil` columns and no reductions aggregate nothing.
    ///
    /// `category` is the first column of categories, before `categories`.
    public init(
        weight: String? = nil, category: String? = nil, categories: [String] = [], reductions: [ColumnReduction] = []
    ) {
        self.weight = weight
        self.categories = (category.map { [$0] } ?? []) + categories
        self.reductions = reductions
    }

    /// The first column of categories: the index's own, by which queries select.
    public var category: String? { categories.first }

    /// The columns of categories after the first, each counted by a ``ValueCounts`` reduction.
    public var countedCategories: ArraySlice<String> { categories.dropFirst() }

    /// Whether it asks for nothing.
    public var isEmpty: Bool { weight == nil && categories.isEmpty && reductions.isEmpty }

    /// The reductions clusters carry, in order: the numeric ones, then one ``ValueCounts`` for each column of
    /// categories after the first.
    var schemaReductions: [Reduction] {
        reductions.map(\.reduction) + countedCategories.map { Reduction($0, ValueCounts.self) }
    }
}

/// How many members of a cluster have each value of a column of categories: the reduction
/// ``PointAggregation`` keeps for each column of categories after the first.
///
/// Its values are not fixed in advance, so a live edit may bring one not seen before. Clusters report it as one
/// property per value, `<column>_<value>`, in GeoJSON and in tiles.
public struct ValueCounts: ClusterAggregate {
    /// The count of each value that has members.
    public var counts: [String: Int]

    /// One member's value, or a member without one (`nil`).
    public init(_ value: String?) {
        counts = value.map { [$0: 1] } ?? [:]
    }

    /// The value of no member.
    public static var identity: ValueCounts { ValueCounts(nil) }

    /// Adds another value's members.
    public mutating func merge(_ other: ValueCounts) {
        counts.merge(other.counts, uniquingKeysWith: +)
    }

    /// The properties a cluster reports it as, by value: `kind_bus`, `kind_tram`.
    public func properties(named name: String) -> [(name: String, count: Int)] {
        counts.sorted { $0.key < $1.key }.map { ("\(name)_\($0.key)", $0.value) }
    }

    /// A category's name: the text of a value that is present and not empty.
    @_spi(MapClusterServer) public static func name(of value: PropertyValue) -> String? {
        value == .null || value == .string("") ? nil : value.description
    }
}

extension PointSet {
    /// An index of the records, each element its record's position in ``records``, keeping the aggregates
    /// `aggregation` asks for.
    ///
    /// The index's categories are `knownCategories`, then the other values of the first column of categories, in
    /// order: a live index that rebuilds keeps its categories' places, and so its filtered clusters' ids.
    ///
    /// - Throws: ``PointFileError`` naming the file, line or feature and field of the first bad value: a column no file
    ///   has, a weight or reduced value that is not a number, a negative weight, too many categories. Nothing is
    ///   built then.
    public func indexByRecord(aggregating aggregation: PointAggregation, knownCategories: [String] = [])
        throws(PointFileError) -> ClusterIndex<Int>
    {
        guard !aggregation.isEmpty else { return indexByRecord() }
        let (schema, values) = try aggregateValues(aggregation, knownCategories: knownCategories)
        do {
            return try ClusterIndex(
                records.enumerated().map { ($0.offset, $0.element.coordinate) }, values: values, schema: schema)
        } catch {
            throw PointFileError(file: files, message: "\(error)")
        }
    }

    /// The schema and the values, column by column, of the aggregates `aggregation` asks for.
    ///
    /// The schema's categories are `knownCategories` (a live index's, which keep their places), then the other values
    /// of the first column of categories, in order.
    public func aggregateValues(_ aggregation: PointAggregation, knownCategories: [String] = []) throws(PointFileError)
        -> (
            AggregateSchema, ElementValueColumns
        )
    {
        var values = ElementValueColumns()
        if let column = aggregation.weight {
            let position = try propertyPosition(column)
            var weights: [Double] = []
            weights.reserveCapacity(records.count)
            for record in records {
                switch record.property(at: position) {
                case .number(let weight) where weight.isFinite && weight >= 0: weights.append(weight)
                case .number(let weight):
                    throw record.origin.error(field: column, "weight \(weight.shortestText) is negative")
                case .null: weights.append(1)
                case let other: throw record.origin.error(field: column, "weight '\(other)' is not a number")
                }
            }
            values.weights = weights
        }
        var categories: [String] = []
        if let column = aggregation.category {
            let (ofRecord, names) = try categoryNames(
                column, known: knownCategories, limit: AggregateSchema.maximumCategoryCount,
                kind: "a column of categories")
            // The known ones keep their places; new ones follow, in order.
            categories = knownCategories + names.subtracting(knownCategories).sorted()
            values.categories = ofRecord
        }
        for reduction in aggregation.reductions {
            let position = try propertyPosition(reduction.column)
            var numbers: [Double?] = []
            numbers.reserveCapacity(records.count)
            for record in records {
                switch record.property(at: position) {
                case .number(let number): numbers.append(number)
                case .null: numbers.append(nil)
                case let other:
                    throw record.origin.error(
                        field: reduction.column, "'\(other)' is not a number, and \(reduction) needs one")
                }
            }
            values.reductions.append(.numbers(numbers))
        }
        for column in aggregation.countedCategories {
            let (ofRecord, _) = try categoryNames(
                column, limit: PointAggregation.maximumCountedValues, kind: "a column of categories after the first")
            values.reductions.append(.values(ofRecord.map(ValueCounts.init)))
        }
        do {
            let schema = try AggregateSchema(
                categories: categories, weighted: aggregation.weight != nil, reductions: aggregation.schemaReductions)
            return (schema, values)
        } catch {
            throw PointFileError(file: files, message: "\(error)")
        }
    }

    /// Each record's category in `column` (`nil` for none), and the distinct ones with `known`; throws naming the record
    /// whose value is one more than `limit`.
    private func categoryNames(_ column: String, known: [String] = [], limit: Int, kind: String)
        throws(PointFileError) -> (ofRecord: [String?], distinct: Set<String>)
    {
        let position = try propertyPosition(column)
        var names = Set(known)
        var ofRecord: [String?] = []
        ofRecord.reserveCapacity(records.count)
        for record in records {
            let name = ValueCounts.name(of: record.property(at: position))
            if let name, names.insert(name).inserted, names.count > limit {
                throw record.origin.error(
                    field: column, "'\(name)' is a category too many: \(kind) has at most \(limit) distinct values")
            }
            ofRecord.append(name)
        }
        return (ofRecord, names)
    }

    /// The position of a property column; throws naming the files and their columns when none has it.
    private func propertyPosition(_ column: String) throws(PointFileError) -> Int {
        guard let position = propertyNames.firstIndex(of: column) else {
            throw PointFileError(
                file: files, field: column,
                message: "no such column (columns: \(propertyNames.joined(separator: ", ")))")
        }
        return position
    }

    /// The files the records came from, for an error about them all.
    private var files: String {
        var seen: [String] = []
        for record in records where !seen.contains(record.origin.file) {
            seen.append(record.origin.file)
            if seen.count == 3 { break }
        }
        return seen.joined(separator: ", ")
    }
}

extension PointAggregation {
    /// The aggregate values of one record whose properties follow `propertyNames`, checked as building an index
    /// checks a file's (a weight is a number that isn't negative, a reduced value a number), and its category one of
    /// `schema`'s: what a live server adds to its index for a point it is sent.
    ///
    /// - Throws: ``PointFileError`` naming the record's origin and the field.
    public func values(of record: PointRecord, propertyNames: [String], schema: AggregateSchema)
        throws(PointFileError) -> ElementValues
    {
        func value(_ column: String) -> PropertyValue {
            propertyNames.firstIndex(of: column).map { record.property(at: $0) } ?? .null
        }
        var values = ElementValues()
        if let column = weight {
            switch value(column) {
            case .number(let weight) where weight.isFinite && weight >= 0: values.weight = weight
            case .number(let weight):
                throw record.origin.error(field: column, "weight \(weight.shortestText) is negative or not finite")
            case .null: values.weight = 1
            case let other: throw record.origin.error(field: column, "weight '\(other)' is not a number")
            }
        }
        if let column = category {
            let name = ValueCounts.name(of: value(column))
            if let name, !schema.categories.contains(name) {
                throw record.origin.error(
                    field: column,
                    "unknown category '\(name)': the categories are " + schema.categories.joined(separator: ", "))
            }
            values.category = name
        }
        for reduction in reductions {
            let number: Double?
            switch value(reduction.column) {
            case .number(let value) where value.isFinite: number = value
            case .null: number = nil
            case let other:
                throw record.origin.error(
                    field: reduction.column, "'\(other)' is not a number, and \(reduction) needs one")
            }
            switch reduction.operation {
            case .sum: values.reductions.append(Sum(number))
            case .min: values.reductions.append(Minimum(number))
            case .max: values.reductions.append(Maximum(number))
            case .mean: values.reductions.append(Mean(number))
            }
        }
        for column in countedCategories {
            values.reductions.append(ValueCounts(ValueCounts.name(of: value(column))))
        }
        return values
    }

    /// The value of `record`'s first column of categories when `schema` doesn't have it: what a live index adds to
    /// its categories before it takes the record; `nil` when the schema has it or the record has none.
    public func newCategory(of record: PointRecord, propertyNames: [String], schema: AggregateSchema) -> String? {
        guard let column = category, let position = propertyNames.firstIndex(of: column),
            let name = ValueCounts.name(of: record.property(at: position)), !schema.categories.contains(name)
        else { return nil }
        return name
    }
}

extension PointSet {
    /// Checks every record's values for an aggregation, as building the index does, without building it.
    ///
    /// - Throws: ``PointFileError`` naming the first bad value.
    @_spi(MapClusterServer) public func aggregateValuesIfAny(_ aggregation: PointAggregation) throws(PointFileError) {
        guard !aggregation.isEmpty else { return }
        _ = try aggregateValues(aggregation)
    }
}
