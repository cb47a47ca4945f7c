/// What each entry of the tree stores for a user reduction (``ReductionColumn``): `width` values an entry, in
/// leaf order, a window of ``window`` entries per leaf.
///
/// The values lie beside the leaf's entries, so that a scan of a leaf reads consecutive memory: looking them up by slot
/// made a view's aggregates a cache miss per entry. The tree tells its columns of every entry that comes or goes, and of
/// every split and merge of leaves, and each moves its values as the entries move.
struct EntryValues<Element: Sendable>: Sendable {
    /// Values per entry.
    let width: Int
    /// What the room no entry holds is filled with.
    let filler: Element
    /// Each entry's values, from ``start(_:of:)`` on.
    var values: ContiguousArray<Element>
    /// What the next inserted entry stores: `width` values, and one at least, so that their base address is never nil.
    var prepared: ContiguousArray<Element>
    /// What the last removed entry stored, as `prepared`.
    var lastRemoved: ContiguousArray<Element>

    /// The room per leaf: a leaf holds one entry over its capacity before it splits.
    static var window: Int { MortonTree.leafCapacity + 1 }

    /// No entry's values yet; the next entry stores `defaults` (`width` values).
    init(width: Int, filler: Element, defaults: ContiguousArray<Element>) {
        self.width = width
        self.filler = filler
        values = [filler]
        prepared = defaults
        lastRemoved = defaults
    }

    /// Where the values of the entry at `position` of a leaf start.
    @inline(__always) func start(_ position: Int, of leaf: Int32) -> Int {
        (Int(leaf) * Self.window + position) * width
    }

    /// Grows the values to hold a leaf's window.
    @inline(__always) mutating func grow(toHold leaf: Int32) {
        let needed = (Int(leaf) + 1) * Self.window * width
        if values.count < needed { values.append(contentsOf: repeatElement(filler, count: needed - values.count)) }
    }

    /// Room for the windows of `leaves` leaves, all filler: what a bulk load lays its values out in.
    mutating func reset(leaves: Int) {
        values = ContiguousArray(repeating: filler, count: max(1, leaves * Self.window * width))
    }

    /// Makes the next inserted entry store `source`'s first `width` values, copied in place.
    mutating func prepare(_ source: ContiguousArray<Element>) {
        for i in 0..<width { prepared[i] = source[i] }
    }

    /// Makes the next inserted entry store what the last removed one stored (an element moved).
    mutating func prepareLastRemoved() {
        for i in 0..<width { prepared[i] = lastRemoved[i] }
    }

    /// An entry was inserted at `position` of a leaf, which now holds `count`: it stores what was prepared.
    mutating func inserted(at position: Int, of leaf: Int32, count: Int) {
        guard width > 0 else { return }
        grow(toHold: leaf)
        let base = start(0, of: leaf)
        var i = base + count * width - 1
        while i >= base + (position + 1) * width {
            values[i] = values[i - width]
            i -= 1
        }
        for j in 0..<width { values[base + position * width + j] = prepared[j] }
    }

    /// The entry at `position` of a leaf, which held `count`, was removed: what it stored is kept as the last removed.
    mutating func removed(at position: Int, of leaf: Int32, count: Int) {
        guard width > 0 else { return }
        let base = start(0, of: leaf)
        for j in 0..<width { lastRemoved[j] = values[base + position * width + j] }
        for i in (base + position * width)..<(base + (count - 1) * width) { values[i] = values[i + width] }
    }

    /// A leaf of `count` entries moved those from `half` on to a new sibling.
    mutating func split(_ leaf: Int32, at half: Int, count: Int, into sibling: Int32) {
        guard width > 0 else { return }
        grow(toHold: max(leaf, sibling))
        let (from, to) = (start(half, of: leaf), start(0, of: sibling))
        for i in 0..<((count - half) * width) { values[to + i] = values[from + i] }
    }

    /// A leaf of `count` entries took the `dropCount` entries of another.
    mutating func merged(_ drop: Int32, count dropCount: Int, into keep: Int32, count: Int) {
        guard width > 0 else { return }
        let (from, to) = (start(0, of: drop), start(count, of: keep))
        for i in 0..<(dropCount * width) { values[to + i] = values[from + i] }
    }
}
