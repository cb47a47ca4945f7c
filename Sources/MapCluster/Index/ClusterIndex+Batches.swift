extension ClusterIndex {
    /// Elements a batch handles per step.
    @inlinable static var batchChunk: Int { 2_048 }

    /// The number of steps of a batch of `count` elements.
    @inlinable static func steps(for count: Int) -> Int { (count + batchChunk - 1) / batchChunk }

    /// The positions of a batch of `count` elements that step `step` handles.
    @inlinable static func positions(ofStep step: Int, in count: Int) -> Range<Int> {
        (step * batchChunk)..<min((step + 1) * batchChunk, count)
    }

    /// Adds (or moves) each element; an identity that occurs more than once ends at its last coordinate.
    ///
    /// Two threads share the work: one finds each element's slot (the store and the slot table), a chunk at a
    /// time, while the other applies the previous chunk to the tree in the order of its keys along the Z-order
    /// curve, so that consecutive changes touch neighbouring nodes.
    /// - Complexity: O(*m* log *n*) for *m* elements.
    @inlinable
    public mutating func insert(contentsOf elements: some Sequence<(Element, Coordinate)>) {
        let batch = Array(elements)
        // An index with aggregates gives new slots their default values as it inserts: one by one.
        guard batch.count > 1, !tree.keepsAggregates else {
            tree.beginBatch()
            for (element, coordinate) in batch { insert(element, at: coordinate) }
            tree.finishBatch()
            return
        }
        insert(batch, values: nil)
    }

    /// Adds (or moves) each element of a batch of more than one, and with `values` gives each its values (the
    /// schema's accepted them, and `values.categories[i]` is element `i`'s category byte); an identity that occurs
    /// more than once ends at its last coordinate.
    ///
    /// Two threads share the work: one finds each element's slot (the store and the slot table), a chunk at a
    /// time, while the other applies the previous chunk to the tree in the order of its keys along the Z-order
    /// curve, so that consecutive changes touch neighbouring nodes.
    @inlinable
    mutating func insert(
        _ batch: [(Element, Coordinate)], values: (values: [ElementValues], categories: ContiguousArray<UInt8>)?
    ) {
        let replaced = Self.earlierOccurrences(in: batch)
        slots.reserve(batch.count, in: store)
        var elementSlots = takeElementSlots()
        defer { restoreElementSlots(elementSlots) }
        tree.beginBatch()
        defer { tree.finishBatch() }
        Parallel.pipeline(
            count: Self.steps(for: batch.count), producer: &elementSlots, consumer: &tree,
            produce: { elementSlots, step in
                var changes = TreeChanges()
                for i in Self.positions(ofStep: step, in: batch.count) where !replaced[i] {
                    let (element, coordinate) = batch[i]
                    let key = GridPosition(coordinate).key
                    let (slot, previousKey) = elementSlots.place(element, key: key)
                    if let previousKey { changes.remove(key: previousKey, slot: slot) }
                    if let values {
                        changes.insert(
                            IndexEntry(key: key, coordinate: coordinate, slot: slot, category: values.categories[i]),
                            valuesAt: i)
                    } else {
                        changes.insert(IndexEntry(key: key, coordinate: coordinate, slot: slot))
                    }
                }
                changes.sort()
                return changes
            },
            consume: { tree, changes in
                if let values { changes.apply(to: &tree, values: values.values) } else { changes.apply(to: &tree) }
            })
    }

    /// Removes each element the index holds and returns how many it removed.
    ///
    /// Two threads share the work as in ``insert(contentsOf:)-(Sequence<(Element,Coordinate)>)``: one finds and forgets each element's slot, the
    /// other removes the previous chunk's entries from the tree in key order.
    /// - Complexity: O(*m* log *n*) for *m* elements.
    @inlinable
    @discardableResult
    public mutating func remove(contentsOf elements: some Sequence<Element>) -> Int {
        let batch = Array(elements)
        guard batch.count > 1 else { return batch.count == 1 && remove(batch[0]) ? 1 : 0 }
        var elementSlots = takeElementSlots()
        var removal = (tree: MortonTree(), removed: [UInt32]())
        tree.beginBatch()
        swap(&removal.tree, &tree)
        Parallel.pipeline(
            count: Self.steps(for: batch.count), producer: &elementSlots, consumer: &removal,
            produce: { elementSlots, step in
                var changes = TreeChanges()
                for element in batch[Self.positions(ofStep: step, in: batch.count)] {
                    let (bucket, found, _) = elementSlots.slots.find(element, in: elementSlots.store)
                    guard let slot = found else { continue }
                    elementSlots.slots.remove(at: bucket, in: elementSlots.store)
                    changes.remove(key: elementSlots.store[Int(slot)].key, slot: slot)
                }
                changes.sort()
                return changes
            },
            consume: { removal, changes in
                changes.apply(to: &removal.tree)
                removal.removed.append(contentsOf: changes.removedSlots)
            })
        swap(&removal.tree, &tree)
        tree.finishBatch()
        restoreElementSlots(elementSlots)
        // The holes, and no compaction until every slot of the batch is one: it would renumber them.
        var live: UInt32?
        if !_isPOD(Element.self) {
            // Any element the batch keeps (if it keeps none, the store is emptied below anyway).
            tree.forEachEntry(in: 0...UInt64.max) { entry in
                live = entry.slot
                return false
            }
        }
        for slot in removal.removed { makeHole(slot, live: live) }
        compactIfSparse()
        return removal.removed.count
    }

    /// For each element of a batch, whether a later element has the same identity (and so replaces it).
    @inlinable
    static func earlierOccurrences(in batch: [(Element, Coordinate)]) -> [Bool] {
        var replaced = [Bool](repeating: false, count: batch.count)
        var hashes = ContiguousArray(batch.lazy.map { UInt64(UInt(bitPattern: $0.0.hashValue)) })
        var byHash = ContiguousArray(0..<UInt32(batch.count))
        RadixSort.sort(keys: &hashes, payloads: &byHash)
        var first = 0
        while first < hashes.count {
            var end = first + 1
            while end < hashes.count && hashes[end] == hashes[first] { end += 1 }
            if end - first > 1 {
                // Equal hashes are rare; only their elements are compared.
                let run = byHash[first..<end].sorted()
                for (i, earlier) in run.enumerated()
                where run[(i + 1)...].contains(where: { batch[Int($0)].0 == batch[Int(earlier)].0 }) {
                    replaced[Int(earlier)] = true
                }
            }
            first = end
        }
        return replaced
    }

    /// Moves the store, its holes and the slot table out of the index, so that a batch can change them on one
    /// thread while the tree changes on another, without copying them.
    @inlinable
    mutating func takeElementSlots() -> ElementSlots<Element> {
        var taken = ElementSlots<Element>(store: PagedArray(), freeSlots: [], slots: SlotTable())
        swap(&taken, &elementSlots)
        return taken
    }

    @inlinable
    mutating func restoreElementSlots(_ taken: consuming ElementSlots<Element>) {
        elementSlots = taken
    }
}

