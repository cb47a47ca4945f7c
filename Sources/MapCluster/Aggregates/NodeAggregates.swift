/// The aggregates a tree keeps in its nodes for an ``AggregateSchema``: one row per node for the categories, the
/// weights and every numeric reduction (``NodeRows``), and a column of its own for each of the user's reductions.
@usableFromInline
struct NodeAggregates: Sendable {
    /// What never changes, in one object: a tree is copied by every query (into its clustering pass and visitors), and
    /// held inline this was 200 bytes and eight references to copy and retain each time.
    let fixed: Fixed
    var rows: NodeRows
    /// The user's reductions (``RowLayout/Kind/custom(_:)``), each per category and all.
    var custom: [any UserReductionColumn]

    /// The schema, its layout, and what every answer shares.
    final class Fixed: Sendable {
        let schema: AggregateSchema
        let layout: RowLayout
        /// The reductions' names, in order, for every answer to share.
        let reductionNames: [String]
        /// What every answer shares, made once.
        let answerShape: AnswerShape
        /// The answer for no cluster, made once: a map with nothing in view asks for it often.
        let emptyAnswer: AggregateAnswer

        init(schema: AggregateSchema, customCount: Int) {
            self.schema = schema
            layout = RowLayout(schema: schema)
            reductionNames = schema.reductions.map(\.name)
            answerShape = AnswerShape(layout: layout, categories: schema.categories, reductionNames: reductionNames)
            emptyAnswer = AggregateAnswer(
                shape: answerShape, counts: [], rows: [], custom: Array(repeating: [], count: customCount))
        }
    }

    var schema: AggregateSchema { fixed.schema }
    var layout: RowLayout { fixed.layout }
    var reductionNames: [String] { fixed.reductionNames }
    var answerShape: AnswerShape { fixed.answerShape }
    var emptyAnswer: AggregateAnswer { fixed.emptyAnswer }

    @usableFromInline
    init(schema: AggregateSchema) {
        custom = schema.reductions.compactMap { reduction in
            Self.isNumeric(reduction.valueType)
                ? nil : reduction.valueType.column(categoryCount: schema.categories.count)
        }
        fixed = Fixed(schema: schema, customCount: custom.count)
        rows = NodeRows(layout: fixed.layout)
    }

    static func isNumeric(_ type: any ClusterAggregate.Type) -> Bool {
        type == Sum.self || type == Mean.self || type == Minimum.self || type == Maximum.self
    }

    /// Calls `body` with the rows and every column of the user's reductions.
    @inline(__always) func forEachColumn(_ body: (any AggregateColumn) -> Void) {
        body(rows)
        // Not iterated when empty: an iterator retains the array, at every level of every change.
        guard !custom.isEmpty else { return }
        for column in custom { body(column) }
    }

