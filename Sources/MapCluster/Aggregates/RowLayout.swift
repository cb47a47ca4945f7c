/// Where a node's aggregates lie in its row: one run of 64-bit words holding the category counts, the weights, every
/// numeric reduction and the categories' clustering totals, so that a walk that reads a node reads all of them at once.
///
/// A row is a block of every member followed by one block per category:
///
///     all:        [category counts (k)] [reduction counts] | pairs | minima | maxima
///     category c: [reduction counts] [latitude, longitude sums] | pairs | minima | maxima | first key | last key
///
/// Each block has six sections, each merged one way: integers add (wrapping; counts and fixed-point sums, exact),
/// pairs add (sums of doubles: the weight, the weighted coordinates, each ``Sum`` and ``Mean``), minima and maxima of
/// doubles, minima and maxima of keys. A pair is a double-double: its high and low words add up to the sum to about
/// 2^-106 of its size, so that taking a member out by subtraction leaves what a recomputation would give; an integral
/// sum below 2^53 is exact in its high word alone. A category block begins with the same sections as the block of all
/// (the counts aside), so a cluster filtered by categories adds up the prefix of its categories' blocks.
///
/// A category block keeps no coordinate extremes: its members share a location only if they share a key, which its key
/// span says, and that rare case is settled from the entries (``CategoryTotals``). Each extreme a block keeps makes a
/// removal that took it out add the block up again, and widens every row the tree and its coarse cells keep.
///
/// What an entry brings is stored beside it (``NodeRows``): its weight, when the schema is weighted, then one double per
/// numeric reduction, NaN for no value.
struct RowLayout: Sendable {
    /// How many words each section of a block holds (a pair is two words).
    struct Block: Equatable, Sendable {
        var ints = 0
        var pairs = 0
        var mins = 0
        var maxes = 0
        var keyMins = 0
        var keyMaxes = 0

        var pairsAt: Int { ints }
        var minsAt: Int { ints &+ 2 &* pairs }
        var maxesAt: Int { minsAt &+ mins }
        var keyMinsAt: Int { maxesAt &+ maxes }
        var keyMaxesAt: Int { keyMinsAt &+ keyMins }
        var width: Int { keyMaxesAt &+ keyMaxes }
        /// Whether some word's value of no member is not zero (a minimum, a maximum or a key minimum): a block that
        /// starts as zeros must then have them set (``RowLayout/clearExtremes(_:at:)``).
        var hasExtremes: Bool { minsAt < keyMaxesAt }
    }

    /// What a reduction of the schema is, as rows keep it.
    enum Kind: Equatable, Sendable {
        case sum, mean, minimum, maximum
        /// A user's ``ClusterAggregate``, kept in a column of its own: its position among those.
        case custom(Int)
    }

    /// Where one numeric reduction lies in a block: its count among the integers, and its value among the pairs, the
    /// minima or the maxima.
    struct Field: Sendable {
        var kind: Kind
        /// Its position among the numeric reductions: its count's integer, after the category counts in the block of
        /// all, and its value in what an entry stores, after the weight.
        var numeric: Int
        /// Its pair, minimum or maximum, in that section.
        var slot: Int
        /// Its position among the schema's reductions.
        var position: Int
    }

    let categoryCount: Int
    let isWeighted: Bool
    /// Each reduction of the schema, in order.
    let kinds: [Kind]
    /// The numeric reductions, in order.
    let fields: [Field]
    let all: Block
    let category: Block
    /// Words per row.
    let width: Int
    /// A whole row's words section by section across its blocks: the integers, the pairs (their high words), the
    /// minima, the maxima, the key minima and the key maxima, each list ending where ``rowSectionEnds`` says.
    ///
    /// What ``mergeRow(_:into:)`` walks: a loop a section, where a loop a section of each block made six short loops a
    /// block (a row of 8 categories with weights and a sum: about 1,500 instructions a merge, against 2,400).
    let rowWords: ContiguousArray<Int>
    /// Where each section's list ends in ``rowWords``.
    let rowSectionEnds: (ints: Int, pairs: Int, mins: Int, maxes: Int, keyMins: Int, keyMaxes: Int)
    /// Doubles each entry stores.
    let entryWidth: Int
    /// Where the category blocks' coordinate sums lie among their integers.
    var latitudeSumAt: Int { fields.count }