/// The store, its holes and the slot table of an index, taken out of it for a batch.
@usableFromInline
struct ElementSlots<Element: Hashable & Sendable>: Sendable {
    @usableFromInline var store: PagedArray<StoredElement<Element>>
    @usableFromInline var freeSlots: [UInt32]
    @usableFromInline var slots: SlotTable
    /// When each slot's element was added, as a rank, for ``ClusterPosition/firstMember``.
    ///
    /// A later addition has a larger rank, and a move keeps it. 4 bytes an element, beside the store rather than in
    /// it, so that the store's line stays 16 bytes for small elements.
    @usableFromInline var addedOrder: PagedArray<UInt32>
    /// The rank the next new element gets.
    @usableFromInline var nextAddition: UInt32

    @inlinable
    init(
        store: PagedArray<StoredElement<Element>>, freeSlots: [UInt32], slots: SlotTable,
        addedOrder: PagedArray<UInt32> = PagedArray(), nextAddition: UInt32 = 0
    ) {
        self.store = store
        self.freeSlots = freeSlots
        self.slots = slots
        self.addedOrder = addedOrder
        self.nextAddition = nextAddition
    }

    /// The next rank of addition; once the ranks run out (after 4 billion additions), the live slots' ranks are
    /// renumbered in their order first.
    @inlinable
    mutating func nextRank() -> UInt32 {
        if nextAddition == .max {
            let holes = Set(freeSlots)
            let live = (0..<addedOrder.count).filter { !holes.contains(UInt32($0)) }.sorted {
                addedOrder[$0] < addedOrder[$1]
            }
            for (rank, slot) in live.enumerated() { addedOrder[slot] = UInt32(rank) }
            nextAddition = UInt32(live.count)
        }
        defer { nextAddition += 1 }
        return nextAddition
    }

