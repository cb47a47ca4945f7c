import CompressNIO
import Foundation
import Hummingbird
import Logging
@_spi(MapClusterServer) import MapCluster
import MapClusterIO
import MapClusterLive
import MapClusterManager
import MapClusterSampleData
import MapClusterServer
import NIOCore
import SwiftProtobuf
import Testing

@testable import MapClusterTiles

/// The API in process, through its router (``RouterClient``).
struct ServerTests {
    /// The bundled cities, indexed once for every test; a load error fails each test that needs them.
    static let loaded = Result {
        try ClusterService(
            points: try CSVPointReader().read(contentsOf: SampleData.worldCitiesURL),
            aggregation: PointAggregation(category: "continent", reductions: [.init("population", .sum)]))
    }

    static func withClient(_ body: @escaping @Sendable (RouterClient) async throws -> Void) async throws {
        try await body(RouterClient(buildRouter(service: try loaded.get(), files: try PageFiles())))
    }

    static func get(_ client: RouterClient, _ uri: String) async throws -> (
        HTTPResponse.Status, [String: Any], HTTPFields
    ) {
        try await client.execute(uri: uri, method: .get) { response in
            // Every answer of the API is a JSON object, errors too: one that isn't fails the test here, rather than
            // read as an empty answer whose features a test's loop would never check.
            let json = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
            return (response.status, try #require(json, "\(uri): the answer is not a JSON object"), response.headers)
        }
    }

    /// The features of a FeatureCollection; an answer without them has none, and the test's counts say so.
    static func features(_ json: [String: Any]) -> [[String: Any]] {
        json["features"] as? [[String: Any]] ?? []
    }

    static func count(_ feature: [String: Any]) -> Int {
        let properties = feature["properties"] as? [String: Any] ?? [:]
        return properties["cluster"] as? Bool == true ? properties["point_count"] as? Int ?? 0 : 1
    }

    @Test func clustersOfTheWholeWorldAddUpToTheDataSet() async throws {
        try await Self.withClient { client in
            let (status, json, headers) = try await Self.get(client, "/api/clusters?bbox=-180,-85,180,85&zoom=1")
            #expect(status == .ok)
            #expect(headers[.contentType] == "application/geo+json")
            #expect(json["type"] as? String == "FeatureCollection")
            let features = Self.features(json)
            #expect(features.reduce(0) { $0 + Self.count($1) } == 34_006)
            let cluster = try #require(
                features.first { ($0["properties"] as? [String: Any])?["cluster"] as? Bool == true })
            let properties = try #require(cluster["properties"] as? [String: Any])
            #expect(properties["cluster_id"] is String)
            #expect(properties["point_count_abbreviated"] != nil)
            #expect((cluster["geometry"] as? [String: Any])?["type"] as? String == "Point")
        }
    }

    @Test func aBboxAcrossTheAntimeridianIsOneArea() async throws {
        try await Self.withClient { client in
            let (status, json, _) = try await Self.get(client, "/api/clusters?bbox=170,-50,-170,-10&zoom=4")
            #expect(status == .ok)
            let features = Self.features(json)
            #expect(!features.isEmpty)
            let longitudes = features.compactMap {
                (($0["geometry"] as? [String: Any])?["coordinates"] as? [Double])?.first
            }
            #expect(longitudes.allSatisfy { $0 >= 169 || $0 <= -169 })
            #expect(longitudes.contains { $0 > 0 } && longitudes.contains { $0 < 0 })
            // The answer says it crossed, and one that doesn't cross says nothing.
            #expect(json["crosses_antimeridian"] as? Bool == true)
            let (_, plain, _) = try await Self.get(client, "/api/clusters?bbox=-170,-50,170,-10&zoom=1")
            #expect(plain["crosses_antimeridian"] == nil && !Self.features(plain).isEmpty)
        }
    }

    @Test func aClustersLeavesChildrenAndExpansionZoomAgree() async throws {
        try await Self.withClient { client in
            let (_, json, _) = try await Self.get(client, "/api/clusters?bbox=-10,35,30,60&zoom=3")
            let clusters = Self.features(json).filter { Self.count($0) > 1 }
            let biggest = try #require(clusters.max { Self.count($0) < Self.count($1) })
            let properties = try #require(biggest["properties"] as? [String: Any])
            let id = try #require(properties["cluster_id"] as? String)
            let total = Self.count(biggest)

            let (childrenStatus, children, _) = try await Self.get(client, "/api/clusters/\(id)/children")
            #expect(childrenStatus == .ok)
            #expect(Self.features(children).reduce(0) { $0 + Self.count($1) } == total)

            let (zoomStatus, zoom, _) = try await Self.get(client, "/api/clusters/\(id)/expansion-zoom")
            #expect(zoomStatus == .ok)
            #expect(zoom["expansion_zoom"] as? Double == properties["expansion_zoom"] as? Double)
            #expect((zoom["expansion_zoom"] as? Double ?? 0) > 3)

            var seen: Set<String> = []
            var offset = 0
            while offset < total {
                let (status, page, _) = try await Self.get(
                    client, "/api/clusters/\(id)/leaves?limit=1000&offset=\(offset)")
                #expect(status == .ok)
                let leaves = Self.features(page)
                #expect(!leaves.isEmpty)
                for leaf in leaves {
                    seen.insert(leaf["id"] as? String ?? "")
                    #expect((leaf["properties"] as? [String: Any])?["name"] is String)
                }
                offset += leaves.count
            }
            #expect(seen.count == total)
            let (_, defaultPage, _) = try await Self.get(client, "/api/clusters/\(id)/leaves")
            #expect(Self.features(defaultPage).count == 10)
        }
    }

