public import MapCluster

/// What a file's points add up to in every cluster, by column: a weight, a category, and reductions of numbers, as the
/// command line's `--weight`, `--category` and `--reduce` ask for them.
///
///     let aggregation = try PointAggregation(category: "continent", reductions: [.init("population", .sum)])
///     let index = try points.indexByRecord(aggregating: aggregation)
public struct PointAggregation: Sendable, Hashable {
    /// One reduction of a numeric column.
    public struct ColumnReduction: Sendable, Hashable, CustomStringConvertible {
        /// The column.
        public var column: String
        /// What is computed of it.
        public var operation: Operation

        /// A reduction of a column.
        public init(_ column: String, _ operation: Operation) {
            self.column = column
            self.operation = operation
        }

        /// Reads `COLUMN:OPERATION`, as in `population:sum`; `nil` if the text is not one.
        public init?(text: String) {
            guard let colon = text.lastIndex(of: ":"),
                let operation = Operation(rawValue: String(text[text.index(after: colon)...])),
                colon > text.startIndex
            else { return nil }
            self.init(String(text[..<colon]), operation)
        }

        /// The name clusters report it under: `population_sum`.
        public var name: String { "\(column)_\(operation.rawValue)" }

        /// `population:sum`.
        public var description: String { "\(column):\(operation.rawValue)" }

        var reduction: Reduction {
            switch operation {
            case .sum: .sum(column)
            case .min: .min(column)
            case .max: .max(column)
            case .mean: .mean(column)
            }
        }
    }

    /// What a reduction computes.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        case sum, min, max, mean
    }

    /// The column of weights (finite numbers, not negative; a point without one weighs 1); `nil` for none.
    public var weight: String?
    /// The column of categories (at most 64 distinct values; a point without one belongs to none); `nil` for none.
    public var category: String?
    /// The reductions, in order.
    public var reductions: [ColumnReduction]

    /// An aggregation; `nil` columns and no reductions aggregate nothing.
    public init(weight: String? = nil, category: String? = nil, reductions: [ColumnReduction] = []) {
        self.weight = weight
        self.category = category
        self.reductions = reductions
    }

    /// Whether it asks for nothing.
    public var isEmpty: Bool { weight == nil && category == nil && reductions.isEmpty }
}

extension PointSet {
    /// An index of the records, each element its record's position in ``records``, keeping the aggregates
    /// `aggregation` asks for.
    ///
    /// - Throws: ``PointFileError`` naming the file, line or feature and field of the first bad value: a column no file
    ///   has, a weight or reduced value that is not a number, a negative weight, more than 64 categories. Nothing is
    ///   built then.
    public func indexByRecord(aggregating aggregation: PointAggregation) throws(PointFileError) -> ClusterIndex<Int> {
        guard !aggregation.isEmpty else { return indexByRecord() }
        let (schema, values) = try aggregateValues(aggregation)
        do {
            return try ClusterIndex(
                records.enumerated().map { ($0.offset, $0.element.coordinate) }, values: values, schema: schema)
        } catch {
            throw PointFileError(file: files, message: "\(error)")
        }
    }

    /// The schema and the values, column by column, of the aggregates `aggregation` asks for.
    public func aggregateValues(_ aggregation: PointAggregation) throws(PointFileError) -> (
        AggregateSchema, ElementValueColumns
    ) {
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
            let position = try propertyPosition(column)
            var names: Set<String> = []
            var ofRecord: [String?] = []
            ofRecord.reserveCapacity(records.count)
            for record in records {
                let value = record.property(at: position)
                let name: String? = value == .null || value == .string("") ? nil : value.description
                if let name, names.insert(name).inserted, names.count > AggregateSchema.maximumCategoryCount {
                    throw record.origin.error(
                        field: column,
                        "'\(name)' is a category too many: a column of categories has at most \(AggregateSchema.maximumCategoryCount) distinct values"
                    )
                }
                ofRecord.append(name)
            }
            categories = names.sorted()
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
        do {
            let schema = try AggregateSchema(
                categories: categories, weighted: aggregation.weight != nil,
                reductions: aggregation.reductions.map(\.reduction))
            return (schema, values)
        } catch {
            throw PointFileError(file: files, message: "\(error)")
        }
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
            let text = value(column)
            let name: String? = text == .null || text == .string("") ? nil : text.description
            if let name, !schema.categories.contains(name) {
                throw record.origin.error(
                    field: column,
                    "unknown category '\(name)': the categories are those of the points the server started with ("
                        + schema.categories.joined(separator: ", ") + ")")
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
        return values
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
