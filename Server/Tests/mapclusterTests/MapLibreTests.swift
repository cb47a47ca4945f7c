import Foundation
@_spi(MapClusterServer) import MapCluster
import MapClusterIO
import MapClusterSampleData
import MapClusterTestSupport
import Testing

/// The MapLibre page in headless Chromium with WebGL (SwiftShader), driven by Tests/browser/maplibre_map.py: what
/// MapLibre GL JS renders from the tiles, live and from an archive.
///
/// Each view is a whole tile zoom centred on a tile corner of a 1024-point square page: exactly 2 × 2 tiles. A
/// cluster lies in its cell and a cell in one tile, so the distinct features drawn inside the page hold exactly the
/// points of those tiles.
@Suite(.serialized, .tags(.browser, .processes), .tier(.browser))
struct MapLibreTests {
    struct Feature {
        var count: Int
        var id: String
        var x: Double
        var y: Double

        init(_ json: [String: Any]) {
            count = json["count"] as? Int ?? 0
            id = json["id"] as? String ?? ""
            x = json["x"] as? Double ?? .nan
            y = json["y"] as? Double ?? .nan
        }

        /// Whether its position is on the page (a hair's tolerance for a feature on a tile's west or north edge).
        var isOnPage: Bool { (-0.01..<1023.99).contains(x) && (-0.01..<1023.99).contains(y) }
    }

    /// Runs the script against a server; page errors fail the test.
    static func drive(_ server: ServeAndRenderTests.Server, _ command: String, _ more: String...) async throws -> Any {
        try #require(ServeAndRenderTests.chromium != nil, "MAPCLUSTER_REQUIRE_BROWSER=1, but Chromium is not installed")
        let data = try await WebMapTests.runScript(
            "Tests/browser/maplibre_map.py", ["http://127.0.0.1:\(server.port)/", command] + more)
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((report["errors"] as? [String])?.isEmpty == true, "errors on the page: \(report["errors"] ?? "")")
        return report["result"] as Any
    }