    @Test func statsSayWhatIsServed() async throws {
        try await Self.withClient { client in
            let (status, json, _) = try await Self.get(client, "/api/stats")
            #expect(status == .ok)
            #expect(json["points"] as? Int == 34_006)
            #expect((json["build_ms"] as? Double ?? -1) >= 0)
            #expect(json.keys.contains("memory_mb"))
        }
    }

    @Test func thePageAndItsFilesAreServed() async throws {
        try await Self.withClient { client in
            for (path, type) in [
                ("/", "text/html"), ("/app.js", "text/javascript"), ("/app.css", "text/css"),
                ("/basemap.geojson", "application/geo+json"),
            ] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType]?.hasPrefix(type) == true, "\(path)")
                    #expect(response.body.readableBytes > 100, "\(path)")
                }
            }
            // Leaflet: the local Debian copy when installed, the CDN otherwise.
            try await client.execute(uri: "/leaflet/leaflet.js", method: .get) { response in
                if FileManager.default.fileExists(atPath: "\(PageFiles.localLeaflet)/leaflet.js") {
                    #expect(response.status == .ok)
                } else {
                    #expect(response.status == .found)
                    #expect(response.headers[.location] == "\(PageFiles.leafletCDN)/leaflet.js")
                }
            }
        }
    }

    /// The one function that chooses and wires what a configuration asks for: points, a store seeded with them, or an
    /// archive; and a bad option is an error that names it.
    @Test func buildApplicationWiresWhatTheConfigurationAsksFor() async throws {
        let logger = Logger(label: "test")
        var configuration = ServerConfiguration()
        configuration.port = 0
        let points = try await buildApplication(configuration, logger: logger)
        try await points.load(logger: logger)
        #expect(points.live == nil)

        configuration.source = .store(location: "memory", token: "0123456789abcdef")
        let store = try await buildApplication(configuration, logger: logger)
        try await store.load(logger: logger)
        let live = try #require(store.live)
        #expect(live.live.current.index.count == 34_006, "the empty store is seeded with the points")
        await live.writer.stop()

        // A bad option of the points is found as they load, which the server does while it listens.
        configuration.nameColumn = "no such column"
        await #expect {
            try await buildApplication(configuration, logger: logger).load(logger: logger)
        } throws: { error in
            "\(error)".hasPrefix("--name-column: the points have no column 'no such column'")
        }
        configuration.nameColumn = nil
        configuration.source = .archive(URL(fileURLWithPath: "/nonexistent/tiles.pmtiles"))
        await #expect {
            _ = try await buildApplication(configuration, logger: logger)
        } throws: { error in
            "\(error)".hasPrefix("--tiles-from")
        }
    }

    /// Every file the pages load (the modules app.js imports too) is served with a validator: asked again with it, the
    /// answer is 304 and empty; the pages' own files are revalidated on each use.
    @Test func thePagesFilesCarryAnETagAndAreAnswered304WhenUnchanged() async throws {
        let modules = ["geo", "ids", "hash", "style", "markers", "outline", "spider", "draw", "scheduler", "live"]
        try await Self.withClient { client in
            var tags: Set<String> = []
            for path in ["/", "/app.js", "/maplibre.js", "/maplibre.html"] + modules.map({ "/\($0).js" }) {
                let tag = try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.cacheControl] == "no-cache", "\(path)")
                    return try #require(response.headers[.eTag], "\(path)")
                }
                tags.insert(tag)
                try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: tag]) { response in
                    #expect(response.status == .notModified, "\(path)")
                    #expect(response.body.readableBytes == 0, "\(path)")
                }
                try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: "W/\"0-0\""]) { response in
                    #expect(response.status == .ok, "another tag: the file, \(path)")
                }
            }
            #expect(tags.count == modules.count + 4, "each file its own tag")
            // The package.json that lets node read the modules is not served.
            try await client.execute(uri: "/package.json", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    /// Every bad request is answered 4xx with a JSON body that says what was wrong; none is a crash or a 500.
    @Test(arguments: [
        ("/api/clusters?zoom=3", 400, "bbox is missing"),
        ("/api/clusters?bbox=1,2,3,4", 400, "zoom is missing"),
        ("/api/clusters?bbox=1,2,3&zoom=3", 400, "has 3 values, not 4"),
        ("/api/clusters?bbox=1,2,3,4,5&zoom=3", 400, "has 5 values, not 4"),
        ("/api/clusters?bbox=a,2,3,4&zoom=3", 400, "west 'a' is not a number"),
        ("/api/clusters?bbox=1,2,3,nan&zoom=3", 400, "north 'nan' is not a number"),
        ("/api/clusters?bbox=1,2,3,inf&zoom=3", 400, "north 'inf' is not a number"),
        ("/api/clusters?bbox=1,95,3,96&zoom=3", 400, "latitude 95.0 is outside -90...90"),
        ("/api/clusters?bbox=1,10,3,5&zoom=3", 400, "south 10.0 is north of its north 5.0"),
        ("/api/clusters?bbox=-200,2,3,4&zoom=3", 400, "longitude -200.0 is outside -180...180"),
        ("/api/clusters?bbox=1,2,1,4&zoom=3", 400, "bbox is empty"),
        ("/api/clusters?bbox=1,2,3,4&zoom=25", 400, "zoom 25 is outside 0...24"),
        ("/api/clusters?bbox=1,2,3,4&zoom=-1", 400, "zoom -1 is outside 0...24"),
        ("/api/clusters?bbox=1,2,3,4&zoom=abc", 400, "zoom 'abc' is not a number"),
        ("/api/clusters?bbox=1,2,3,4&zoom=1e308", 400, "is outside 0...24"),
        ("/api/clusters?bbox=-180,-85,180,85&zoom=20", 400, "at most 16384 a side"),
        ("/api/clusters/c5.15.10/leaves?limit=100000", 400, "limit 100000 is outside 0...1000"),
        ("/api/clusters/c5.15.10/leaves?limit=-1", 400, "limit -1 is outside"),
        ("/api/clusters/c5.15.10/leaves?offset=99999999999999999999", 400, "is not a whole number"),
        ("/api/clusters/c5.15.10/leaves?limit=ten", 400, "limit 'ten' is not a whole number"),
        ("/api/clusters/zzz/children", 400, "'zzz' is not a cluster id"),
        ("/api/clusters/c5.99.10/children", 400, "is not a cluster id"),
        ("/api/clusters/c40.1.1/expansion-zoom", 400, "is not a cluster id"),
        ("/api/clusters/c5.0.0/children", 404, "no cluster has the id 'c5.0.0'"),
        ("/api/clusters/l0.5_0.5/leaves", 404, "no cluster has the id"),
        ("/api/clusters/l91_0/leaves", 400, "is not a cluster id"),
        ("/api/nothing", 404, "no such path: /api/nothing"),
        ("/leaflet/../../etc/passwd", 404, "no such path"),
    ])
    func badRequestsAreAnswered4xxWithAJSONBody(uri: String, status: Int, message: String) async throws {
        try await Self.withClient { client in
            let (answer, json, headers) = try await Self.get(client, uri)
            #expect(answer.code == status)
            #expect(headers[.contentType] == "application/json")
            #expect((json["error"] as? String)?.contains(message) == true, "\(json)")
            #expect(json["status"] as? Int == status)
        }
    }

    /// What a hostile or careless client sends, each answered 4xx with a JSON body.
    ///
    /// Paths that climb out of the page's folders (plain, encoded, doubled), methods nobody routes, bytes that aren't
    /// UTF-8, and numbers past what a double holds: none is a 500, a crash or a file from outside the page.
    @Test(arguments: [
        ("GET", "/../../etc/passwd", 404),
        ("GET", "/leaflet/%2e%2e/%2e%2e/etc/passwd", 404),
        ("GET", "/leaflet/..%2f..%2f..%2fetc%2fpasswd", 404),
        ("GET", "/leaflet/....//....//etc/passwd", 404),
        ("GET", "/%2e%2e%2f%2e%2e%2fetc%2fpasswd", 404),
        ("GET", "/app.js/../../../../etc/passwd", 404),
        ("GET", "/leaflet/%252e%252e/%252e%252e/etc/passwd", 404),
        ("GET", "/leaflet/%00/../../etc/passwd", 404),
        ("PUT", "/api/clusters?bbox=1,2,3,4&zoom=3", 405),
        ("DELETE", "/api/stats", 405),
        ("PATCH", "/api/config", 405),
        ("TRACE", "/", 405),
        ("CONNECT", "/api/stats", 405),
        ("BREW", "/api/stats", 405),
        ("QUERY", "/api/config", 405),
        ("GET", "/api/clusters?bbox=-10,40,10,50&zoom=3&zoom=4", 400),
        ("GET", "/api/clusters/%FF%FE/children", 400),
        ("GET", "/api/clusters/c5.15.10%C0%AF/leaves", 400),
        ("GET", "/api/clusters?bbox=%FF,2,3,4&zoom=3", 400),
        ("GET", "/api/clusters?bbox=1,2,3,4&zoom=%E2%80%AE3", 400),
        ("GET", "/api/clusters?bbox=1,2,3,4&zoom=1e309", 400),
        ("GET", "/api/clusters?bbox=1,2,3,4&zoom=-1e309", 400),
        ("GET", "/api/clusters?bbox=1,2,3,4&zoom=0x10", 400),
        ("GET", "/api/clusters?bbox=1e309,2,3,4&zoom=3", 400),
        ("GET", "/api/clusters?bbox=1,2,3,4&zoom=" + String(repeating: "9", count: 400), 400),
        ("GET", "/api/clusters/c5.15.10/leaves?limit=1e3", 400),
        ("GET", "/api/clusters/c5.15.10/leaves?offset=-0.5", 400),
        ("GET", "/api/clusters/c99999999999999999999.1.1/children", 400),
        ("GET", "/api/clusters/l1e309_0/leaves", 400),
        ("GET", "/api/clusters/p99999999999999999999/leaves", 400),
    ])
    func hostileRequestsAreAnswered4xxWithAJSONBody(method: String, uri: String, status: Int) async throws {
        try await Self.withClient { client in
            let method = try #require(HTTPRequest.Method(method))
            try await client.execute(uri: uri, method: method) { response in
                #expect(response.status.code == status, "\(method) \(uri)")
                #expect(response.headers[.contentType] == "application/json", "\(method) \(uri)")
                let body = String(buffer: response.body)
                let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
                #expect(json?["status"] as? Int == status, "\(method) \(uri): \(body)")
                #expect(!body.contains("root:"), "\(method) \(uri)")
            }
        }
    }

    @Test func requestBodiesAreBounded() async throws {
        try await Self.withClient { client in
            let body = ByteBuffer(repeating: 0x41, count: ServerLimits.maximumBodySize + 1)
            try await client.execute(uri: "/api/stats", method: .get, body: body) { response in
                #expect(response.status == .contentTooLarge)
            }
            try await client.execute(uri: "/api/clusters", method: .post, body: ByteBuffer(string: "{}")) { response in
                #expect(response.status == .methodNotAllowed)
            }
        }
    }

    @Test func everyAnsweredIdLeadsSomewhere() async throws {
        // Property: across zooms and areas, every cluster the API lists can be expanded, its children add up, and its
        // leaves number its count.
        try await Self.withClient { client in
            var rng = SplitMix64(seed: 12)
            var checked = 0
            for _ in 0..<12 {
                let west = Double.random(in: -180...150, using: &rng)
                let south = Double.random(in: -60...50, using: &rng)
                let zoom = Int.random(in: 2...8, using: &rng)
                let span = 360 / pow(2, Double(zoom)) * 3
                let uri =
                    "/api/clusters?bbox=\(west),\(south),\(min(west + span, 180)),\(min(south + span / 2, 85))&zoom=\(zoom)"
                let (status, json, _) = try await Self.get(client, uri)
                #expect(status == .ok, "\(uri)")
                for feature in Self.features(json).prefix(5) where Self.count(feature) > 1 {
                    let id = (feature["properties"] as? [String: Any])?["cluster_id"] as? String ?? ""
                    let (childStatus, children, _) = try await Self.get(client, "/api/clusters/\(id)/children")
                    #expect(childStatus == .ok, "\(id)")
                    #expect(Self.features(children).reduce(0) { $0 + Self.count($1) } == Self.count(feature), "\(id)")
                    checked += 1
                }
            }
            #expect(checked >= 12, "only \(checked) clusters' children were checked")
        }
    }

    @Test func clustersCarryTheirCategoriesAndTheSumOfTheirPopulations() async throws {
        try await Self.withClient { client in
            let (_, json, _) = try await Self.get(client, "/api/clusters?bbox=-180,-85,180,85&zoom=2")
            let points = try CSVPointReader().read(contentsOf: SampleData.worldCitiesURL)
            var total = 0.0
            for feature in Self.features(json) {
                let properties = try #require(feature["properties"] as? [String: Any])
                if properties["cluster"] as? Bool == true {
                    let categories = try #require(properties["categories"] as? [String: Int])
                    #expect(categories.values.reduce(0, +) == properties["point_count"] as? Int, "every city has one")
                    total += try #require(properties["population_sum"] as? Double)
                } else {
                    // A single city's properties keep their types: a number column is a number.
                    total += try #require(properties["population"] as? Double)
                    #expect(properties["continent"] is String)
                }
            }
            let expected = points.records.reduce(0.0) { sum, record in
                guard case .number(let population) = points.property("population", of: record) else { return sum }
                return sum + population
            }
            #expect(total == expected)
        }
    }

    @Test func aCategoryFilterShowsOnlyThoseCategoriesWithIdsOfTheirOwn() async throws {
        try await Self.withClient { client in
            let (status, json, _) = try await Self.get(
                client, "/api/clusters?bbox=-180,-85,180,85&zoom=2&categories=EU,OC")
            #expect(status == .ok)
            let features = Self.features(json)
            let total = features.reduce(0) { $0 + Self.count($1) }
            let points = try CSVPointReader().read(contentsOf: SampleData.worldCitiesURL)
            let expected = points.records.filter {
                ["EU", "OC"].contains(points.property("continent", of: $0)?.description)
            }.count
            #expect(total == expected)
            let cluster = try #require(
                features.first { ($0["properties"] as? [String: Any])?["point_count"] as? Int ?? 0 > 20 })
            let id = try #require((cluster["properties"] as? [String: Any])?["cluster_id"] as? String)
            // A filtered cluster's id carries its filter (a merged marker's, each of its parts').
            #expect(
                id.hasPrefix("f")
                    || (id.hasPrefix("m") && id.dropFirst().split(separator: "~").allSatisfy { $0.hasPrefix("f") }),
                "\(id)")
            let (leavesStatus, leaves, _) = try await Self.get(client, "/api/clusters/\(id)/leaves?limit=50")
            #expect(leavesStatus == .ok)
            for leaf in Self.features(leaves) {
                let continent = (leaf["properties"] as? [String: Any])?["continent"] as? String
                #expect(continent == "EU" || continent == "OC")
            }
            let (_, children, _) = try await Self.get(client, "/api/clusters/\(id)/children")
            #expect(
                Self.features(children).reduce(0) { $0 + Self.count($1) }
                    == (cluster["properties"] as? [String: Any])?["point_count"] as? Int)
        }
    }

    @Test func anUnknownCategoryIsABadRequestThatListsTheKnownOnes() async throws {
        try await Self.withClient { client in
            let (status, json, _) = try await Self.get(
                client, "/api/clusters?bbox=-180,-85,180,85&zoom=2&categories=EU,XX")
            #expect(status == .badRequest)
            let message = json["error"] as? String ?? ""
            #expect(message.contains("'XX'") && message.contains("AF, AN, AS, EU, NA, OC, SA"), "\(message)")
        }
    }

    @Test func statsListTheCategoriesAndReductions() async throws {
        try await Self.withClient { client in
            let (_, json, _) = try await Self.get(client, "/api/stats")
            #expect(json["categories"] as? [String] == ["AF", "AN", "AS", "EU", "NA", "OC", "SA"])
            #expect(json["reductions"] as? [String] == ["population_sum"])
        }
    }
}

