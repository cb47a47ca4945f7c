import Foundation
import HTTPTypes
import Hummingbird
import MapCluster
import MapClusterIO
import MapClusterLive
import MapClusterServer
import MapClusterTiles
import NIOCore
import Testing

/// What a cache in front of the server reads: `ETag`s of the data's version, `Cache-Control`, 304s, and the public URL
/// `/tiles.json` names.
struct CachingTests {
    /// The routes whose answers are made from the data, with one of each kind of id.
    static func cachedPaths(_ client: RouterClient) async throws -> [String] {
        let (_, clusters, _) = try await ServerTests.get(client, "/api/clusters?bbox=-180,-85,180,85&zoom=1")
        let features = try #require(clusters["features"] as? [[String: Any]])
        let ids = features.compactMap { ($0["properties"] as? [String: Any])?["cluster_id"] as? String }
        let id = try #require(ids.first)
        return [
            "/api/clusters?bbox=-180,-85,180,85&zoom=1", "/api/clusters/\(id)/leaves?limit=3",
            "/api/clusters/\(id)/children", "/api/clusters/\(id)/expansion-zoom", "/tiles/0/0/0.mvt",
            "/tiles/3/4/2.mvt", "/tiles.json",
        ]
    }

    /// The status and headers of a GET, with `If-None-Match` when given.
    static func head(_ client: RouterClient, _ path: String, ifNoneMatch tag: String? = nil) async throws -> (
        HTTPResponse.Status, HTTPFields, Int
    ) {
        var headers: HTTPFields = [:]
        if let tag { headers[.ifNoneMatch] = tag }
        return try await client.execute(uri: path, method: .get, headers: headers) { response in
            (response.status, response.headers, response.body.readableBytes)
        }
    }

    @Test func everyAnswerOfTheDataCarriesItsVersionAndIsAnswered304WhenUnchanged() async throws {
        let service = try ServerTests.loaded.get()
        let client = RouterClient(
            buildRouter(
                service: service, files: try PageFiles(),
                caching: CachePolicy(cacheControl: "public, max-age=60, stale-while-revalidate=30")))
        var tags: Set<String> = []
        for path in try await Self.cachedPaths(client) {
            let (status, headers, _) = try await Self.head(client, path)
            #expect(status == .ok, "\(path)")
            #expect(headers[.cacheControl] == "public, max-age=60, stale-while-revalidate=30", "\(path)")
            let tag = try #require(headers[.eTag], "\(path)")
            #expect(tag.hasPrefix("W/\"") && tag.count == 20, "\(path): \(tag)")
            tags.insert(tag)
            // Asked again with it, alone or in a list, strong or weak: 304 and no body.
            for asked in [tag, "\"other\", \(tag)", String(tag.dropFirst(2))] {
                let (again, againHeaders, bytes) = try await Self.head(client, path, ifNoneMatch: asked)
                #expect(again == .notModified && bytes == 0, "\(path) with \(asked)")
                #expect(againHeaders[.eTag] == tag && againHeaders[.cacheControl] != nil, "\(path)")
            }
            let (other, _, bytes) = try await Self.head(client, path, ifNoneMatch: "W/\"another-version\"")
            #expect(other == .ok && bytes > 0, "\(path)")
        }
        // Each answer says something else, and has a tag of its own.
        #expect(tags.count == 7)
        // An error is not the data's: no validator, nothing a cache would keep.
        let (status, headers, _) = try await Self.head(client, "/api/clusters/c9.9.9/children")
        #expect(status == .notFound && headers[.eTag] == nil)
    }

    @Test func theSameAnswerHasTheSameTagOnEveryServerAndTheDefaultsFollowTheSource() async throws {
        let base = try ServerTests.loaded.get()
        let path = "/api/clusters?bbox=-12,34,32,60&zoom=4"
        func tag(_ service: ClusterService, _ path: String = path) async throws -> String? {
            try await Self.head(RouterClient(buildRouter(service: service, files: try PageFiles())), path).1[.eTag]
        }
        // Another server of the same points and options (another index, as another process would build).
        let same = try ClusterService(points: base.points, aggregation: base.aggregation)
        #expect(try await tag(same) == tag(base))
        #expect(try await tag(same, "/tiles/4/8/5.mvt") == tag(base, "/tiles/4/8/5.mvt"))
        // Other options make other answers.
        var options = MarkerOptions()
        options.clustering.minCountForClustering = 50
        let other = try ClusterService(points: base.points, aggregation: base.aggregation, options: options)
        #expect(try await tag(other) != tag(base))
        // Points read from files are kept an hour by default; a live server's revalidate on each use.
        let (_, fixed, _) = try await Self.head(
            RouterClient(buildRouter(service: base, files: try PageFiles())), "/tiles/0/0/0.mvt")
        #expect(fixed[.cacheControl] == CachePolicy.fixed.cacheControl)
        try await LiveServiceTests.withLiveClient { client, _, _ in
            let (_, live, _) = try await Self.head(client, "/tiles/0/0/0.mvt")
            #expect(live[.cacheControl] == "no-cache")
        }
    }

