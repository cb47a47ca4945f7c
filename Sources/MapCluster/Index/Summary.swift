/// One element of the index, as the tree holds it: its Morton key, its coordinate, and the slot of its
/// identity in the index's element store.
///
/// The tree is not generic over the element type, so every loop over entries is compiled, specialized and optimized
/// once, in this module, whatever the client's type.
@usableFromInline
struct IndexEntry: Sendable {
    @usableFromInline var key: UInt64
    @usableFromInline var coordinate: Coordinate
    @usableFromInline var slot: UInt32
    /// The element's category in the index's ``AggregateSchema``: 0 for none, else its position + 1.
    ///
    /// It sits in what would be the entry's padding, so it costs no memory.
    @usableFromInline var category: UInt8

    @usableFromInline
    init(key: UInt64, coordinate: Coordinate, slot: UInt32, category: UInt8 = 0) {
        self.key = key
        self.coordinate = coordinate
        self.slot = slot
        self.category = category
    }
}

/// Where an entry lies in one version of the tree: its leaf and its position there.
///
/// A change to the tree may move the entry, so a place is only read in the tree it was found in (a query's, which no
/// one changes).
@usableFromInline
struct EntryPlace: Equatable, Sendable {
    var leaf: Int32
    var position: Int32
}

/// What the index keeps for every subtree (and computes for any key range) so that a cell's count,
/// center of mass, bounds and same-location test never visit its members.
///
/// Coordinate sums are fixed-point integers of 1e-7 degree (about 1 cm): exact, so a summary never drifts through
/// inserts and removes and never depends on the order the members came in. Each term is at most 1.8e9 in magnitude
/// and an index holds fewer than 2^32 elements, so a sum stays below 7.8e18 < Int64.max: the additions use wrapping
/// arithmetic, which can then never wrap, and skip the overflow checks.
struct Summary: Sendable, Equatable {
    static let fixedPointScale = 1e7

    var count: Int
    var firstKey: UInt64
    var lastKey: UInt64
    var minX: UInt32
    var minY: UInt32
    var maxX: UInt32
    var maxY: UInt32
    var latitudeSum: Int64
    var longitudeSum: Int64
    /// Every member's coordinate when `isSameLocation`; otherwise some member's, and meaningless.
    var location: Coordinate
    var isSameLocation: Bool

    init(_ entry: IndexEntry) {
        let point = GridPosition(key: entry.key)
        count = 1
        firstKey = entry.key
        lastKey = entry.key
        minX = point.x
        maxX = point.x
        minY = point.y
        maxY = point.y
        latitudeSum = Summary.fixedPoint(entry.coordinate.latitude)
        longitudeSum = Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        location = entry.coordinate
        isSameLocation = true
    }

    /// The summary of entries in key order; `nil` when there are none.
    init?(entries: some Collection<IndexEntry>) {
        guard let first = entries.first else { return nil }
        self.init(first)
        for entry in entries.dropFirst() { add(entry) }
    }

    /// The summary of consecutive summaries in key order; `nil` when there are none.
    init?(combining summaries: some Collection<Summary>) {
        guard let first = summaries.first else { return nil }
        self = first
        for summary in summaries.dropFirst() { append(summary) }
    }

    /// The summary of entries that are known not to be empty: a node of the tree.
    init(nonEmpty entries: some Collection<IndexEntry>) {
        guard let summary = Summary(entries: entries) else { preconditionFailure("a tree node is never empty") }
        self = summary
    }

    /// The summary of consecutive summaries that are known not to be empty: a branch's children.
    init(nonEmptyCombining summaries: some Collection<Summary>) {
        guard let summary = Summary(combining: summaries) else { preconditionFailure("a branch is never empty") }
        self = summary
    }

    /// Degrees in fixed point, rounded to nearest (ties to even), without a libm call or a range check.
    ///
    /// Adding 1.5 · 2^52 moves the integer part of any value below 2^51 in magnitude (degrees · 1e7 are below 2^31)
    /// into the low bits of the sum's significand, the addition rounding it; the difference of the bit patterns is
    /// that integer. The clustering pass adds up entries with it, so it is the fold's inner loop.
    @inline(__always) static func fixedPoint(_ degrees: Double) -> Int64 {
        let shifter: Double = 0x1.8p52
        let shifted = degrees * fixedPointScale + shifter
        return Int64(bitPattern: shifted.bitPattern) &- Int64(bitPattern: shifter.bitPattern)
    }