/// What a web map, or another origin's, needs of the API: markers that never overlap, ids that lead somewhere, the
/// HTTP it expects.
struct ServerMapTests {
    typealias Client = RouterClient

    /// The bbox a 1280 × 800 view centered on a coordinate shows at a zoom, as the page asks for it.
    static func bbox(latitude: Double, longitude: Double, zoom: Double) throws -> String {
        let scale = WebMercator.pointsPerMapUnit(atZoom: zoom)
        let center = try Coordinate(latitude: latitude, longitude: longitude).mapPoint
        let halfWidth = 640 / (256 * pow(2, zoom)) * 360
        var west = longitude - halfWidth
        var east = longitude + halfWidth
        if east - west >= 360 {
            (west, east) = (-180, 180)
        } else {
            west = (west + 540).truncatingRemainder(dividingBy: 360) - 180
            east = (east + 540).truncatingRemainder(dividingBy: 360) - 180
        }
        func latitudeAt(_ y: Double) -> Double {
            MapPoint(x: center.x, y: min(max(y, 0), MapSize.worldWidth)).coordinate.latitude
        }
        let south = latitudeAt(center.y + 400 / scale)
        let north = latitudeAt(center.y - 400 / scale)
        return "\(west),\(south),\(east),\(north)"
    }

    static let views: [(name: String, latitude: Double, longitude: Double)] = [
        ("world", 20, 0), ("Europe", 50, 10), ("the Pacific seam", -15, 179), ("Paris", 48.85, 2.35),
    ]

