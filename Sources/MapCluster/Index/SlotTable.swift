/// An element of the index's store, with its Morton key beside it: the slot table compares elements
/// and a removal then needs the key, so both arrive on one cache line.
@usableFromInline
struct StoredElement<Element: Hashable & Sendable>: Sendable {
    @usableFromInline var element: Element
    @usableFromInline var key: UInt64

    @inlinable
    init(element: Element, key: UInt64) {
        self.element = element
        self.key = key
    }
}

/// A hash set of slots into an element store: it maps an element to the slot that holds it.
///
/// Each bucket is one 32-bit word: the slot (28 bits) and a 4-bit tag of the element's hash, so a probe is one load
/// and compares elements through the store only when the tags agree. The buckets are paged (``PagedArray``), so a
/// snapshot shares them.
///
/// Open addressing with linear probing, kept at most 3/4 full; removal shifts the following run back (Knuth, *TAOCP*
/// vol. 3, 6.4, Algorithm R), so there are no tombstones and lookups stay short.
///
/// The table has as many buckets as its count needs, not the next power of two: a hash's home is its low 32 bits
/// scaled to the table (Lemire's multiply-shift). A bulk load of a million elements takes 6.7 MB, where a power of two
/// would take 8.4 and a `Dictionary<Element, UInt64>` 34; the table is alive while the load makes its leaves, its
/// high-water mark.
@usableFromInline
struct SlotTable: Sendable {
    /// The largest slot a bucket can hold; the word of all ones marks an empty bucket.
    @usableFromInline static var maximumSlot: UInt32 { (1 << 28) - 2 }
    @usableFromInline static var empty: UInt32 { .max }

    @usableFromInline private(set) var buckets: PagedArray<UInt32>
    @usableFromInline private(set) var count = 0

    /// A table that holds `minimumCapacity` elements 3/5 full.
    ///
    /// A bulk load leaves room for a quarter more before the table grows. Fuller costs removals, which read the store
    /// for each bucket of the run after the hole (made 7/10 full, `update-1M` in `mapcluster bench` took 16% longer).
    @usableFromInline
    init(minimumCapacity: Int = 0) {
        buckets = PagedArray(repeating: Self.empty, count: max(8, (minimumCapacity * 5 + 2) / 3))
    }

    /// The bucket where a probe for `hash` starts.
    @inlinable func home(of hash: Int) -> Int { Self.home(of: hash, among: buckets.count) }

