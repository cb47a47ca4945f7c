import Foundation
import GRDB
public import MapClusterLive

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Points kept in a SQLite file, through GRDB: the embedded store of a writable server on one machine.
///
/// The file is in WAL mode with `synchronous = FULL`: a commit returns once its log is on disk, so an acknowledged
/// edit survives the process being killed and the machine losing power. One server at a time writes a file: a second
/// is refused (an exclusive `flock` held while the store is open), since it would not follow the first's edits.
///
/// The points are in the table `mapcluster_points` (`id`, `id_is_number`, `longitude`, `latitude`, `properties` as
/// JSON text), which other programs may read.
public final class SQLitePointStore: PointStore, @unchecked Sendable {
    private let pool: DatabasePool
    private let path: String
    /// The descriptor holding the file's lock; closed by `close()`.
    private let lockDescriptor: Int32

    /// Opens (creating it if need be) a store in the file at `path`.
    ///
    /// - Throws: ``StoreError`` if the file can't be opened as a SQLite database, or another server has it open.
    public init(path: String) throws(StoreError) {
        self.path = path
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        configuration.label = "mapcluster store"
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw StoreError("\(path): can't open as a SQLite database (\(Self.message(of: error)))")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            if descriptor >= 0 { closeDescriptor(descriptor) }
            try? pool.close()
            throw StoreError("\(path): another mapcluster server has this store open")
        }
        lockDescriptor = descriptor
        do {
            try pool.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS mapcluster_points (
                            id TEXT NOT NULL, id_is_number INTEGER NOT NULL, longitude REAL NOT NULL,
                            latitude REAL NOT NULL, properties TEXT NOT NULL, PRIMARY KEY (id, id_is_number)
                        ) WITHOUT ROWID;
                        CREATE TABLE IF NOT EXISTS mapcluster_state (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
                        INSERT INTO mapcluster_state (name, value) VALUES ('sequence', 0) ON CONFLICT DO NOTHING;
                        """)
            }
        } catch {
            close()
            throw StoreError("\(path): can't set up the store's tables (\(Self.message(of: error)))")
        }
    }

    /// `SQLite PATH`.
    public var description: String { "SQLite \(path)" }

    /// Every point.
    public func load() async throws -> StoreContents {
        try await pool.read(Self.contents(of:))
    }

    /// Every point of a store's database, and its last sequence number.
    static func contents(of db: Database) throws -> StoreContents {
        let sequence = try Int64.fetchOne(db, sql: "SELECT value FROM mapcluster_state WHERE name = 'sequence'")
        var points: [StoredPoint] = []
        points.reserveCapacity(try Int.fetchOne(db, sql: "SELECT count(*) FROM mapcluster_points") ?? 0)
        let rows = try Row.fetchCursor(
            db, sql: "SELECT id, id_is_number, longitude, latitude, properties FROM mapcluster_points")
        while let row = try rows.next() {
            points.append(
                StoredPoint(
                    key: PointKey(id: row[0], isNumber: row[1]), longitude: row[2], latitude: row[3],
                    properties: row[4]))
        }
        return StoreContents(points: points, sequence: sequence ?? 0)
    }

    /// Commits the batches in one transaction.
    public func commit(_ batches: [StoreBatch], after sequence: Int64) async throws -> StoreCommit {
        try await pool.write { db in
            var last = try Int64.fetchOne(db, sql: "SELECT value FROM mapcluster_state WHERE name = 'sequence'") ?? 0
            let put = try db.cachedStatement(
                sql: """
                    INSERT INTO mapcluster_points (id, id_is_number, longitude, latitude, properties)
                    VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (id, id_is_number) DO UPDATE
                    SET longitude = excluded.longitude, latitude = excluded.latitude, properties = excluded.properties
                    """)
            let delete = try db.cachedStatement(sql: "DELETE FROM mapcluster_points WHERE id = ? AND id_is_number = ?")
            var sequences: [Int64] = []
            for batch in batches {
                for key in batch.deletes { try delete.execute(arguments: [key.id, key.isNumber]) }
                for point in batch.puts {
                    try put.execute(
                        arguments: [
                            point.key.id, point.key.isNumber, point.longitude, point.latitude, point.properties,
                        ])
                }
                last += 1
                sequences.append(last)
            }
            try db.execute(sql: "UPDATE mapcluster_state SET value = ? WHERE name = 'sequence'", arguments: [last])
            return StoreCommit(sequences: sequences)
        }
    }

    /// None: only this process writes the file.
    public func batches(after sequence: Int64) async throws -> [StoreBatch]? { [] }

    /// Never tells: only this process writes the file.
    public func commitsByOthers() -> AsyncStream<Void> { AsyncStream { $0.finish() } }

    /// Closes the file and lets another server open it.
    public func close() {
        try? pool.close()
        flock(lockDescriptor, LOCK_UN)
        closeDescriptor(lockDescriptor)
    }

    /// What GRDB says, without its SQL.
    static func message(of error: any Error) -> String {
        (error as? DatabaseError)?.message ?? "\(error)"
    }
}

/// A store could not be opened or set up: what and why.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Closes a file descriptor (the store's own `close()` hides the C function's name).
private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
        _ = Glibc.close(descriptor)
    #elseif canImport(Darwin)
        _ = Darwin.close(descriptor)
    #endif
}

extension SQLitePointStore {
    /// The points of a store's file, read as another program would, while a server may hold it (for tests and tools).
    public static func readOnlyCopy(of path: String) throws -> some PointStore {
        try SQLiteSnapshot(path: path)
    }
}

/// A store's file opened read-only, without the server's lock: what tools read it with.
struct SQLiteSnapshot: PointStore, @unchecked Sendable {
    let queue: DatabaseQueue
    let path: String

    init(path: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        queue = try DatabaseQueue(path: path, configuration: configuration)
        self.path = path
    }

    var description: String { "SQLite \(path) (read-only)" }

    func load() async throws -> StoreContents {
        try await queue.read(SQLitePointStore.contents(of:))
    }

    func commit(_ batches: [StoreBatch], after sequence: Int64) async throws -> StoreCommit {
        throw StoreError("\(path) is open read-only")
    }

    func batches(after sequence: Int64) async throws -> [StoreBatch]? { [] }

    func commitsByOthers() -> AsyncStream<Void> { AsyncStream { $0.finish() } }

    func close() {}
}