    @Test func noMarkerOverlapsAnotherAtTheSizesThePageDraws() async throws {
        try await ServerTests.withClient { client in
            let (_, config, _) = try await ServerTests.get(client, "/api/config")
            let markers = try #require(config["markers"] as? [String: Double])
            let diameters = MarkerDiameters(
                single: try #require(markers["single"]), cluster: try #require(markers["cluster"]),
                perDecade: try #require(markers["per_decade"]), gap: try #require(markers["gap"]))
            var merged = 0
            for view in Self.views {
                for zoom in 0...10 {
                    let bbox = try Self.bbox(latitude: view.latitude, longitude: view.longitude, zoom: Double(zoom))
                    let (status, json, _) = try await ServerTests.get(client, "/api/clusters?bbox=\(bbox)&zoom=\(zoom)")
                    #expect(status == .ok)
                    let scale = WebMercator.pointsPerMapUnit(atZoom: Double(zoom))
                    let placed = try ServerTests.features(json).map { feature in
                        let position = try #require(
                            (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double])
                        let point = try Coordinate(latitude: position[1], longitude: position[0]).mapPoint
                        let count = ServerTests.count(feature)
                        if ((feature["properties"] as? [String: Any])?["cluster_id"] as? String)?.hasPrefix("m") == true
                        {
                            merged += 1
                        }
                        return (point: point, diameter: diameters.diameter(ofCount: count))
                    }
                    for (offset, a) in placed.enumerated() {
                        for b in placed[(offset + 1)...] {
                            var dx = abs(a.point.x - b.point.x)
                            dx = min(dx, MapSize.worldWidth - dx) * scale
                            let dy = (a.point.y - b.point.y) * scale
                            let apart = (dx * dx + dy * dy).squareRoot()
                            #expect(
                                apart >= (a.diameter + b.diameter) / 2 + diameters.gap - 1e-6,
                                "\(view.name) at zoom \(zoom): markers \(apart) points apart")
                        }
                    }
                }
            }
            // The grid alone would have let some overlap: the answers are kept apart by merging them.
            #expect(merged > 0)
        }
    }

    @Test func aMergedMarkersIdLeadsToItsLeavesChildrenAndExpansionZoom() async throws {
        try await ServerTests.withClient { client in
            var found: [String: Any]?
            for zoom in 2...6 where found == nil {
                let bbox = try Self.bbox(latitude: 50, longitude: 10, zoom: Double(zoom))
                let (_, json, _) = try await ServerTests.get(client, "/api/clusters?bbox=\(bbox)&zoom=\(zoom)")
                found = ServerTests.features(json).first { (($0["id"] as? String) ?? "").hasPrefix("m") }
            }
            let marker = try #require(found, "no merged marker over Europe at zooms 2 to 6")
            let properties = try #require(marker["properties"] as? [String: Any])
            let id = try #require(properties["cluster_id"] as? String)
            let count = ServerTests.count(marker)
            // Its categories add up to its count, as any cluster's.
            #expect((properties["categories"] as? [String: Int])?.values.reduce(0, +) == count)
            // Its leaves, page by page, are its count.
            var leaves = 0
            var offset = 0
            while offset < count {
                let (_, page, _) = try await ServerTests.get(
                    client, "/api/clusters/\(id)/leaves?limit=1000&offset=\(offset)")
                leaves += ServerTests.features(page).count
                offset += 1_000
            }
            #expect(leaves == count)
            let (_, children, _) = try await ServerTests.get(client, "/api/clusters/\(id)/children")
            #expect(ServerTests.features(children).reduce(0) { $0 + ServerTests.count($1) } == count)
            #expect(ServerTests.features(children).count == id.split(separator: "~").count)
            let (status, expansion, _) = try await ServerTests.get(client, "/api/clusters/\(id)/expansion-zoom")
            #expect(status == .ok)
            let exact = try #require(expansion["expansion_zoom_exact"] as? Double)
            #expect(expansion["expansion_zoom"] as? Int == Int(exact.rounded(.up)))
            // A merged id with a part the index doesn't have is unknown; one that isn't an id is a bad request.
            let (unknown, _, _) = try await ServerTests.get(client, "/api/clusters/mc3.1.1~p99999999/leaves")
            #expect(unknown == .notFound)
            let (bad, _, _) = try await ServerTests.get(client, "/api/clusters/mc3.1.1/leaves")
            #expect(bad == .badRequest)
        }
    }

    @Test func expansionZoomIsTheWholeZoomAtWhichAClusterHasSplitAsSuperclusterGivesIt() async throws {
        try await ServerTests.withClient { client in
            let (_, json, _) = try await ServerTests.get(client, "/api/clusters?bbox=-10,35,30,60&zoom=4")
            let clusters = ServerTests.features(json).compactMap { $0["properties"] as? [String: Any] }
                .filter { $0["cluster"] as? Bool == true }
            #expect(!clusters.isEmpty)
            for properties in clusters {
                let exact = try #require(properties["expansion_zoom_exact"] as? Double)
                #expect(properties["expansion_zoom"] as? Int == Int(exact.rounded(.up)))
                #expect(exact > 4)
            }
        }
    }

    @Test func theConfigurationSaysWhereTheDataIsAndHowBigMarkersAre() async throws {
        try await ServerTests.withClient { client in
            let (_, config, _) = try await ServerTests.get(client, "/api/config")
            #expect(config["max_zoom"] as? Int == ClusterService.pageMaximumZoom)
            #expect(config["name_column"] as? String == "name")
            let bounds = try #require(config["bounds"] as? [Double])
            // The cities span the world but for the empty east Pacific: a box across the antimeridian.
            #expect(bounds.count == 4 && bounds[0] > bounds[2])
            #expect(bounds[1] < -50 && bounds[3] > 75)
        }
        // Points in and around Paris: a box around them alone.
        let paris = try ClusterService.boundingBox(of: [
            Coordinate(latitude: 48.8, longitude: 2.2), Coordinate(latitude: 48.9, longitude: 2.5),
        ])
        #expect(paris == [2.2, 48.8, 2.5, 48.9])
        let fiji = try ClusterService.boundingBox(of: [
            Coordinate(latitude: -17, longitude: 178), Coordinate(latitude: -18, longitude: -179),
        ])
        #expect(fiji == [178, -18, -179, -17])
        #expect(ClusterService.boundingBox(of: []) == nil)
    }

    @Test func answersAreGzippedForClientsThatTakeIt() async throws {
        try await ServerTests.withClient { client in
            for path in ["/api/clusters?bbox=-180,-85,180,85&zoom=3", "/app.js", "/basemap.geojson"] {
                var plain = 0
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.headers[.contentEncoding] == nil)
                    plain = response.body.readableBytes
                }
                try await client.execute(uri: path, method: .get, headers: [.acceptEncoding: "br;q=1, gzip;q=0.8"]) {
                    response in
                    #expect(response.headers[.contentEncoding] == "gzip", "\(path)")
                    #expect(response.headers[.vary] == "Accept-Encoding")
                    var body = response.body
                    let inflated = try body.decompress(with: .gzip())
                    #expect(inflated.readableBytes == plain, "\(path)")
                    #expect(response.body.readableBytes < plain / 2, "\(path)")
                }
                try await client.execute(uri: path, method: .get, headers: [.acceptEncoding: "gzip;q=0"]) { response in
                    #expect(response.headers[.contentEncoding] == nil)
                }
            }
        }
    }

    @Test func headCorsAndMethodsAreAnsweredAsHTTPSays() async throws {
        try await ServerTests.withClient { client in
            // HEAD: the GET's headers and no body.
            try await client.execute(uri: "/api/stats", method: .head) { response in
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == 0)
                #expect(Int(response.headers[.contentLength] ?? "") ?? 0 > 0)
            }
            // Another origin's page may call the API.
            try await client.execute(uri: "/api/stats", method: .get, headers: [.origin: "https://maps.example"]) {
                response in
                #expect(response.headers[.accessControlAllowOrigin] == "*")
            }
            try await client.execute(
                uri: "/api/clusters", method: .options,
                headers: [.origin: "https://maps.example", .accessControlRequestMethod: "GET"]
            ) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.accessControlAllowMethods]?.contains("GET") == true)
            }
            // A method the path doesn't take: 405, saying which it takes; OPTIONS says the same.
            for method in [HTTPRequest.Method.post, .put, .delete, .patch] {
                try await client.execute(uri: "/api/clusters/c1.0.0/leaves", method: method) { response in
                    #expect(response.status == .methodNotAllowed, "\(method)")
                    #expect(String(buffer: response.body).contains("GET and HEAD"))
                }
            }
            try await client.execute(uri: "/api/stats", method: .options) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.allow] == "GET, HEAD, OPTIONS")
            }
        }
    }

    @Test func idsThatAreNumbersInTheInputStayNumbers() throws {
        let text =
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":12,"geometry":{"type":"Point","coordinates":[2,3]}},"#
            + #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[50,30]}}]}"#
        let service = try ClusterService(points: try GeoJSONPointReader().read(Data(text.utf8), file: "f.geojson"))
        let json = service.featureCollection(in: .world, zoom: 10)
        #expect(json.contains(#""id":12,"#) && json.contains(#""id":"x","#), "\(json)")
    }
}

