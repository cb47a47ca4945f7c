import Foundation
import Hummingbird
import MapCluster
import MapClusterIO
import MapClusterLive
import MapClusterServer
import MapClusterStore
import NIOCore
import Testing

/// The live API in process: edits, points by id, tokens and limits, over a SQLite store in a temporary file.
struct LiveServiceTests {
    static let token = "a-token-for-the-tests-0001"

    /// A live service of three cities over a new SQLite store, and the store's file.
    static func withLiveClient(
        aggregation: PointAggregation = PointAggregation(
            category: "continent", reductions: [.init("population", .sum)]),
        _ body: @escaping @Sendable (RouterClient, LiveService, String) async throws -> Void
    ) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mapcluster-\(UUID().uuidString).sqlite"
        )
        .path
        let store = try SQLitePointStore(path: path)
        let seed = try GeoJSONPointReader().readEdit(
            Data(
                """
                {"type":"FeatureCollection","features":[
                {"type":"Feature","id":"paris","geometry":{"type":"Point","coordinates":[2.35,48.85]},
                 "properties":{"name":"Paris","continent":"EU","population":2100000}},
                {"type":"Feature","id":"lyon","geometry":{"type":"Point","coordinates":[4.83,45.76]},
                 "properties":{"name":"Lyon","continent":"EU","population":520000}},
                {"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[151.2,-33.9]},
                 "properties":{"name":"Sydney","continent":"OC","population":5300000}}]}
                """.utf8), source: "seed")
        let (live, seeded) = try await LiveIndex.open(store, aggregation: aggregation) { seed }
        #expect(seeded == 3)
        let state = live.current
        let base = ClusterService(
            points: state.points, index: state.index, buildTime: .zero, aggregation: aggregation)
        let service = LiveService(writer: LiveWriter(live: live, store: store), base: base, token: token)
        try await body(RouterClient(buildRouter(service: base, live: service, files: try PageFiles())), service, path)
        store.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    static func send(
        _ client: RouterClient, _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil,
        token: String? = token
    ) async throws -> (HTTPResponse.Status, [String: Any]) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
        ) { response in
            let json = try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
            return (response.status, json as? [String: Any] ?? [:])
        }
    }

    static func feature(_ id: String, _ longitude: Double, _ latitude: Double, _ properties: String = "{}") -> String {
        #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(longitude),\#(latitude)]},"properties":\#(properties)}"#
    }

    /// The stored rows, read with SQLite directly (a new connection, as another program would).
    static func storedIDs(_ path: String) async throws -> Set<String> {
        let store = try SQLitePointStore.readOnlyCopy(of: path)
        return Set(try await store.load().points.map(\.key.id))
    }

    @Test func anEditIsCommittedAppliedAndAnswered() async throws {
        try await Self.withLiveClient { client, service, path in
            var (status, answer) = try await Self.send(
                client, .post, "/api/points",
                Self.feature("bordeaux", -0.58, 44.84, #"{"name":"Bordeaux","continent":"EU","population":260000}"#))
            #expect(status == .ok)
            #expect(answer["inserted"] as? Int == 1)
            #expect(try await Self.storedIDs(path).contains("bordeaux"))

            (status, answer) = try await Self.send(client, .get, "/api/points/bordeaux", token: nil)
            #expect(status == .ok)
            #expect((answer["properties"] as? [String: Any])?["name"] as? String == "Bordeaux")

            // Moved, with new properties: the cluster of France follows, with its sums.
            (status, answer) = try await Self.send(
                client, .post, "/api/points",
                Self.feature("bordeaux", 5.37, 43.3, #"{"name":"Marseille","continent":"EU","population":870000}"#))
            #expect(answer["moved"] as? Int == 1)
            (status, answer) = try await Self.send(client, .get, "/api/clusters?bbox=-5,42,8,51&zoom=3", token: nil)
            let features = answer["features"] as? [[String: Any]] ?? []
            let populations = features.compactMap {
                ($0["properties"] as? [String: Any])?["population_sum"] as? Double
            }
            #expect(populations == [2_100_000 + 520_000 + 870_000])

            // The number id, by its text in the URL.
            (status, answer) = try await Self.send(client, .get, "/api/points/7", token: nil)
            #expect(status == .ok && answer["id"] as? Int == 7)
            (status, answer) = try await Self.send(client, .delete, "/api/points/7")
            #expect(status == .ok && answer["deleted"] as? Int == 1)
            (status, _) = try await Self.send(client, .get, "/api/points/7", token: nil)
            #expect(status == .notFound)
            #expect(try await Self.storedIDs(path) == ["paris", "lyon", "bordeaux"])
            #expect(service.live.count == 3)

            // A list: those there go, those not are named.
            (status, answer) = try await Self.send(
                client, .post, "/api/points/delete", #"{"ids":["lyon","atlantis",7]}"#)
            #expect(status == .ok && answer["deleted"] as? Int == 1)
            #expect((answer["missing"] as? [Any])?.count == 2)
            #expect(try await Self.storedIDs(path) == ["paris", "bordeaux"])
        }
    }

    @Test(arguments: [
        (
            #"{"type":"FeatureCollection","features":[\#(LiveServiceTests.feature("a", 1, 1)),{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}]}"#,
            "request body features[1] (field id): is missing"
        ),
        (
            #"{"type":"FeatureCollection","features":[\#(LiveServiceTests.feature("a", 1, 1)),\#(LiveServiceTests.feature("b", 1, 95))]}"#,
            "request body features[1] (field geometry.coordinates): latitude 95"
        ),
        (
            #"{"type":"FeatureCollection","features":[\#(LiveServiceTests.feature("a", 1, 1)),\#(LiveServiceTests.feature("b", 1, 2, #"{"population":"many"}"#))]}"#,
            "request body features[1] (field population): 'many' is not a number"
        ),
        (
            #"{"type":"FeatureCollection","features":[\#(LiveServiceTests.feature("a", 1, 1)),{"type":"Feature","id":"l","geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}]}"#,
            "request body features[1] (field geometry.type): is a LineString, not a Point"
        ),
        (
            #"{"type":"FeatureCollection","features":[\#(LiveServiceTests.feature("a", 1, 1)),\#(LiveServiceTests.feature("a", 2, 2))]}"#,
            "request body features[1] (field id): duplicate id 'a'"
        ),
        (#"{"type":"Feature""#, "request body:1: is not valid JSON"),
        (#"[1,2]"#, "request body: is not a GeoJSON Feature or FeatureCollection"),
    ])
    func aBadEditIsRefusedNamingWhatAndWhereAndChangesNothing(body: String, message: String) async throws {
        try await Self.withLiveClient { client, service, path in
            let before = service.live.current.version
            let (status, answer) = try await Self.send(client, .post, "/api/points", body)
            #expect(status == .badRequest)
            let error = answer["error"] as? String ?? ""
            #expect(error.hasPrefix(message), "\(error)")
            #expect(service.live.current.version == before)
            #expect(try await Self.storedIDs(path) == ["paris", "lyon", "7"])
        }
    }

    @Test func writesNeedTheTokenAndReadsDoNot() async throws {
        try await Self.withLiveClient { client, _, path in
            for token in [nil, "wrong-token", Self.token + "x"] {
                let (status, answer) = try await Self.send(
                    client, .post, "/api/points", Self.feature("x", 1, 1), token: token)
                #expect(status == .unauthorized)
                #expect((answer["error"] as? String)?.isEmpty == false)
                let (deleted, _) = try await Self.send(client, .delete, "/api/points/paris", token: token)
                #expect(deleted == .unauthorized)
            }
            #expect(try await Self.storedIDs(path) == ["paris", "lyon", "7"])
            let (status, _) = try await Self.send(client, .get, "/api/clusters?bbox=-10,40,10,55&zoom=4", token: nil)
            #expect(status == .ok)
            let (config, answer) = try await Self.send(client, .get, "/api/config", token: nil)
            #expect(config == .ok && answer["live"] as? Bool == true)
        }
    }

    @Test func anEditTooLargeIsRefusedWithoutBeingRead() async throws {
        try await Self.withLiveClient { client, service, _ in
            let feature = Self.feature("p", 1, 1)
            let count = LiveService.maximumEditSize / feature.utf8.count + 10
            let body =
                #"{"type":"FeatureCollection","features":["#
                + (0..<count).map { Self.feature("p\($0)", 1, 1) }.joined(separator: ",") + "]}"
            let (status, answer) = try await Self.send(client, .post, "/api/points", body)
            #expect(status == .contentTooLarge)
            #expect((answer["error"] as? String)?.contains("smaller batches") == true)
            #expect(service.live.count == 3)
        }
    }

    @Test func aReadOnlyServerRefusesEdits() async throws {
        let client = RouterClient(buildRouter(service: try ServerTests.loaded.get(), files: try PageFiles()))
        let (status, answer) = try await Self.send(client, .post, "/api/points", Self.feature("x", 1, 1))
        #expect(status == .forbidden)
        #expect((answer["error"] as? String)?.contains("--writable") == true)
    }

    @Test func theMethodsOfThePointRoutesAreAsHTTPSays() async throws {
        try await Self.withLiveClient { client, _, _ in
            let allow = try await client.execute(uri: "/api/points/paris", method: .options) { $0.headers[.allow] }
            #expect(allow == "GET, HEAD, DELETE, OPTIONS")
            let (status, answer) = try await Self.send(client, .put, "/api/points/paris", "{}")
            #expect(status == .methodNotAllowed)
            #expect(answer["error"] as? String == "PUT is not allowed here; GET, HEAD and DELETE are")
            let (get, _) = try await Self.send(client, .get, "/api/points", token: nil)
            #expect(get == .methodNotAllowed)
        }
    }
}
