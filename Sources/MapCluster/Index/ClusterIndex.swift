/// A dynamic spatial index of elements on the map that answers, for any cell of the world-aligned
/// grid, how many elements it holds, their center of mass and bounds, and whether they share one
/// location — in O(log *n*), without visiting them.
///
///     var index = ClusterIndex([(cityID, try Coordinate(latitude: 52.52, longitude: 13.405))])
///     index.insert(otherID, at: try Coordinate(latitude: 48.85, longitude: 2.35))
///     let clusters = Clustering(index).clusters(in: viewport)
///
/// Elements are ordered along the Z-order (Morton) curve of their position on a 2^32 × 2^32 grid over the Web Mercator
/// plane, so every aligned grid cell is one contiguous range of keys. A B+-tree over that order keeps, for each
/// subtree, the aggregates of what lies below it (count, fixed-point sums of latitude and longitude, bounds on the
/// grid, first and last key, whether all share one coordinate). The design follows the counted/augmented search trees
/// of Cormen et al., *Introduction to Algorithms*, ch. 14, over the Z-order of Morton (1966).
///
/// Each element (its identity, by `Hashable`) is held once. Inserting an identity that is already present moves it to
/// the new coordinate, as `Dictionary.updateValue(_:forKey:)` replaces a value.
///
/// `ClusterIndex` is a value: a copy taken before a mutation (a snapshot handed to another task) is unchanged by it.
/// Copies share their storage: the tree's nodes, their aggregates, and the pages of the element store and of the slot
/// table. The first mutation after a copy duplicates the tables of references to those (O(*n* / 60) references) and
/// then only the nodes and pages it changes (`mapcluster bench --workload snapshot-1M` and `snapshot-1M-aggregates`
/// measure it). Later mutations of the same value cost the usual.
///
/// The index does not store properties, categories or weights, and it does not round positions: members come back with
/// the coordinates they were given.
public struct ClusterIndex<Element: Hashable & Sendable>: Sendable {
    /// The entries in Morton order; each refers to its element by slot.
    @usableFromInline var tree: MortonTree
    /// The elements by slot, their holes, and the table from element to slot.
    @usableFromInline var elementSlots: ElementSlots<Element>

    /// The elements by slot, each with its Morton key (to find its entry in the tree).
    ///
    /// A removed element's slot is a hole, listed in `freeSlots` and reused by the next insert; it holds a copy of a
    /// live element, so that it keeps nothing removed alive.
    @inlinable var store: PagedArray<StoredElement<Element>> {
        get { elementSlots.store }
        _modify { yield &elementSlots.store }
    }

    /// The holes of `store`.
    @inlinable var freeSlots: [UInt32] {
        get { elementSlots.freeSlots }
        _modify { yield &elementSlots.freeSlots }
    }

    /// Element to slot.
    @inlinable var slots: SlotTable {
        get { elementSlots.slots }
        _modify { yield &elementSlots.slots }
    }

    /// An empty index.
    public init() {
        tree = MortonTree()
        elementSlots = ElementSlots(store: PagedArray(), freeSlots: [], slots: SlotTable())
    }

    /// Builds an index of elements in one pass.
    ///
    /// When an identity occurs more than once, its last coordinate wins, as if the elements had been inserted one by
    /// one.
    ///
    /// - Complexity: O(*n*): positions are sorted by a radix sort and the tree is built bottom-up.
    @inlinable
    public init(_ elements: some Sequence<(Element, Coordinate)>) {
        self.init(bulk: elements as? [(Element, Coordinate)] ?? Array(elements))
    }

