public import Foundation
@_spi(MapClusterServer) import MapCluster
@_spi(MapClusterServer) import MapClusterIO
import MapClusterManager
import MapClusterTiles

/// What each fuzz target does with one input: the code the libFuzzer executables (`Fuzz/`, run by `scripts/fuzz.sh`)
/// and the regression test of the inputs they found share.
///
/// An input may be refused with an error; it must never trap, and what is accepted must keep the invariants each
/// target checks (a failed check traps, which the fuzzer reports as a crash).
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A CSV point file: read, then indexed with a category, a weight and a reduction, and clustered.
    case csv
    /// A GeoJSON point file, through the JSON stream reader: read, indexed and clustered.
    case geojson
    /// The body of a live server's edit (`POST /api/points`): a Feature or a FeatureCollection of Points with ids.
    case edit
    /// The API's request values: a `bbox`, a marker id from a URL path (`/api/clusters/{id}/…`), the zoom and
    /// the page numbers, one per line of the input.
    case query
    /// A PMTiles archive, as `serve --tiles-from` opens it: its header, directories, metadata and tiles (gunzipped, as
    /// the server answers a client that doesn't take gzip).
    case pmtiles
    /// An MBTiles archive (an SQLite file), as `serve --tiles-from` opens it.
    case mbtiles
    /// The vector tile encoder: a CSV point file's points, indexed with aggregates and clustered into the tiles that
    /// hold them at zooms 0 to 4; each tile decodes back to the features the encoder meant, value for value.
    case tile

    /// Runs the target on one input.
    public func run(_ data: Data) {
        switch self {
        case .csv: Self.check(try? CSVPointReader().read(data, file: "input.csv"))
        case .geojson: Self.check(try? GeoJSONPointReader().read(data, file: "input.geojson"))
        case .edit: Self.check(try? GeoJSONPointReader().readEdit(data, source: "request body"))
        case .query: Self.query(data)
        case .pmtiles: Self.archive(data, extension: "pmtiles")
        case .mbtiles: Self.archive(data, extension: "mbtiles")
        case .tile: Self.tiles(try? CSVPointReader().read(data, file: "input.csv"))
        }
    }

    /// Opens `data` as an archive file and reads what a server of it would.
    ///
    /// That is its metadata, and the first, middle (of its bounds) and last tile of each of its zooms up to 6,
    /// gunzipped. Every failure must be an error, never a trap.
    private static func archive(_ data: Data, extension fileExtension: String) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mapcluster-fuzz-\(ProcessInfo.processInfo.processIdentifier).\(fileExtension)")
        defer { try? FileManager.default.removeItem(at: url) }
        guard (try? data.write(to: url)) != nil, let archive = try? TileArchiveFormat.open(url) else { return }
        let metadata = archive.metadata
        // The middle of the archive's bounds (any numbers a hostile archive holds), or of the world.
        var middle = MapPoint(x: MapSize.worldWidth / 2, y: MapSize.worldWidth / 2)
        if let bounds = metadata.bounds, bounds.count == 4,
            let center = try? Coordinate(latitude: (bounds[1] + bounds[3]) / 2, longitude: (bounds[0] + bounds[2]) / 2)
        {
            middle = MapPoint(center)
        }
        // Its zooms, up to 6, whatever it claims them to be.
        let lowest = min(max(0, metadata.minimumZoom), 6)
        for z in lowest...min(max(lowest, metadata.maximumZoom), 6) {
            let n = 1 << z
            let column = min(n - 1, max(0, Int(middle.x / MapSize.worldWidth * Double(n))))
            let row = min(n - 1, max(0, Int(middle.y / MapSize.worldWidth * Double(n))))
            for (x, y) in [(0, 0), (column, row), (n - 1, n - 1)] {
                guard let address = TileAddress(z: z, x: x, y: y), let bytes = try? archive.tile(address) else {
                    continue
                }
                if Gzip.isCompressed(bytes) { _ = try? Gzip.decompress(bytes) }
            }
        }
    }

    /// Indexes the points with aggregates of their first columns, encodes the tiles that hold them at zooms 0 to 4,
    /// and checks that each decodes back to what the encoder meant: the same features in order, with the same ids,
    /// positions and property values.
    private static func tiles(_ points: PointSet?) {
        guard let points, !points.records.isEmpty else { return }
        let columns = points.propertyNames
        let aggregation = PointAggregation(
            weight: columns.first, category: columns.dropFirst().first,
            reductions: columns.dropFirst(2).first.map { [.init($0, .sum)] } ?? [])
        let index = (try? points.indexByRecord(aggregating: aggregation)) ?? points.indexByRecord()
        let tiles = ClusterTiles(points: points, clustering: Clustering(index))
        var addresses: Set<TileAddress> = []
        for record in points.records.prefix(16) {
            let point = record.coordinate.mapPoint
            for z in 0...4 {
                let n = Double(1 << z)
                let x = min(Int(n) - 1, Int(point.x / MapSize.worldWidth * n))
                let y = min(Int(n) - 1, Int(point.y / MapSize.worldWidth * n))
                if let address = TileAddress(z: z, x: x, y: y) { addresses.insert(address) }
            }
        }
        for address in addresses {
            let meant = tiles.features(of: address)
            guard let bytes = tiles.tile(address) else {
                precondition(meant.isEmpty, "a tile without bytes has no feature")
                continue
            }
            let decoded: DecodedTile
            do {
                decoded = try DecodedTile(bytes)
            } catch {
                preconditionFailure("tile \(address) does not decode: \(error)")
            }
            precondition(decoded.layerName == ClusterTiles.layerName && decoded.extent == ClusterTiles.extent)
            precondition(decoded.version == 2, "MVT 2")
            precondition(decoded.features.count == meant.count, "tile \(address): every feature, once")
            for (feature, expected) in zip(decoded.features, meant) {
                precondition(feature.id == expected.id, "tile \(address): a feature's id")
                precondition(feature.x == expected.x && feature.y == expected.y, "tile \(address): a position")
                let written = expected.properties.compactMap { key, value in Self.stored(value).map { (key, $0) } }
                precondition(
                    feature.properties.map(\.0) == written.map(\.0), "tile \(address): the properties' names")
                for ((key, read), (_, meant)) in zip(feature.properties, written) {
                    precondition(read == meant, "tile \(address): property \(key) reads \(read), not \(meant)")
                }
            }
        }
    }

    /// What a property is in a tile: a number, string or bool as itself; an array or object as its JSON text (any
    /// string); nothing for null, which MVT can't hold.
    private static func stored(_ value: PropertyValue) -> DecodedTile.Value? {
        switch value {
        case .null: nil
        case .string(let text): .string(text)
        case .bool(let bool): .bool(bool)
        case .number(let number): .number(number)
        case .array, .object: .string(Self.jsonText(value))
        }
    }

    private static func jsonText(_ value: PropertyValue) -> String {
        var json = JSONText()
        json.value(value)
        return json.text
    }

    /// Indexes and clusters points that were read, with aggregates of their first columns where they have any, and
    /// checks that the world's clusters hold every point once.
    private static func check(_ points: PointSet?) {
        guard let points else { return }
        let index: ClusterIndex<Int>
        let columns = points.propertyNames
        let aggregation = PointAggregation(
            weight: columns.first, category: columns.dropFirst().first,
            reductions: columns.dropFirst(2).first.map { [.init($0, .sum)] } ?? [])
        if let aggregated = try? points.indexByRecord(aggregating: aggregation) {
            index = aggregated
        } else {
            index = points.indexByRecord()
        }
        precondition(index.count == points.records.count, "every record read is indexed")
        for zoom in [0.0, 3, 9] {
            let world = Viewport(rect: .world, size: ViewSize(showing: .world, atZoom: zoom))
            let clustering = Clustering(index)
            let clusters = clustering.clusters(in: world)
            let total = clusters.reduce(0) { $0 + $1.count }
            precondition(total == index.count, "the world's clusters hold every point once")
            for cluster in clusters.prefix(8) {
                guard let children = try? clustering.children(of: cluster) else {
                    preconditionFailure("a clustering refused a cluster it made")
                }
                precondition(
                    children.isEmpty || children.reduce(0) { $0 + $1.count } == cluster.count,
                    "a cluster's children hold its points")
            }
            _ = clustering.aggregates(ofOwn: clusters)
        }
    }

    /// Parses each line as every kind of request value the API takes, and checks that a marker id survives its
    /// round trip through text.
    private static func query(_ data: Data) {
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            let text = String(line)
            if let rect = try? MapRect(boundingBox: text) {
                precondition(rect.size.width > 0 && rect.size.height > 0, "a bbox that parses is not empty")
                _ = ViewSize(showing: rect, atZoom: 3)
            }
            if let id = ClusterIDText(text) {
                precondition(ClusterIDText(id.description) == id, "a cluster id reads back from its text")
            }
            if let decoded = text.removingPercentEncoding { _ = ClusterIDText(decoded) }
            _ = Double(text)
            _ = Int(text)
        }
    }
}
