/// What the clusters of one answer add up to, one row of plain numbers each: what
/// ``Clustering/aggregates(of:)->ClusterAggregateTable?`` answers.
///
///     let clusters = clustering.clusters(in: viewport)
///     if let table = try clustering.aggregates(of: clusters) {
///         for (cluster, aggregates) in zip(clusters, table) {
///             print(cluster.count, aggregates.count(ofCategory: "EU"), aggregates.number("population_sum") ?? 0)
///         }
///     }
///
/// The whole answer is a few arrays: reading a cluster's aggregates allocates nothing, and its elements
/// (``ClusterAggregates``) are views of one row.
public struct ClusterAggregateTable: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral {
    @usableFromInline let storage: AggregateAnswer

    init(_ storage: AggregateAnswer) { self.storage = storage }

    /// A table of the given clusters' aggregates (from tables of one schema), in order.
    public init(_ rows: some Collection<ClusterAggregates>) {
        guard let first = rows.first else {
            storage = AggregateAnswer(
                shape: AnswerShape(layout: RowLayout(schema: .none), categories: [], reductionNames: []), counts: [],
                rows: [], custom: [])
            return
        }
        let width = first.storage.layout.all.width
        var words = ContiguousArray<UInt64>()
        words.reserveCapacity(rows.count * width)
        for aggregates in rows {
            let start = aggregates.row * width
            words.append(contentsOf: aggregates.storage.rows[start..<(start + width)])
        }
        storage = AggregateAnswer(
            shape: first.storage.shape, counts: ContiguousArray(rows.map(\.memberCount)), rows: words,
            custom: first.storage.custom.indices.map { column in rows.map { $0.storage.custom[column][$0.row] } })
    }

    /// A table of the given clusters' aggregates; `[]` is the empty table.
    public init(arrayLiteral rows: ClusterAggregates...) { self.init(rows) }

    /// The rows of several tables, each for the given positions, in one table of `count` rows.
    init(gathering parts: [(positions: [Int], table: ClusterAggregateTable)], count: Int) {
        guard let first = parts.first?.table.storage else { preconditionFailure("some table to gather") }
        let width = first.layout.all.width
        var counts = ContiguousArray(repeating: 0, count: count)
        var rows = ContiguousArray<UInt64>(repeating: 0, count: count * width)
        var custom = first.custom.map { [any ClusterAggregate](repeating: $0.first ?? Sum(nil), count: count) }
        for (positions, table) in parts {
            for (row, position) in positions.enumerated() {
                counts[position] = table.storage.counts[row]
                for i in 0..<width { rows[position * width + i] = table.storage.rows[row * width + i] }
                for column in custom.indices { custom[column][position] = table.storage.custom[column][row] }
            }
        }
        storage = AggregateAnswer(shape: first.shape, counts: counts, rows: rows, custom: custom)
    }

    /// The position of the first cluster's aggregates: 0.
    @inlinable public var startIndex: Int { 0 }
    /// The number of clusters asked for.
    @inlinable public var endIndex: Int { storage.counts.count }

    /// The aggregates of the cluster at `position` of the clusters asked for.
    @inlinable public subscript(position: Int) -> ClusterAggregates {
        precondition(indices.contains(position), "a position of the table")
        return ClusterAggregates(storage, row: position)
    }

    /// Whether two tables hold the same aggregates, in the same order.
    public static func == (lhs: ClusterAggregateTable, rhs: ClusterAggregateTable) -> Bool {
        lhs.elementsEqual(rhs)
    }

    /// Hashes every row.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for aggregates in self { hasher.combine(aggregates) }
    }
}

/// What a cluster's members add up to beyond their count, in an index with an ``AggregateSchema``: their weight,
/// their count in each category, and each reduction.
///
/// A row of a ``ClusterAggregateTable``. The numbers are read where they lie: ``number(_:)`` and
/// ``categoryCounts`` cost no allocation; ``reductions`` builds the reductions' values.
///
/// They are asked of the clustering that made the clusters (``Clustering/aggregates(of:)->ClusterAggregateTable?``), as a cluster's members and bounds are,
/// and come from its nodes, not from a visit of the members: a ``Cluster`` stays plain data that copies as bytes. For a
/// cluster of a query filtered by categories they are those of the selected categories' members.
public struct ClusterAggregates: Hashable, Sendable {
    @usableFromInline let storage: AggregateAnswer
    @usableFromInline let row: Int

