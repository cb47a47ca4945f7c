package import Foundation
package import Hummingbird
package import MapClusterManager
package import MapClusterTiles
import NIOCore

/// A GeoJSON text answer (`application/geo+json`), as `ClusterGeoJSON` writes it.
package struct GeoJSONAnswer: CacheableAnswer, Sendable {
    /// The GeoJSON text.
    package let text: String

    var contentHash: String { StableHash.of(text) }

    /// The text as the response body, gzip-compressed for a client that accepts it.
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        Compression.response(
            ByteBuffer(string: text), headers: [.contentType: "application/geo+json", .cacheControl: "no-store"],
            for: request)
    }
}

/// `/api/clusters/{id}/expansion-zoom`: the whole zoom at which a cluster has split, as supercluster gives it, and the
/// exact one; `null` if it never does.
package struct ExpansionZoomAnswer: ResponseEncodable, CacheableAnswer, Sendable, Equatable {
    /// The cluster's id, as asked.
    package let clusterID: String
    /// The exact zoom at which it splits.
    package let expansionZoom: Double?
    /// How the zooms are counted.
    package var zoomConvention = ZoomConvention.leaflet

    enum CodingKeys: String, CodingKey {
        case clusterID = "cluster_id"
        case expansionZoom = "expansion_zoom"
        case exact = "expansion_zoom_exact"
        case zoomConvention = "zoom_convention"
    }

    /// Writes `null` for a cluster that never splits, where a synthesized encoder would leave the key out.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(clusterID, forKey: .clusterID)
        try container.encode(expansionZoom.map { Int($0.rounded(.up)) }, forKey: .expansionZoom)
        try container.encode(expansionZoom, forKey: .exact)
        try container.encode(zoomConvention, forKey: .zoomConvention)
    }
}

/// `/api/stats`: what is served and what it costs.
package struct StatsAnswer: ResponseEncodable, Sendable {
    /// The points in the index.
    package let points: Int
    /// Records of the input that were not points.
    package let skipped: Int
    /// The server's resident memory, in megabytes; `nil` where it can't be read.
    package let memoryMB: Double?
    /// How long building the index took, in milliseconds.
    package let buildMS: Double
    /// The categories clusters count, in order.
    package let categories: [String]
    /// The reductions clusters carry, by name.
    package let reductions: [String]
    /// Whether points carry weights.
    package let weighted: Bool

    enum CodingKeys: String, CodingKey {
        case points, skipped, categories, reductions, weighted
        case memoryMB = "memory_mb"
        case buildMS = "build_ms"
    }

    /// Writes `null` for an unknown memory figure.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(points, forKey: .points)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(memoryMB.map { ($0 * 10).rounded() / 10 }, forKey: .memoryMB)
        try container.encode((buildMS * 10).rounded() / 10, forKey: .buildMS)
        try container.encode(categories, forKey: .categories)
        try container.encode(reductions, forKey: .reductions)
        try container.encode(weighted, forKey: .weighted)
    }
}

