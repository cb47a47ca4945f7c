/// A dynamic spatial index of elements on the map that answers, for any cell of the world-aligned
/// grid, how many elements it holds, their center of mass and bounds, and whether they share one
/// location — in O(log *n*), without visiting them.
///
///     var index = ClusterIndex([(cityID, try Coordinate(latitude: 52.52, longitude: 13.405))])
///     index.insert(otherID, at: try Coordinate(latitude: 48.85, longitude: 2.35))
///     let clusters = index.clusters(in: viewport)
///
/// Elements are ordered along the Z-order (Morton) curve of their position on a 2^32 × 2^32 grid over
/// the Web Mercator plane, so every aligned grid cell is one contiguous range of keys. A B+-tree over
/// that order keeps, for each subtree, the aggregates of what lies below it (count, fixed-point sums of
/// latitude and longitude, bounds on the grid, first and last key, whether all share one coordinate).
/// The design follows the counted/augmented search trees of Cormen et al., *Introduction to
/// Algorithms*, ch. 14, over the Z-order of Morton (1966).
///
/// Each element (its identity, by `Hashable`) is held once. Inserting an identity that is already
/// present moves it to the new coordinate, as `Dictionary.updateValue(_:forKey:)` replaces a value.
///
/// `ClusterIndex` is a value: a copy taken before a mutation (a snapshot handed to another task) is
/// unchanged by it. Nodes are shared between copies: the first mutation after a copy costs
/// O(*n* / 64) reference-count increments plus the nodes on the changed path (a few hundred
/// entries), about a thousandth of a rebuild; later mutations of the same value cost the usual.
///
/// The index does not store properties, categories or weights, and it does not round positions:
/// members come back with the coordinates they were given.
public struct ClusterIndex<Element: Hashable & Sendable>: Sendable {
    var tree: MortonTree<Element>
    /// Each element's Morton key, to find it in the tree.
    var keys: [Element: UInt64]

    /// An empty index.
    public init() {
        tree = MortonTree()
        keys = [:]
    }

    /// Builds an index of elements in one pass. When an identity occurs more than once, its last
    /// coordinate wins, as if the elements had been inserted one by one.
    ///
    /// - Complexity: O(*n*): positions are sorted by a radix sort and the tree is built bottom-up.
    public init(_ elements: some Sequence<(Element, Coordinate)>) {
        let input = elements as? [(Element, Coordinate)] ?? Array(elements)
        var sortedKeys = [UInt64](repeating: 0, count: input.count)
        var positions = [UInt32](repeating: 0, count: input.count)
        precondition(input.count < Int(UInt32.max), "an index holds fewer than 2^32 elements")
        for (i, (_, coordinate)) in input.enumerated() {
            sortedKeys[i] = QuantizedPoint(coordinate.mapPoint).key
            positions[i] = UInt32(i)
        }
        RadixSort.sort(keys: &sortedKeys, payloads: &positions)
        tree = MortonTree(sortedCount: input.count) { i in
            let (element, coordinate) = input[Int(positions[i])]
            return IndexEntry(element: element, coordinate: coordinate, key: sortedKeys[i])
        }
        sortedKeys = []
        positions = []

        keys = Dictionary(minimumCapacity: input.count)
        var duplicated: Set<Element> = []
        for leaf in tree.leaves {
            for entry in leaf.entries where keys.updateValue(entry.key, forKey: entry.element) != nil {
                duplicated.insert(entry.element)
            }
        }
        if !duplicated.isEmpty { keepLastOccurrences(of: duplicated, in: input) }
    }

    /// Removes all but the last occurrence of each duplicated identity of a bulk load.
    private mutating func keepLastOccurrences(of duplicated: Set<Element>, in input: [(Element, Coordinate)]) {
        var occurrences: [Element: [Coordinate]] = [:]
        for (element, coordinate) in input where duplicated.contains(element) {
            occurrences[element, default: []].append(coordinate)
        }
        for (element, coordinates) in occurrences {
            for coordinate in coordinates.dropLast() {
                let key = QuantizedPoint(coordinate.mapPoint).key
                _ = tree.remove(key: key) { $0.element == element && $0.coordinate == coordinate }
            }
            if let last = coordinates.last { keys[element] = QuantizedPoint(last.mapPoint).key }
        }
    }

    /// The number of elements.
    public var count: Int { tree.count }

    /// Whether the index holds no element.
    public var isEmpty: Bool { tree.count == 0 }

    /// Whether the index holds `element`.
    public func contains(_ element: Element) -> Bool { keys[element] != nil }

    /// The coordinate of `element`, or `nil` if the index does not hold it.
    /// - Complexity: O(log *n*).
    public func coordinate(of element: Element) -> Coordinate? {
        guard let key = keys[element] else { return nil }
        return tree.entry(key: key) { $0.element == element }?.coordinate
    }

