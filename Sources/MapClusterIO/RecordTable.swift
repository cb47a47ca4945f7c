/// The records of a ``PointSet``, in pages: a copy shares them, and a change to a copy duplicates only the page it
/// touches.
///
/// A live server publishes a new set of points after every batch of edits while readers still hold the last one; with
/// one flat array, each batch would copy every record. Pages of 64 records make that copy the table of pages (one
/// reference per page) and the pages the batch changes: an edit of 1,000 points scattered over 1,000,000 copies about
/// 64,000 records and 15,625 references, where pages of 4,096 would copy nearly all of them.
public struct RecordTable: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral, Sendable {
    private static let pageShift = 6
    private static let pageSize = 1 << pageShift
    private static let pageMask = pageSize - 1

    /// Full pages, and the last one partly filled.
    ///
    /// Each page is an array of its own, so Swift's copy-on-write copies
    /// one page when a shared one changes.
    private var pages: [[PointRecord]] = []
    /// The number of records.
    public private(set) var count = 0

    /// An empty table.
    public init() {}

    /// The records of a sequence, in order.
    public init(_ records: some Sequence<PointRecord>) {
        for record in records { append(record) }
    }

    /// The records of an array literal, in order.
    public init(arrayLiteral records: PointRecord...) {
        self.init(records)
    }

    /// The first position: 0.
    public var startIndex: Int { 0 }
    /// One past the last record.
    public var endIndex: Int { count }

    /// The record at a position.
    public subscript(position: Int) -> PointRecord {
        get {
            precondition(position >= 0 && position < count, "record position out of range")
            return pages[position >> Self.pageShift][position & Self.pageMask]
        }
        set {
            precondition(position >= 0 && position < count, "record position out of range")
            pages[position >> Self.pageShift][position & Self.pageMask] = newValue
        }
    }

    /// Adds a record at the end.
    public mutating func append(_ record: PointRecord) {
        if count & Self.pageMask == 0 {
            var page: [PointRecord] = []
            page.reserveCapacity(Self.pageSize)
            pages.append(page)
        }
        pages[pages.count - 1].append(record)
        count += 1
    }

    /// Adds records at the end.
    public mutating func append(contentsOf records: some Sequence<PointRecord>) {
        for record in records { append(record) }
    }
}
