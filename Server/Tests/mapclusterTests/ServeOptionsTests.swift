import Foundation
import MapClusterTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `mapcluster serve` with the options supercluster's and MapLibre's users bring, from flags and from the environment.
@Suite(.tags(.processes), .tier(.processes))
struct ServeOptionsTests {
    static let world = "-180,-85,180,85"

    /// The point counts of a view's clusters, and how many points it shows in all.
    static func clusterCounts(_ features: [[String: Any]]) -> (clusters: [Int], total: Int) {
        var clusters: [Int] = []
        var total = 0
        for feature in features {
            let properties = feature["properties"] as? [String: Any] ?? [:]
            if properties["cluster"] as? Bool == true {
                let count = properties["point_count"] as? Int ?? 0
                clusters.append(count)
                total += count
            } else {
                total += 1
            }
        }
        return (clusters, total)
    }

    @Test func superclustersOptionsHoldOnTheSampleMap() async throws {
        let server = try ServeAndRenderTests.Server([
            "--min-points", "5", "--max-zoom", "14", "--radius", "40", "--extent", "512",
        ])
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        var clustersSeen = 0
        for zoom in 0...6 {
            let (clusters, total) = Self.clusterCounts(try await server.features(bbox: Self.world, zoom: Double(zoom)))
            #expect(total == 34_006, "zoom \(zoom)")
            #expect(clusters.allSatisfy { $0 >= 5 }, "zoom \(zoom): \(clusters.filter { $0 < 5 })")
            clustersSeen += clusters.count
        }
        #expect(clustersSeen > 100)
        // Past --max-zoom: nothing clusters, not even markers that would overlap. Tokyo's wards, at 15 and deeper.
        let tokyo = "139.68,35.62,139.80,35.72"
        for zoom in [15.0, 15.5, 17] {
            let features = try await server.features(bbox: tokyo, zoom: zoom)
            #expect(!features.isEmpty && Self.clusterCounts(features).clusters.isEmpty, "zoom \(zoom)")
        }
        // At zoom 10 (within --max-zoom), the same view has clusters.
        #expect(!Self.clusterCounts(try await server.features(bbox: tokyo, zoom: 10)).clusters.isEmpty)

        // Without the options, the same views have clusters under 5 points.
        let plain = try ServeAndRenderTests.Server()
        defer { _ = plain.process.isRunning ? kill(plain.process.processIdentifier, SIGTERM) : 0 }
        var small = 0
        for zoom in 0...6 {
            small +=
                Self.clusterCounts(try await plain.features(bbox: Self.world, zoom: Double(zoom))).clusters.filter {
                    $0 < 5
                }.count
        }
        #expect(small > 0)
    }

