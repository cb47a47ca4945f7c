import Foundation
import Hummingbird
import HummingbirdTesting
import MapCluster
import MapClusterIO
import MapClusterServer
import NIOCore
import Testing

/// The API in process, through Hummingbird's router test client.
struct ServerTests {
    /// The bundled cities, indexed once for every test; a load error fails each test that needs them.
    static let loaded = Result {
        try ClusterService(
            points: try CSVPointReader().read(contentsOf: SampleData.worldCitiesURL),
            aggregation: PointAggregation(category: "continent", reductions: [.init("population", .sum)]))
    }

    static func withClient(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let application = Application(router: try MapClusterServer.router(service: try loaded.get()))
        try await application.test(.router) { client in try await body(client) }
    }

    static func get(_ client: some TestClientProtocol, _ uri: String) async throws -> (
        HTTPResponse.Status, [String: Any], HTTPFields
    ) {
        try await client.execute(uri: uri, method: .get) { response in
            let json = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
            return (response.status, json ?? [:], response.headers)
        }
    }

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
                if FileManager.default.fileExists(atPath: "\(MapClusterServer.localLeaflet)/leaflet.js") {
                    #expect(response.status == .ok)
                } else {
                    #expect(response.status == .found)
                    #expect(response.headers[.location] == "\(MapClusterServer.leafletCDN)/leaflet.js")
                }
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

    @Test func requestBodiesAreBounded() async throws {
        try await Self.withClient { client in
            let body = ByteBuffer(repeating: 0x41, count: MapClusterServer.maximumBodySize + 1)
            try await client.execute(uri: "/api/stats", method: .get, body: body) { response in
                #expect(response.status == .contentTooLarge)
            }
            try await client.execute(uri: "/api/clusters", method: .post, body: ByteBuffer(string: "{}")) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func everyAnsweredIdLeadsSomewhere() async throws {
        // Property: across zooms and areas, every cluster the API lists can be expanded, its children add up, and its
        // leaves number its count.
        try await Self.withClient { client in
            var rng = SplitMix64(seed: 12)
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
                }
            }
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
            #expect(id.hasPrefix("f"), "a filtered cluster's id carries its filter: \(id)")
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
