import Foundation
import MapClusterTestSupport
import Testing

/// A live server as processes: killed with SIGKILL while it takes edits, two servers over one PostgreSQL database,
/// and the change stream with a subscriber that doesn't read (Tests/tools/live_check.py drives them and checks the
/// store with sqlite3 and psql).
///
/// The PostgreSQL tests need a build with the `PostgreSQL` trait (`swift test --traits PostgreSQL`) and
/// `MAPCLUSTER_POSTGRES_URL` (`scripts/postgres.sh start` prints one); `.ci/run` starts a server and sets it. The crash
/// tests send 2,000 edits with 3 kills (`MAPCLUSTER_CRASH_EDITS`, `MAPCLUSTER_CRASH_KILLS`; `.ci/run` asks for 20,000
/// with 6).
@Suite(.tags(.processes), .tier(.processes))
struct LiveServerTests {
    static let postgres = ProcessInfo.processInfo.environment["MAPCLUSTER_POSTGRES_URL"]
    static let postgresRequired = ProcessInfo.processInfo.environment["MAPCLUSTER_REQUIRE_POSTGRES"] == "1"
    #if PostgreSQL
        static let postgresBuilt = true
    #else
        static let postgresBuilt = false
    #endif
    /// Whether the PostgreSQL tests run: asked for, or possible here.
    static let postgresEnabled = postgresRequired || (postgresBuilt && postgres != nil)
    static let postgresNeeds: Comment = """
        needs the PostgreSQL trait and a server: apt-get install postgresql; \
        MAPCLUSTER_POSTGRES_URL=$(Server/scripts/postgres.sh start) swift test --package-path Server --traits PostgreSQL
        """
    static let edits = ProcessInfo.processInfo.environment["MAPCLUSTER_CRASH_EDITS"] ?? "2000"
    static let kills = ProcessInfo.processInfo.environment["MAPCLUSTER_CRASH_KILLS"] ?? "3"