    @Test func theZoomConventionIsSaidAndFollowed() async throws {
        let leaflet = try ServeAndRenderTests.Server(["--max-zoom", "4"])
        defer { _ = leaflet.process.isRunning ? kill(leaflet.process.processIdentifier, SIGTERM) : 0 }
        let mapLibre = try ServeAndRenderTests.Server(["--max-zoom", "3", "--zoom-convention", "maplibre"])
        defer { _ = mapLibre.process.isRunning ? kill(mapLibre.process.processIdentifier, SIGTERM) : 0 }
        // MapLibre's zoom 3 is Leaflet's 4: the same options, the same clusters.
        let europe = "-12,34,32,60"
        let (_, leafletBody) = try await leaflet.get("/api/clusters?bbox=\(europe)&zoom=3.5")
        let (_, mapLibreBody) = try await mapLibre.get("/api/clusters?bbox=\(europe)&zoom=2.5")
        let leafletJSON = try #require(try JSONSerialization.jsonObject(with: leafletBody) as? [String: Any])
        let mapLibreJSON = try #require(try JSONSerialization.jsonObject(with: mapLibreBody) as? [String: Any])
        #expect(leafletJSON["zoom_convention"] as? String == "leaflet")
        #expect(mapLibreJSON["zoom_convention"] as? String == "maplibre")
        let leafletFeatures = try #require(leafletJSON["features"] as? [[String: Any]])
        let mapLibreFeatures = try #require(mapLibreJSON["features"] as? [[String: Any]])
        #expect(leafletFeatures.map { $0["id"] as? String } == mapLibreFeatures.map { $0["id"] as? String })
        #expect(!Self.clusterCounts(leafletFeatures).clusters.isEmpty)
        // Expansion zooms are told in each server's own zooms: one apart.
        let leafletZooms = leafletFeatures.compactMap {
            ($0["properties"] as? [String: Any])?["expansion_zoom_exact"] as? Double
        }
        let mapLibreZooms = mapLibreFeatures.compactMap {
            ($0["properties"] as? [String: Any])?["expansion_zoom_exact"] as? Double
        }
        #expect(!leafletZooms.isEmpty && leafletZooms.count == mapLibreZooms.count)
        for (a, b) in zip(leafletZooms, mapLibreZooms) { #expect(abs(a - 1 - b) < 1e-9) }
        // --max-zoom is the last zoom that clusters, in each convention.
        #expect(Self.clusterCounts(try await leaflet.features(bbox: europe, zoom: 5)).clusters.isEmpty)
        #expect(!Self.clusterCounts(try await leaflet.features(bbox: europe, zoom: 4.9)).clusters.isEmpty)
        #expect(Self.clusterCounts(try await mapLibre.features(bbox: europe, zoom: 4)).clusters.isEmpty)
        #expect(!Self.clusterCounts(try await mapLibre.features(bbox: europe, zoom: 3.9)).clusters.isEmpty)
        let (_, config) = try await mapLibre.get("/api/config")
        #expect(String(decoding: config, as: UTF8.self).contains(#""zoom_convention":"maplibre""#))
    }

    /// A port nobody listens on, as the system gives one out.
    static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func environmentVariablesGiveServeItsOptions() async throws {
        let port = try Self.freePort()
        let server = try ServeAndRenderTests.Server(
            ["--merge", "off"],
            environment: [
                "MAPCLUSTER_PORT": String(port), "MAPCLUSTER_CACHE_CONTROL": "public, max-age=42",
                "MAPCLUSTER_MIN_POINTS": "50", "MAPCLUSTER_PUBLIC_URL": "https://maps.example.org/base",
                // The command line wins over the environment.
                "MAPCLUSTER_MERGE": "on",
            ])
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        #expect(server.port == port)
        let (status, body, headers) = try await server.getWithHeaders("/api/clusters?bbox=\(Self.world)&zoom=3")
        #expect(status == 200)
        #expect(headers["cache-control"] == "public, max-age=42")
        let features = try #require(
            (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["features"] as? [[String: Any]])
        let (clusters, total) = Self.clusterCounts(features)
        #expect(total == 34_006 && !clusters.isEmpty && clusters.allSatisfy { $0 >= 50 })
        let (_, tileJSON, _) = try await server.getWithHeaders("/tiles.json")
        let tiles = (try JSONSerialization.jsonObject(with: tileJSON) as? [String: Any])?["tiles"] as? [String]
        #expect(tiles == ["https://maps.example.org/base/tiles/{z}/{x}/{y}.mvt"])
        let (_, config, _) = try await server.getWithHeaders("/api/config")
        #expect(String(decoding: config, as: UTF8.self).contains(#""merges_markers":false"#))

        // A flag's variable that is neither true nor false is refused, naming it.
        let process = Process()
        process.executableURL = CommandLineTests.executable
        process.arguments = ["serve", "--port", "0"]
        process.environment = ProcessInfo.processInfo.environment.merging(["MAPCLUSTER_WRITABLE": "maybe"]) { $1 }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(message.contains("MAPCLUSTER_WRITABLE must be true or false"), "\(message)")
    }

    @Test func badClusteringOptionsAreRefusedNamingTheOption() throws {
        for (arguments, message) in [
            (["--min-points", "0"], "--min-points must be within 1...1000000, not 0"),
            (["--max-zoom", "30"], "--max-zoom must be within 0...24, not 30.0"),
            (["--radius", "40", "--cell-size", "60"], "give --radius or --cell-size, not both"),
            (["--radius", "-1"], "--radius must be a positive number"),
            (["--merge", "maybe"], "--merge must be 'on' or 'off', not 'maybe'"),
            (["--marker-sizes", "14,26,8"], "--marker-sizes must be four numbers"),
            (["--marker-sizes", "14,-26,8,2"], "--marker-sizes:"),
            (["--zoom-convention", "google"], "google"),
            (["--public-url", "maps.example.org"], "--public-url must be an http(s) URL"),
        ] {
            let run = try CommandLineTests.run(CommandLineTests.executable, ["serve", "--port", "0"] + arguments)
            #expect(run.status != 0, "\(arguments)")
            #expect(run.error.contains(message), "\(arguments): \(run.error)")
        }
    }
}
