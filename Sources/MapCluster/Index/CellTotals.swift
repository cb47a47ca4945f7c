/// What the clustering pass knows of one cell's members: a ``Summary`` without the bounds, which clustering never
/// reads, so that adding an entry is a few additions and no decoding of its key.
struct CellTotals: Sendable {
    var count: Int
    var firstKey: UInt64
    var lastKey: UInt64
    var latitudeSum: Int64
    var longitudeSum: Int64
    /// Every member's coordinate when `isSameLocation`; otherwise meaningless (often the first member's).
    var location: Coordinate
    var isSameLocation: Bool
    /// `firstPlace`'s position, beside the flag so that the totals take no more room (72 bytes) for it.
    private var firstPosition: UInt8 = 0
    /// The slot of the first member, when the fold saw it; `nil` when the first member came in a subtree's summary.
    var firstSlot: UInt32?
    /// `firstPlace`'s leaf; -1 for none.
    private var firstLeaf: Int32 = -1

    /// Where the first member lies, when the fold read it from a leaf.
    ///
    /// A single element's aggregates are then read there, without a walk. Never kept past the query (``CoarseCells``
    /// forgets it).
    var firstPlace: EntryPlace? {
        firstLeaf < 0 ? nil : EntryPlace(leaf: firstLeaf, position: Int32(firstPosition))
    }

    /// Forgets which member is first: for totals kept past the query, which edits may move.
    mutating func forgetFirst() {
        firstSlot = nil
        firstLeaf = -1
    }

    init(
        count: Int, firstKey: UInt64, lastKey: UInt64, latitudeSum: Int64, longitudeSum: Int64, location: Coordinate,
        isSameLocation: Bool
    ) {
        self.count = count
        self.firstKey = firstKey
        self.lastKey = lastKey
        self.latitudeSum = latitudeSum
        self.longitudeSum = longitudeSum
        self.location = location
        self.isSameLocation = isSameLocation
        firstSlot = nil
    }

    init(_ entry: IndexEntry) {
        count = 1
        firstKey = entry.key
        lastKey = entry.key
        latitudeSum = Summary.fixedPoint(entry.coordinate.latitude)
        longitudeSum = Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        location = entry.coordinate
        isSameLocation = true
        firstSlot = entry.slot
    }

    init(_ summary: Summary) {
        count = summary.count
        firstKey = summary.firstKey
        lastKey = summary.lastKey
        latitudeSum = summary.latitudeSum
        longitudeSum = summary.longitudeSum
        location = summary.location
        isSameLocation = summary.isSameLocation
        firstSlot = nil
    }

    /// The totals of a run of a leaf's entries in key order, with where the first lies; `nil` when there are none.
    init?(run: Run<IndexEntry>.SubSequence, ofLeaf leaf: Int32) {
        guard let first = run.first else { return nil }
        self.init(first)
        firstLeaf = leaf
        firstPosition = UInt8(truncatingIfNeeded: run.startIndex)
        for entry in run.dropFirst() { add(entry) }
    }

    /// Adds an entry that comes after every member in key order.
    @inline(__always) mutating func add(_ entry: IndexEntry) {
        count &+= 1
        lastKey = entry.key
        latitudeSum &+= Summary.fixedPoint(entry.coordinate.latitude)
        longitudeSum &+= Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        if isSameLocation && entry.coordinate != location { isSameLocation = false }
    }

    /// Adds an entry wherever it falls in key order, with its coordinates already in fixed point.
    @inline(__always) mutating func insert(_ entry: IndexEntry, latitude: Int64, longitude: Int64) {
        count &+= 1
        firstKey = min(firstKey, entry.key)
        lastKey = max(lastKey, entry.key)
        latitudeSum &+= latitude
        longitudeSum &+= longitude
        if isSameLocation && entry.coordinate != location { isSameLocation = false }
    }

    /// Whether two totals say the same of their members (the first member's slot aside): `location` counts only when
    /// the members share one.
    func matches(_ other: CellTotals) -> Bool {
        count == other.count && firstKey == other.firstKey && lastKey == other.lastKey
            && latitudeSum == other.latitudeSum && longitudeSum == other.longitudeSum
            && isSameLocation == other.isSameLocation && (!isSameLocation || location == other.location)
    }

    /// Adds the members of a subtree that come after every member in key order.
    @inline(__always) mutating func append(_ other: Summary) {
        append(CellTotals(other))
    }

    /// Adds the members of totals that come after every member in key order.
    @inline(__always) mutating func append(_ other: CellTotals) {
        count &+= other.count
        lastKey = other.lastKey
        latitudeSum &+= other.latitudeSum
        longitudeSum &+= other.longitudeSum
        isSameLocation = isSameLocation && other.isSameLocation && other.location == location
    }

    /// The totals of a run of a leaf's entries, without adding them up.
    ///
    /// They are the leaf's less `others`, the totals of every entry outside the run: counts and sums subtract exactly;
    /// the keys and the same-location test come from the run itself.
    static func run(
        _ run: Run<IndexEntry>.SubSequence, ofLeaf id: Int32, summary leaf: Summary,
        less others: CellTotals?
    ) -> CellTotals {
        var result = CellTotals(leaf)
        if let others {
            result.count &-= others.count
            result.latitudeSum &-= others.latitudeSum
            result.longitudeSum &-= others.longitudeSum
        }
        guard let first = run.first, let last = run.last else { preconditionFailure("a run is never empty") }
        result.firstKey = first.key
        result.lastKey = last.key
        result.location = first.coordinate
        result.firstSlot = first.slot
        result.firstLeaf = id
        result.firstPosition = UInt8(truncatingIfNeeded: run.startIndex)
        if !leaf.isSameLocation {
            result.isSameLocation = first.key == last.key && run.allSatisfy { $0.coordinate == first.coordinate }
        }
        return result
    }

    /// The mean latitude and (wrapped) longitude of the members.
    var centerOfMass: Coordinate {
        Summary.centerOfMass(count: count, latitudeSum: latitudeSum, longitudeSum: longitudeSum)
    }
}

extension CellTotals: EntryAggregate {}