/// Vector tiles: decoded, they hold every point once, neighbours agree, and bad addresses are bad requests.
struct TileTests {
    /// A decoded tile's features: each one's position in the tile and its properties, a single point's id (the
    /// feature id when it is a whole number) as `id`.
    static func features(_ bytes: Data) throws -> [(x: Int64, y: Int64, properties: [String: VectorTile_Tile.Value])] {
        let tile = try VectorTile_Tile(serializedBytes: bytes)
        #expect(tile.layers.map(\.name) == ["clusters"])
        let layer = try #require(tile.layers.first)
        #expect(layer.extent == 4096 && layer.version == 2)
        return layer.features.map { feature in
            var properties: [String: VectorTile_Tile.Value] = [:]
            for pair in stride(from: 0, to: feature.tags.count - 1, by: 2) {
                properties[layer.keys[Int(feature.tags[pair])]] = layer.values[Int(feature.tags[pair + 1])]
            }
            // One MoveTo of one point: the command, then the zigzag-encoded x and y.
            let unzig = { (value: UInt32) in Int64(value >> 1) ^ -Int64(value & 1) }
            #expect(feature.type == .point && feature.geometry.count == 3 && feature.geometry[0] == 9)
            if feature.hasID {
                #expect(properties["id"] == nil, "an id that is the feature's id is not repeated")
                properties["id"] = .with { $0.uintValue = feature.id }
            }
            return (unzig(feature.geometry[1]), unzig(feature.geometry[2]), properties)
        }
    }