    /// A live server of the sample in memory, taking edits, and its token (its file is gone once the server read it).
    static func liveServer() throws -> (ServeAndRenderTests.Server, String) {
        let token = "live-page-token-0123456789"
        let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)")
        try Data((token + "\n").utf8).write(to: tokenFile)
        defer { try? FileManager.default.removeItem(at: tokenFile) }
        let server = try ServeAndRenderTests.Server(["--writable", "--store", "memory", "--token-file", tokenFile.path])
        return (server, token)
    }

    /// The bundled cities in the 2 × 2 tiles of zoom `z` around the corner `x`, `y`.
    static func citiesAround(z: Int, x: Int, y: Int, in points: [MapPoint]) -> Int {
        let side = MapSize.worldWidth / Double(1 << z)
        let area = MapRect(
            minX: Double(x - 1) * side, minY: Double(y - 1) * side, maxX: Double(x + 1) * side,
            maxY: Double(y + 1) * side)
        return points.filter {
            $0.x >= area.origin.x && $0.x < area.origin.x + area.size.width && $0.y >= area.origin.y
                && $0.y < area.origin.y + area.size.height
        }.count
    }

    static func checkViews(_ server: ServeAndRenderTests.Server) async throws {
        let points = try CSVPointReader().read(contentsOf: SampleData.worldCitiesURL).records.map(\.coordinate.mapPoint)
        let views = try #require(try await drive(server, "views") as? [[String: Any]])
        #expect(views.count == 6)
        for view in views {
            let z = view["z"] as? Int ?? -1
            let corner = view["corner"] as? [Int] ?? []
            try #require(corner.count == 2)
            #expect(view["canvas"] as? [Int] == [1024, 1024])
            #expect(abs((view["zoom"] as? Double ?? -1) - Double(z)) < 1e-9)
            let features = (view["features"] as? [[String: Any]] ?? []).map(Feature.init)
            #expect(Set(features.map(\.id)).count == features.count, "zoom \(z): each feature once")
            let drawn = features.filter(\.isOnPage).reduce(0) { $0 + $1.count }
            let expected = citiesAround(z: z, x: corner[0], y: corner[1], in: points)
            #expect(expected > 100, "zoom \(z): a view with cities in it")
            #expect(
                drawn == expected,
                "zoom \(z) around \(corner): MapLibre drew \(drawn) points, the tiles hold \(expected)")
        }
    }

    /// A live server's page follows /api/tile-changes: after its first load it fetches the tiles the stream named
    /// (those it holds) and no other, and ends holding what /tiles answers, byte for byte.
    @Test(.enabled(if: WebMapTests.enabled, WebMapTests.needs))
    func theLivePageFetchesExactlyTheTilesAnEditChanged() async throws {
        let (server, token) = try Self.liveServer()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        let report = try #require(try await Self.drive(server, "live", token) as? [String: Any])
        let requested = try #require(report["requests_after_load"] as? [String])
        let named = try #require(report["named"] as? [String])
        let held = Set(try #require(report["held"] as? [String]))
        #expect(!requested.isEmpty, "the page fetched no tile after the edits")
        // Each time the stream named a tile the page holds, the page fetched it once; it fetched nothing else.
        #expect(requested.sorted() == named.filter(held.contains).sorted(), "fetched \(requested), named \(named)")
        // Edits far away named tiles the page doesn't hold, which it left alone.
        #expect(named.contains { !held.contains($0) })
        #expect(
            (report["mismatched"] as? [String])?.isEmpty == true, "tiles unlike /tiles: \(report["mismatched"] ?? "")")
        #expect((report["tiles_held"] as? Int ?? 0) >= 4)
    }

    @Test(.enabled(if: WebMapTests.enabled, WebMapTests.needs))
    func withoutMapLibreThePageSaysHowToGetItAndLinksToTheLeafletPage() async throws {
        let server = try ServeAndRenderTests.Server()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        let page = try #require(try await Self.drive(server, "offline") as? [String: Any])
        let text = try #require(page["text"] as? String)
        #expect(text.contains("MapLibre GL JS could not be loaded"))
        #expect(text.contains("pip install maplibre"))
        #expect(text.contains("--maplibre DIR"))
        #expect(text.contains("online"))
        #expect(page["links"] as? [String] == ["./"], "a link to the Leaflet page, relative for a path prefix")
        #expect(page["map"] as? Bool == false)
    }

    @Test(.enabled(if: WebMapTests.enabled, WebMapTests.needs))
    func theCountsMapLibreDrawsAddUpToThePointsInView() async throws {
        let server = try ServeAndRenderTests.Server()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        try await Self.checkViews(server)
    }

    @Test(.enabled(if: WebMapTests.enabled, WebMapTests.needs))
    func anArchiveDrawsAsTheLiveTilesDo() async throws {
        let archive = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mapcluster-\(UUID().uuidString).pmtiles")
        defer { try? FileManager.default.removeItem(at: archive) }
        let run = try CommandLineTests.run("tiles", "-o", archive.path, "--max-tile-zoom", "9")
        try #require(run.status == 0, "\(run.error)")
        let server = try ServeAndRenderTests.Server(["--tiles-from", archive.path])
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        try await Self.checkViews(server)
    }

    @Test(.enabled(if: WebMapTests.enabled, WebMapTests.needs))
    func aClickOnAClusterZoomsToWhereItSplits() async throws {
        let server = try ServeAndRenderTests.Server()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        let result = try #require(try await Self.drive(server, "click") as? [String: Any])
        let clicked = try #require(result["clicked"] as? [String: Any])
        let expansion = try #require(clicked["expansion_zoom"] as? Double)
        #expect(expansion > 3)
        #expect(abs((result["zoom"] as? Double ?? -1) - expansion) < 1e-6)
        // At that zoom the cluster has split: it is drawn no more.
        let features = (result["features"] as? [[String: Any]] ?? []).map(Feature.init)
        #expect(!features.isEmpty && !features.contains { $0.id == clicked["id"] as? String })
    }
}

/// Both pages with a keyboard and a screen reader (Tests/browser/accessibility.py): axe-core's default rules (WCAG 2.1 A and AA, and its best practices: one main landmark, a heading, content in landmarks) at a
/// world and a city view, and the keyboard alone reaching, naming, opening and leaving clusters; the API reference at
/// `/docs`, drawn offline.
@Suite(.serialized, .tags(.browser, .processes), .tier(.browser))
struct AccessibilityTests {
    /// The document `/docs` draws, as the package bundles it.
    static let openAPIDocument = WebMapTests.root.appendingPathComponent(
        "Sources/MapClusterServer/Resources/openapi.json")

