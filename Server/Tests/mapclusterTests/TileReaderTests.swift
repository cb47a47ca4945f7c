import Foundation
import MapClusterTestSupport
import Testing

/// The server's vector tiles read by a decoder nobody here wrote.
///
/// The decoder is the PyPI package `mapbox-vector-tile`, driven by Tests/tools/check_tiles.py. Needs a Python that imports it (``Python``);
/// `.ci/run` installs it and asks for this test with `MAPCLUSTER_REQUIRE_BROWSER=1`.
@Suite(.tags(.processes), .tier(.processes))
struct TileReaderTests {
    @Test(Python.tileReaders)
    func everyTileDecodesAndEachZoomHoldsEveryPointOnce() async throws {
        let server = try ServeAndRenderTests.Server()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        let data = try await WebMapTests.runScript(
            "Tests/tools/check_tiles.py", ["http://127.0.0.1:\(server.port)/", "5"])
        let zooms = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(zooms.count == 6)
        for zoom in zooms {
            let z = zoom["z"] as? Int ?? -1
            #expect(zoom["tiles"] as? Int == 1 << (2 * z))
            #expect(zoom["points"] as? Int == 34_006, "zoom \(z)")
            #expect(zoom["content_types"] as? [String] == ["application/vnd.mapbox-vector-tile"])
        }
        // Oceans and poles: some tiles of the deeper zooms are empty, and answered 204.
        #expect((zooms.last?["empty"] as? Int ?? 0) > 0)
    }

    /// Three named reductions and three columns of categories (Tests/tools/properties_check.py): in GeoJSON, in the
    /// world tile as mapbox-vector-tile reads it, after a live edit that brings a continent and a size not seen
    /// before, and refused past each column's limit.
    @Test(Python.tileReaders)
    func namedReductionsAndColumnsOfCategoriesReachGeoJSONTilesAndLiveEdits() async throws {
        let data = try await WebMapTests.runScript(
            "Tests/tools/properties_check.py", [CommandLineTests.executable.path])
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(report["shown_people"] as? Int == report["population"] as? Int)
        #expect(report["new_category_clusters"] as? Int == 1)
    }
}