    /// The slot for `element` at `key`: its own if the index holds it, else a hole or a new slot.
    ///
    /// The table must have room (``SlotTable/reserve(_:in:)``).
    /// - Returns: The slot, and the element's previous key if it was already there (its entry in the tree, under
    ///   that key, is then the caller's to remove).
    @inlinable
    mutating func place(_ element: Element, key: UInt64) -> (slot: UInt32, previousKey: UInt64?) {
        let (bucket, existing, tag) = slots.find(element, in: store)
        if let slot = existing {
            let previousKey = store[Int(slot)].key
            store[Int(slot)].key = key
            return (slot, previousKey)
        }
        let slot: UInt32
        let rank = nextRank()
        if let hole = freeSlots.popLast() {
            slot = hole
            store[Int(slot)] = StoredElement(element: element, key: key)
            addedOrder[Int(slot)] = rank
        } else {
            slot = UInt32(store.count)
            precondition(slot <= SlotTable.maximumSlot, "an index holds at most 268,435,455 elements")
            store.append(StoredElement(element: element, key: key))
            addedOrder.append(rank)
        }
        slots.insert(slot, tag: tag, at: bucket)
        return (slot, nil)
    }
}

/// One step of a batch for the tree: entries to remove, then entries to insert, each in key order.
@usableFromInline
struct TreeChanges: Sendable {
    @usableFromInline var removeKeys = ContiguousArray<UInt64>()
    @usableFromInline var removedSlots = ContiguousArray<UInt32>()
    @usableFromInline var inserts = ContiguousArray<IndexEntry>()
    /// Each insert's position in its batch's values, for a batch with aggregate values (empty otherwise).
    @usableFromInline var insertValues = ContiguousArray<Int>()

    @inlinable
    init() {}

    @inlinable
    mutating func remove(key: UInt64, slot: UInt32) {
        removeKeys.append(key)
        removedSlots.append(slot)
    }

    @inlinable
    mutating func insert(_ entry: IndexEntry) {
        inserts.append(entry)
    }

    /// An insert whose values are at `position` of its batch's values.
    @inlinable
    mutating func insert(_ entry: IndexEntry, valuesAt position: Int) {
        inserts.append(entry)
        insertValues.append(position)
    }

    /// Orders the removals and the insertions by key.
    @usableFromInline
    mutating func sort() {
        RadixSort.sort(keys: &removeKeys, payloads: &removedSlots)
        guard !insertValues.isEmpty else {
            inserts.sort { $0.key < $1.key }
            return
        }
        var keys = ContiguousArray(inserts.lazy.map(\.key))
        var order = ContiguousArray(0..<UInt32(inserts.count))
        RadixSort.sort(keys: &keys, payloads: &order)
        let (unsorted, positions) = (inserts, insertValues)
        inserts = ContiguousArray(order.lazy.map { unsorted[Int($0)] })
        insertValues = ContiguousArray(order.lazy.map { positions[Int($0)] })
    }

    /// Removes, then inserts: a moved element's old entry goes before its new one arrives.
    @usableFromInline
    func apply(to tree: inout MortonTree) {
        applyRemovals(to: &tree)
        for entry in inserts { tree.insert(entry) }
    }

    /// Removes, then inserts each entry with its values (`values[insertValues[i]]` for `inserts[i]`): ``apply(to:)``
    /// for a batch with aggregate values, which touches each node's row once per entry, whatever the columns.
    @usableFromInline
    func apply(to tree: inout MortonTree, values: [ElementValues]) {
        applyRemovals(to: &tree)
        tree.aggregates?.makeUnique()
        for (entry, position) in zip(inserts, insertValues) {
            tree.aggregates?.prepare(values[position])
            tree.insert(entry)
        }
    }

    @usableFromInline
    func applyRemovals(to tree: inout MortonTree) {
        for (key, slot) in zip(removeKeys, removedSlots) {
            let removed = tree.remove(key: key) { $0.slot == slot }
            precondition(removed != nil, "the index lost track of an element: its slot table and tree disagree")
        }
    }
}