    init(schema: AggregateSchema) {
        categoryCount = schema.categories.count
        isWeighted = schema.isWeighted
        var kinds: [Kind] = []
        var fields: [Field] = []
        var pairs = isWeighted ? 3 : 0
        var mins = 0
        var maxes = 0
        var customs = 0
        for reduction in schema.reductions {
            let kind: Kind
            let slot: Int
            switch reduction.valueType {
            case is Sum.Type: (kind, slot) = (.sum, pairs)
            case is Mean.Type: (kind, slot) = (.mean, pairs)
            case is Minimum.Type: (kind, slot) = (.minimum, mins)
            case is Maximum.Type: (kind, slot) = (.maximum, maxes)
            default: (kind, slot) = (.custom(customs), customs)
            }
            switch kind {
            case .sum, .mean: pairs += 1
            case .minimum: mins += 1
            case .maximum: maxes += 1
            case .custom: customs += 1
            }
            kinds.append(kind)
            if case .custom = kind { continue }
            fields.append(Field(kind: kind, numeric: fields.count, slot: slot, position: kinds.count - 1))
        }
        self.kinds = kinds
        self.fields = fields
        all = Block(ints: categoryCount + fields.count, pairs: pairs, mins: mins, maxes: maxes)
        category =
            categoryCount == 0
            ? Block()
            : Block(ints: fields.count + 2, pairs: pairs, mins: mins, maxes: maxes, keyMins: 1, keyMaxes: 1)
        width = all.width + categoryCount * category.width
        entryWidth = (isWeighted ? 1 : 0) + fields.count
        var sections = [[Int]](repeating: [], count: 6)
        let (allShape, categoryShape) = (all, category)
        let blocks =
            [(allShape, 0)] + (0..<categoryCount).map { (categoryShape, allShape.width + $0 * categoryShape.width) }
        for (block, start) in blocks {
            sections[0] += (0..<block.ints).map { start + $0 }
            sections[1] += (0..<block.pairs).map { start + block.pairsAt + 2 * $0 }
            sections[2] += (block.minsAt..<block.maxesAt).map { start + $0 }
            sections[3] += (block.maxesAt..<block.keyMinsAt).map { start + $0 }
            sections[4] += (block.keyMinsAt..<block.keyMaxesAt).map { start + $0 }
            sections[5] += (block.keyMaxesAt..<block.width).map { start + $0 }
        }
        rowWords = ContiguousArray(sections.joined())
        var ends = [Int]()
        for section in sections { ends.append((ends.last ?? 0) + section.count) }
        rowSectionEnds = (ends[0], ends[1], ends[2], ends[3], ends[4], ends[5])
    }

    /// Where the block of a category (a position of the schema) starts in a row.
    @inline(__always) func categoryBlock(_ position: Int) -> Int { all.width &+ position &* category.width }

    /// Where the block an entry's category adds to starts, if it has a category.
    @inline(__always) func categoryBlock(of entry: IndexEntry) -> Int? {
        entry.category == 0 ? nil : categoryBlock(Int(entry.category) - 1)
    }

    // MARK: Identity

    /// Sets `block`'s words at `row` to the value of no member.
    @inline(__always) static func clear(_ block: Block, at row: MutableCursor<UInt64>) {
        for i in 0..<(block.ints + 2 * block.pairs) { row[i] = 0 }
        clearExtremes(block, at: row)
        for i in block.keyMaxesAt..<block.width { row[i] = 0 }
    }

    /// Sets the words of `block` at `row` whose value of no member is not zero: its minima, maxima and key minima,
    /// for a row that starts as zeros (an answer's).
    @inline(__always) static func clearExtremes(_ block: Block, at row: MutableCursor<UInt64>) {
        for i in block.minsAt..<block.maxesAt { row[i] = Double.infinity.bitPattern }
        for i in block.maxesAt..<block.keyMinsAt { row[i] = (-Double.infinity).bitPattern }
        for i in block.keyMinsAt..<block.keyMaxesAt { row[i] = .max }
    }

    /// Sets a whole row to the value of no member.
    func clearRow(_ row: MutableCursor<UInt64>) {
        Self.clear(all, at: row)
        for position in 0..<categoryCount { Self.clear(category, at: row + categoryBlock(position)) }
    }

    /// A row of no member.
    var emptyRow: ContiguousArray<UInt64> {
        var row = ContiguousArray<UInt64>(repeating: 0, count: width)
        if width > 0 { row.withMutableCursor { clearRow($0) } }
        return row
    }

    // MARK: Merging