    static func count(_ properties: [String: VectorTile_Tile.Value]) -> Int {
        properties["cluster"]?.boolValue == true ? Int(properties["point_count"]?.uintValue ?? 0) : 1
    }

    static func tile(_ client: RouterClient, _ path: String) async throws -> (HTTPResponse.Status, Data) {
        try await client.execute(uri: path, method: .get) { response in
            (response.status, Data(response.body.readableBytesView))
        }
    }

    @Test(arguments: [0, 2, 4])
    func theTilesOfAZoomHoldEveryPointOnceAndNeighboursAgree(zoom: Int) async throws {
        try await ServerTests.withClient { client in
            var total = 0
            var owner: [String: String] = [:]
            var seen: [String: (Int64, Int64, Int)] = [:]
            for x in 0..<(1 << zoom) {
                for y in 0..<(1 << zoom) {
                    let (status, body) = try await Self.tile(client, "/tiles/\(zoom)/\(x)/\(y).mvt")
                    if status == .noContent {
                        #expect(body.isEmpty)
                        continue
                    }
                    #expect(status == .ok)
                    for feature in try Self.features(body) {
                        let id =
                            feature.properties["cluster_id"]?.stringValue ?? feature.properties["id"].map { "\($0)" }
                            ?? ""
                        let inside = (0..<4096).contains(feature.x) && (0..<4096).contains(feature.y)
                        // Where a feature is on the world's plane, in units of this zoom's tiles' extent.
                        let world = (
                            Int64(x) * 4096 + feature.x, Int64(y) * 4096 + feature.y, Self.count(feature.properties)
                        )
                        if inside {
                            total += Self.count(feature.properties)
                            #expect(owner.updateValue("\(x)/\(y)", forKey: id) == nil, "\(id) in two tiles")
                        }
                        if let other = seen[id], zoom > 0 {
                            // A copy in a neighbour's buffer is the same cluster at the same place.
                            #expect(other.2 == world.2, "\(id)")
                            let span = Int64(4096) << zoom
                            #expect((other.0 - world.0) % span == 0 && other.1 == world.1, "\(id)")
                        }
                        seen[id] = world
                    }
                }
            }
            #expect(total == 34_006)
        }
    }