    /// The bucket where a probe for `hash` starts in a table of `count` buckets.
    @inlinable static func home(of hash: Int, among count: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(UInt32(truncatingIfNeeded: hash)) &* UInt64(count)) >> 32)
    }

    /// The bucket a probe visits after `bucket`, wrapping around at the end.
    @inlinable func bucket(after bucket: Int) -> Int { bucket + 1 == buckets.count ? 0 : bucket + 1 }

    @inlinable static func tag(of hash: Int) -> UInt32 { UInt32(truncatingIfNeeded: UInt(bitPattern: hash) >> 60) }

    @inlinable static func word(slot: UInt32, tag: UInt32) -> UInt32 { slot << 4 | tag }

    /// The bucket that holds `element`'s slot, or the empty bucket where it would go, and the element's tag (for
    /// ``insert(_:tag:at:)``, so that the element is hashed once).
    @inlinable
    func find<Element: Hashable & Sendable>(
        _ element: Element, in store: PagedArray<StoredElement<Element>>
    ) -> (bucket: Int, slot: UInt32?, tag: UInt32) {
        let hash = element.hashValue
        var bucket = home(of: hash)
        let tag = Self.tag(of: hash)
        while true {
            let word = buckets[bucket]
            if word == Self.empty { return (bucket, nil, tag) }
            if word & 0xF == tag && store[Int(word >> 4)].element == element { return (bucket, word >> 4, tag) }
            bucket = self.bucket(after: bucket)
        }
    }

    /// Puts `slot`, with its element's `tag`, in an empty bucket found by ``find(_:in:)``.
    ///
    /// Call ``reserve(_:in:)`` first.
    @inlinable
    mutating func insert(_ slot: UInt32, tag: UInt32, at bucket: Int) {
        precondition(
            buckets[bucket] == Self.empty && count < buckets.count * 3 / 4, "insert needs a reserved, empty bucket")
        precondition(slot <= Self.maximumSlot, "an index holds at most \(Self.maximumSlot + 1) elements")
        buckets[bucket] = Self.word(slot: slot, tag: tag)
        count += 1
    }

    /// Replaces the slot in a bucket (its element moved to another slot).
    @inlinable
    mutating func replace(at bucket: Int, with slot: UInt32) {
        buckets[bucket] = Self.word(slot: slot, tag: buckets[bucket] & 0xF)
    }

    /// Makes room for `extra` more elements, rebuilding the table if it must grow (to twice its count at least, so that
    /// a run of inserts rebuilds it O(log *n*) times).
    @inlinable
    mutating func reserve<Element: Hashable & Sendable>(_ extra: Int, in store: PagedArray<StoredElement<Element>>) {
        guard count + extra > buckets.count * 3 / 4 else { return }
        var grown = SlotTable(minimumCapacity: max(count + extra, 2 * count))
        for bucket in 0..<buckets.count where buckets[bucket] != Self.empty {
            let slot = buckets[bucket] >> 4
            let (target, _, tag) = grown.find(store[Int(slot)].element, in: store)
            grown.insert(slot, tag: tag, at: target)
        }
        self = grown
    }

    /// Empties a bucket and shifts back the run after it, so every element stays reachable from its home.
    @inlinable
    mutating func remove<Element: Hashable & Sendable>(at bucket: Int, in store: PagedArray<StoredElement<Element>>) {
        var hole = bucket
        var next = self.bucket(after: hole)
        while buckets[next] != Self.empty {
            let home = self.home(of: store[Int(buckets[next] >> 4)].element.hashValue)
            // Move it back unless its home lies cyclically in (hole, next].
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !stays {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = self.bucket(after: next)
        }
        buckets[hole] = Self.empty
        count -= 1
    }

    /// The table of every slot of a store, and the slots whose element a later slot repeats (the
    /// earlier occurrences), in ascending order.
    ///
    /// Elements are partitioned in place by the top 8 bits of their home bucket (one level of American flag sort,
    /// McIlroy, Bostic and McIlroy 1993) and inserted one partition at a time, so that the probes stay in 1/256 of the
    /// table, which the cache holds, instead of jumping through all of it.
    @inlinable
    static func build<Element: Hashable & Sendable>(for store: PagedArray<StoredElement<Element>>) -> (
        SlotTable, superseded: [UInt32]
    ) {
        var table = SlotTable(minimumCapacity: store.count)
        // home | tag (4 bits, in a byte) | slot (32 bits): the home sits above bit 40, so it must fit in 24 bits.
        let homeBits = Int.bitWidth - (table.buckets.count - 1).leadingZeroBitCount
        let binShift = UInt64(40 + max(homeBits - 8, 0))
        guard homeBits <= 24 else {
            // Beyond 16 million buckets the home does not fit the word below: insert in slot order.
            var superseded: [UInt32] = []
            for slot in 0..<store.count {
                let hash = store[slot].element.hashValue
                table.place(
                    UInt32(slot), home: table.home(of: hash), tag: tag(of: hash), in: store, superseded: &superseded)
            }
            superseded.sort()
            return (table, superseded)
        }
        let bucketCount = table.buckets.count
        var words = Parallel.map(count: store.count) { slot in
            let hash = store[slot].element.hashValue
            return UInt64(home(of: hash, among: bucketCount)) << 40 | UInt64(tag(of: hash)) << 32 | UInt64(slot)
        }
        partition(&words, shift: binShift)
        var superseded: [UInt32] = []
        for word in words {
            table.place(
                UInt32(truncatingIfNeeded: word), home: Int(word >> 40),
                tag: UInt32(truncatingIfNeeded: word >> 32) & 0xF,
                in: store, superseded: &superseded)
        }
        superseded.sort()
        return (table, superseded)
    }

    /// Puts a slot of a bulk load in the table.
    ///
    /// Occurrences of one identity arrive in any order: the later slot (the later input) wins and the earlier one is
    /// superseded. Probes read the store only when the tags agree, so most placements never touch it.
    @inlinable
    mutating func place<Element: Hashable & Sendable>(
        _ slot: UInt32, home: Int, tag: UInt32, in store: PagedArray<StoredElement<Element>>,
        superseded: inout [UInt32]
    ) {
        precondition(slot <= Self.maximumSlot, "an index holds at most \(Self.maximumSlot + 1) elements")
        var bucket = home
        while true {
            let word = buckets[bucket]
            if word == Self.empty {
                buckets[bucket] = Self.word(slot: slot, tag: tag)
                count += 1
                return
            }
            let other = word >> 4
            if word & 0xF == tag && store[Int(other)].element == store[Int(slot)].element {
                superseded.append(min(other, slot))
                buckets[bucket] = Self.word(slot: max(other, slot), tag: tag)
                return
            }
            bucket = self.bucket(after: bucket)
        }
    }

    /// Partitions words in place by the 8 bits at `shift`, in ascending order of those bits.
    @usableFromInline
    static func partition(_ words: inout ContiguousArray<UInt64>, shift: UInt64) {
        var counts = [Int](repeating: 0, count: 256)
        for word in words { counts[Int((word >> shift) & 0xFF)] += 1 }
        var next = [Int](repeating: 0, count: 256)
        var end = [Int](repeating: 0, count: 256)
        var total = 0
        for bin in 0..<256 {
            next[bin] = total
            total += counts[bin]
            end[bin] = total
        }
        guard !words.isEmpty else { return }
        words.withMutableCursor { words in
            for bin in 0..<256 {
                while next[bin] < end[bin] {
                    var word = words[next[bin]]
                    var target = Int((word >> shift) & 0xFF)
                    while target != bin {
                        swap(&word, &words[next[target]])
                        next[target] += 1
                        target = Int((word >> shift) & 0xFF)
                    }
                    words[next[bin]] = word
                    next[bin] += 1
                }
            }
        }
    }
}
