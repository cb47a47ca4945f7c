import Foundation
import MapClusterTestSupport
import Testing

/// The web pages' modules that don't touch the DOM, under node's own test runner (`node --test Tests/page`): the
/// cluster-id vectors, the hash, the markers' HTML, the scheduler, live changes.
@Suite(.tags(.processes), .tier(.processes))
struct PageModuleTests {
    /// node, from the PATH.
    static let node: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        .map { URL(fileURLWithPath: String($0)).appendingPathComponent("node") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    @Test func thePagesModulesPassTheirOwnTests() async throws {
        let node = try #require(Self.node, "node is not on the PATH: install Debian's nodejs (.ci/run does)")
        let tests = WebMapTests.root.appendingPathComponent("Tests/page").path
        let run = try await onOwnThread { try CommandLineTests.run(node, ["--test", tests]) }
        #expect(run.status == 0, "node --test Tests/page:\n\(run.output)\(run.error)")
        // The runner's summary: the tests ran, and none failed.
        let passed = run.output.split(separator: "\n").first { $0.hasPrefix("# pass ") }.flatMap {
            Int($0.dropFirst(7))
        }
        #expect((passed ?? 0) >= 15, "\(run.output)")
        #expect(run.output.contains("# fail 0"), "\(run.output)")
    }
}