    /// Adds `element` at `coordinate`, or moves it there if the index already holds it.
    ///
    /// - Returns: `true` if the element is new, `false` if it was present and has been moved.
    /// - Complexity: O(log *n*).
    @discardableResult
    public mutating func insert(_ element: Element, at coordinate: Coordinate) -> Bool {
        let entry = IndexEntry(element: element, coordinate: coordinate)
        let oldKey = keys.updateValue(entry.key, forKey: element)
        if let oldKey { removeFromTree(element, key: oldKey) }
        tree.insert(entry)
        return oldKey == nil
    }

    /// Adds (or moves) each element, in order.
    /// - Complexity: O(*m* log *n*) for *m* elements.
    public mutating func insert(contentsOf elements: some Sequence<(Element, Coordinate)>) {
        for (element, coordinate) in elements { insert(element, at: coordinate) }
    }

    /// Removes `element`.
    ///
    /// - Returns: `true` if it was removed, `false` if the index did not hold it (nothing changes).
    /// - Complexity: O(log *n*).
    @discardableResult
    public mutating func remove(_ element: Element) -> Bool {
        guard let key = keys.removeValue(forKey: element) else { return false }
        removeFromTree(element, key: key)
        return true
    }

    /// Removes each element the index holds and returns how many it removed.
    /// - Complexity: O(*m* log *n*) for *m* elements.
    @discardableResult
    public mutating func remove(contentsOf elements: some Sequence<Element>) -> Int {
        var removed = 0
        for element in elements where remove(element) { removed += 1 }
        return removed
    }

    /// Moves `element` to a new coordinate.
    ///
    /// - Returns: `true` if it moved, `false` if the index does not hold it (nothing changes).
    /// - Complexity: O(log *n*).
    @discardableResult
    public mutating func move(_ element: Element, to coordinate: Coordinate) -> Bool {
        guard contains(element) else { return false }
        insert(element, at: coordinate)
        return true
    }

    private mutating func removeFromTree(_ element: Element, key: UInt64) {
        let removed = tree.remove(key: key) { $0.element == element }
        precondition(removed != nil, "the index lost track of an element: its key map and tree disagree")
    }
}

extension ClusterIndex {
    /// What the index knows of one grid cell's elements without visiting them.
    ///
    /// - Returns: `nil` when the cell holds no element.
    /// - Complexity: O(log *n*).
    public func summary(of cell: GridCell) -> CellSummary? {
        tree.summary(in: cell.keyRange).map(CellSummary.init)
    }

    /// A page of the elements in a cell, in the index's order (along the Z-order curve, then by
    /// insertion for elements on one position).
    ///
    /// - Complexity: O(log *n* + `limit`): whole subtrees before `offset` are skipped by their counts.
    public func members(of cell: GridCell, offset: Int = 0, limit: Int = .max) -> [(element: Element, coordinate: Coordinate)] {
        precondition(offset >= 0 && limit >= 0, "offset and limit are not negative")
        var page: [(element: Element, coordinate: Coordinate)] = []
        guard limit > 0 else { return page }
        tree.forEachEntry(in: cell.keyRange, skip: offset) { entry in
            page.append((entry.element, entry.coordinate))
            return page.count < limit
        }
        return page
    }

    /// Calls `body` with each element of a cell and its coordinate, in the index's order, until it
    /// returns false. Allocates nothing.
    public func forEachMember(of cell: GridCell, _ body: (Element, Coordinate) -> Bool) {
        tree.forEachEntry(in: cell.keyRange) { body($0.element, $0.coordinate) }
    }

    /// Every element and its coordinate, in the index's order.
    public var elements: [(element: Element, coordinate: Coordinate)] {
        members(of: GridCell(level: 0, x: 0, y: 0))
    }
}

/// The aggregates of one grid cell's elements.
public struct CellSummary: Hashable, Sendable {
    /// How many elements the cell holds.
    public let count: Int
    /// The mean latitude and longitude of the elements (longitudes wrapped into [-180, 180)).
    /// Sums are kept in fixed point of 1e-7 degree (about 1 cm), so the mean never drifts.
    public let centerOfMass: Coordinate
    /// The smallest rectangle holding every element, on the index's grid of 1/16 plane unit.
    public let bounds: MapRect
    /// Whether every element has the same coordinate.
    public let isUniqueLocation: Bool

    init(count: Int, centerOfMass: Coordinate, bounds: MapRect, isUniqueLocation: Bool) {
        self.count = count
        self.centerOfMass = centerOfMass
        self.bounds = bounds
        self.isUniqueLocation = isUniqueLocation
    }

    init(_ summary: Summary) {
        self.init(
            count: summary.count, centerOfMass: summary.isSameLocation ? summary.location : summary.centerOfMass,
            bounds: summary.bounds, isUniqueLocation: summary.isSameLocation)
    }
}