    @Test func anEditChangesTheTagsOfWhatItChangedAndOnlyThose() async throws {
        try await LiveServiceTests.withLiveClient { client, service, _ in
            let sequence = service.live.current.sequence
            // Nice is in France, in tile 4/8/5 with Paris and Lyon; Sydney's tile, 4/14/9, is left as it was.
            let changed = ["/api/clusters?bbox=-180,-85,180,85&zoom=0", "/tiles/0/0/0.mvt", "/tiles/4/8/5.mvt"]
            let unchanged = ["/tiles/4/14/9.mvt", "/api/clusters?bbox=150,-35,152,-33&zoom=8"]
            var before: [String: String] = [:]
            for path in changed + unchanged {
                let (status, headers, _) = try await Self.head(client, path)
                #expect(status == .ok, "\(path)")
                before[path] = try #require(headers[.eTag], "\(path)")
            }
            let (status, _) = try await LiveServiceTests.send(
                client, .post, "/api/points", LiveServiceTests.feature("nice", 7.27, 43.7, #"{"continent":"EU"}"#))
            #expect(status == .ok)
            for path in changed {
                let old = try #require(before[path])
                let (again, headers, bytes) = try await Self.head(client, path, ifNoneMatch: old)
                #expect(again == .ok && bytes > 0, "\(path)")
                #expect(headers[.eTag] != old, "\(path)")
            }
            for path in unchanged {
                let (again, headers, bytes) = try await Self.head(client, path, ifNoneMatch: before[path])
                #expect(again == .notModified && bytes == 0, "\(path)")
                // The same hash; a tile's tag names the version it was made from, now the edit's.
                let old = try #require(before[path])
                let now = try #require(headers[.eTag])
                #expect(now.prefix(19) == old.prefix(19), "\(path): \(old), then \(now)")
                if path.hasPrefix("/tiles/") {
                    #expect(old.hasSuffix(".v\(sequence)\"") && now.hasSuffix(".v\(sequence + 1)\""), "\(old), \(now)")
                } else {
                    #expect(now == old)
                }
            }
        }
    }

    @Test func tileJSONNamesThePublicURL() async throws {
        let service = try ServerTests.loaded.get()
        func tiles(_ publicURL: PublicURL, headers: HTTPFields = [:]) async throws -> String {
            let client = RouterClient(buildRouter(service: service, files: try PageFiles(), publicURL: publicURL))
            return try await client.execute(uri: "/tiles.json", method: .get, headers: headers) { response in
                let json = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
                return try #require(((json as? [String: Any])?["tiles"] as? [String])?.first)
            }
        }
        let fixed = PublicURL(fixed: "https://maps.example.org/base/")
        #expect(try await tiles(fixed) == "https://maps.example.org/base/tiles/{z}/{x}/{y}.mvt")
        let forwarded: HTTPFields = [
            HTTPField.Name("X-Forwarded-Proto")!: "https", HTTPField.Name("X-Forwarded-Host")!: "cdn.example.net",
            HTTPField.Name("X-Forwarded-Prefix")!: "/maps",
        ]
        // Forwarded headers count only when the operator says the proxy sets them.
        #expect(
            try await tiles(PublicURL(trustsForwardedHeaders: true), headers: forwarded)
                == "https://cdn.example.net/maps/tiles/{z}/{x}/{y}.mvt")
        let untrusted = try await tiles(PublicURL(), headers: forwarded)
        #expect(untrusted.hasPrefix("http://") && !untrusted.contains("cdn.example.net"))
        // A fixed URL wins over them.
        #expect(
            try await tiles(
                PublicURL(fixed: "https://maps.example.org/base", trustsForwardedHeaders: true), headers: forwarded)
                == "https://maps.example.org/base/tiles/{z}/{x}/{y}.mvt")
    }
}

/// The merge of markers that would overlap, in the API's answers and in tiles alike.
struct TileMergeTests {
    /// The ids and counts of the world tile's features, and of the world view of the API at the same scale.
    static func worldMarkers(_ service: ClusterService) throws -> (tile: [String: Int], api: [String: Int]) {
        var tile: [String: Int] = [:]
        for feature in service.tiles.features(of: try #require(TileAddress(z: 0, x: 0, y: 0))) {
            let properties = Dictionary(feature.properties, uniquingKeysWith: { a, _ in a })
            if case .string(let id)? = properties["cluster_id"], case .number(let count)? = properties["point_count"] {
                tile[id] = Int(count)
            } else {
                tile["point \(feature.id.map(String.init) ?? "")"] = 1
            }
        }
        // Leaflet's zoom 1 is the world tile's scale.
        let text = service.featureCollection(in: .world, zoom: 1)
        let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        var api: [String: Int] = [:]
        for feature in try #require(json?["features"] as? [[String: Any]]) {
            let properties = feature["properties"] as? [String: Any] ?? [:]
            if let id = properties["cluster_id"] as? String {
                api[id] = properties["point_count"] as? Int
            } else {
                api["point \(feature["id"].map { "\($0)" } ?? "")"] = 1
            }
        }
        return (tile, api)
    }

    @Test(arguments: [true, false])
    func theWorldTileHasTheMarkersOfTheAPIsWorldView(merging: Bool) throws {
        let base = try ServerTests.loaded.get()
        var options = MarkerOptions()
        options.clustering.cellSize = 24
        options.merges = merging
        let service = try ClusterService(points: base.points, aggregation: base.aggregation, options: options)
        let (tile, api) = try Self.worldMarkers(service)
        #expect(tile == api)
        #expect(tile.values.reduce(0, +) == 34_006)
        let merged = tile.keys.filter { $0.hasPrefix("mc") }
        #expect(merging ? !merged.isEmpty : merged.isEmpty, "\(merged.count) merged markers")
    }
}
