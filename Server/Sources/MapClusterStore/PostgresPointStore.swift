// Built with the package's PostgreSQL trait only: postgres-nio (and its two BoringSSLs) are needed by nothing else.
#if PostgreSQL
    import Foundation
    public import Logging
    public import MapClusterLive
    import PostgresNIO

    /// Points kept in PostgreSQL, through postgres-nio: the store that several servers share.
    ///
    /// Every commit takes the row of `mapcluster_state` that holds the last sequence number, so commits of all servers
    /// are serialized and numbered in commit order; it records the keys each transaction touched in `mapcluster_changes` and
    /// sends `NOTIFY mapcluster_changes`. A server that hears it (or polls) reads the points of the keys changed after its
    /// last sequence number, all in one snapshot, and so follows the others' edits in order. A commit first hands the
    /// committing server the batches it has not yet applied, so that it applies them before its own.
    ///
    /// The tables: `mapcluster_points` (`id`, `id_is_number`, `longitude`, `latitude`, `properties` as `jsonb`),
    /// `mapcluster_state`, and `mapcluster_changes` (the keys of the last 100,000 sequence numbers).
    public final class PostgresPointStore: PointStore, @unchecked Sendable {
        fileprivate let client: PostgresClient
        private let running: Task<Void, Never>
        private let connection: PostgresConnection.Configuration
        fileprivate let logger: Logger
        /// Where, without the password.
        public let description: String

        /// How many batches' keys are kept for servers that follow.
        static let keptBatches: Int64 = 100_000
        /// The notification channel.
        static let channel = "mapcluster_changes"

        /// Connects to the database of a `postgres://user:password@host:port/database?sslmode=…` URL and sets up the
        /// tables if they are missing.
        ///
        /// - Throws: ``StoreError`` for a URL that isn't one, or a database that can't be reached or set up.
        public init(url text: String, logger: Logger = Logger(label: "mapcluster.store")) async throws(StoreError) {
            guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""),
                let host = url.host, !host.isEmpty
            else {
                throw StoreError("'\(text)' is not a PostgreSQL URL (postgres://user:password@host:port/database)")
            }
            let port = url.port ?? 5432
            let user = url.user ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
            let database = url.path.count > 1 ? String(url.path.dropFirst()) : user
            let mode = url.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
            var configuration = PostgresClient.Configuration(
                host: host, port: port, username: user, password: url.password, database: database, tls: .disable)
            var connection = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: url.password, database: database, tls: .disable)
            do {
                switch mode {
                case "disable":
                    break
                case "require", "verify-ca", "verify-full":
                    configuration.tls = .require(.makeClientConfiguration())
                    connection.tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                default:
                    configuration.tls = .prefer(.makeClientConfiguration())
                    connection.tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
            } catch {
                throw StoreError("can't set up TLS for PostgreSQL: \(error)")
            }
            configuration.options.maximumConnections = 8
            self.connection = connection
            self.logger = logger
            description = "PostgreSQL \(user)@\(host):\(port)/\(database)"
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            self.client = client
            // Detached, so that it doesn't inherit the task-locals of whoever opens the store: inside a server's service
            // group, those carry its graceful shutdown, which would stop the client at SIGTERM, before the writer has
            // committed the edits under way or finished a catch-up (a lease then waited forever). The store's owner
            // stops it, with ``close()``.
            running = Task.detached { await client.run() }
            do {
                try await client.withTransaction(logger: logger) { db in
                    // Two servers starting at once would race to create the tables.
                    try await db.query("SELECT pg_advisory_xact_lock(7261001)", logger: logger)
                    try await db.query(
                        """
                        CREATE TABLE IF NOT EXISTS mapcluster_points (
                            id text NOT NULL, id_is_number boolean NOT NULL, longitude double precision NOT NULL,
                            latitude double precision NOT NULL, properties jsonb NOT NULL DEFAULT '{}',
                            PRIMARY KEY (id, id_is_number))
                        """, logger: logger)
                    try await db.query(
                        "CREATE TABLE IF NOT EXISTS mapcluster_state (name text PRIMARY KEY, value bigint NOT NULL)",
                        logger: logger)
                    try await db.query(
                        "INSERT INTO mapcluster_state (name, value) VALUES ('sequence', 0) ON CONFLICT DO NOTHING",
                        logger: logger)
                    try await db.query(
                        """
                        CREATE TABLE IF NOT EXISTS mapcluster_changes (
                            sequence bigint PRIMARY KEY, first_sequence bigint, ids text[] NOT NULL,
                            id_is_number boolean[] NOT NULL)
                        """, logger: logger)
                    try await db.query(
                        "ALTER TABLE mapcluster_changes ADD COLUMN IF NOT EXISTS first_sequence bigint", logger: logger)
                }
            } catch {
                running.cancel()
                throw StoreError("\(description): can't set up the store's tables (\(Self.message(of: error)))")
            }
        }

        /// Every point, and the last sequence number, from one snapshot.
        public func load() async throws -> StoreContents {
            try await client.withTransaction(logger: logger) { db in
                try await db.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
                let sequence = try await Self.sequence(db, logger: logger)
                let rows = try await db.query(
                    "SELECT id, id_is_number, longitude, latitude, properties::text FROM mapcluster_points",
                    logger: logger)
                var points: [StoredPoint] = []
                for try await (id, isNumber, longitude, latitude, properties) in rows.decode(
                    (String, Bool, Double, Double, String).self)
                {
                    points.append(
                        StoredPoint(
                            key: PointKey(id: id, isNumber: isNumber), longitude: longitude, latitude: latitude,
                            properties: properties))
                }
                return StoreContents(points: points, sequence: sequence)
            }
        }

        /// Commits the batches in one transaction, after handing over those of others the caller has not applied.
        public func commit(_ batches: [StoreBatch], after sequence: Int64) async throws -> StoreCommit {
            guard !batches.isEmpty else { return StoreCommit(sequences: []) }
            let count = Int64(batches.count)
            return try await client.withTransaction(logger: logger) { db in
                // The lock on this row orders every server's commits.
                let rows = try await db.query(
                    "UPDATE mapcluster_state SET value = value + \(count) WHERE name = 'sequence' RETURNING value",
                    logger: logger)
                var last: Int64 = 0
                for try await value in rows.decode(Int64.self) { last = value }
                let first = last - count + 1
                var earlier: [StoreBatch] = []
                if first - 1 > sequence {
                    guard let missed = try await Self.changes(db, after: sequence, through: first - 1, logger: logger)
                    else { throw StoreError("\(self.description): this server fell too far behind; restart it") }
                    earlier = [missed]
                }
                // The transaction's effect is each key's last change: one statement deletes, one puts, whatever the
                // number of batches.
                var final: [PointKey: StoredPoint?] = [:]
                var touched: [PointKey] = []
                for batch in batches {
                    for key in batch.deletes {
                        if final.updateValue(nil, forKey: key) == nil { touched.append(key) }
                    }
                    for point in batch.puts {
                        if final.updateValue(point, forKey: point.key) == nil { touched.append(point.key) }
                    }
                }
                let deleted = touched.filter { final[$0] == .some(nil) }
                let put = touched.compactMap { final[$0] ?? nil }
                if !deleted.isEmpty {
                    let ids = deleted.map(\.id)
                    let flags = deleted.map(\.isNumber)
                    try await db.query(
                        """
                        DELETE FROM mapcluster_points p USING unnest(\(ids)::text[], \(flags)::boolean[]) AS k(id, n)
                        WHERE p.id = k.id AND p.id_is_number = k.n
                        """, logger: logger)
                }
                if !put.isEmpty {
                    let ids = put.map(\.key.id)
                    let flags = put.map(\.key.isNumber)
                    let longitudes = put.map(\.longitude)
                    let latitudes = put.map(\.latitude)
                    let properties = put.map(\.properties)
                    try await db.query(
                        """
                        INSERT INTO mapcluster_points (id, id_is_number, longitude, latitude, properties)
                        SELECT id, n, lon, lat, p::jsonb FROM unnest(\(ids)::text[], \(flags)::boolean[],
                            \(longitudes)::float8[], \(latitudes)::float8[], \(properties)::text[]) AS t(id, n, lon, lat, p)
                        ON CONFLICT (id, id_is_number) DO UPDATE
                        SET longitude = excluded.longitude, latitude = excluded.latitude, properties = excluded.properties
                        """, logger: logger)
                }
                // One row for the group: the keys it touched, and the sequence numbers it took.
                let ids = touched.map(\.id)
                let flags = touched.map(\.isNumber)
                try await db.query(
                    """
                    INSERT INTO mapcluster_changes (sequence, first_sequence, ids, id_is_number)
                    VALUES (\(last), \(first), \(ids), \(flags))
                    """, logger: logger)
                let sequences = Array(first...last)
                if last / 1_000 != (first - 1) / 1_000 {
                    try await db.query(
                        "DELETE FROM mapcluster_changes WHERE sequence <= \(last - Self.keptBatches)", logger: logger)
                }
                try await db.query("SELECT pg_notify('\(unescaped: Self.channel)', \(String(last)))", logger: logger)
                return StoreCommit(earlier: earlier, sequences: sequences)
            }
        }

        /// The changes after `sequence`, as one batch: the points of the keys they touched as they are now.
        public func batches(after sequence: Int64) async throws -> [StoreBatch]? {
            try await client.withTransaction(logger: logger) { db in
                try await db.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
                let last = try await Self.sequence(db, logger: logger)
                guard last > sequence else { return [] }
                guard let batch = try await Self.changes(db, after: sequence, through: last, logger: logger) else {
                    return nil
                }
                return [batch]
            }
        }

        /// The notices of commits, from a connection of their own that listens (reconnecting after a second when it
        /// drops).
        public func commitsByOthers() -> AsyncStream<Void> {
            let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            let connection = self.connection
            let logger = self.logger
            let listening = Task {
                var id = 1
                while !Task.isCancelled {
                    do {
                        let db = try await PostgresConnection.connect(
                            configuration: connection, id: id, logger: logger)
                        id += 1
                        try await db.listen(on: Self.channel) { notices in
                            for try await _ in notices { continuation.yield() }
                        }
                        try? await db.close()
                    } catch {
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
            }
            continuation.onTermination = { _ in listening.cancel() }
            return stream
        }

        /// Closes the connections.
        public func close() async {
            running.cancel()
        }

        // MARK: - Queries

        private static func sequence(_ db: PostgresConnection, logger: Logger) async throws -> Int64 {
            let rows = try await db.query("SELECT value FROM mapcluster_state WHERE name = 'sequence'", logger: logger)
            var sequence: Int64 = 0
            for try await value in rows.decode(Int64.self) { sequence = value }
            return sequence
        }

        /// The batches after `sequence` through `last` as one: the points of the keys they touched as they are in this
        /// transaction's snapshot; `nil` when some are no longer kept.
        private static func changes(
            _ db: PostgresConnection, after sequence: Int64, through last: Int64, logger: Logger
        )
            async throws -> StoreBatch?
        {
            // Each row holds a group's sequence numbers, first_sequence through sequence: together the rows after
            // `sequence` must cover every number up to `last`.
            let rows = try await db.query(
                """
                SELECT coalesce(sum(sequence - coalesce(first_sequence, sequence) + 1), 0)::bigint,
                    min(coalesce(first_sequence, sequence))
                FROM mapcluster_changes WHERE sequence > \(sequence) AND sequence <= \(last)
                """, logger: logger)
            var complete = false
            for try await (count, first) in rows.decode((Int64, Int64?).self) {
                complete = count == last - sequence && first == sequence + 1
            }
            guard complete else { return nil }
            let points = try await db.query(
                """
                WITH keys AS (
                    SELECT DISTINCT k.id, k.n FROM mapcluster_changes c, unnest(c.ids, c.id_is_number) AS k(id, n)
                    WHERE c.sequence > \(sequence) AND c.sequence <= \(last))
                SELECT keys.id, keys.n, p.longitude, p.latitude, p.properties::text
                FROM keys LEFT JOIN mapcluster_points p ON p.id = keys.id AND p.id_is_number = keys.n
                """, logger: logger)
            var batch = StoreBatch(sequence: last, puts: [], deletes: [])
            for try await (id, isNumber, longitude, latitude, properties) in points.decode(
                (String, Bool, Double?, Double?, String?).self)
            {
                let key = PointKey(id: id, isNumber: isNumber)
                if let longitude, let latitude, let properties {
                    batch.puts.append(
                        StoredPoint(key: key, longitude: longitude, latitude: latitude, properties: properties))
                } else {
                    batch.deletes.append(key)
                }
            }
            return batch
        }

        /// What PostgreSQL says, without the driver's wrapping.
        static func message(of error: any Error) -> String {
            if let error = error as? PSQLError {
                return error.serverInfo?[.message] ?? "\(error.code)"
            }
            return "\(error)"
        }
    }

    extension PostgresPointStore {
        /// Deletes every point, every recorded change, and starts the sequence again (for benchmarks and tests).
        public func removeEverything() async throws {
            try await client.withTransaction(logger: logger) { db in
                try await db.query("TRUNCATE mapcluster_points, mapcluster_changes", logger: logger)
                try await db.query("UPDATE mapcluster_state SET value = 0", logger: logger)
            }
        }
    }
#endif
