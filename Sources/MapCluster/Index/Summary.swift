/// One element of the index: its identity, its coordinate and its Morton key.
struct IndexEntry<Element: Hashable & Sendable>: Sendable {
    var key: UInt64
    var coordinate: Coordinate
    var element: Element

    init(element: Element, coordinate: Coordinate) {
        self.init(element: element, coordinate: coordinate, key: QuantizedPoint(coordinate.mapPoint).key)
    }

    init(element: Element, coordinate: Coordinate, key: UInt64) {
        self.key = key
        self.coordinate = coordinate
        self.element = element
    }
}

/// What the index keeps for every subtree (and computes for any key range) so that a cell's count,
/// center of mass, bounds and same-location test never visit its members.
///
/// Coordinate sums are fixed-point integers of 1e-7 degree (about 1 cm): exact, so a summary never
/// drifts through inserts and removes and never depends on the order the members came in. Int64
/// holds the sums of 5 billion points.
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
    /// The first member's coordinate; every member's when `isSameLocation`.
    var location: Coordinate
    var isSameLocation: Bool

    init<Element>(_ entry: IndexEntry<Element>) {
        let point = QuantizedPoint(key: entry.key)
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
    init?<Element>(entries: some Collection<IndexEntry<Element>>) {
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
    init<Element>(nonEmpty entries: some Collection<IndexEntry<Element>>) {
        guard let summary = Summary(entries: entries) else { preconditionFailure("a tree node is never empty") }
        self = summary
    }

    /// The summary of consecutive summaries that are known not to be empty: a branch's children.
    init(nonEmptyCombining summaries: some Collection<Summary>) {
        guard let summary = Summary(combining: summaries) else { preconditionFailure("a branch is never empty") }
        self = summary
    }

    @inline(__always) static func fixedPoint(_ degrees: Double) -> Int64 {
        Int64((degrees * fixedPointScale).rounded())
    }

    /// Adds an entry that comes after every member in key order.
    @inline(__always) mutating func add<Element>(_ entry: IndexEntry<Element>) {
        let point = QuantizedPoint(key: entry.key)
        count += 1
        lastKey = entry.key
        minX = min(minX, point.x)
        maxX = max(maxX, point.x)
        minY = min(minY, point.y)
        maxY = max(maxY, point.y)
        latitudeSum += Summary.fixedPoint(entry.coordinate.latitude)
        longitudeSum += Summary.fixedPoint(entry.coordinate.wrappedLongitude)
        if isSameLocation && entry.coordinate != location { isSameLocation = false }
    }

    /// Adds the members of a summary that come after every member of this one in key order.
    @inline(__always) mutating func append(_ other: Summary) {
        count += other.count
        lastKey = other.lastKey
        minX = min(minX, other.minX)
        maxX = max(maxX, other.maxX)
        minY = min(minY, other.minY)
        maxY = max(maxY, other.maxY)
        latitudeSum += other.latitudeSum
        longitudeSum += other.longitudeSum
        isSameLocation = isSameLocation && other.isSameLocation && other.location == location
    }

    /// The mean latitude and (wrapped) longitude of the members.
    var centerOfMass: Coordinate {
        let n = Double(count)
        return Coordinate(
            uncheckedLatitude: Double(latitudeSum) / n / Summary.fixedPointScale,
            longitude: Double(longitudeSum) / n / Summary.fixedPointScale)
    }

    /// The smallest rectangle of the plane holding every member (to the index's 1/16-unit grid).
    var bounds: MapRect {
        MapRect(minX: Double(minX) / 16, minY: Double(minY) / 16, maxX: (Double(maxX) + 1) / 16, maxY: (Double(maxY) + 1) / 16)
    }
}