    @inlinable
    init(_ storage: AggregateAnswer, row: Int) {
        self.storage = storage
        self.row = row
    }

    /// How many members the cluster has.
    @inlinable var memberCount: Int { storage.counts[row] }

    /// The members' total weight (their count, when the index keeps no weights).
    @inlinable public var weight: Double {
        guard storage.isWeighted else { return Double(memberCount) }
        return storage.pair(storage.pairsAt, of: row)
    }

    /// The members' weighted mean coordinate; `nil` when the index keeps no weights or the total weight is 0.
    public var weightedCenter: Coordinate? {
        guard storage.isWeighted else { return nil }
        let weight = storage.pair(storage.pairsAt, of: row)
        guard weight > 0 else { return nil }
        return Coordinate(
            uncheckedLatitude: storage.pair(storage.pairsAt + 2, of: row) / weight,
            longitude: storage.pair(storage.pairsAt + 4, of: row) / weight)
    }

    /// The schema's categories, in order.
    public var categories: [String] { storage.categories }

    /// How many members each category has, in the order of ``categories``.
    @inlinable public var categoryCounts: CategoryCounts {
        let start = row * storage.width
        return CategoryCounts(words: storage.rows[start..<(start + storage.categoryCount)])
    }

    /// How many members a category has (0 for a category the schema does not have).
    @inlinable public func count(ofCategory category: String) -> Int {
        storage.categories.firstIndex(of: category).map { Int(truncatingIfNeeded: storage.word($0, of: row)) } ?? 0
    }

    /// The names of the schema's reductions, in order.
    public var reductionNames: [String] { storage.reductionNames }

    /// Each reduction's value, in the order of ``reductionNames``.
    public var reductions: [any ClusterAggregate] { storage.kinds.indices.map { reduction(at: $0) } }

    /// The value of a reduction by its name, or `nil` if the schema has no such reduction.
    public subscript(reduction name: String) -> (any ClusterAggregate)? {
        storage.reductionNames.firstIndex(of: name).map { reduction(at: $0) }
    }

    /// The value of the reduction at a position of ``reductionNames``.
    public func reduction(at position: Int) -> any ClusterAggregate {
        let count = valueCount(at: position)
        switch storage.kinds[position] {
        case .custom(let column):
            return storage.custom[column][row]
        case .sum:
            return sum(at: position)
        case .mean:
            var mean = Mean(nil)
            mean.sum = sum(at: position)
            return mean
        case .minimum:
            return Minimum(count == 0 ? nil : Double(bitPattern: storage.word(storage.valueAt(position), of: row)))
        case .maximum:
            return Maximum(count == 0 ? nil : Double(bitPattern: storage.word(storage.valueAt(position), of: row)))
        }
    }

    /// The number a numeric reduction (``Sum``, ``Minimum``, ``Maximum``, ``Mean``) comes to: `nil` if no member has a
    /// value, or the reduction is of another kind.
    @inlinable public func number(_ name: String) -> Double? {
        storage.reductionNames.firstIndex(of: name).flatMap { number(at: $0) }
    }

    /// ``number(_:)`` by the reduction's position in ``reductionNames``.
    @inlinable public func number(at position: Int) -> Double? {
        // Where the number lies is one lookup: a map reads a number of every cluster it draws.
        let place = storage.shape.numbers[position]
        guard place.kind != AnswerShape.notANumber else { return nil }
        let count = Int(truncatingIfNeeded: storage.word(place.countAt, of: row))
        guard count > 0 else { return nil }
        switch place.kind {
        case AnswerShape.sum: return storage.pair(place.valueAt, of: row) + 0
        case AnswerShape.mean: return storage.pair(place.valueAt, of: row) / Double(count)
        default: return Double(bitPattern: storage.word(place.valueAt, of: row))
        }
    }

    /// Whether the reduction at a position is numeric: one whose ``number(at:)`` is `nil` only for no value.
    public func isNumeric(at position: Int) -> Bool {
        if case .custom = storage.kinds[position] { return false }
        return true
    }

