/// A place in memory that a `with…` call lends for its length (a row of aggregates and the blocks in it, what the
/// entries store, a leaf's checkpoints), read through: with ``MutableCursor`` and ``Run``, the one way the engine reads
/// and writes memory by address outside the radix sort and the parallel loops, so that all such code is in this file.
///
/// A cursor moves by offsets (`row + block`) and reads at offsets from where it stands (`row[i]`), without a check in a
/// release build: the aggregates' hot loops would pay for one at every word. A debug build, the tests', carries the
/// bounds of the memory that was lent and checks every read and write against them.
///
/// A cursor is valid only inside the call that lent its memory, as the pointer it wraps; nothing keeps one past it.
struct Cursor<Element> {
    /// The same place, as a cursor that could write; this one never does.
    fileprivate var place: MutableCursor<Element>

    /// The element `offset` places on.
    @inline(__always) subscript(offset: Int) -> Element { place[offset] }

    /// The cursor `offset` places on.
    @inline(__always) static func + (cursor: Cursor, offset: Int) -> Cursor { Cursor(place: cursor.place + offset) }

    /// The double whose bits the word `offset` places on holds (``MutableCursor/double(_:)``).
    @inline(__always) func double(_ offset: Int) -> Double where Element == UInt64 { place.double(offset) }
}

/// A ``Cursor`` that also writes.
struct MutableCursor<Element> {
    private var address: UnsafeMutablePointer<Element>
    #if DEBUG
        /// Where `address` lies among the elements lent, and how many there are.
        ///
        /// Every read and write must fall among them. Kept as integers, which an unoptimized build (the tests')
        /// compares inline, where comparing pointers or ranges calls generic code at every access and doubled the
        /// tests' time.
        private var position = 0
        private let count: Int
    #endif

    fileprivate init(lending buffer: UnsafeMutableBufferPointer<Element>) {
        guard let start = buffer.baseAddress else { preconditionFailure("an array's storage has an address") }
        address = start
        #if DEBUG
            count = buffer.count
        #endif
    }

    /// The element `offset` places on.
    @inline(__always) subscript(offset: Int) -> Element {
        unsafeAddress { UnsafePointer(checked(offset)) }
        nonmutating unsafeMutableAddress { checked(offset) }
    }

    @inline(__always) private func checked(_ offset: Int) -> UnsafeMutablePointer<Element> {
        #if DEBUG
            precondition(position + offset >= 0 && position + offset < count, "a cursor reached outside its memory")
        #endif
        return address + offset
    }

    /// The cursor `offset` places on.
    @inline(__always) static func + (cursor: MutableCursor, offset: Int) -> MutableCursor {
        var moved = cursor
        moved.address += offset
        #if DEBUG
            moved.position += offset
        #endif
        return moved
    }

    /// The same place, to read.
    @inline(__always) var reading: Cursor<Element> { Cursor(place: self) }

    /// The double whose bits the word `offset` places on holds (what an entry stores for its aggregates, kept among a
    /// leaf's words): loaded as a double, without a move through an integer register.
    @inline(__always) func double(_ offset: Int) -> Double where Element == UInt64 {
        UnsafeRawPointer(checked(offset)).load(as: Double.self)
    }

    /// Sets the `count` elements from here to those from `source`, which lie elsewhere.
    @inline(__always) func update(from source: Cursor<Element>, count: Int) {
        for i in 0..<count { self[i] = source[i] }
    }

    /// Moves the `count` elements from `offset` on by `distance` places, either way, as one block copy (the two runs
    /// may overlap): what opens or closes a gap in a leaf's stored values.
    @inline(__always) func shift(from offset: Int, count: Int, by distance: Int) {
        guard count > 0 else { return }
        let target = checked(offset + distance)
        _ = checked(offset + distance + count - 1)
        _ = checked(offset + count - 1)
        target.update(from: checked(offset), count: count)
    }
}

/// The elements of a buffer that a `with…` call lends for its length (a leaf's entries, a walk's ranges): a collection
/// read without a check in a release build, and with one in a debug build, as a ``Cursor``.
struct Run<Element>: RandomAccessCollection {
    private let buffer: UnsafeBufferPointer<Element>

    fileprivate init(_ buffer: UnsafeBufferPointer<Element>) { self.buffer = buffer }

    var startIndex: Int { 0 }
    var endIndex: Int { buffer.count }