    @Test func aTileCarriesWhatTheAPIsClustersCarry() async throws {
        try await ServerTests.withClient { client in
            let (status, body) = try await Self.tile(client, "/tiles/3/4/2.mvt")
            #expect(status == .ok)
            let features = try Self.features(body)
            let cluster = try #require(features.first { $0.properties["cluster"]?.boolValue == true })
            #expect(cluster.properties["cluster_id"]?.stringValue.hasPrefix("c") == true)
            #expect(cluster.properties["expansion_zoom"]?.hasUintValue == true)
            #expect(cluster.properties["population_sum"] != nil)
            let categories = cluster.properties.filter { $0.key.hasPrefix("category_") }.map { Int($0.value.uintValue) }
            #expect(categories.reduce(0, +) == Self.count(cluster.properties))
            // A single city: its id, and its population a number.
            let (_, deep) = try await Self.tile(client, "/tiles/12/2074/1409.mvt")
            let city = try #require(try Self.features(deep).first { $0.properties["cluster"] == nil })
            #expect(city.properties["population"]?.hasUintValue == true)
            #expect(city.properties["name"]?.hasStringValue == true)
            // Filtered: only Europe's points.
            let (_, europe) = try await Self.tile(client, "/tiles/3/4/2.mvt?categories=EU")
            for feature in try Self.features(europe) where feature.properties["cluster"]?.boolValue == true {
                #expect(Set(feature.properties.keys.filter { $0.hasPrefix("category_") }) == ["category_EU"])
            }
        }
    }