    /// How many members have a value of a numeric reduction.
    @inlinable func valueCount(at position: Int) -> Int {
        let place = storage.shape.numbers[position]
        return place.kind == AnswerShape.notANumber ? 0 : Int(truncatingIfNeeded: storage.word(place.countAt, of: row))
    }

    private func sum(at position: Int) -> Sum {
        var sum = Sum(nil)
        sum.count = valueCount(at: position)
        sum.total = storage.pair(storage.valueAt(position), of: row) + 0
        return sum
    }

    /// What the members of several clusters (with no member in common, from one index) add up to together.
    ///
    /// The aggregates of a marker that stands for them all; `nil` for no clusters.
    public static func combined(_ parts: some Collection<ClusterAggregates>) -> ClusterAggregates? {
        combined(Array(parts))
    }

    /// ``combined(_:)`` of an array: what a writer calls for each marker of several clusters, without a generic
    /// lookup per call.
    public static func combined(_ parts: [ClusterAggregates]) -> ClusterAggregates? {
        guard let first = parts.first else { return nil }
        guard parts.count > 1 else { return first }
        let layout = first.storage.layout
        var row = ContiguousArray<UInt64>(repeating: 0, count: layout.all.width)
        var custom = first.storage.custom.indices.map { [first.storage.custom[$0][first.row]] }
        row.withMutableCursor { row in
            RowLayout.clearExtremes(layout.all, at: row)
            for part in parts {
                part.storage.rows.withCursor { rows in
                    let source = rows + part.row * layout.all.width
                    RowLayout.merge(layout.all, source, into: layout.all, row, precise: false)
                }
            }
        }
        for column in custom.indices {
            for part in parts.dropFirst() {
                custom[column][0] = Self.merge(custom[column][0], part.storage.custom[column][part.row])
            }
        }
        let storage = AggregateAnswer(
            shape: first.storage.shape, counts: [parts.reduce(0) { $0 + $1.memberCount }], rows: row, custom: custom)
        return ClusterAggregates(storage, row: 0)
    }

    /// Two values of one reduction merged; a value of another kind (from another schema) leaves the first as it is.
    private static func merge<Value: ClusterAggregate>(_ value: Value, _ other: any ClusterAggregate)
        -> any ClusterAggregate
    {
        guard let other = other as? Value else { return value }
        var merged = value
        merged.merge(other)
        return merged
    }

    /// Whether two clusters' members add up to the same.
    public static func == (lhs: ClusterAggregates, rhs: ClusterAggregates) -> Bool {
        lhs.weight == rhs.weight && lhs.weightedCenter == rhs.weightedCenter && lhs.categories == rhs.categories
            && lhs.categoryCounts == rhs.categoryCounts && lhs.reductionNames == rhs.reductionNames
            && lhs.reductions.map { AnyHashable($0) } == rhs.reductions.map { AnyHashable($0) }
    }

    /// Hashes the weight, the category counts and the reductions.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(weight)
        hasher.combine(categoryCounts)
        for reduction in reductions { hasher.combine(AnyHashable(reduction)) }
    }
}

/// How many members of a cluster each category has, in the schema's order: a view of its row.
public struct CategoryCounts: RandomAccessCollection, Hashable, Sendable {
    @usableFromInline let words: ArraySlice<UInt64>

    @inlinable init(words: ArraySlice<UInt64>) { self.words = words }

    /// The position of the schema's first category: 0.
    @inlinable public var startIndex: Int { 0 }
    /// The number of the schema's categories.
    @inlinable public var endIndex: Int { words.count }

    /// The count of the category at a position of the schema.
    @inlinable public subscript(position: Int) -> Int {
        Int(truncatingIfNeeded: words[words.startIndex + position])
    }

    /// Whether both hold the same counts.
    public static func == (lhs: CategoryCounts, rhs: CategoryCounts) -> Bool { lhs.words == rhs.words }

    /// Hashes the counts.
    public func hash(into hasher: inout Hasher) { hasher.combine(words) }
}

/// What every answer of one schema shares, made once per index and read on every access of an answer.
///
/// Where a row's sections start, and each reduction's kind, count and value words.
@usableFromInline
final class AnswerShape: Sendable {
    /// ``numbers``: a reduction that is no number (a user's ``ClusterAggregate``).
    @usableFromInline static let notANumber: UInt8 = 0
    /// ``numbers``: a ``Sum``, whose value is a pair.
    @usableFromInline static let sum: UInt8 = 1
    /// ``numbers``: a ``Mean``, a pair divided by its count.
    @usableFromInline static let mean: UInt8 = 2
    /// ``numbers``: a ``Minimum`` or ``Maximum``, a word.
    @usableFromInline static let extreme: UInt8 = 3