    /// Copies what another tree shares: what every mutation of the tree does first.
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&rows), let copy = rows.copy() as? NodeRows { rows = copy }
        for i in custom.indices where !isKnownUniquelyReferenced(&custom[i]) {
            custom[i] = custom[i].copyReduction()
        }
    }

    /// Computes every node's values of a tree built in bulk.
    func build(_ tree: MortonTree) {
        forEachColumn { $0.build(tree) }
    }

    /// Checks an element's values against the schema, and returns its category byte.
    ///
    /// Reads the schema in place, through `fixed`: ``schema`` is a copy (a retain and a release of each of its arrays),
    /// and a batch asks once per element.
    func validate(_ values: ElementValues) throws(AggregateError) -> UInt8 {
        guard values.weight.isFinite && values.weight >= 0 else { throw .invalidWeight(values.weight) }
        let declared = fixed.schema.reductions.count
        guard values.reductions.count <= declared else {
            throw .tooManyReductionValues(count: values.reductions.count, declared: declared)
        }
        for (position, value) in values.reductions.enumerated() {
            guard type(of: value) == fixed.schema.reductions[position].valueType else {
                let reduction = fixed.schema.reductions[position]
                throw .wrongReductionValue(reduction: reduction.name, expected: "\(reduction.valueType)")
            }
            if let bad = Self.nonFiniteNumber(of: value) {
                throw .invalidValue(reduction: fixed.schema.reductions[position].name, bad)
            }
        }
        return try fixed.schema.categoryCode(of: values.category)
    }

    /// The number of an element's value of a numeric reduction when it is infinite or NaN.
    static func nonFiniteNumber(of value: any ClusterAggregate) -> Double? {
        RowLayout.number(of: value).flatMap { $0.isFinite ? nil : $0 }
    }

    /// Makes the next inserted entry store validated values.
    func prepare(_ values: ElementValues) {
        rows.prepare(values)
        guard !custom.isEmpty else { return }
        for (position, kind) in fixed.layout.kinds.enumerated() {
            guard case .custom(let column) = kind else { continue }
            if position < values.reductions.count {
                custom[column].prepare(erased: values.reductions[position])
            } else {
                custom[column].prepareDefault()
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
            case .numbers(let numbers):
                guard reduction.valueType is any NumericAggregate.Type else {
                    throw .wrongReductionValue(reduction: reduction.name, expected: "\(reduction.valueType)")
                }
                if let bad = numbers.firstIndex(where: { $0.map { !$0.isFinite } ?? false }), let number = numbers[bad]
                {
                    throw .element(position: bad, .invalidValue(reduction: reduction.name, number))
                }
            case .values(let values):
                for (position, value) in values.enumerated() {
                    guard type(of: value) == reduction.valueType else {
                        throw .element(
                            position: position,
                            .wrongReductionValue(reduction: reduction.name, expected: "\(reduction.valueType)"))
                    }
                    if let bad = Self.nonFiniteNumber(of: value) {
                        throw .element(position: position, .invalidValue(reduction: reduction.name, bad))
                    }
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
        rows.input = BulkValues(
            isWeighted: layout.isWeighted, weights: columns.weights,
            columns: layout.fields.map {
                $0.position < columns.reductions.count ? columns.reductions[$0.position] : nil
            })
        for (position, kind) in layout.kinds.enumerated() {
            guard case .custom(let column) = kind else { continue }
            custom[column].storeInput(position < columns.reductions.count ? columns.reductions[position] : nil)
        }
    }
}

// MARK: - Answers

/// One cluster whose aggregates are asked: the keys its members lie in, which of the entries there are its members, and
/// its member count.
@usableFromInline
struct AggregateRequest {
    /// Which entries in `range` are members (besides the query's category filter).
    enum Match {
        /// All of them.
        case all
        /// The clusterable ones (``ClusterOptions/shouldCluster``).
        case clusterable
        /// Those on a location that a member filter takes.
        case location(Coordinate, MemberFilter)
        /// The element in this slot.
        case slot(UInt32)

        /// The members of a cluster of a cell: all its entries, or the clusterable ones under a predicate.
        static func ofCell(clusterable: Bool) -> Match { clusterable ? .clusterable : .all }
    }

    var range: ClosedRange<UInt64>
    var match: Match
    var count: Int
    /// The coarse cell whose members are exactly the cluster's (a cell of a kept level, matching all), if any.
    var coarseCell: GridCell?
    /// Where a single element's entry lies in the tree asked, when the query that made the request found it.
    var place: EntryPlace?

    /// A cluster of several locations whose members lie in `tight`, made in grid cell `cell`: all of them, or the
    /// clusterable ones.
    @usableFromInline
    static func cell(_ tight: GridCell, madeIn cell: GridCell, count: Int, clusterable: Bool) -> AggregateRequest {
        AggregateRequest(
            range: tight.keyRange, match: .ofCell(clusterable: clusterable), count: count,
            coarseCell: coarseCell(cell, clusterable: clusterable))
    }

    /// The coarse cell whose members are exactly those of a cluster made in grid cell `cell`, if any: the cell itself,
    /// at a kept level, when all its members cluster.
    static func coarseCell(_ cell: GridCell, clusterable: Bool) -> GridCell? {
        !clusterable && cell.level <= CoarseCells.deepestLevel ? cell : nil
    }

    /// A cluster of the elements on one location that a member filter takes.
    @usableFromInline
    static func location(_ location: Coordinate, taking filter: MemberFilter, count: Int) -> AggregateRequest {
        let key = GridPosition(location).key
        return AggregateRequest(range: key...key, match: .location(location, filter), count: count)
    }

    /// One element, in a slot with a key, and where its entry lies when the query found it there; none when the index
    /// no longer holds it.
    @usableFromInline
    static func element(slot: UInt32?, key: UInt64, place: EntryPlace? = nil) -> AggregateRequest {
        AggregateRequest(
            range: key...key, match: .slot(slot ?? 0), count: slot == nil ? 0 : 1, place: slot == nil ? nil : place)
    }
}

/// An answer being added up, cluster by cluster, each the cheapest way: a coarse cell's row or a single element's entry
/// where the query found it, read at once into the cluster's row; the others walked for at the end, in one walk.
struct AggregatePlan {
    /// Each cluster's member count, in the answer's order.
    var counts: ContiguousArray<Int> = []
    /// The answer's rows (``RowLayout/all``), one for each cluster the plan was made for, in order.
    var rows = ContiguousArray<UInt64>()
    /// The clusters walked for: each one's answer, the keys its members lie in, and which entries there are members
    /// (side by side, as the walk takes them).
    var walked: [Int] = []
    var ranges: [ClosedRange<UInt64>] = []
    var matches: [AggregateRequest.Match] = []
    /// How many clusters the plan is for: the walk's lists take room for them all when they take their first, rather
    /// than growing three times to a small view's 17.
    let capacity: Int
    /// How many words a row takes.
    let width: Int
    /// Whether the tree's coarse cells keep rows to read.
    let readsCoarseCells: Bool

    /// A plan for `capacity` clusters of `tree` whose rows have the shape `all` (a layout's ``RowLayout/all``, which
    /// copies no array, as the layout would), with a row of no member for each: the tree borrowed, as an initializer's
    /// argument would be a copy (a retain of each of its buffers, and a release after).
    init(capacity: Int, all: RowLayout.Block, tree: borrowing MortonTree) {
        self.capacity = capacity
        counts.reserveCapacity(capacity)
        readsCoarseCells = tree.coarseCells?.rows != nil
        width = all.width
        // At least one word, so that the buffer's start is never nil. Reserved and then filled:
        // `init(repeating:count:)` calls the standard library's unspecialized allocator, which looks the storage's
        // type up at run time, and that was a twentieth of a small view's time.
        let words = max(1, capacity * all.width)
        rows.reserveCapacity(words)
        rows.append(contentsOf: repeatElement(0, count: words))
        if all.hasExtremes {
            rows.withMutableCursor { rows in
                for index in 0..<capacity { RowLayout.clearExtremes(all, at: rows + index * all.width) }
            }
        }
    }

    /// Adds a cluster of `count` members, those of `range` that `match` takes, to be walked for.
    mutating func addWalked(_ range: ClosedRange<UInt64>, _ match: AggregateRequest.Match, count: Int) {
        if count > 0 {
            if walked.isEmpty {
                walked.reserveCapacity(capacity)
                ranges.reserveCapacity(capacity)
                matches.reserveCapacity(capacity)
            }
            walked.append(counts.count)
            ranges.append(range)
            matches.append(match)
        }
        counts.append(count)
    }

    /// Adds a cluster whose row `read` adds up at once, into the row it is given.
    @inline(__always) mutating func addRead(count: Int, _ read: (MutableCursor<UInt64>) -> Void) {
        let at = counts.count * width
        rows.withMutableCursor { read($0 + at) }
        counts.append(count)
    }
}

extension NodeAggregates {
    /// Adds a cluster to a plan: read at once when it can be (a coarse cell that keeps a row, a single element the
    /// query found), else walked for.
    private func add(
        _ request: AggregateRequest, to plan: inout AggregatePlan, rules: ClusteringRules, tree: MortonTree
    ) {
        if let cell = request.coarseCell, plan.readsCoarseCells {
            // Read in place: binding the coarse cells would copy them, retaining their arrays.
            return plan.addRead(count: request.count) { row in
                _ = tree.coarseCells?.addAggregates(
                    level: cell.level, code: cell.code, categories: rules.categories, into: row)
            }
        }
        if let place = request.place { return addSingle(at: place, to: &plan, rules: rules, tree: tree) }
        plan.addWalked(request.range, request.match, count: request.count)
    }

    /// Adds a single element whose entry lies at `place` in `tree` to a plan, read at once.
    private func addSingle(
        at place: EntryPlace, to plan: inout AggregatePlan, rules: ClusteringRules, tree: MortonTree
    ) {
        plan.addRead(count: 1) { row in rows.addEntry(at: place, of: tree, categories: rules.categories, into: row) }
    }

    /// The aggregates of each request, in order, for a query under `rules`: their category filter (or none), and the
    /// member filters' predicate.
    func answer(_ requests: [AggregateRequest], rules: ClusteringRules, tree: MortonTree) -> ClusterAggregateTable {
        guard !requests.isEmpty else { return ClusterAggregateTable(emptyAnswer) }
        var plan = AggregatePlan(capacity: requests.count, all: fixed.layout.all, tree: tree)
        for request in requests { add(request, to: &plan, rules: rules, tree: tree) }
        return answer(consume plan, custom: customAnswers(requests, rules: rules, tree: tree), rules: rules, tree: tree)
    }

    /// The aggregates of the clusters a query drafted, in order, as ``answer(_:rules:tree:)`` of their requests.
    ///
    /// A single element whose entry the query found is read from there, without a request. `key` gives a slot's key.
    ///
    /// `parts`, when the query's fold kept them, are the parts of the drafts of whole cells, whose rows are added up
    /// from them.
    func answer(
        drafts: [ClusterDraft], clusterable: Bool, rules: ClusteringRules, tree: MortonTree, key: (UInt32) -> UInt64,
        parts: CellParts = CellParts()
    ) -> ClusterAggregateTable {
        guard custom.isEmpty else {
            return answer(drafts.map { $0.request(clusterable: clusterable, key: key) }, rules: rules, tree: tree)
        }
        guard !drafts.isEmpty else { return ClusterAggregateTable(emptyAnswer) }
        var plan = AggregatePlan(capacity: drafts.count, all: fixed.layout.all, tree: tree)
        guard !parts.cells.isEmpty else {
            for draft in drafts { add(draft, to: &plan, clusterable: clusterable, rules: rules, tree: tree, key: key) }
            return answer(consume plan, custom: [], rules: rules, tree: tree)
        }
        let reader = PartReader(rows, tree: tree)
        var next = 0
        for (index, draft) in drafts.enumerated() {
            if next < parts.cells.count && parts.cells[next].draft == index {
                // The parts by their positions: a slice of them would retain their array, once a cluster.
                let cellParts = (next == 0 ? 0 : parts.cells[next - 1].end)..<parts.cells[next].end
                next += 1
                plan.addRead(count: draft.count) { row in reader.add(parts.parts, cellParts, into: row) }
            } else {
                add(draft, to: &plan, clusterable: clusterable, rules: rules, tree: tree, key: key)
            }
        }
        return answer(consume plan, custom: [], rules: rules, tree: tree)
    }

    /// Adds a query's draft to a plan: read at once when it is a single found where it lies, else as its request.
    @inline(__always) private func add(
        _ draft: ClusterDraft, to plan: inout AggregatePlan, clusterable: Bool, rules: ClusteringRules,
        tree: MortonTree, key: (UInt32) -> UInt64
    ) {
        if case .element = draft.identity, let place = draft.place {
            // A single found where it lies needs no request, whose key would be looked up in the element store.
            addSingle(at: place, to: &plan, rules: rules, tree: tree)
        } else {
            add(draft.request(clusterable: clusterable, key: key), to: &plan, rules: rules, tree: tree)
        }
    }

    /// The answer of a plan: the clusters it has not read yet in as few walks of the tree as their ranges allow (one,
    /// for the clusters of one query): a walk takes disjoint ranges in key order.
    private func answer(
        _ plan: consuming AggregatePlan, custom: [[any ClusterAggregate]], rules: ClusteringRules, tree: MortonTree
    ) -> ClusterAggregateTable {
        let width = fixed.layout.all.width
        // Taken out of the plan, whose lists the walk still reads: shared with the plan, the rows would be copied whole
        // at the walk's first write.
        var answerRows = ContiguousArray<UInt64>()
        swap(&answerRows, &plan.rows)
        if !plan.walked.isEmpty {
            answerRows.withMutableCursor { answerRows in
                // The clusters of one query, in key order and disjoint: one walk of the plan's lists as they are.
                if Self.areInKeyOrder(plan.ranges) {
                    var visitor = AggregateRowsVisitor(
                        layout: layout, rules: rules, rows: answerRows, targets: plan.walked, matches: plan.matches)
                    return rows.walk(ranges: plan.ranges, tree: tree, &visitor)
                }
                for wave in Self.waves(of: Array(plan.ranges.indices), ranges: plan.ranges, matches: plan.matches) {
                    let firsts = wave.map(\.first)
                    var visitor = AggregateRowsVisitor(
                        layout: layout, rules: rules, rows: answerRows, targets: firsts.map { plan.walked[$0] },
                        matches: firsts.map { plan.matches[$0] })
                    rows.walk(ranges: firsts.map { plan.ranges[$0] }, tree: tree, &visitor)
                    for (first, duplicates) in wave {
                        let from = plan.walked[first] * width
                        for duplicate in duplicates {
                            let to = plan.walked[duplicate] * width
                            for i in 0..<width { answerRows[to + i] = answerRows[from + i] }
                        }
                    }
                }
            }
        }
        return ClusterAggregateTable(
            AggregateAnswer(shape: answerShape, counts: plan.counts, rows: answerRows, custom: custom))
    }

    /// Whether ranges are disjoint and in key order: one walk takes them all.
    private static func areInKeyOrder(_ ranges: some RandomAccessCollection<ClosedRange<UInt64>>) -> Bool {
        zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound }
    }

    /// The clusters to walk for, by their positions in `ranges` and `matches`, in walks of disjoint ranges in key
    /// order: each wave's clusters, with the later ones of the same range and match (the same cluster asked twice)
    /// that copy their answer.
    private static func waves(
        of indices: [Int], ranges: [ClosedRange<UInt64>], matches: [AggregateRequest.Match]
    ) -> [[(first: Int, duplicates: [Int])]] {
        var pending = indices
        // Already in key order for the clusters of one query: sorted only when they are not.
        if !areInKeyOrder(pending.lazy.map { ranges[$0] }) {
            pending.sort {
                (ranges[$0].lowerBound, ranges[$0].upperBound) < (ranges[$1].lowerBound, ranges[$1].upperBound)
            }
        }
        var waves: [[(first: Int, duplicates: [Int])]] = []
        while !pending.isEmpty {
            var wave: [(first: Int, duplicates: [Int])] = []
            var later: [Int] = []
            for index in pending {
                if let last = wave.last?.first {
                    if ranges[last] == ranges[index] && matches[last].isSame(as: matches[index]) {
                        wave[wave.count - 1].duplicates.append(index)
                        continue
                    }
                    if ranges[index].lowerBound <= ranges[last].upperBound {
                        later.append(index)
                        continue
                    }
                }
                wave.append((index, []))
            }
            waves.append(wave)
            pending = later
        }
        return waves
    }

    /// The values of the user's reductions for each request: a walk per column for the requests that match all, and
    /// one per request for the others.
    private func customAnswers(_ requests: [AggregateRequest], rules: ClusteringRules, tree: MortonTree)
        -> [[any ClusterAggregate]]
    {
        guard !custom.isEmpty else { return [] }
        let identities = schema.reductions.filter { !Self.isNumeric($0.valueType) }.map { $0.valueType.erasedIdentity }
        // The requests that match all, in waves: the same for every column.
        let all = requests.indices.filter {
            if case .all = requests[$0].match { requests[$0].count > 0 } else { false }
        }
        let waves = Self.waves(of: all, ranges: requests.map(\.range), matches: requests.map(\.match))
        return custom.indices.map { column in
            var values = [any ClusterAggregate](repeating: identities[column], count: requests.count)
            for wave in waves {
                let answers = custom[column].reductions(
                    ranges: wave.map { requests[$0.first].range }, categories: rules.categories, where: nil, tree: tree)
                for ((first, duplicates), answer) in zip(wave, answers) {
                    for index in [first] + duplicates { values[index] = answer }
                }
            }
            for (index, request) in requests.enumerated() where request.count > 0 {
                if case .all = request.match { continue }
                let match = request.match
                values[index] =
                    custom[column].reductions(
                        ranges: [request.range], categories: rules.categories,
                        where: { match.takes($0, rules: rules) }, tree: tree
                    ).first ?? identities[column]
            }
            return values
        }
    }
}

extension AggregateRequest.Match {
    /// Whether it takes an entry in its range (the query's category filter aside).
    @inline(__always) func takes(_ entry: IndexEntry, rules: ClusteringRules) -> Bool {
        switch self {
        case .all: true
        case .clusterable: rules.admits(entry, .clusterable)
        case .location(let location, let filter): entry.coordinate == location && rules.admits(entry, filter)
        case .slot(let slot): entry.slot == slot
        }
    }

    /// Whether two matches take the same entries.
    func isSame(as other: Self) -> Bool {
        switch (self, other) {
        case (.all, .all), (.clusterable, .clusterable): true
        case (.location(let a, let f), .location(let b, let g)): a == b && f == g
        case (.slot(let a), .slot(let b)): a == b
        default: false
        }
    }
}