    @Test func anEmptyTileIsNoContentAndABadOneABadRequest() async throws {
        try await ServerTests.withClient { client in
            // The middle of the South Pacific, deep down.
            let (empty, body) = try await Self.tile(client, "/tiles/10/50/600.mvt")
            #expect(empty == .noContent && body.isEmpty)
            for (path, message) in [
                ("/tiles/24/0/0.mvt", "z 24 is outside 0...23"), ("/tiles/2/4/0.mvt", "x 4 is outside 0...3"),
                ("/tiles/2/0/-1.mvt", "y -1 is outside 0...3"), ("/tiles/a/0/0.mvt", "z 'a' is not a whole number"),
                ("/tiles/2/0/0.png", "the path ends in .mvt"),
            ] {
                let (status, json, _) = try await ServerTests.get(client, path)
                #expect(status == .badRequest, "\(path)")
                #expect((json["error"] as? String)?.contains(message) == true, "\(path): \(json)")
            }
            try await client.execute(uri: "/tiles/4/8/5.mvt", method: .get, headers: [.acceptEncoding: "gzip"]) {
                response in
                #expect(response.headers[.contentEncoding] == "gzip")
                #expect(response.headers[.contentType] == "application/vnd.mapbox-vector-tile")
            }
        }
    }

    @Test func tileJSONSaysWhereTheTilesAreAndWhatTheyHold() async throws {
        try await ServerTests.withClient { client in
            let (status, json, _) = try await ServerTests.get(client, "/tiles.json")
            #expect(status == .ok)
            #expect(json["tilejson"] as? String == "3.0.0")
            let tiles = try #require(json["tiles"] as? [String])
            #expect(tiles.count == 1 && tiles[0].hasSuffix("/tiles/{z}/{x}/{y}.mvt") && tiles[0].hasPrefix("http"))
            #expect(json["maxzoom"] as? Int == 23 && json["minzoom"] as? Int == 0)
            #expect((json["bounds"] as? [Double])?.count == 4)
            let layer = try #require((json["vector_layers"] as? [[String: Any]])?.first)
            #expect(layer["id"] as? String == "clusters")
            let fields = try #require(layer["fields"] as? [String: String])
            for field in [
                "cluster", "cluster_id", "point_count", "expansion_zoom", "population_sum", "category_EU", "name",
            ] {
                #expect(fields[field] != nil, "\(field)")
            }
        }
    }
}
