import Foundation
import Testing

/// A live server as processes: killed with SIGKILL while it takes edits, two servers over one PostgreSQL database,
/// and the change stream with a subscriber that doesn't read (Tests/tools/live_check.py drives them and checks the
/// store with sqlite3 and psql).
///
/// The PostgreSQL tests need `MAPCLUSTER_POSTGRES_URL` (`scripts/postgres.sh start` prints one); `.ci/run` starts a
/// server and sets it. The crash tests send 2,000 edits with 3 kills here (`MAPCLUSTER_CRASH_EDITS`,
/// `MAPCLUSTER_CRASH_KILLS`); `.ci/run` also runs 50,000 with 10 against the release build.
struct LiveServerTests {
    static let postgres = ProcessInfo.processInfo.environment["MAPCLUSTER_POSTGRES_URL"]
    static let postgresRequired = ProcessInfo.processInfo.environment["MAPCLUSTER_REQUIRE_POSTGRES"] == "1"
    static let edits = ProcessInfo.processInfo.environment["MAPCLUSTER_CRASH_EDITS"] ?? "2000"
    static let kills = ProcessInfo.processInfo.environment["MAPCLUSTER_CRASH_KILLS"] ?? "3"

    /// Runs live_check.py with the standard library's Python (it needs nothing else) and returns its JSON line.
    static func check(_ arguments: [String], tool: String = "Tests/tools/live_check.py") throws -> [String: Any] {
        let python = WebMapTests.python ?? "/usr/bin/python3"
        let run = try CommandLineTests.run(
            URL(fileURLWithPath: python), [WebMapTests.root.appendingPathComponent(tool).path] + arguments)
        try #require(run.status == 0, "\(tool) \(arguments): \(run.error.suffix(2_000))")
        let line = run.output.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func everyAcknowledgedEditSurvivesSIGKILLWithSQLite() throws {
        let result = try Self.check([
            "crash", CommandLineTests.executable.path, "--store", "sqlite", "--batches", Self.edits, "--kills",
            Self.kills,
        ])
        #expect(result["kills"] as? Int == Int(Self.kills))
        #expect((result["acknowledged"] as? Int ?? 0) > 0)
    }

    @Test(.enabled(if: postgres != nil || postgresRequired, "needs MAPCLUSTER_POSTGRES_URL"))
    func everyAcknowledgedEditSurvivesSIGKILLWithPostgreSQL() throws {
        let url = try #require(Self.postgres, "MAPCLUSTER_REQUIRE_POSTGRES=1, but no MAPCLUSTER_POSTGRES_URL")
        let result = try Self.check([
            "crash", CommandLineTests.executable.path, "--store", "postgres", "--postgres", url, "--batches",
            Self.edits, "--kills", Self.kills,
        ])
        #expect(result["kills"] as? Int == Int(Self.kills))
    }

    @Test(.enabled(if: postgres != nil || postgresRequired, "needs MAPCLUSTER_POSTGRES_URL"))
    func twoServersOverOnePostgreSQLSeeEachOthersEditsWithinASecond() throws {
        let url = try #require(Self.postgres, "MAPCLUSTER_REQUIRE_POSTGRES=1, but no MAPCLUSTER_POSTGRES_URL")
        let result = try Self.check(["two-servers", CommandLineTests.executable.path, "--postgres", url])
        #expect((result["delay_ms_max"] as? Double ?? 1_000) < 1_000)
    }

    @Test func changesReachSubscribersAndASlowOneIsToldToResync() throws {
        let result = try Self.check(["changes", CommandLineTests.executable.path])
        #expect(result["slow_subscriber_resynced"] as? Bool == true)
    }

    @Test(arguments: [
        (["serve", "--token-file", "/tmp/x"], "--token-file is the token of edits: give it with --writable"),
        (["serve", "--writable", "--tiles-from", "x.pmtiles"], "--tiles-from serves an archive's tiles"),
        (["serve", "--store", "postgres://", "--port", "0"], "--store 'postgres://' is not a PostgreSQL URL"),
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
struct LiveMapTests {
    @Test(.enabled(if: WebMapTests.enabled, "needs Chromium and Playwright"))
    func thePageFollowsEditsWithoutFetchingAgain() throws {
        let token = "a-token-for-the-page-test-01"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mapcluster-token-\(UUID().uuidString)")
        try Data((token + "\n").utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try ServeAndRenderTests.Server(["--writable", "--store", "memory", "--token-file", file.path])
        defer { kill(server.process.processIdentifier, SIGTERM) }
        let data = try WebMapTests.runScript(
            "Tests/browser/live_map.py", ["http://127.0.0.1:\(server.port)", token])
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((report["errors"] as? [String])?.isEmpty == true, "errors on the page: \(report["errors"] ?? "")")
        #expect((report["before"] as? [String])?.isEmpty == true)
        #expect(report["drawn_after_insert"] as? Int == 10)
        #expect((report["after_move"] as? [String])?.count ?? 0 > 1, "the cluster split: \(report["after_move"] ?? "")")
        #expect(report["drawn_after_delete"] as? Int == 5)
        #expect(report["refetches"] as? Int == 0)
        let drawn = Set(report["after_delete"] as? [String] ?? [])
        #expect(drawn == Set(report["server"] as? [String] ?? ["?"]))
    }
}