    /// Adds an entry that comes after every member in key order (the fold's hot loop relies on it).
    @inline(__always) mutating func add(_ entry: IndexEntry) {
        let point = GridPosition(key: entry.key)
        count &+= 1
        lastKey = entry.key
        minX = min(minX, point.x)
        maxX = max(maxX, point.x)
        minY = min(minY, point.y)
        maxY = max(maxY, point.y)
        latitudeSum &+= Summary.fixedPoint(entry.coordinate.latitude)
        longitudeSum &+= Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        if isSameLocation && entry.coordinate != location { isSameLocation = false }
    }

    /// Adds the members of a summary that come after every member of this one in key order.
    @inline(__always) mutating func append(_ other: Summary) {
        count &+= other.count
        lastKey = other.lastKey
        minX = min(minX, other.minX)
        maxX = max(maxX, other.maxX)
        minY = min(minY, other.minY)
        maxY = max(maxY, other.maxY)
        latitudeSum &+= other.latitudeSum
        longitudeSum &+= other.longitudeSum
        isSameLocation = isSameLocation && other.isSameLocation && other.location == location
    }

    /// The summary with one more entry, wherever it falls in key order.
    /// - Complexity: O(1).
    @inline(__always) func inserting(_ entry: IndexEntry) -> Summary {
        var result = self
        result.add(entry)
        result.firstKey = min(firstKey, entry.key)
        result.lastKey = max(lastKey, entry.key)
        return result
    }

    /// The summary without one of its entries, given the first and last keys of what remains.
    ///
    /// Counts and sums are exact integers and subtract in O(1). The bounds need `recompute` (a pass over what remains)
    /// only when the entry lay on them, and so does the same-location test when every remaining entry now shares one
    /// key.
    @inline(__always) func removing(
        _ entry: IndexEntry, firstKey: UInt64, lastKey: UInt64, recompute: () -> Summary
    ) -> Summary {
        let point = GridPosition(key: entry.key)
        if point.x == minX || point.x == maxX || point.y == minY || point.y == maxY { return recompute() }
        if !isSameLocation && firstKey == lastKey { return recompute() }
        var result = self
        result.count -= 1
        result.firstKey = firstKey
        result.lastKey = lastKey
        result.latitudeSum -= Summary.fixedPoint(entry.coordinate.latitude)
        result.longitudeSum -= Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        return result
    }

    /// The mean latitude and (wrapped) longitude of the members.
    var centerOfMass: Coordinate {
        Summary.centerOfMass(count: count, latitudeSum: latitudeSum, longitudeSum: longitudeSum)
    }

    /// The mean latitude and longitude of `count` members whose fixed-point sums these are.
    static func centerOfMass(count: Int, latitudeSum: Int64, longitudeSum: Int64) -> Coordinate {
        let n = Double(count)
        return Coordinate(
            uncheckedLatitude: Double(latitudeSum) / n / fixedPointScale,
            longitude: Double(longitudeSum) / n / fixedPointScale)
    }

    /// The smallest rectangle of the plane holding every member (to the index's 1/16-unit grid).
    var bounds: MapRect {
        GridPosition(x: minX, y: minY).rect(through: GridPosition(x: maxX, y: maxY))
    }
}

/// What adds up a tree's entries in key order: a node's ``Summary``, a cell's ``CellTotals``.
protocol EntryAggregate {
    /// The aggregate of one entry.
    init(_ entry: IndexEntry)
    /// Adds an entry that comes after every member in key order.
    mutating func add(_ entry: IndexEntry)
    /// Adds the members of an aggregate that come after every member in key order.
    mutating func append(_ other: Self)
}

extension Summary: EntryAggregate {}

extension Optional where Wrapped: EntryAggregate {
    /// Adds an aggregate whose members follow these in key order.
    @inline(__always) mutating func append(_ other: Wrapped) {
        if case .some(var aggregate) = self {
            aggregate.append(other)
            self = aggregate
        } else {
            self = other
        }
    }

    /// Adds an entry that follows these members in key order.
    @inline(__always) mutating func add(_ entry: IndexEntry) {
        if case .some(var aggregate) = self {
            aggregate.add(entry)
            self = aggregate
        } else {
            self = Wrapped(entry)
        }
    }
}
