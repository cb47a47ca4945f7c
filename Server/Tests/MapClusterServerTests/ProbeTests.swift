import Foundation
import HTTPTypes
import Logging
import MapClusterServer
import NIOCore
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

    /// `/metrics` counts each request by its route and status, in Prometheus' text format.
    @Test func metricsCountRequestsByRouteAndStatus() async throws {
        let points = ServedPoints(service: try ServerTests.loaded.get(), live: nil)
        let metrics = ServerMetrics()
        let client = RouterClient(
            buildRouter(points: points, writable: false, files: try PageFiles(), metrics: metrics))
        for _ in 0..<3 { _ = try await ServerTests.get(client, "/api/stats") }
        _ = try await ServerTests.get(client, "/api/clusters?bbox=oops&zoom=3")
        let text = try await client.execute(uri: "/metrics", method: .get) { response in
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            return String(buffer: response.body)
        }
        let lines = text.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasPrefix("mapcluster_http_requests_total{") && $0.contains("route=\"/api/stats\"")
                    && $0.contains("status=\"200\"") && $0.hasSuffix(" 3")
            })
        #expect(lines.contains { $0.hasPrefix("mapcluster_rejected_requests_total{reason=\"bad_input\"} 1") })
        #expect(lines.contains("mapcluster_points 34006.0"))
        #expect(lines.contains { $0.hasPrefix("mapcluster_http_request_duration_seconds_bucket{") })
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