    /// The element at `position`: checked in a debug build by the buffer's own subscript.
    @inline(__always) subscript(position: Int) -> Element { buffer[position] }

    /// Lends the one element `element` as a run.
    static func withOne<Result>(_ element: Element, _ body: (Run<Element>) throws -> Result) rethrows -> Result {
        try withUnsafePointer(to: element) { try body(Run(UnsafeBufferPointer(start: $0, count: 1))) }
    }
}

/// The collections whose elements lie together in memory, an array's: they lend them as cursors and runs.
protocol ContiguousElements: MutableCollection, RandomAccessCollection {}

extension Array: ContiguousElements {}

extension ContiguousArray: ContiguousElements {}

extension ContiguousElements {
    /// Calls `body` with a cursor on the first element.
    @inline(__always) func withCursor<Result>(_ body: (Cursor<Element>) throws -> Result) rethrows -> Result {
        try lending { try body(Cursor(lending: $0)) }
    }

    /// Calls `body` with a cursor on the first element; `nil` when there is none.
    @inline(__always) func withCursorIfAny<Result>(_ body: (Cursor<Element>?) throws -> Result) rethrows -> Result {
        try lending { try body($0.isEmpty ? nil : Cursor(lending: $0)) }
    }

    /// Calls `body` with a cursor that writes on the first element.
    @inline(__always) mutating func withMutableCursor<Result>(
        _ body: (MutableCursor<Element>) throws -> Result
    ) rethrows -> Result {
        let result = try withContiguousMutableStorageIfAvailable { try body(MutableCursor(lending: $0)) }
        guard let result else { preconditionFailure("an array's elements lie together") }
        return result
    }

    /// Calls `body` with the elements as a run.
    @inline(__always) func withRun<Result>(_ body: (Run<Element>) throws -> Result) rethrows -> Result {
        try lending { try body(Run($0)) }
    }

    @inline(__always) private func lending<Result>(_ body: (UnsafeBufferPointer<Element>) throws -> Result) rethrows
        -> Result
    {
        guard let result = try withContiguousStorageIfAvailable(body) else {
            preconditionFailure("an array's elements lie together")
        }
        return result
    }
}

extension Cursor {
    fileprivate init(lending buffer: UnsafeBufferPointer<Element>) {
        place = MutableCursor(lending: UnsafeMutableBufferPointer(mutating: buffer))
    }
}

extension MutableCursor where Element: BitwiseCopyable {
    /// Calls `body` with a cursor on `capacity` elements of scratch memory (on the stack when they fit), which `body`
    /// writes before it reads them: plain values, which need no initializing or destroying.
    static func withScratch<Result>(capacity: Int, _ body: (MutableCursor<Element>) throws -> Result) rethrows -> Result
    {
        try withUnsafeTemporaryAllocation(of: Element.self, capacity: max(1, capacity)) {
            try body(MutableCursor(lending: $0))
        }
    }
}

/// A fixed number of plain values in memory of their own, lent through one cursor for as long as the object lives.
///
/// For what a class reads on every change (the values a tree's rows take in next, or gave up last): a cursor on an
/// array held in a `var` retains and releases the array each time it is lent (about ten times an aggregated insert),
/// where this one is a constant of the object.
final class OwnedWords<Element: BitwiseCopyable>: @unchecked Sendable {
    let count: Int
    let cursor: MutableCursor<Element>
    // Written only through `cursor`, by the owner of the object that holds this one, as that object's own state
    // (`NodeRows`): the exclusivity of a stored property of its owner.
    private let buffer: UnsafeMutableBufferPointer<Element>

    /// Memory of its own holding `values`, one at least.
    init(_ values: ContiguousArray<Element>) {
        precondition(!values.isEmpty, "owned words hold one value at least")
        count = values.count
        buffer = .allocate(capacity: count)
        _ = buffer.initialize(from: values)
        cursor = MutableCursor(lending: buffer)
    }

    deinit { buffer.deallocate() }

    /// Sets the values to `values` (as many as it holds).
    func set(_ values: ContiguousArray<Element>) {
        values.withCursor { cursor.update(from: $0, count: Swift.min(count, values.count)) }
    }

    /// Sets the values to those of `other`, which holds as many.
    func set(_ other: OwnedWords<Element>) {
        cursor.update(from: other.cursor.reading, count: Swift.min(count, other.count))
    }
}
