import Foundation
import MapCluster
@_spi(MapClusterServer) public import MapClusterIO

/// Where a live server keeps its points, so that an edit it has acknowledged outlives the process: SQLite or
/// PostgreSQL (in `MapClusterStore`), or memory, for tests and demonstrations.
///
/// A store commits batches in order, each with a sequence number one above the last, in one transaction per call.
/// A store that several servers share (PostgreSQL) also hands each server the batches the others committed, in
/// order, so that every server's index follows the same sequence.
public protocol PointStore: Sendable {
    /// A short description for logs, such as `SQLite points.sqlite` (no password).
    var description: String { get }

    /// Every point, and the sequence number of the last batch they include (0 for none).
    func load() async throws -> StoreContents

    /// Commits `batches`, in order, in one transaction: all or none.
    ///
    /// - Parameters:
    ///   - batches: The batches, in order.
    ///   - sequence: The last sequence number the caller has applied.
    /// - Returns: The batches others committed after `sequence` (which the caller applies first), and the sequence
    ///   numbers given to `batches`.
    /// - Throws: If the transaction did not commit; then nothing of `batches` is stored.
    func commit(_ batches: [StoreBatch], after sequence: Int64) async throws -> StoreCommit

    /// The batches others committed after `sequence`, in order; `nil` when they are no longer all known (the store
    /// forgets old ones), and the caller must load everything again.
    func batches(after sequence: Int64) async throws -> [StoreBatch]?

    /// Tells of commits by others as they happen (a store only this process writes never does).
    func commitsByOthers() -> AsyncStream<Void>

    /// Closes the store's connections.
    func close() async
}

/// What a store holds.
public struct StoreContents: Sendable {
    /// The points.
    public var points: [StoredPoint]
    /// The sequence number of the last batch committed.
    public var sequence: Int64

    /// Contents.
    public init(points: [StoredPoint], sequence: Int64) {
        self.points = points
        self.sequence = sequence
    }
}

/// What committing batches gave.
public struct StoreCommit: Sendable {
    /// Batches others committed before these, to be applied first.
    public var earlier: [StoreBatch]
    /// The sequence number of each batch committed, in order.
    public var sequences: [Int64]

    /// A result.
    public init(earlier: [StoreBatch] = [], sequences: [Int64]) {
        self.earlier = earlier
        self.sequences = sequences
    }
}

/// A point's identity: its id, and whether it is a number (the number 12 and the text "12" are two points).
public struct PointKey: Hashable, Sendable, CustomStringConvertible {
    /// The id as text; a number's as JSON writes it.
    public var id: String
    /// Whether the id is a number.
    public var isNumber: Bool

    /// A key.
    public init(id: String, isNumber: Bool) {
        self.id = id
        self.isNumber = isNumber
    }

    /// The key of a record.
    public init(_ record: PointRecord) {
        self.init(id: record.id, isNumber: record.idKind == .number)
    }

    /// The id as JSON writes it: `12`, `"north-7"`.
    public var description: String { isNumber ? id : PropertyValue.string(id).jsonText }
}

/// One point as a store keeps it.
public struct StoredPoint: Sendable, Hashable {
    /// Its identity.
    public var key: PointKey
    /// Where it is.
    public var longitude: Double
    /// Where it is.
    public var latitude: Double
    /// Its properties: a JSON object's text (`{}` for none).
    public var properties: String

    /// A stored point.
    public init(key: PointKey, longitude: Double, latitude: Double, properties: String) {
        self.key = key
        self.longitude = longitude
        self.latitude = latitude
        self.properties = properties
    }
}

/// One batch of changes as a store commits it: points put (added, or moved and given new properties), and points
/// deleted.
public struct StoreBatch: Sendable, Hashable {
    /// Its place in the store's order (0 until committed).
    public var sequence: Int64
    /// The points put, in order.
    public var puts: [StoredPoint]
    /// The points deleted.
    public var deletes: [PointKey]

    /// A batch.
    public init(sequence: Int64 = 0, puts: [StoredPoint], deletes: [PointKey]) {
        self.sequence = sequence
        self.puts = puts
        self.deletes = deletes
    }
}

/// A store in memory: what a writable server without a durable store uses (`--store memory`), and the tests of the
/// live index. Nothing survives the process.
public actor MemoryPointStore: PointStore {
    private var points: [PointKey: StoredPoint] = [:]
    private var sequence: Int64 = 0

    /// An empty store.
    public init() {}

    /// `memory`.
    public nonisolated var description: String { "memory (nothing is kept when the server stops)" }

    /// Every point.
    public func load() -> StoreContents {
        StoreContents(points: Array(points.values), sequence: sequence)
    }

    /// Applies the batches; nothing can fail.
    public func commit(_ batches: [StoreBatch], after sequence: Int64) -> StoreCommit {
        var sequences: [Int64] = []
        for batch in batches {
            for key in batch.deletes { points[key] = nil }
            for point in batch.puts { points[point.key] = point }
            self.sequence += 1
            sequences.append(self.sequence)
        }
        return StoreCommit(sequences: sequences)
    }

    /// None: only this process writes.
    public func batches(after sequence: Int64) -> [StoreBatch]? { [] }

    /// Never tells: only this process writes.
    public nonisolated func commitsByOthers() -> AsyncStream<Void> { AsyncStream { $0.finish() } }

    /// Nothing to close.
    public func close() {}
}
