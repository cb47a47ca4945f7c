/// What a cluster's members add up to beyond their count, in an index with an ``AggregateSchema``: their weight,
/// their count in each category, and each reduction.
///
///     let clusters = index.clusters(in: viewport)
///     for (cluster, aggregates) in zip(clusters, index.aggregates(of: clusters) ?? []) {
///         print(cluster.count, aggregates.count(ofCategory: "EU"), aggregates.number("population_sum") ?? 0)
///     }
///
/// They are asked of the index (``ClusterIndex/aggregates(of:options:)``), as a cluster's members and bounds are,
/// and come from its nodes, not from a visit of the members: a ``Cluster`` stays plain data that copies as bytes. For a
/// cluster of a query filtered by categories they are those of the selected categories' members.
public final class ClusterAggregates: Hashable, Sendable {
    /// The members' total weight (their count, when the index keeps no weights).
    public let weight: Double
    /// The members' weighted mean coordinate; `nil` when the index keeps no weights or the total weight is 0.
    public let weightedCenter: Coordinate?
    /// The schema's categories, in order.
    public let categories: [String]
    /// How many members each category has, in the order of ``categories``.
    public let categoryCounts: [Int]
    /// The names of the schema's reductions, in order.
    public let reductionNames: [String]
    /// Each reduction's value, in the order of ``reductionNames``.
    public let reductions: [any ClusterAggregate]

    init(
        weight: Double, weightedCenter: Coordinate?, categories: [String], categoryCounts: [Int],
        reductionNames: [String], reductions: [any ClusterAggregate]
    ) {
        self.weight = weight
        self.weightedCenter = weightedCenter
        self.categories = categories
        self.categoryCounts = categoryCounts
        self.reductionNames = reductionNames
        self.reductions = reductions
    }

    /// How many members a category has (0 for a category the schema does not have).
    public func count(ofCategory category: String) -> Int {
        categories.firstIndex(of: category).map { categoryCounts[$0] } ?? 0
    }

    /// The value of a reduction by its name, or `nil` if the schema has no such reduction.
    public subscript(reduction name: String) -> (any ClusterAggregate)? {
        reductionNames.firstIndex(of: name).map { reductions[$0] }
    }

    /// The number a numeric reduction (``Sum``, ``Minimum``, ``Maximum``, ``Mean``) comes to: `nil` if no member has a
    /// value, or the reduction is of another kind.
    public func number(_ name: String) -> Double? {
        switch self[reduction: name] {
        case let sum as Sum: sum.count == 0 ? nil : sum.total
        case let minimum as Minimum: minimum.value
        case let maximum as Maximum: maximum.value
        case let mean as Mean: mean.value
        default: nil
        }
    }

    /// What the members of several clusters (with no member in common, from one index) add up to together.
    ///
    /// The aggregates of a marker that stands for them all; `nil` for no clusters.
    public static func combined(_ parts: some Collection<ClusterAggregates>) -> ClusterAggregates? {
        guard let first = parts.first else { return nil }
        guard parts.count > 1 else { return first }
        var counts = [Int](repeating: 0, count: first.categoryCounts.count)
        var reductions = first.reductions
        for (offset, part) in parts.enumerated() {
            for position in counts.indices { counts[position] += part.categoryCounts[position] }
            guard offset > 0 else { continue }
            for position in reductions.indices {
                reductions[position] = Self.merge(reductions[position], part.reductions[position])
            }
        }
        // A part without a center (no weights kept, or none but zeros) adds nothing to it.
        let weightedCenter = MapPoint.weightedMean(
            parts.compactMap { part in part.weightedCenter.map { ($0.mapPoint, part.weight) } })?.coordinate
        return ClusterAggregates(
            weight: parts.reduce(0) { $0 + $1.weight }, weightedCenter: weightedCenter, categories: first.categories,
            categoryCounts: counts, reductionNames: first.reductionNames, reductions: reductions)
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

extension NodeAggregates {
    /// The aggregates of the entries in each of `ranges` (disjoint, in key order), one walk of the tree per column.
    ///
    /// They are those of the entries that `categories` selects and `takes` accepts, if given: `counts[r]` of them in
    /// `ranges[r]`.
    /// - Complexity: O((*r* *F* log *n* + *e*) · *g*) for *r* ranges, *e* entries in leaves that straddle them and *g*
    ///   categories counted; with `takes`, every entry in the ranges is visited.
    func clusterAggregates(
        inRanges ranges: [ClosedRange<UInt64>], counts: [Int], categories: CategorySet?,
        where takes: ((IndexEntry) -> Bool)? = nil, tree: MortonTree
    ) -> [ClusterAggregates] {
        let counted = categoryCounts?.groups(for: categories) ?? []
        // The counts alone, filtered or not: eight categories to a cache line.
        let categoryTotals = categoryCounts?.reduce(ranges: ranges, groups: counted, where: takes, tree: tree).map(
            \.count)
        // The weights and every reduction keep the same groups: each category's and all.
        let groups = AggregateColumn.groups(
            for: categories, categoryCount: schema.categories.count, hasAllGroup: true)
        let weightTotals = weights?.merged(ranges: ranges, groups: groups, where: takes, tree: tree)
        let reduced = reductions.map { $0.reductions(ranges: ranges, groups: groups, where: takes, tree: tree) }
        return ranges.indices.map { r in
            make(
                count: counts[r],
                categoryCounts: countsByCategory(
                    categoryTotals.map { $0[(r * counted.count)..<((r + 1) * counted.count)] }, groups: counted),
                weight: weightTotals?[r],
                reductions: reduced.map { $0[r] })
        }
    }

    /// The count of each category, in the schema's order, from the totals of `groups`; the others' are 0.
    private func countsByCategory(_ totals: ArraySlice<Int>?, groups: [Int]) -> [Int] {
        guard let totals else { return [] }
        var counts = [Int](repeating: 0, count: schema.categories.count)
        for (total, group) in zip(totals, groups) { counts[group] = total }
        return counts
    }

    private func make(
        count: Int, categoryCounts: [Int], weight: WeightTotals?, reductions: [any ClusterAggregate]
    ) -> ClusterAggregates {
        ClusterAggregates(
            weight: weight?.weight ?? Double(count), weightedCenter: weight?.center, categories: schema.categories,
            categoryCounts: categoryCounts, reductionNames: reductionNames, reductions: reductions)
    }
}