/// `/api/config`: what the page needs to know.
package struct ConfigurationAnswer: ResponseEncodable, Sendable {
    /// The raster tile URL template of the basemap, if any.
    package let tiles: String?
    /// The points served.
    package let points: Int
    /// The categories clusters count, in order: the legend's.
    package let categories: [String]
    /// The numeric reductions clusters carry, by name: what a popup shows.
    package let reductions: [String]
    /// The property of a single point that holds its category, if points have categories.
    package let categoryColumn: String?
    /// The columns of categories after the first, whose values clusters count as `COLUMN_VALUE`.
    package var countedCategories: [String] = []
    /// The property that titles a point's popup, if the points have one.
    package let nameColumn: String?
    /// The sizes to draw markers at: the ones the server's answers keep apart.
    package let markers: MarkerDiameters
    /// Whether the server's answers merge markers that would overlap at those sizes.
    package let mergesMarkers: Bool
    /// How the API counts zooms.
    package let zoomConvention: ZoomConvention
    /// The smallest box holding every point (west, south, east, north), for the page to open on.
    package let bounds: [Double]?
    /// The highest zoom the page lets a user reach.
    package let maxZoom: Int
    /// Whether the points change while the server runs, and `/api/changes` streams how.
    package var live = false

    enum CodingKeys: String, CodingKey {
        case tiles, points, categories, reductions, markers, bounds, live
        case categoryColumn = "category_column"
        case countedCategories = "counted_categories"
        case nameColumn = "name_column"
        case maxZoom = "max_zoom"
        case mergesMarkers = "merges_markers"
        case zoomConvention = "zoom_convention"
    }

    /// Writes `null` for what there is none of.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tiles, forKey: .tiles)
        try container.encode(points, forKey: .points)
        try container.encode(categories, forKey: .categories)
        try container.encode(reductions, forKey: .reductions)
        try container.encode(categoryColumn, forKey: .categoryColumn)
        try container.encode(countedCategories, forKey: .countedCategories)
        try container.encode(nameColumn, forKey: .nameColumn)
        try container.encode(markers, forKey: .markers)
        try container.encode(mergesMarkers, forKey: .mergesMarkers)
        try container.encode(zoomConvention, forKey: .zoomConvention)
        try container.encode(bounds, forKey: .bounds)
        try container.encode(maxZoom, forKey: .maxZoom)
        try container.encode(live, forKey: .live)
    }
}

/// A vector tile: its bytes (gzip-compressed for a client that takes it), or 204 with no body for a tile without a
/// feature, which is what MapLibre expects of an empty tile.
package struct TileAnswer: CacheableAnswer, Sendable {
    /// The tile's bytes, gzip-compressed or not; `nil` for an empty tile.
    package let bytes: Data?
    /// The version of the live points it was made from; `nil` for points or an archive that don't change.
    package var version: Int64?

    var contentHash: String {
        var hash = StableHash()
        hash.add(bytes ?? Data())
        return hash.text
    }

    /// The tile as the response body.
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        guard let bytes else { return Response(status: .noContent) }
        let headers: HTTPFields = [.contentType: "application/vnd.mapbox-vector-tile"]
        guard Gzip.isCompressed(bytes) else {
            // Vector tiles go compressed whatever their size, as tile servers and archives serve them.
            return Compression.response(ByteBuffer(bytes: bytes), minimumSize: 0, headers: headers, for: request)
        }
        // An archive's tile, stored compressed: as it is, or inflated for a client that takes no gzip.
        if Compression.accepts(request) {
            return Compression.response(
                ByteBuffer(bytes: bytes), gzipped: ByteBuffer(bytes: bytes), headers: headers, for: request)
        }
        let plain = try Gzip.decompress(bytes)
        return Compression.response(ByteBuffer(bytes: plain), headers: headers, for: request)
    }
}

/// `/tiles.json`: TileJSON 3.0, what MapLibre reads to find the tiles and their layer.
package struct TileJSONAnswer: ResponseEncodable, CacheableAnswer, Sendable {
    /// The tiles' URL templates.
    package let tiles: [String]
    /// The shallowest tile zoom.
    package let minZoom: Int
    /// The deepest tile zoom.
    package let maxZoom: Int
    /// West, south, east, north.
    package let bounds: [Double]
    /// The vector layers and their fields.
    package let layers: [TileArchiveMetadata.VectorLayer]
    /// The tile set's name.
    package var name = "mapcluster"

    enum CodingKeys: String, CodingKey {
        case tilejson, name, scheme, tiles, minzoom, maxzoom, bounds
        case vectorLayers = "vector_layers"
    }

    /// The TileJSON document.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("3.0.0", forKey: .tilejson)
        try container.encode(name, forKey: .name)
        try container.encode("xyz", forKey: .scheme)
        try container.encode(tiles, forKey: .tiles)
        try container.encode(minZoom, forKey: .minzoom)
        try container.encode(maxZoom, forKey: .maxzoom)
        try container.encode(bounds, forKey: .bounds)
        try container.encode(layers, forKey: .vectorLayers)
    }
}