    @Test(Python.axe)
    func bothPagesPassAxeAndTheKeyboardReachesZoomsAndOpensClusters() async throws {
        try #require(ServeAndRenderTests.chromium != nil, "MAPCLUSTER_REQUIRE_BROWSER=1, but Chromium is not installed")
        try #require(Python.hasAxe, "MAPCLUSTER_REQUIRE_BROWSER=1, but Python has no axe-playwright-python")
        let (server, token) = try MapLibreTests.liveServer()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        let data = try await WebMapTests.runScript(
            "Tests/browser/accessibility.py", ["http://127.0.0.1:\(server.port)/", token])
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((report["errors"] as? [String])?.isEmpty == true, "errors on the page: \(report["errors"] ?? "")")
        let result = try #require(report["result"] as? [String: Any])

        // axe-core: no violation on either page, at the world view or Paris.
        let axe = try #require(result["axe"] as? [[String: Any]])
        #expect(axe.count == 4)
        for page in axe {
            #expect((page["passes"] as? Int ?? 0) > 10, "\(page["page"] ?? "")")
            #expect(
                (page["violations"] as? [Any])?.isEmpty == true, "\(page["page"] ?? ""): \(page["violations"] ?? "")")
        }

        func name(_ value: Any?) -> String { ((value as? [String: Any])?["name"] as? String) ?? "" }
        // The Leaflet page: Tab reaches a named cluster, Enter zooms in and the keyboard goes on in the new view,
        // Escape goes back; a stack opens with Enter, its points are named, Escape closes it and returns to it.
        let leaflet = try #require(result["leaflet"] as? [String: Any])
        #expect(name(leaflet["cluster"]).hasPrefix("Cluster of"), "\(leaflet["cluster"] ?? "")")
        #expect(name(leaflet["cluster"]).contains("EU") && name(leaflet["cluster"]).contains("population sum"))
        #expect((leaflet["zoom_after_enter"] as? Double ?? 0) > (leaflet["zoom_before"] as? Double ?? 0))
        #expect((leaflet["focused_after_enter"] as? [String: Any])?["marker"] as? Bool == true)
        #expect((leaflet["announced_after_enter"] as? String ?? "").hasPrefix("Zoom "))
        #expect(leaflet["zoom_after_escape"] as? Double == leaflet["zoom_before"] as? Double)
        #expect(name(leaflet["stack"]).hasPrefix("Cluster of 3 points"))
        #expect(name(leaflet["focused_in_stack"]).hasPrefix("Stacked "))
        #expect(
            name(leaflet["next_in_stack"]).hasPrefix("Stacked ")
                && name(leaflet["next_in_stack"]) != name(leaflet["focused_in_stack"]))
        #expect(name(leaflet["focused_after_closing"]) == name(leaflet["stack"]))

        // The API reference at /docs: drawn from the server alone, an operation for each of the document's, no
        // violation; a document it can't read is said, not a blank page.
        let docs = try #require(result["docs"] as? [String: Any])
        #expect(
            (docs["outside"] as? [String])?.isEmpty == true, "requests that left the server: \(docs["outside"] ?? "")")
        #expect((docs["requests"] as? [String] ?? []).contains { $0.hasSuffix("/openapi.json") })
        let document = try #require(
            try JSONSerialization.jsonObject(with: try Data(contentsOf: Self.openAPIDocument)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let operations = paths.flatMap { path, item in
            ["get", "post", "delete"].filter { item[$0] != nil }.map { "\($0.uppercased()) \(path)" }
        }
        #expect(Set(docs["operations"] as? [String] ?? []) == Set(operations))
        #expect((docs["violations"] as? [Any])?.isEmpty == true, "/docs: \(docs["violations"] ?? "")")
        #expect((docs["broken"] as? String ?? "").hasPrefix("The OpenAPI document could not be read"))

        // The MapLibre page, through its list of markers.
        let maplibre = try #require(result["maplibre"] as? [String: Any])
        #expect(name(maplibre["cluster"]).hasPrefix("Cluster of"))
        #expect((maplibre["ring_shown"] as? String ?? "").contains("cluster_id"))
        #expect((maplibre["zoom_after_enter"] as? Double ?? 0) > (maplibre["zoom_before"] as? Double ?? 0))
        #expect((maplibre["focused_after_enter"] as? [String: Any])?["tag"] as? String == "BUTTON")
        #expect((maplibre["announced_after_enter"] as? String ?? "").hasPrefix("Zoom "))
        #expect(maplibre["zoom_after_escape"] as? Double == maplibre["zoom_before"] as? Double)
    }
}
