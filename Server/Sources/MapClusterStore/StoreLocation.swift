package import Logging
package import MapClusterLive

/// A point store named by a location, as `mapcluster serve --store` takes it: `memory`, a `postgres://` URL, or the
/// path of a SQLite file.
///
/// The PostgreSQL store is in a build only with the package's `PostgreSQL` trait: postgres-nio's TLS compiles two
/// copies of BoringSSL, which a server on SQLite or in memory never needs.
package enum StoreLocation {
    /// Whether this build has the PostgreSQL store.
    package static var hasPostgreSQL: Bool {
        #if PostgreSQL
            true
        #else
            false
        #endif
    }

    /// Whether a location names a PostgreSQL database.
    package static func isPostgreSQL(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// What a build without the PostgreSQL store says when `what` asks for it: how to build one with it.
    package static func postgreSQLUnavailable(_ what: String) -> String {
        """
        \(what) needs PostgreSQL, and this mapcluster was built without it: build with the package's PostgreSQL \
        trait, `swift build --traits PostgreSQL`, or run `swift run --traits PostgreSQL mapcluster …`
        """
    }

    /// The store a location names, opened (its tables set up if they are missing); with `emptied`, a PostgreSQL
    /// database has every point removed first (the live benchmark's fresh start).
    ///
    /// - Throws: The store's error; for a PostgreSQL location in a build without it, ``Unavailable`` (whose text
    ///   never holds the URL, which may hold a password).
    package static func open(_ location: String, logger: Logger, emptied: Bool = false) async throws -> any PointStore {
        if location == "memory" { return MemoryPointStore() }
        guard isPostgreSQL(location) else { return try SQLitePointStore(path: location) }
        #if PostgreSQL
            let store = try await PostgresPointStore(url: location, logger: logger)
            if emptied { try await store.removeEverything() }
            return store
        #else
            throw Unavailable(description: postgreSQLUnavailable("--store postgres://…"))
        #endif
    }

    /// A store this build doesn't have.
    package struct Unavailable: Error, CustomStringConvertible {
        package let description: String
    }
}