    /// The bulk load.
    ///
    /// Generic work stays here, specialized in the caller; the rest is concrete and lives in the core. Slots start as
    /// input positions.
    ///
    /// With `aggregates` (whose slot tables hold the input's values by position), entries carry `categories` and the
    /// tree keeps the aggregates from the start.
    @inlinable
    init(
        bulk input: [(Element, Coordinate)], categories: ContiguousArray<UInt8>? = nil,
        aggregates: NodeAggregates? = nil
    ) {
        precondition(input.count <= Int(SlotTable.maximumSlot) + 1, "an index holds at most 268,435,455 elements")
        let keys = MortonTree.keys(count: input.count) { input[$0].1 }
        let store = PagedArray(count: input.count) { StoredElement(element: input[$0].0, key: keys[$0]) }
        // Sorting the keys (in place: nothing else holds them) and building the slot table are
        // independent, so they run at once. The tree's nodes are allocated after both, when the
        // table's working memory is already free.
        var order = MortonTree.SortedOrder(unsortedKeys: consume keys)
        let (slots, superseded) = Parallel.both(updating: &order, { $0.sort() }, { SlotTable.build(for: store) })
        // The sorted keys go before the leaves are made: the leaves read each key from the store.
        let positions = (consume order).sortedPositions()
        if let categories {
            tree = MortonTree(sortedPositions: consume positions) {
                IndexEntry(
                    key: store[$0].key, coordinate: input[$0].1, slot: UInt32(truncatingIfNeeded: $0),
                    category: categories[$0])
            }
        } else {
            tree = MortonTree(sortedPositions: consume positions) {
                IndexEntry(key: store[$0].key, coordinate: input[$0].1, slot: UInt32(truncatingIfNeeded: $0))
            }
        }
        if let aggregates { tree.attach(aggregates) }
        elementSlots = ElementSlots(
            store: store, freeSlots: [], slots: slots, addedOrder: PagedArray(count: input.count) { UInt32($0) },
            nextAddition: UInt32(input.count))
        for slot in superseded { removeSlot(slot, compacting: false) }
        compactIfSparse()
    }

    /// The number of elements.
    @inlinable
    public var count: Int { store.count - freeSlots.count }

    /// Whether the index holds no element.
    @inlinable
    public var isEmpty: Bool { count == 0 }

    /// Whether the index holds `element`.
    @inlinable
    public func contains(_ element: Element) -> Bool { slots.find(element, in: store).slot != nil }

    /// The coordinate of `element`, or `nil` if the index does not hold it.
    /// - Complexity: O(log *n*).
    @inlinable
    public func coordinate(of element: Element) -> Coordinate? {
        guard let slot = slots.find(element, in: store).slot else { return nil }
        return tree.entry(key: store[Int(slot)].key) { $0.slot == slot }?.coordinate
    }

    /// Adds `element` at `coordinate`, or moves it there if the index already holds it.
    ///
    /// - Returns: `true` if the element is new, `false` if it was present and has been moved.
    /// - Complexity: O(log *n*).
    @discardableResult
    @inlinable
    public mutating func insert(_ element: Element, at coordinate: Coordinate) -> Bool {
        insert(element, at: coordinate, key: GridPosition(coordinate).key)
    }

    /// ``insert(_:at:)`` with the coordinate's key already computed.
    @discardableResult
    @inlinable
    mutating func insert(_ element: Element, at coordinate: Coordinate, key: UInt64) -> Bool {
        slots.reserve(1, in: store)
        let (slot, previousKey) = elementSlots.place(element, key: key)
        // A moved element keeps its category (and its other aggregate values, by slot).
        var category: UInt8 = 0
        if let previousKey {
            let removed = tree.remove(key: previousKey) { $0.slot == slot }
            guard let removed else {
                preconditionFailure("the index lost track of an element: its slot table and tree disagree")
            }
            category = removed.category
        }
        tree.prepareAggregateValues(moving: previousKey != nil)
        tree.insert(IndexEntry(key: key, coordinate: coordinate, slot: slot, category: category))
        return previousKey == nil
    }

    /// Removes `element`.
    ///
    /// - Returns: `true` if it was removed, `false` if the index did not hold it (nothing changes).
    /// - Complexity: O(log *n*).
    @discardableResult
    @inlinable
    public mutating func remove(_ element: Element) -> Bool {
        let (bucket, found, _) = slots.find(element, in: store)
        guard let slot = found else { return false }
        slots.remove(at: bucket, in: store)
        removeSlot(slot)
        return true
    }

