import Foundation
import HTTPTypes
import Logging
import MapClusterServer
import Testing

/// `/healthz` and `/readyz`, as a load balancer and an orchestrator ask them: alive while the process serves; ready once
/// the points are loaded, with the reason when not.
struct ProbeTests {
    @Test func whileThePointsLoadTheServerIsAliveButNotReadyAndSaysSo() async throws {
        let points = ServedPoints()
        let client = RouterClient(buildRouter(points: points, writable: false, files: try PageFiles()))

        let (health, _, _) = try await ServerTests.get(client, "/healthz")
        #expect(health == .ok)
        let (ready, answer, headers) = try await ServerTests.get(client, "/readyz")
        #expect(ready == .serviceUnavailable)
        #expect((answer["error"] as? String)?.contains("the points are loading") == true)
        #expect(headers[.retryAfter] == "1")
        // What needs the points is 503 too, with the same reason; the pages are served.
        for path in ["/api/clusters?bbox=-10,40,10,50&zoom=4", "/api/stats", "/api/config", "/tiles.json"] {
            let (status, answer, headers) = try await ServerTests.get(client, path)
            #expect(status == .serviceUnavailable, "\(path)")
            #expect((answer["error"] as? String)?.contains("the points are loading") == true, "\(path)")
            #expect(headers[.retryAfter] == "1", "\(path)")
        }
        try await client.execute(uri: "/", method: .get) { #expect($0.status == .ok) }

        points.load(service: try ServerTests.loaded.get(), live: nil)
        let (readyNow, readyAnswer, _) = try await ServerTests.get(client, "/readyz")
        #expect(readyNow == .ok)
        #expect(readyAnswer["status"] as? String == "ready")
        let (stats, statsAnswer, _) = try await ServerTests.get(client, "/api/stats")
        #expect(stats == .ok)
        #expect(statsAnswer["points"] as? Int == 34_006)
    }

    @Test func aLoadThatFailedStaysUnreadyWithItsReason() async throws {
        let points = ServedPoints()
        let client = RouterClient(buildRouter(points: points, writable: true, files: try PageFiles()))
        points.fail("the points could not be loaded: cities.csv, line 3: no latitude")
        let (ready, answer, _) = try await ServerTests.get(client, "/readyz")
        #expect(ready == .serviceUnavailable)
        #expect((answer["error"] as? String)?.contains("cities.csv, line 3: no latitude") == true)
        let (health, _, _) = try await ServerTests.get(client, "/healthz")
        #expect(health == .ok)
    }

    @Test func aServerOfLoadedPointsIsReady() async throws {
        try await ServerTests.withClient { client in
            let (health, healthAnswer, _) = try await ServerTests.get(client, "/healthz")
            #expect(health == .ok && healthAnswer["status"] as? String == "ok")
            let (ready, readyAnswer, _) = try await ServerTests.get(client, "/readyz")
            #expect(ready == .ok && readyAnswer["status"] as? String == "ready")
        }
    }

    /// The server listens before it loads: `run` loads while it listens, and a test can load alone.
    @Test func aBuiltServerLoadsItsPointsWhenAsked() async throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = try await buildApplication(configuration, logger: Logger(label: "test"))
        #expect(await server.points?.unreadiness() == "the points are loading")
        try await server.load(logger: Logger(label: "test"))
        #expect(await server.points?.unreadiness() == nil)
    }
}
