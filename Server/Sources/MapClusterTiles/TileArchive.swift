public import Foundation

/// A file of vector tiles built once (PMTiles or MBTiles), read tile by tile.
public protocol TileArchive: Sendable {
    /// What the archive says of its tiles: zooms, bounds, layer and fields.
    var metadata: TileArchiveMetadata { get }

    /// The stored bytes of the tile at `address` (gzip-compressed when the archive's tiles are), or `nil` if the
    /// archive has no such tile.
    ///
    /// - Throws: ``TileArchiveError`` if the file can't be read there or its directory is damaged.
    func tile(_ address: TileAddress) throws(TileArchiveError) -> Data?
}

/// What went wrong with a tile archive, with the file it was.
public enum TileArchiveError: Error, Equatable, CustomStringConvertible {
    /// The file is not a tile archive this library reads: not PMTiles v3 or MBTiles, or not of vector tiles.
    case unsupported(String)
    /// The file is an archive, but a part of it does not read as its format says it should.
    case corrupt(String)
    /// Reading or writing the file failed.
    case io(String)

    /// The problem, in one sentence.
    public var description: String {
        switch self {
        case .unsupported(let message), .corrupt(let message), .io(let message): message
        }
    }
}

/// What a tile archive says of its tiles, as TileJSON and the archives' own metadata carry it.
public struct TileArchiveMetadata: Sendable, Equatable {
    /// The shallowest zoom with tiles.
    public var minimumZoom: Int
    /// The deepest zoom with tiles.
    public var maximumZoom: Int
    /// West, south, east, north in degrees; `nil` if unknown.
    public var bounds: [Double]?
    /// The archive's name.
    public var name: String
    /// What it holds, in a sentence.
    public var description: String
    /// The vector layers, with their fields: what TileJSON's `vector_layers` lists.
    public var layers: [VectorLayer]

    /// A vector layer and the properties its features carry.
    public struct VectorLayer: Codable, Sendable, Equatable {
        /// The layer's name.
        public var id: String
        /// Each property's name and what it holds.
        public var fields: [String: String]
        /// The shallowest zoom the layer is in.
        public var minzoom: Int?
        /// The deepest zoom the layer is in.
        public var maxzoom: Int?

        /// A layer named `id` with `fields`, in zooms `minzoom` to `maxzoom`.
        public init(id: String, fields: [String: String], minzoom: Int? = nil, maxzoom: Int? = nil) {
            self.id = id
            self.fields = fields
            self.minzoom = minzoom
            self.maxzoom = maxzoom
        }
    }

    /// Metadata of tiles in zooms `minimumZoom...maximumZoom` within `bounds`.
    public init(
        minimumZoom: Int, maximumZoom: Int, bounds: [Double]?, name: String, description: String,
        layers: [VectorLayer]
    ) {
        self.minimumZoom = minimumZoom
        self.maximumZoom = maximumZoom
        self.bounds = bounds
        self.name = name
        self.description = description
        self.layers = layers
    }

    /// `bounds` (west, south, east, north) as readers that take west < east want them: a box across the antimeridian
    /// (east below west) becomes the whole width of the world.
    public static func westToEast(_ bounds: [Double]) -> [Double] {
        bounds[2] < bounds[0] ? [-180, bounds[1], 180, bounds[3]] : bounds
    }

    /// A middle of the bounds and a zoom to open at, as longitude, latitude and zoom.
    var center: (longitude: Double, latitude: Double, zoom: Int) {
        guard let bounds, bounds.count == 4 else { return (0, 0, minimumZoom) }
        // Across the antimeridian (east below west), the middle is on the far side of the world.
        var longitude = (bounds[0] + bounds[2]) / 2
        if bounds[2] < bounds[0] { longitude += longitude > 0 ? -180 : 180 }
        return (longitude, (bounds[1] + bounds[3]) / 2, minimumZoom)
    }

    /// The JSON object both formats keep: `{"vector_layers": [...]}` with the name and description.
    var json: Data {
        struct Document: Encodable {
            let name: String
            let description: String
            let format = "pbf"
            let generator = "mapcluster"
            let vectorLayers: [VectorLayer]

            enum CodingKeys: String, CodingKey {
                case name, description, format, generator
                case vectorLayers = "vector_layers"
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let document = Document(name: name, description: description, vectorLayers: layers)
        // Strings, numbers and dictionaries of strings always encode.
        return (try? encoder.encode(document)) ?? Data("{}".utf8)
    }

    /// The vector layers of a metadata JSON object (`vector_layers`), or none if it has none that read.
    static func layers(fromJSON json: Data) -> [VectorLayer] {
        struct Document: Decodable {
            let vectorLayers: [VectorLayer]?

            enum CodingKeys: String, CodingKey {
                case vectorLayers = "vector_layers"
            }
        }
        return (try? JSONDecoder().decode(Document.self, from: json))?.vectorLayers ?? []
    }
}

/// The archive formats the pyramid is written to.
public enum TileArchiveFormat: String, Sendable, CaseIterable {
    /// PMTiles v3: one file with its own directory, served by range requests from object storage and CDNs.
    case pmtiles
    /// MBTiles 1.3: an SQLite database.
    case mbtiles

    /// The format a file name's extension names (`.pmtiles`, `.mbtiles`), or `nil`.
    public init?(path: String) {
        let name = path.lowercased()
        guard let format = Self.allCases.first(where: { name.hasSuffix(".\($0.rawValue)") }) else { return nil }
        self = format
    }

    /// Opens the archive at `url` to read its tiles, by what its first bytes say it is.
    ///
    /// - Throws: ``TileArchiveError`` if the file can't be read, or is not a PMTiles v3 or MBTiles archive of vector
    ///   tiles.
    public static func open(_ url: URL) throws(TileArchiveError) -> any TileArchive {
        let head: Data
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            head = try handle.read(upToCount: 16) ?? Data()
        } catch {
            throw .io("\(url.path): cannot be read (\(error.localizedDescription))")
        }
        if head.starts(with: Data("PMTiles".utf8)) { return try PMTilesReader(url: url) }
        if head.starts(with: Data("SQLite format 3".utf8)) { return try MBTilesReader(url: url) }
        throw .unsupported("\(url.path): not a PMTiles or MBTiles archive")
    }
}

/// Where an archive's tiles go as they are made, in PMTiles order (zoom by zoom, each along the Hilbert curve).
protocol TileArchiveWriter: AnyObject {
    /// Adds the gzip-compressed tile at `address`, after every tile of a lower PMTiles tile id.
    func add(_ address: TileAddress, bytes: Data) throws(TileArchiveError)
    /// Writes what remains (directories, metadata) and closes the file.
    func finish(metadata: TileArchiveMetadata) throws(TileArchiveError)
}
