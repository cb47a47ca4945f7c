import Foundation
import Hummingbird
@_spi(MapClusterServer) import MapCluster
import MapClusterIO
import MapClusterServer
import Testing

@testable import MapClusterTiles

/// The tile pyramid: PMTiles' tile ids and directories, the pyramid's tiles against the live ones, archives written
/// and read back, and a server of an archive.
struct ArchiveTests {
    static var tiles: ClusterTiles {
        get throws { try ServerTests.loaded.get().tiles }
    }

    /// A tile's features in an order of their own, to compare two tiles whatever order their features come in.
    static func normalized(_ bytes: Data) throws -> [String] {
        try TileTests.features(bytes).map { feature in
            let properties = feature.properties.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return "\(feature.x),\(feature.y) " + properties.joined(separator: " ")
        }.sorted()
    }

    static func temporaryURL(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("mapcluster-\(UUID().uuidString)-\(name)")
    }

    @Test func tileIDsCountTheZoomsAboveThenFollowTheHilbertCurve() throws {
        // The values the PMTiles specification's own tests give.
        let known: [(Int, Int, Int, UInt64)] = [
            (0, 0, 0, 0), (1, 0, 0, 1), (1, 0, 1, 2), (1, 1, 1, 3), (1, 1, 0, 4), (2, 0, 0, 5), (3, 0, 0, 21),
            (20, 0, 0, 366_503_875_925),
        ]
        for (z, x, y, id) in known {
            #expect(PMTiles.tileID(try #require(TileAddress(z: z, x: x, y: y))) == id, "\(z)/\(x)/\(y)")
        }
        for z in 1...6 {
            let side = 1 << z
            let base = UInt64((side * side - 1) / 3)
            var byID: [UInt64: (Int, Int)] = [:]
            for x in 0..<side {
                for y in 0..<side { byID[PMTiles.tileID(try #require(TileAddress(z: z, x: x, y: y)))] = (x, y) }
            }
            // Every id of the zoom once, and each tile next to the one before it: a Hilbert curve.
            #expect(Set(byID.keys) == Set(base..<base + UInt64(side * side)), "zoom \(z)")
            for id in base..<base + UInt64(side * side) - 1 {
                let (a, b) = (try #require(byID[id]), try #require(byID[id + 1]))
                #expect(abs(a.0 - b.0) + abs(a.1 - b.1) == 1, "zoom \(z): \(a) then \(b)")
            }
        }
    }

    @Test func directoriesReadBackAndFindTilesInRuns() throws {
        var entries: [PMTiles.Entry] = []
        var offset: UInt64 = 0
        var id: UInt64 = 3
        for i in 0..<500 {
            let length = UInt32(10 + i % 7)
            let run = UInt32(1 + i % 3)
            // Mostly one after the other; now and then a tile whose bytes lie elsewhere (a shared tile).
            let at = i % 11 == 0 ? 7 : offset
            entries.append(PMTiles.Entry(tileID: id, offset: at, length: length, runLength: run))
            if at == offset { offset += UInt64(length) }
            id += UInt64(run) + UInt64(i % 2)
        }
        let bytes = PMTiles.serialize(entries[...])
        #expect(try PMTiles.deserialize(bytes, path: "test") == entries)
        for entry in entries.prefix(50) {
            #expect(PMTiles.entry(for: entry.tileID, in: entries) == entry)
            #expect(PMTiles.entry(for: entry.tileID + UInt64(entry.runLength) - 1, in: entries) == entry)
        }
        #expect(PMTiles.entry(for: 2, in: entries) == nil)
        // A gap after a run: entry 1 starts at 3 + 2 + 1 = 6 with a run of 2, entry 2 starts at 6 + 2 = 8.
        let gap = entries[0].tileID + UInt64(entries[0].runLength)
        if gap < entries[1].tileID { #expect(PMTiles.entry(for: gap, in: entries) == nil) }
        // Damage is an error, not a crash.
        #expect(throws: TileArchiveError.self) { try PMTiles.deserialize(bytes.prefix(bytes.count / 2), path: "t") }
        #expect(throws: TileArchiveError.self) { try PMTiles.deserialize(Data([0xFF, 0xFF, 0xFF, 0x7F]), path: "t") }
    }

    @Test(arguments: 0...5)
    func thePyramidsTilesAreTheLiveTilesFeatureForFeature(zoom: Int) throws {
        let tiles = try Self.tiles
        let pyramid = TilePyramid(tiles: tiles, zooms: zoom...zoom)
        let made = pyramid.zoomTiles(zoom)
        // In PMTiles order.
        let ids = made.map { PMTiles.tileID($0.0) }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        var live: [TileAddress: Data] = [:]
        for x in 0..<(1 << zoom) {
            for y in 0..<(1 << zoom) {
                let address = try #require(TileAddress(z: zoom, x: x, y: y))
                live[address] = tiles.tile(address)
            }
        }
        #expect(Set(made.map(\.0)) == Set(live.keys), "the same non-empty tiles")
        for (address, bytes) in made {
            #expect(Gzip.isCompressed(bytes))
            let liveBytes = try #require(live[address])
            #expect(try Self.normalized(Gzip.decompress(bytes)) == Self.normalized(liveBytes), "\(address)")
        }
    }

    @Test(arguments: TileArchiveFormat.allCases)
    func anArchiveReadsBackTileForTileAndAppearsOnlyWhenComplete(format: TileArchiveFormat) throws {
        let tiles = try Self.tiles
        let url = Self.temporaryURL("cities.\(format.rawValue)")
        defer { try? FileManager.default.removeItem(at: url) }
        // Something there already is replaced, not appended to.
        try Data("old".utf8).write(to: url)
        var pyramid = TilePyramid(tiles: tiles, zooms: 0...5)
        pyramid.name = "cities"
        let steps = Steps()
        let summary = try pyramid.write(to: url, format: format) { steps.add($0) }
        #expect(!FileManager.default.fileExists(atPath: TilePyramid.partialURL(for: url).path))
        #expect(summary.tilesByZoom.keys.sorted() == Array(0...5) && summary.bytes > 0)
        #expect(steps.last?.zoom == 5 && steps.last?.rowsDone == 32 && steps.last?.tiles == summary.tileCount)

        let archive = try TileArchiveFormat.open(url)
        #expect(archive.metadata.minimumZoom == 0 && archive.metadata.maximumZoom == 5)
        #expect(archive.metadata.name == "cities")
        #expect(archive.metadata.layers.map(\.id) == ["clusters"])
        #expect(archive.metadata.layers.first?.fields == tiles.fields)
        let bounds = try #require(archive.metadata.bounds)
        #expect(bounds[0] < -170 && bounds[2] > 170 && bounds[1] < -50 && bounds[3] > 70)
        var count = 0
        for zoom in 0...5 {
            for (address, bytes) in pyramid.zoomTiles(zoom) {
                #expect(try archive.tile(address) == bytes, "\(address)")
                count += 1
            }
        }
        #expect(count == summary.tileCount)
        // A tile of the ocean, and one deeper than the archive: none.
        #expect(try archive.tile(try #require(TileAddress(z: 5, x: 2, y: 20))) == nil)
        #expect(try archive.tile(try #require(TileAddress(z: 9, x: 259, y: 176))) == nil)
    }

    @Test func aLargeDirectoryGoesToLeavesThatReadBack() throws {
        let url = Self.temporaryURL("leaves.pmtiles")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try PMTilesWriter(url: url)
        // 100,000 tiles of zoom 10 picked at random, each different: far more entries than the root's 16 KiB hold.
        var generator = SplitMix64(seed: 146)
        var picked: Set<TileAddress> = []
        while picked.count < 100_000 {
            picked.insert(
                try #require(
                    TileAddress(
                        z: 10, x: Int.random(in: 0..<1024, using: &generator),
                        y: Int.random(in: 0..<1024, using: &generator))))
        }
        var addresses = picked.map { (PMTiles.tileID($0), $0) }
        addresses.sort { $0.0 < $1.0 }
        func bytes(_ address: TileAddress) -> Data { Data("\(address.x),\(address.y)".utf8) }
        for (_, address) in addresses { try writer.add(address, bytes: bytes(address)) }
        try writer.finish(
            metadata: TileArchiveMetadata(
                minimumZoom: 8, maximumZoom: 8, bounds: nil, name: "leaves", description: "", layers: []))
        let reader = try PMTilesReader(url: url)
        let header = try PMTiles.Header(try Data(contentsOf: url).prefix(PMTiles.headerSize), path: url.path)
        #expect(header.leavesLength > 0 && header.rootOffset + header.rootLength <= UInt64(PMTiles.rootSpace))
        #expect(header.addressedTiles == 100_000 && header.clustered)
        for (_, address) in addresses where (address.x * 7 + address.y) % 13 == 0 {
            #expect(try reader.tile(address) == bytes(address))
        }
        #expect(try reader.tile(try #require(TileAddress(z: 9, x: 0, y: 0))) == nil)
        let missing = try #require(
            (0..<1024).lazy.compactMap { TileAddress(z: 10, x: $0, y: 7) }.first { !picked.contains($0) })
        #expect(try reader.tile(missing) == nil)
    }

    @Test func runsOfEqualTilesAreStoredOnce() throws {
        let url = Self.temporaryURL("runs.pmtiles")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try PMTilesWriter(url: url)
        let sea = Data("sea".utf8)
        for z in 0...3 {
            for (_, address) in try (0..<(1 << z)).flatMap({ x in
                try (0..<(1 << z)).map { y in try #require(TileAddress(z: z, x: x, y: y)) }
            }).map({ (PMTiles.tileID($0), $0) }).sorted(by: { $0.0 < $1.0 }) {
                try writer.add(address, bytes: sea)
            }
        }
        try writer.finish(
            metadata: TileArchiveMetadata(
                minimumZoom: 0, maximumZoom: 3, bounds: nil, name: "sea", description: "", layers: []))
        let header = try PMTiles.Header(try Data(contentsOf: url).prefix(PMTiles.headerSize), path: url.path)
        #expect(header.addressedTiles == 85 && header.tileEntries == 1 && header.tilesLength == 3)
        let reader = try PMTilesReader(url: url)
        #expect(try reader.tile(try #require(TileAddress(z: 3, x: 5, y: 6))) == sea)
    }

    @Test func aDamagedOrForeignFileIsAnErrorThatSaysSo() throws {
        let tiles = try Self.tiles
        let url = Self.temporaryURL("cities.pmtiles")
        defer { try? FileManager.default.removeItem(at: url) }
        try TilePyramid(tiles: tiles, zooms: 0...3).write(to: url, format: .pmtiles)
        let whole = try Data(contentsOf: url)
        let damaged = Self.temporaryURL("damaged.pmtiles")
        defer { try? FileManager.default.removeItem(at: damaged) }
        func opening(_ bytes: Data) -> TileArchiveError? {
            do {
                try bytes.write(to: damaged)
                _ = try TileArchiveFormat.open(damaged)
                return nil
            } catch let error as TileArchiveError {
                return error
            } catch {
                return .io("\(error)")
            }
        }
        // Cut short inside the root directory; another version; another kind of tiles; not an archive at all.
        #expect(opening(whole.prefix(200))?.description.contains(damaged.path) == true)
        var version = whole
        version[7] = 2
        #expect(opening(version) == .unsupported("\(damaged.path): PMTiles version 2; only 3 is read"))
        var raster = whole
        raster[99] = 2
        #expect(opening(raster) == .unsupported("\(damaged.path): tiles of type 2, not vector tiles (1)"))
        #expect(opening(Data("id,lat,lon\n".utf8)) == .unsupported("\(damaged.path): not a PMTiles or MBTiles archive"))
        #expect(throws: TileArchiveError.self) { try TileArchiveFormat.open(Self.temporaryURL("missing.pmtiles")) }
        // Cut short at the end, where the metadata is.
        #expect(opening(whole.prefix(whole.count - 10)) != nil)
        // A header whose tiles lie past the end: it opens, and each tile is an error.
        var moved = whole
        withUnsafeBytes(of: UInt64(whole.count).littleEndian) { moved.replaceSubrange(56..<64, with: $0) }
        try moved.write(to: damaged)
        let archive = try TileArchiveFormat.open(damaged)
        #expect(throws: TileArchiveError.self) { try archive.tile(try #require(TileAddress(z: 0, x: 0, y: 0))) }
    }

    @Test func aServerOfAnArchiveAnswersAsTheLiveServerDoes() async throws {
        let tiles = try Self.tiles
        let url = Self.temporaryURL("cities.pmtiles")
        defer { try? FileManager.default.removeItem(at: url) }
        try TilePyramid(tiles: tiles, zooms: 0...4).write(to: url, format: .pmtiles)
        let router = buildRouter(archive: try TileArchiveFormat.open(url), files: try PageFiles())
        let client = RouterClient(router)
        let (status, json, _) = try await ServerTests.get(client, "/tiles.json")
        #expect(status == .ok && json["minzoom"] as? Int == 0 && json["maxzoom"] as? Int == 4)
        #expect((json["tiles"] as? [String])?.first?.hasSuffix("/tiles/{z}/{x}/{y}.mvt") == true)
        for (x, y) in [(8, 5), (4, 6), (2, 6)] {
            let address = try #require(TileAddress(z: 4, x: x, y: y))
            let live = try #require(tiles.tile(address))
            // Without gzip, inflated; with it, as stored.
            let (plainStatus, plain) = try await TileTests.tile(client, "/tiles/4/\(x)/\(y).mvt")
            #expect(plainStatus == .ok)
            #expect(try Self.normalized(plain) == Self.normalized(live))
            try await client.execute(
                uri: "/tiles/4/\(x)/\(y).mvt", method: .get, headers: [.acceptEncoding: "gzip"]
            ) { response in
                #expect(response.headers[.contentEncoding] == "gzip")
                let body = Data(response.body.readableBytesView)
                let decoded = try Self.normalized(Gzip.decompress(body))
                #expect(try decoded == Self.normalized(live))
            }
        }
        let (empty, body) = try await TileTests.tile(client, "/tiles/4/0/15.mvt")
        #expect(empty == .noContent && body.isEmpty)
        let (deeper, _) = try await TileTests.tile(client, "/tiles/9/259/176.mvt")
        #expect(deeper == .noContent)
        let (bad, badJSON, _) = try await ServerTests.get(client, "/tiles/2/9/0.mvt")
        #expect(bad == .badRequest && (badJSON["error"] as? String)?.contains("x 9 is outside 0...3") == true)
        let (api, apiJSON, _) = try await ServerTests.get(client, "/api/clusters?zoom=2")
        #expect(api == .notFound && (apiJSON["error"] as? String)?.contains("tile archive") == true)
        let (filtered, _, _) = try await ServerTests.get(client, "/tiles/4/8/5.mvt?categories=EU")
        #expect(filtered == .badRequest)
        try await client.execute(uri: "/", method: .get) { response in
            #expect(response.status == .found && response.headers[.location] == "maplibre.html")
        }
        try await client.execute(uri: "/maplibre.html", method: .get) { response in
            #expect(response.status == .ok)
            #expect(String(buffer: response.body).contains("maplibre-gl.js"))
        }
    }
}

/// The progress a pyramid reported, from whichever threads reported it.
private final class Steps: @unchecked Sendable {
    private let lock = NSLock()
    private var steps: [TilePyramid.Progress] = []

    func add(_ step: TilePyramid.Progress) { lock.withLock { steps.append(step) } }

    /// The step furthest along: the last zoom's, with the most rows done.
    var last: TilePyramid.Progress? {
        lock.withLock { steps.max { ($0.zoom, $0.rowsDone) < ($1.zoom, $1.rowsDone) } }
    }
}