/// `mapcluster tiles` archives, opened by readers nobody here wrote: the PyPI package `pmtiles`, Python's `sqlite3`,
/// and `mapbox-vector-tile` for every tile in them (Tests/tools/check_archive.py); and served by `serve --tiles-from`.
@Suite(.tags(.processes), .tier(.processes))
struct ArchiveReaderTests {
    static func write(_ format: String, maxZoom: Int = 5) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mapcluster-\(UUID().uuidString).\(format)")
        let run = try CommandLineTests.run("tiles", "-o", url.path, "--max-tile-zoom", String(maxZoom))
        try #require(run.status == 0, "\(run.error)")
        #expect(run.output.contains("tiles of zooms 0–\(maxZoom) to \(url.path)"))
        return url
    }

    @Test(
        Python.tileReaders,
        arguments: ["pmtiles", "mbtiles"])
    func anArchiveOpensWithOtherReadersAndEachZoomHoldsEveryPointOnce(format: String) async throws {
        let url = try Self.write(format)
        defer { try? FileManager.default.removeItem(at: url) }
        let data = try await WebMapTests.runScript("Tests/tools/check_archive.py", [url.path])
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let zooms = try #require(report["zooms"] as? [[String: Any]])
        #expect(zooms.map { $0["z"] as? Int } == Array(0...5))
        for zoom in zooms {
            #expect(zoom["points"] as? Int == 34_006, "zoom \(zoom["z"] ?? "")")
        }
        #expect(report["uncompressed_tiles"] == nil, "every tile gzip-compressed")
        let layers: [[String: Any]]
        if format == "pmtiles" {
            #expect(report["version"] as? Int == 3 && report["tile_type"] as? String == "MVT")
            #expect(report["tile_compression"] as? String == "GZIP" && report["clustered"] as? Bool == true)
            #expect(report["min_zoom"] as? Int == 0 && report["max_zoom"] as? Int == 5)
            #expect(report["in_tile_id_order"] as? Bool == true)
            let bounds = try #require(report["bounds"] as? [Double])
            #expect(bounds.count == 4 && bounds[0] < -170 && bounds[2] > 170)
            let metadata = try #require(report["metadata"] as? [String: Any])
            layers = metadata["vector_layers"] as? [[String: Any]] ?? []
        } else {
            let metadata = try #require(report["metadata"] as? [String: String])
            #expect(metadata["format"] == "pbf" && metadata["minzoom"] == "0" && metadata["maxzoom"] == "5")
            #expect(metadata["bounds"]?.split(separator: ",").compactMap { Double($0) }.count == 4)
            #expect(metadata["name"] != nil && metadata["center"] != nil)
            #expect(report["tiles_columns"] as? [String] == ["zoom_level", "tile_column", "tile_row", "tile_data"])
            let json = try #require(report["json"] as? [String: Any])
            layers = json["vector_layers"] as? [[String: Any]] ?? []
        }
        #expect(layers.map { $0["id"] as? String } == ["clusters"])
        let fields = layers.first?["fields"] as? [String: String] ?? [:]
        for field in ["cluster", "cluster_id", "point_count", "expansion_zoom", "population_sum", "name"] {
            #expect(fields[field] != nil, "\(field)")
        }
    }

    @Test(
        Python.tileReaders,
        arguments: ["pmtiles", "mbtiles"])
    func aServerOfAnArchiveServesEveryPointAtEachZoom(format: String) async throws {
        let url = try Self.write(format)
        defer { try? FileManager.default.removeItem(at: url) }
        let server = try ServeAndRenderTests.Server(["--tiles-from", url.path])
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        let data = try await WebMapTests.runScript(
            "Tests/tools/check_tiles.py", ["http://127.0.0.1:\(server.port)/", "5"])
        let zooms = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(zooms.count == 6)
        for zoom in zooms {
            #expect(zoom["points"] as? Int == 34_006, "zoom \(zoom["z"] ?? "")")
            #expect(zoom["content_types"] as? [String] == ["application/vnd.mapbox-vector-tile"])
        }
        #expect((zooms.last?["empty"] as? Int ?? 0) > 0)
    }

    /// What the watcher of an interrupted `tiles` saw.
    struct Interrupted: Sendable {
        /// Whether the process was still running, with its hidden partial file there, when SIGINT was sent.
        var interruptedWhileWriting: Bool
        /// Whether the partial file was seen at all.
        var partialSeen: Bool
        /// The exit status.
        var status: Int32
        /// The hidden partial file's path.
        var partial: String
    }

    /// Ctrl-C in the middle of `tiles` leaves neither the archive nor its hidden partial file.
    ///
    /// The process is watched from a thread of its own: an async test's sleeps resume only when the cooperative pool
    /// has a free thread, and beside the whole suite the archive was finished and renamed before such a test looked
    /// again; a synchronous test, on the other hand, held one of the pool's two threads for minutes.
    @Test func anInterruptedRunLeavesNothingUnderEitherName() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mapcluster-\(UUID().uuidString).pmtiles")
        let run = try await onOwnThread {
            let process = Process()
            process.executableURL = CommandLineTests.executable
            // Deep enough to take seconds.
            process.arguments = ["tiles", "-o", url.path, "--max-tile-zoom", "18"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let partial = url.deletingLastPathComponent().appendingPathComponent(
                ".\(url.lastPathComponent).\(process.processIdentifier).partial"
            ).path
            // Loading and indexing the cities comes first, a second alone and far longer beside the whole suite; the
            // pyramid after it takes about two minutes in a debug build.
            let deadline = ContinuousClock.now + .seconds(180)
            while !FileManager.default.fileExists(atPath: partial), process.isRunning, ContinuousClock.now < deadline {
                usleep(20_000)
            }
            let seen = FileManager.default.fileExists(atPath: partial)
            let writing = seen && process.isRunning
            if process.isRunning { kill(process.processIdentifier, writing ? SIGINT : SIGKILL) }
            process.waitUntilExit()
            return Interrupted(
                interruptedWhileWriting: writing, partialSeen: seen, status: process.terminationStatus,
                partial: partial)
        }
        try #require(run.partialSeen, "the archive is made under a hidden name")
        try #require(run.interruptedWhileWriting, "still writing when interrupted (it ended with \(run.status))")
        #expect(run.status == 130)
        #expect(!FileManager.default.fileExists(atPath: run.partial))
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test func whatCannotBeWrittenOrServedIsAnErrorThatSaysWhy() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("mapcluster-no-such-dir/x.pmtiles")
        let csv = try CommandLineTests.temporaryFile("id,lat,lon\n1,48.85,2.35\n")
        for (arguments, message) in [
            (["tiles", "-o", "clusters.zip"], "--output must end in .pmtiles or .mbtiles"),
            (
                ["tiles", "-o", "x.pmtiles", "--min-tile-zoom", "6", "--max-tile-zoom", "2"],
                "--min-tile-zoom 6 is deeper than --max-tile-zoom 2"
            ),
            (
                ["tiles", "-o", "x.pmtiles", "--max-tile-zoom", "24"],
                "--min-tile-zoom and --max-tile-zoom must be within 0...23"
            ),
            (["tiles", "-o", missing.path], "cannot write in"),
            (["serve", "--tiles-from", "/nonexistent/x.pmtiles", "--port", "0"], "cannot be read"),
            (["serve", "--tiles-from", csv, "--port", "0"], "not a PMTiles or MBTiles archive"),
            (["serve", "--tiles-from", "x.pmtiles", csv], "give it without point files"),
        ] {
            let run = try CommandLineTests.run(CommandLineTests.executable, arguments)
            #expect(run.status != 0, "\(arguments)")
            #expect(run.error.contains(message), "\(arguments): \(run.error)")
        }
        #expect(
            !FileManager.default.fileExists(atPath: "clusters.zip")
                && !FileManager.default.fileExists(atPath: "x.pmtiles"))
    }
}