    /// Runs live_check.py with the standard library's Python (it needs nothing else) and returns its JSON line.
    ///
    /// The crash tests take minutes: the tool is waited for on a thread of its own (``onOwnThread(_:)``).
    static func check(_ arguments: [String], tool: String = "Tests/tools/live_check.py") async throws -> [String: Any] {
        let python = try #require(Python.executable, "no Python to run \(tool) with: apt-get install python3")
        let path = WebMapTests.root.appendingPathComponent(tool).path
        let run = try await onOwnThread { try CommandLineTests.run(URL(fileURLWithPath: python), [path] + arguments) }
        try #require(run.status == 0, "\(tool) \(arguments): \(run.error.suffix(2_000))")
        let line = run.output.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test(.tags(.crash), .tier(.crash))
    func everyAcknowledgedEditSurvivesSIGKILLWithSQLite() async throws {
        let result = try await Self.check([
            "crash", CommandLineTests.executable.path, "--store", "sqlite", "--batches", Self.edits, "--kills",
            Self.kills,
        ])
        #expect(result["kills"] as? Int == Int(Self.kills))
        #expect((result["acknowledged"] as? Int ?? 0) > 0)
    }

    @Test(.enabled(if: postgresEnabled, postgresNeeds), .tags(.crash, .postgres), .tier(.crash), .tier(.postgres))
    func everyAcknowledgedEditSurvivesSIGKILLWithPostgreSQL() async throws {
        try #require(Self.postgresBuilt, "MAPCLUSTER_REQUIRE_POSTGRES=1, but built without the PostgreSQL trait")
        let url = try #require(Self.postgres, "MAPCLUSTER_REQUIRE_POSTGRES=1, but no MAPCLUSTER_POSTGRES_URL")
        let result = try await Self.check([
            "crash", CommandLineTests.executable.path, "--store", "postgres", "--postgres", url, "--batches",
            Self.edits, "--kills", Self.kills,
        ])
        #expect(result["kills"] as? Int == Int(Self.kills))
    }

    /// How soon the other server sees an edit is a figure the tool prints (the live data guide publishes it),
    /// not a bound here, where the other suites share the two cores.
    @Test(.enabled(if: postgresEnabled, postgresNeeds), .tags(.postgres), .tier(.postgres))
    func twoServersOverOnePostgreSQLSeeEachOthersEdits() async throws {
        try #require(Self.postgresBuilt, "MAPCLUSTER_REQUIRE_POSTGRES=1, but built without the PostgreSQL trait")
        let url = try #require(Self.postgres, "MAPCLUSTER_REQUIRE_POSTGRES=1, but no MAPCLUSTER_POSTGRES_URL")
        let result = try await Self.check(["two-servers", CommandLineTests.executable.path, "--postgres", url])
        #expect(result["edits"] as? Int == 40)
        print("two servers over one PostgreSQL: \(result)")
    }

    /// SIGTERM ends the server within 10 s, whatever its clients do: 20 change streams open, half of them never
    /// read, and edits under way (the tool runs the rounds and checks each stream and edit).
    @Test func aServerAskedToStopEndsItsStreamsAndExitsWithin10Seconds() async throws {
        let result = try await Self.check(["stop", CommandLineTests.executable.path, "--rounds", "2"])
        #expect(result["rounds"] as? Int == 2)
    }

    /// The same stop over PostgreSQL: an edit the server took before SIGTERM is committed, not failed by a store
    /// client that stopped with the server (it did, when the client inherited the server's graceful shutdown: a
    /// catch-up under way then waited forever, and the stop with it).
    @Test(.enabled(if: postgresEnabled, postgresNeeds), .tags(.postgres), .tier(.postgres))
    func aServerOverPostgreSQLAskedToStopCommitsTheEditsItTook() async throws {
        try #require(Self.postgresBuilt, "MAPCLUSTER_REQUIRE_POSTGRES=1, but built without the PostgreSQL trait")
        let url = try #require(Self.postgres, "MAPCLUSTER_REQUIRE_POSTGRES=1, but no MAPCLUSTER_POSTGRES_URL")
        let result = try await Self.check([
            "stop", CommandLineTests.executable.path, "--rounds", "4", "--postgres", url,
        ])
        #expect(result["rounds"] as? Int == 4)
    }

    @Test func changesReachSubscribersAndASlowOneIsToldToResync() async throws {
        let result = try await Self.check(["changes", CommandLineTests.executable.path])
        #expect(result["slow_subscriber_resynced"] as? Bool == true)
    }

    /// What `--store postgres://` says: that the URL is wrong, or without the trait, how to build with it.
    static let postgresURLMessage =
        postgresBuilt
        ? "--store 'postgres://' is not a PostgreSQL URL"
        : "build with the package's PostgreSQL trait, `swift build --traits PostgreSQL`"

    @Test(arguments: [
        (["serve", "--token-file", "/tmp/x"], "--token-file is the token of edits: give it with --writable"),
        (["serve", "--writable", "--tiles-from", "x.pmtiles"], "--tiles-from serves an archive's tiles"),
        (["serve", "--store", "postgres://", "--port", "0"], postgresURLMessage),
        (
            ["serve", "--store", "/work/no/such/folder/points.sqlite", "--port", "0"],
            "--store /work/no/such/folder/points.sqlite: can't open as a SQLite database"
        ),
        (
            ["serve", "--writable", "--store", "memory", "--token-file", "/no/such/token", "--port", "0"],
            "--token-file: can't read '/no/such/token'"
        ),
    ])
    func badLiveOptionsAreRefusedWithAMessage(arguments: [String], message: String) throws {
        let run = try CommandLineTests.run(CommandLineTests.executable, arguments)
        #expect(run.status != 0)
        #expect(run.error.contains(message), "\(run.error)")
    }
}

/// The web map of a live server in Chromium (Tests/browser/live_map.py): edits sent through the API show on the page
/// from the change stream, with no fetch of the clusters, and the page ends drawing what the API answers.
@Suite(.tags(.browser, .processes), .tier(.browser))
struct LiveMapTests {
    @Test(.enabled(if: WebMapTests.enabled, WebMapTests.needs))
    func thePageFollowsEditsWithoutFetchingAgain() async throws {
        let token = "a-token-for-the-page-test-01"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mapcluster-token-\(UUID().uuidString)")
        try Data((token + "\n").utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try ServeAndRenderTests.Server(["--writable", "--store", "memory", "--token-file", file.path])
        defer { kill(server.process.processIdentifier, SIGTERM) }
        let data = try await WebMapTests.runScript(
            "Tests/browser/live_map.py", ["http://127.0.0.1:\(server.port)", token])
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((report["errors"] as? [String])?.isEmpty == true, "errors on the page: \(report["errors"] ?? "")")
        #expect((report["before"] as? [String])?.isEmpty == true)
        #expect(report["drawn_after_insert"] as? Int == 10)
        #expect((report["after_move"] as? [String])?.count ?? 0 > 1, "the cluster split: \(report["after_move"] ?? "")")
        #expect(report["drawn_after_delete"] as? Int == 5)
        #expect(report["refetches"] as? Int == 0)
        // The markers' nodes stay in reading order (Tab's) through the edits, though only those out of order move.
        for stage in ["order_after_move", "order_after_delete"] {
            let order = report[stage] as? [String: Any]
            #expect(order?["inOrder"] as? Bool == true, "\(stage): \(order ?? [:])")
            #expect((order?["count"] as? Int ?? 0) > 1, "\(stage): \(order ?? [:])")
        }
        let drawn = Set(report["after_delete"] as? [String] ?? [])
        #expect(drawn == Set(report["server"] as? [String] ?? ["?"]))
    }
}