    let layout: RowLayout
    @usableFromInline let categories: [String]
    @usableFromInline let reductionNames: [String]
    /// Words per row, and where a row's sections start.
    @usableFromInline let width: Int
    @usableFromInline let categoryCount: Int
    @usableFromInline let isWeighted: Bool
    @usableFromInline let pairsAt: Int
    /// Each reduction's kind.
    let kinds: [RowLayout.Kind]
    /// Where each reduction's number lies in a row.
    @usableFromInline let numbers: [NumberPlace]

    /// Where a reduction's number lies in a row: what it is (``notANumber``, ``sum``, ``mean`` or ``extreme``), the
    /// word of its count and the word of its value (a pair, a minimum or a maximum); both -1 for no number.
    @usableFromInline
    struct NumberPlace: Sendable {
        @usableFromInline let kind: UInt8
        @usableFromInline let countAt: Int
        @usableFromInline let valueAt: Int
    }

    init(layout: RowLayout, categories: [String], reductionNames: [String]) {
        self.layout = layout
        self.categories = categories
        self.reductionNames = reductionNames
        width = layout.all.width
        categoryCount = layout.categoryCount
        isWeighted = layout.isWeighted
        pairsAt = layout.all.pairsAt
        kinds = layout.kinds
        var numbers = [NumberPlace](
            repeating: NumberPlace(kind: Self.notANumber, countAt: -1, valueAt: -1), count: kinds.count)
        for field in layout.fields {
            let (kind, valueAt) =
                switch field.kind {
                case .sum: (Self.sum, layout.all.pairsAt + 2 * field.slot)
                case .mean: (Self.mean, layout.all.pairsAt + 2 * field.slot)
                case .minimum: (Self.extreme, layout.all.minsAt + field.slot)
                case .maximum: (Self.extreme, layout.all.maxesAt + field.slot)
                // Never: the fields are the numeric reductions.
                case .custom: (Self.notANumber, -1)
                }
            numbers[field.position] = NumberPlace(
                kind: kind, countAt: layout.categoryCount + field.numeric, valueAt: valueAt)
        }
        self.numbers = numbers
    }
}

/// The numbers of one answer: a row of the shape of a block of all (``RowLayout/all``) per cluster, its member count,
/// and the values of the user's own reductions, a column each.
@usableFromInline
final class AggregateAnswer: Sendable {
    @usableFromInline let shape: AnswerShape
    @usableFromInline let counts: ContiguousArray<Int>
    @usableFromInline let rows: ContiguousArray<UInt64>
    /// Per user's reduction (``RowLayout/Kind/custom(_:)``), each row's value.
    let custom: [[any ClusterAggregate]]

    init(
        shape: AnswerShape, counts: ContiguousArray<Int>, rows: ContiguousArray<UInt64>,
        custom: [[any ClusterAggregate]]
    ) {
        self.shape = shape
        self.counts = counts
        self.rows = rows
        self.custom = custom
    }

    var layout: RowLayout { shape.layout }
    @inlinable var categories: [String] { shape.categories }
    @inlinable var reductionNames: [String] { shape.reductionNames }
    @inlinable var width: Int { shape.width }
    @inlinable var categoryCount: Int { shape.categoryCount }
    @inlinable var isWeighted: Bool { shape.isWeighted }
    @inlinable var pairsAt: Int { shape.pairsAt }
    var kinds: [RowLayout.Kind] { shape.kinds }
    /// The word of the value of the reduction at `position`.
    func valueAt(_ position: Int) -> Int { shape.numbers[position].valueAt }

    /// A word of a row.
    @inlinable @inline(__always) func word(_ index: Int, of row: Int) -> UInt64 { rows[row * width + index] }

    /// The value of a pair of a row.
    @inlinable @inline(__always) func pair(_ index: Int, of row: Int) -> Double {
        let high = Double(bitPattern: word(index, of: row))
        return high.isFinite ? high + Double(bitPattern: word(index + 1, of: row)) : high
    }
}
