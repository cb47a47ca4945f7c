/// A growable array stored in fixed-size pages, each its own copy-on-write buffer.
///
/// A copy shares every page. Changing an element of a copy duplicates the page table (one reference a page) and that
/// one page, where a single `ContiguousArray` would duplicate everything: this is what keeps a mutation of an index
/// cheap while a snapshot of it is alive. Reading costs one more load than an array (the page table is small and
/// stays in cache).
@usableFromInline
struct PagedArray<Element>: Sendable where Element: Sendable {
    /// Elements per page, a power of two.
    @usableFromInline static var pageShift: Int { 12 }
    @inlinable static var pageSize: Int { 1 << pageShift }
    @inlinable static var pageMask: Int { pageSize - 1 }

    @usableFromInline var pages: ContiguousArray<ContiguousArray<Element>>
    @usableFromInline private(set) var count: Int

    /// An empty array.
    @inlinable
    init() {
        pages = []
        count = 0
    }

    /// `count` copies of `value`.
    @inlinable
    init(repeating value: Element, count: Int) {
        let full = count >> Self.pageShift
        let rest = count & Self.pageMask
        // Each page its own buffer: pages made by copying one would all be copied again on their first change.
        pages = ContiguousArray((0..<full).lazy.map { _ in ContiguousArray(repeating: value, count: Self.pageSize) })
        if rest > 0 { pages.append(ContiguousArray(repeating: value, count: rest)) }
        self.count = count
    }

    /// `count` elements, the *i*-th being `element(i)`, its pages built on all cores.
    @inlinable
    init(count: Int, element: @Sendable (Int) -> Element) {
        let pageCount = (count + Self.pageSize - 1) >> Self.pageShift
        pages = Parallel.map(count: pageCount, minimumChunk: 4) { page in
            let start = page << Self.pageShift
            let end = min(start + Self.pageSize, count)
            return ContiguousArray((start..<end).lazy.map(element))
        }
        self.count = count
    }

    @inlinable var isEmpty: Bool { count == 0 }

    /// The element at `index`; an index outside `0..<count` traps, through the pages' own bounds checks.
    @inlinable
    subscript(index: Int) -> Element {
        @inline(__always) get {
            pages[index >> Self.pageShift][index & Self.pageMask]
        }
        @inline(__always) _modify {
            yield &pages[index >> Self.pageShift][index & Self.pageMask]
        }
    }

    /// Adds an element at the end.
    @inlinable
    mutating func append(_ element: Element) {
        if count & Self.pageMask == 0 {
            var page = ContiguousArray<Element>()
            page.reserveCapacity(Self.pageSize)
            pages.append(page)
        }
        pages[pages.count - 1].append(element)
        count += 1
    }

    /// Removes every element.
    @inlinable
    mutating func removeAll() {
        pages = []
        count = 0
    }
}
