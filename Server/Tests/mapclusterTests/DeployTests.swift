import Foundation
import MapClusterTestSupport
import Testing

/// The files of deploy/ as an operator installs them: the nginx site in a real nginx in front of a live server, and the
/// systemd unit's command, variables and stop (Tests/tools/deploy_check.py drives both).
@Suite(.tags(.processes), .tier(.processes))
struct DeployTests {
    /// Debian's nginx, if installed.
    static let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let nginxRequired = ProcessInfo.processInfo.environment["MAPCLUSTER_REQUIRE_NGINX"] == "1"

    @Test(.enabled(if: nginx != nil || nginxRequired, "needs nginx: apt-get install nginx"))
    func nginxCachesTilesAndRevalidatesThemAfterAnEdit() async throws {
        let nginx = try #require(Self.nginx, "MAPCLUSTER_REQUIRE_NGINX=1, but nginx is not installed")
        let result = try await LiveServerTests.check(
            ["cdn", CommandLineTests.executable.path, "--nginx", nginx], tool: "Tests/tools/deploy_check.py")
        #expect(result["cached"] as? Int == 2)
        #expect(result["revalidated_304"] as? Int == 1)
        #expect(result["refetched"] as? Int == 1)
    }

    @Test func theSystemdUnitServesStopsOnItsSignalAndKeepsItsEdits() async throws {
        let result = try await LiveServerTests.check(
            ["unit", CommandLineTests.executable.path], tool: "Tests/tools/deploy_check.py")
        let variables = try #require(result["variables"] as? [String])
        #expect(variables.contains("MAPCLUSTER_PORT") && variables.contains("MAPCLUSTER_STORE"))
        #expect((result["stop_seconds"] as? Double ?? 99) < 30)
    }
}