    /// Moves `element` to a new coordinate.
    ///
    /// - Returns: `true` if it moved, `false` if the index does not hold it (nothing changes).
    /// - Complexity: O(log *n*).
    @discardableResult
    @inlinable
    public mutating func move(_ element: Element, to coordinate: Coordinate) -> Bool {
        guard contains(element) else { return false }
        insert(element, at: coordinate)
        return true
    }

    /// Removes a slot's entry from the tree and makes the slot a hole; the slot table must no longer list it.
    /// - Complexity: O(log *n*), amortized: a compaction costs O(*n*) after *n* / 2 removals.
    @inlinable
    mutating func removeSlot(_ slot: UInt32, compacting: Bool = true) {
        let removed = tree.remove(key: store[Int(slot)].key) { $0.slot == slot }
        precondition(removed != nil, "the index lost track of an element: its slot table and tree disagree")
        makeHole(slot, live: nil)
        if compacting { compactIfSparse() }
    }

    /// Makes a slot whose entry has left the tree a hole, to be reused by the next insert.
    ///
    /// An empty index empties its store. A hole of an element type that holds references gets a copy of a live
    /// element (`live`, or the tree's first), so that it keeps nothing removed alive.
    @inlinable
    mutating func makeHole(_ slot: UInt32, live: UInt32?) {
        guard tree.count > 0 else {
            store.removeAll()
            freeSlots.removeAll()
            elementSlots.addedOrder.removeAll()
            return
        }
        if !_isPOD(Element.self), let live = live ?? tree.firstEntry?.slot {
            store[Int(slot)].element = store[Int(live)].element
        }
        freeSlots.append(slot)
    }

    /// Compacts the store once its holes are at least half of it (and over a thousand).
    @inlinable
    mutating func compactIfSparse() {
        if freeSlots.count >= 1_024 && freeSlots.count * 2 >= store.count { compact() }
    }

    /// Renumbers the live slots 0..<count in key order, dropping every hole, and rebuilds the table.
    /// - Complexity: O(*n*).
    @usableFromInline
    mutating func compact() {
        var compacted = PagedArray<StoredElement<Element>>()
        var addedOrder = PagedArray<UInt32>()
        let old = store
        let oldOrder = elementSlots.addedOrder
        tree.renumberSlots { slot, entry in
            slot = UInt32(compacted.count)
            compacted.append(old[Int(entry.slot)])
            addedOrder.append(oldOrder[Int(entry.slot)])
        }
        store = compacted
        elementSlots.addedOrder = addedOrder
        freeSlots = []
        slots = SlotTable.build(for: store).0
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
    public func members(of cell: GridCell, offset: Int = 0, limit: Int = .max) -> [(
        element: Element, coordinate: Coordinate
    )] {
        precondition(offset >= 0 && limit >= 0, "offset and limit are not negative")
        var page: [(element: Element, coordinate: Coordinate)] = []
        guard limit > 0 else { return page }
        tree.forEachEntry(in: cell.keyRange, skip: offset) { entry in
            page.append((store[Int(entry.slot)].element, entry.coordinate))
            return page.count < limit
        }
        return page
    }

    /// Calls `body` with each element of a cell and its coordinate, in the index's order, until it
    /// returns false.
    ///
    /// Allocates nothing.
    public func forEachMember(of cell: GridCell, _ body: (Element, Coordinate) -> Bool) {
        tree.forEachEntry(in: cell.keyRange) { body(store[Int($0.slot)].element, $0.coordinate) }
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
    ///
    /// Sums are kept in fixed point of 1e-7 degree (about 1 cm), so the mean never drifts.
    public let centerOfMass: Coordinate
    /// The smallest rectangle holding every element, on the index's grid of 1/16 plane unit.
    public let bounds: MapRect
    /// Whether every element has the same coordinate.
    public let isSameLocation: Bool

    init(count: Int, centerOfMass: Coordinate, bounds: MapRect, isSameLocation: Bool) {
        self.count = count
        self.centerOfMass = centerOfMass
        self.bounds = bounds
        self.isSameLocation = isSameLocation
    }

    init(_ summary: Summary) {
        self.init(
            count: summary.count, centerOfMass: summary.isSameLocation ? summary.location : summary.centerOfMass,
            bounds: summary.bounds, isSameLocation: summary.isSameLocation)
    }
}