    /// Adds the `count` sections' words of `source` to those of `target`: the prefix of every section of `from` that
    /// `into` also has (the same block shape, or a category block's aggregates into a block of all).
    ///
    /// `precise` keeps pairs as double-doubles (what the tree stores); otherwise their two words add separately, which
    /// is what a query's answer needs and costs a quarter as much.
    @inline(__always) static func merge(
        _ from: Block, _ source: Cursor<UInt64>, into: Block, _ target: MutableCursor<UInt64>,
        intsFrom: Int = 0, intsTo: Int = 0, precise: Bool
    ) {
        let ints = min(from.ints - intsFrom, into.ints - intsTo)
        for i in 0..<ints { target[intsTo + i] &+= source[intsFrom + i] }
        let pairs = min(from.pairs, into.pairs)
        for i in 0..<pairs {
            let high = Double(bitPattern: source[from.pairsAt + 2 * i])
            let low = Double(bitPattern: source[from.pairsAt + 2 * i + 1])
            addPair(target + into.pairsAt + 2 * i, high, low, precise: precise)
        }
        for i in 0..<min(from.mins, into.mins) {
            let value = Double(bitPattern: source[from.minsAt + i])
            if value < Double(bitPattern: target[into.minsAt + i]) { target[into.minsAt + i] = value.bitPattern }
        }
        for i in 0..<min(from.maxes, into.maxes) {
            let value = Double(bitPattern: source[from.maxesAt + i])
            if value > Double(bitPattern: target[into.maxesAt + i]) { target[into.maxesAt + i] = value.bitPattern }
        }
        for i in 0..<min(from.keyMins, into.keyMins) {
            target[into.keyMinsAt + i] = Swift.min(target[into.keyMinsAt + i], source[from.keyMinsAt + i])
        }
        for i in 0..<min(from.keyMaxes, into.keyMaxes) {
            target[into.keyMaxesAt + i] = Swift.max(target[into.keyMaxesAt + i], source[from.keyMaxesAt + i])
        }
    }

    /// Adds a whole row to another, precisely: a node's children into the node.
    func mergeRow(_ source: Cursor<UInt64>, into target: MutableCursor<UInt64>) {
        let ends = rowSectionEnds
        rowWords.withRun { words in
            for k in 0..<ends.ints { target[words[k]] &+= source[words[k]] }
            for k in ends.ints..<ends.pairs {
                let i = words[k]
                Self.addPair(target + i, source.double(i), source.double(i &+ 1), precise: true)
            }
            for k in ends.pairs..<ends.mins {
                let i = words[k]
                if source.double(i) < target.double(i) { target[i] = source[i] }
            }
            for k in ends.mins..<ends.maxes {
                let i = words[k]
                if source.double(i) > target.double(i) { target[i] = source[i] }
            }
            for k in ends.maxes..<ends.keyMins { target[words[k]] = Swift.min(target[words[k]], source[words[k]]) }
            for k in ends.keyMins..<ends.keyMaxes { target[words[k]] = Swift.max(target[words[k]], source[words[k]]) }
        }
    }

    /// Adds `high + low` to the pair at `pair`: as a double-double when `precise` (Knuth's two-sum, then a fast
    /// renormalization), else word by word.
    @inline(__always) static func addPair(
        _ pair: MutableCursor<UInt64>, _ high: Double, _ low: Double, precise: Bool
    ) {
        let oldHigh = Double(bitPattern: pair[0])
        let oldLow = Double(bitPattern: pair[1])
        guard precise else {
            pair[0] = (oldHigh + high).bitPattern
            pair[1] = (oldLow + low).bitPattern
            return
        }
        let sum = oldHigh + high
        let virtual = sum - oldHigh
        let error = (oldHigh - (sum - virtual)) + (high - virtual)
        let tail = error + oldLow + low
        let newHigh = sum + tail
        guard newHigh.isFinite else {
            // Infinities and overflow: the high word says it, and the low one is no longer meaningful.
            pair[0] = newHigh.bitPattern
            pair[1] = 0
            return
        }
        pair[0] = newHigh.bitPattern
        pair[1] = (tail - (newHigh - sum)).bitPattern
    }

    /// The double a pair stands for.
    @inline(__always) static func pairValue(_ pair: Cursor<UInt64>) -> Double {
        let high = Double(bitPattern: pair[0])
        return high.isFinite ? high + Double(bitPattern: pair[1]) : high
    }

    // MARK: Entries

    /// Adds (`sign` 1) or takes out (`sign` -1) an entry whose stored values are `values` to or from a block of all at
    /// `row`; returns false when taking it out leaves a minimum or maximum that it attained, which must then be
    /// recomputed.
    @inline(__always) func addEntry(
        _ entry: IndexEntry, _ values: Cursor<UInt64>, toAll row: MutableCursor<UInt64>, sign: Int64 = 1,
        precise: Bool
    ) -> Bool {
        if categoryCount > 0 && entry.category != 0 {
            row[Int(entry.category) - 1] &+= UInt64(bitPattern: sign)
        }
        return addTail(entry, values, to: row, block: all, intsAt: categoryCount, sign: sign, precise: precise)
    }

