import Logging
import MapClusterLive

#if PostgreSQL
    import MapClusterStore
#endif

/// The PostgreSQL point store, which a build has only with the package's `PostgreSQL` trait: postgres-nio's TLS
/// compiles two copies of BoringSSL, which the default server, on SQLite or in memory, never needs.
enum PostgreSQLStore {
    /// Whether this build has the store.
    static var isBuilt: Bool {
        #if PostgreSQL
            true
        #else
            false
        #endif
    }

    /// Whether a `--store` location names a PostgreSQL database.
    static func isLocation(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// What a build without the store says when `what` asks for it: how to build one with it.
    static func unavailable(_ what: String) -> String {
        """
        \(what) needs PostgreSQL, and this mapcluster was built without it: build with the package's PostgreSQL \
        trait, `swift build --traits PostgreSQL`, or run `swift run --traits PostgreSQL mapcluster …`
        """
    }

    /// Connects to the database of a `postgres://` URL and sets up its tables if they are missing; with
    /// `emptied`, removes every point first (the live benchmark's fresh start).
    static func open(url: String, logger: Logger, emptied: Bool = false) async throws -> any PointStore {
        #if PostgreSQL
            let store = try await PostgresPointStore(url: url, logger: logger)
            if emptied { try await store.removeEverything() }
            return store
        #else
            // Not the URL: it may hold a password.
            throw InputError(unavailable("--store postgres://…"))
        #endif
    }
}
