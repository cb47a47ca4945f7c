/// What the tree keeps of one category's entries below a node, so that a query filtered by categories has the counts,
/// centers of mass and bounds of the selected categories without visiting members.
///
/// Coordinate sums are fixed point, as in ``Summary``; the extremes of latitude and (wrapped) longitude give both the
/// bounds and an exact same-location test.
struct CategoryTotals: NodeValue, Equatable {
    typealias Stored = Void

    var count: Int
    var latitudeSum: Int64
    var longitudeSum: Int64
    var firstKey: UInt64
    var lastKey: UInt64
    var minLatitude: Double
    var maxLatitude: Double
    var minLongitude: Double
    var maxLongitude: Double

    static var identity: CategoryTotals {
        CategoryTotals(
            count: 0, latitudeSum: 0, longitudeSum: 0, firstKey: .max, lastKey: 0, minLatitude: .infinity,
            maxLatitude: -.infinity, minLongitude: .infinity, maxLongitude: -.infinity)
    }

    init(
        count: Int, latitudeSum: Int64, longitudeSum: Int64, firstKey: UInt64, lastKey: UInt64, minLatitude: Double,
        maxLatitude: Double, minLongitude: Double, maxLongitude: Double
    ) {
        self.count = count
        self.latitudeSum = latitudeSum
        self.longitudeSum = longitudeSum
        self.firstKey = firstKey
        self.lastKey = lastKey
        self.minLatitude = minLatitude
        self.maxLatitude = maxLatitude
        self.minLongitude = minLongitude
        self.maxLongitude = maxLongitude
    }

    init(entry: IndexEntry, stored: Void) {
        let longitude = entry.coordinate.wrappedLongitude
        self.init(
            count: 1, latitudeSum: Summary.fixedPoint(entry.coordinate.latitude),
            longitudeSum: Summary.fixedPoint(longitude), firstKey: entry.key, lastKey: entry.key,
            minLatitude: entry.coordinate.latitude, maxLatitude: entry.coordinate.latitude, minLongitude: longitude,
            maxLongitude: longitude)
    }

    mutating func merge(_ other: CategoryTotals) {
        count &+= other.count
        latitudeSum &+= other.latitudeSum
        longitudeSum &+= other.longitudeSum
        firstKey = min(firstKey, other.firstKey)
        lastKey = max(lastKey, other.lastKey)
        minLatitude = min(minLatitude, other.minLatitude)
        maxLatitude = max(maxLatitude, other.maxLatitude)
        minLongitude = min(minLongitude, other.minLongitude)
        maxLongitude = max(maxLongitude, other.maxLongitude)
    }

    /// Counts and fixed-point sums subtract exactly; the key span and the extremes only while the entry attains none
    /// of them (else the group is recomputed).
    mutating func remove(_ one: CategoryTotals) -> Bool {
        guard count > 1, one.firstKey != firstKey, one.lastKey != lastKey, one.minLatitude != minLatitude,
            one.maxLatitude != maxLatitude, one.minLongitude != minLongitude, one.maxLongitude != maxLongitude
        else { return false }
        count -= 1
        latitudeSum &-= one.latitudeSum
        longitudeSum &-= one.longitudeSum
        return true
    }

    /// Whether every entry has the same coordinate (and there is one).
    var isSameLocation: Bool {
        count > 0 && minLatitude == maxLatitude && minLongitude == maxLongitude
    }

    /// The totals a clustering pass reads, for a non-empty value.
    var cellTotals: CellTotals {
        CellTotals(
            count: count, firstKey: firstKey, lastKey: lastKey, latitudeSum: latitudeSum, longitudeSum: longitudeSum,
            location: Coordinate(uncheckedLatitude: minLatitude, longitude: minLongitude),
            isSameLocation: isSameLocation)
    }

    /// The smallest rectangle holding every entry, on the index's grid, for a non-empty value.
    var bounds: MapRect {
        let northWest = GridPosition(Coordinate(uncheckedLatitude: maxLatitude, longitude: minLongitude))
        let southEast = GridPosition(Coordinate(uncheckedLatitude: minLatitude, longitude: maxLongitude))
        return northWest.rect(through: southEast)
    }
}

/// How many entries of one category lie below a node: what an unfiltered query counts, eight to a cache line, where
/// ``CategoryTotals`` would read nine lines for eight categories.
struct CategoryCount: NodeValue, Equatable {
    typealias Stored = Void

    var count: Int

    static var identity: CategoryCount { CategoryCount(count: 0) }

    init(count: Int) { self.count = count }

    init(entry: IndexEntry, stored: Void) { count = 1 }

    mutating func merge(_ other: CategoryCount) { count &+= other.count }

    mutating func remove(_ one: CategoryCount) -> Bool {
        count &-= one.count
        return true
    }
}

/// The total weight of the entries below a node and their weighted coordinate sums, for the weighted center of mass.
struct WeightTotals: NodeValue, Equatable {
    typealias Stored = Double

    var weight: Double
    var latitudeSum: Double
    var longitudeSum: Double

    static var identity: WeightTotals { WeightTotals(weight: 0, latitudeSum: 0, longitudeSum: 0) }

    init(weight: Double, latitudeSum: Double, longitudeSum: Double) {
        self.weight = weight
        self.latitudeSum = latitudeSum
        self.longitudeSum = longitudeSum
    }

    init(entry: IndexEntry, stored weight: Double) {
        self.init(
            weight: weight, latitudeSum: weight * entry.coordinate.latitude,
            longitudeSum: weight * entry.coordinate.wrappedLongitude)
    }

    mutating func merge(_ other: WeightTotals) {
        weight += other.weight
        latitudeSum += other.latitudeSum
        longitudeSum += other.longitudeSum
    }

    /// The weighted mean coordinate; `nil` when the total weight is 0.
    var center: Coordinate? {
        guard weight > 0 else { return nil }
        return Coordinate(uncheckedLatitude: latitudeSum / weight, longitude: longitudeSum / weight)
    }
}

/// A user's reduction as the tree keeps it: each element stores its own value.
struct Reduced<Value: ClusterAggregate>: NodeValue {
    typealias Stored = Value

    var value: Value

    static var identity: Reduced { Reduced(value: .identity) }

    init(value: Value) { self.value = value }

    init(entry: IndexEntry, stored: Value) { value = stored }

    mutating func merge(_ other: Reduced) { value.merge(other.value) }
}