    /// Adds (`sign` 1) or takes out (-1) an entry to or from a row of the tree or its coarse cells, precisely.
    ///
    /// `values` are what the entry stores; it counts in the block of all and in its category's. Returns the blocks a
    /// removal left stale (the entry attained a minimum or a maximum of theirs), which must be added up again, and the
    /// category blocks whose key span alone it left stale (the entry was its first or last key); none for an insert.
    @inline(__always) func addEntry(
        _ entry: IndexEntry, _ values: Cursor<UInt64>, toRow row: MutableCursor<UInt64>, sign: Int64 = 1
    ) -> StaleBlocks {
        var stale = StaleBlocks()
        stale.all = !addEntry(entry, values, toAll: row, sign: sign, precise: true)
        if let block = categoryBlock(of: entry) {
            let kept = addEntry(entry, values, toCategory: row + block, sign: sign, precise: true)
            if !kept.values {
                stale.categories = 1 << (entry.category - 1)
            } else if !kept.keys {
                stale.categoryKeys = 1 << (entry.category - 1)
            }
        }
        return stale
    }

    /// ``addEntry(_:_:toAll:sign:precise:)`` for the block of the entry's category, at `row`, with its clustering
    /// totals; says whether a removal kept its minima and maxima (`values`) and its key span (`keys`).
    @inline(__always) @discardableResult func addEntry(
        _ entry: IndexEntry, _ values: Cursor<UInt64>, toCategory row: MutableCursor<UInt64>,
        sign: Int64 = 1, precise: Bool
    ) -> (values: Bool, keys: Bool) {
        let kept = addTail(entry, values, to: row, block: category, intsAt: 0, sign: sign, precise: precise)
        row[latitudeSumAt] &+= UInt64(bitPattern: sign &* Summary.fixedPoint(entry.coordinate.latitude))
        row[latitudeSumAt + 1] &+= UInt64(bitPattern: sign &* Summary.fixedPoint(entry.coordinate.wrappedLongitude))
        let keyMinAt = category.keyMinsAt
        let keyMaxAt = category.keyMaxesAt
        if sign > 0 {
            row[keyMinAt] = Swift.min(row[keyMinAt], entry.key)
            row[keyMaxAt] = Swift.max(row[keyMaxAt], entry.key)
            return (kept, true)
        }
        return (kept, entry.key != row[keyMinAt] && entry.key != row[keyMaxAt])
    }

    /// What an entry adds to a block besides the category counts and clustering totals: its reductions' counts (from
    /// `intsAt` on), its weight and pairs, its minima and maxima.
    @inline(__always) private func addTail(
        _ entry: IndexEntry, _ values: Cursor<UInt64>, to row: MutableCursor<UInt64>, block: Block,
        intsAt: Int, sign: Int64, precise: Bool
    ) -> Bool {
        var valuesAt = 0
        let signed = Double(sign)
        if isWeighted {
            let weight = signed * values.double(0)
            let pairs = row + block.pairsAt
            Self.addPair(pairs, weight, 0, precise: precise)
            Self.addPair(pairs + 2, weight * entry.coordinate.latitude, 0, precise: precise)
            Self.addPair(pairs + 4, weight * entry.coordinate.wrappedLongitude, 0, precise: precise)
            valuesAt = 1
        }
        var kept = true
        for field in fields {
            let value = values.double(valuesAt &+ field.numeric)
            guard !value.isNaN else { continue }
            row[intsAt &+ field.numeric] &+= UInt64(bitPattern: sign)
            switch field.kind {
            case .sum, .mean:
                Self.addPair(row + (block.pairsAt &+ 2 &* field.slot), signed * value, 0, precise: precise)
            case .minimum:
                let at = block.minsAt &+ field.slot
                if sign > 0 {
                    if value < Double(bitPattern: row[at]) { row[at] = value.bitPattern }
                } else if value <= Double(bitPattern: row[at]) {
                    kept = false
                }
            case .maximum:
                let at = block.maxesAt &+ field.slot
                if sign > 0 {
                    if value > Double(bitPattern: row[at]) { row[at] = value.bitPattern }
                } else if value >= Double(bitPattern: row[at]) {
                    kept = false
                }
            case .custom:
                break
            }
        }
        return kept
    }
}
