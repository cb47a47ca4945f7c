extension ClusterIndex {
    /// An empty index that keeps the aggregates of `schema` for every cluster: categories, weights, reductions.
    public init(schema: AggregateSchema) {
        self.init()
        if !schema.isEmpty { tree.aggregates = NodeAggregates(schema: schema) }
    }

    /// Builds an index of elements and their aggregate values in one pass.
    ///
    ///     let index = try ClusterIndex(
    ///         cities.map { ($0.id, $0.coordinate) },
    ///         values: ElementValueColumns(
    ///             categories: cities.map(\.continent), reductions: [.numbers(cities.map(\.population))]),
    ///         schema: AggregateSchema(categories: continents, reductions: [.sum("population")]))
    ///
    /// The values come by position, a column each. Nothing is built when a value is refused: the error names the
    /// element's position and the value.
    /// - Complexity: O(*n*), as ``init(_:)``.
    @inlinable
    public init(
        _ elements: some Sequence<(Element, Coordinate)>, values: ElementValueColumns, schema: AggregateSchema
    ) throws(AggregateError) {
        guard !schema.isEmpty else {
            self.init(elements)
            return
        }
        let input = elements as? [(Element, Coordinate)] ?? Array(elements)
        let aggregates = NodeAggregates(schema: schema)
        let categories = try aggregates.validate(values, count: input.count)
        aggregates.store(values)
        self.init(bulk: input, categories: categories, aggregates: aggregates)
    }

    /// The schema of the aggregates the index keeps, or `nil` if it keeps none.
    public var schema: AggregateSchema? { tree.aggregates?.schema }

    /// Adds `element` at `coordinate` with its aggregate values, or moves it there and gives it these values if the
    /// index already holds it.
    ///
    /// Values the schema refuses (a negative or non-finite weight, an unknown category, a reduction value of the wrong
    /// type) throw, and the index is unchanged. ``insert(_:at:)`` keeps a present element's values and gives a new one
    /// the defaults.
    /// - Returns: `true` if the element is new.
    /// - Complexity: O(log *n*).
    @discardableResult
    public mutating func insert(_ element: Element, at coordinate: Coordinate, values: ElementValues)
        throws(AggregateError) -> Bool
    {
        // Validated before anything changes. (No copy of the aggregates outlives this line: it would make the tree's
        // columns look shared, and the first change copy them.)
        guard let category = try tree.aggregates?.validate(values) else { throw .noSchema }
        slots.reserve(1, in: store)
        let key = GridPosition(coordinate).key
        let (slot, previousKey) = elementSlots.place(element, key: key)
        if let previousKey {
            let removed = tree.remove(key: previousKey) { $0.slot == slot }
            precondition(removed != nil, "the index lost track of an element: its slot table and tree disagree")
        }
        tree.aggregates?.makeUnique()
        tree.aggregates?.prepare(values)
        tree.insert(IndexEntry(key: key, coordinate: coordinate, slot: slot, category: category))
        return previousKey == nil
    }

    /// Adds (or moves) each element with its aggregate values, all or nothing: values the schema refuses throw, naming
    /// the element's position in the batch, and the index is unchanged.
    ///
    /// The changes reach the tree in the order of their keys along the Z-order curve, so that consecutive ones touch
    /// neighbouring nodes. An identity that occurs more than once ends with its last coordinate and values.
    /// - Complexity: O(*m* log *n*) for *m* elements.
    ///
    /// Two threads share the work, as in ``insert(contentsOf:)``: one finds each element's slot, a chunk at a time,
    /// while the other applies the previous chunk to the tree with each element's values.
    @inlinable @inline(__always)
    public mutating func insert(contentsOf elements: [(Element, Coordinate, ElementValues)]) throws(AggregateError) {
        // Inlined into the caller, so that the batch below is specialized for its elements: this toolchain calls a
        // throwing generic function of another module unspecialized, and the batch's generic tuples then cost a
        // metadata lookup per element.
        let values = elements.map(\.2)
        let categories = try tree.validateAggregateValues(values)
        insert(elements.map { ($0.0, $0.1) }, values: (values, categories))
    }
}

extension MortonTree {
    /// Checks a batch's values against the schema and returns each element's category byte; throws, naming the
    /// element's position, for the first it refuses, and for a tree that keeps no aggregates.
    @usableFromInline
    func validateAggregateValues(_ values: [ElementValues]) throws(AggregateError) -> ContiguousArray<UInt8> {
        guard let aggregates else { throw .noSchema }
        var categories = ContiguousArray<UInt8>()
        categories.reserveCapacity(values.count)
        for (position, value) in values.enumerated() {
            do throws(AggregateError) {
                categories.append(try aggregates.validate(value))
            } catch {
                throw .element(position: position, error)
            }
        }
        return categories
    }
}

extension MortonTree {
    /// The aggregates of clusters under `rules`, each of the entries its category filter selects (one filter for all,
    /// one per request, or none for the rules' own); `nil` when the tree keeps none.
    ///
    /// Asked of the tree, which the caller lends, rather than of a pass that would hold a copy of it.
    @usableFromInline
    func aggregates(_ requests: [AggregateRequest], rules: ClusteringRules, filters: [CategorySet?])
        -> ClusterAggregateTable?
    {
        // Read in place, through `aggregates?`: bound to a name they would be a copy (three retains and releases).
        guard keepsAggregates else { return nil }
        guard filters.count > 1 else {
            let filter = filters.first ?? rules.categories
            return aggregates?.answer(
                requests, rules: filter == rules.categories ? rules : rules.selecting(filter), tree: self)
        }
        // Clusters of different filters are clusterings of their own: each asked of its own, then put in order.
        var byFilter: [CategorySet?: [Int]] = [:]
        for (position, filter) in filters.enumerated() { byFilter[filter, default: []].append(position) }
        let parts = byFilter.compactMap { filter, positions in
            self.aggregates(positions.map { requests[$0] }, rules: rules, filters: [filter]).map { (positions, $0) }
        }
        return ClusterAggregateTable(gathering: parts, count: requests.count)
    }
}
