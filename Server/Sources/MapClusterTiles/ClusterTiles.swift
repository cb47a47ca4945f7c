public import Foundation
@_spi(MapClusterServer) public import MapCluster
@_spi(MapClusterServer) public import MapClusterIO
@_spi(MapClusterServer) public import MapClusterManager
import SwiftProtobuf

/// The address of a tile in the Web Mercator tile pyramid: zoom `z`, column `x` from the west, row `y` from the north.
public struct TileAddress: Hashable, Sendable, CustomStringConvertible {
    /// The zoom: the world is 2^z tiles across.
    public let z: Int
    /// The column, 0 at 180° west.
    public let x: Int
    /// The row, 0 at the north edge of Web Mercator.
    public let y: Int

    /// The deepest zoom a tile may have.
    public static let maximumZoom = 23

    /// A tile's address, or `nil` if `x` or `y` lies outside the zoom's 2^z × 2^z tiles, or `z` outside
    /// 0...``maximumZoom``.
    public init?(z: Int, x: Int, y: Int) {
        guard (0...Self.maximumZoom).contains(z), (0..<(1 << z)).contains(x), (0..<(1 << z)).contains(y) else {
            return nil
        }
        self.z = z
        self.x = x
        self.y = y
    }

    /// The tile's square on the plane.
    public var rect: MapRect {
        let side = MapSize.worldWidth / Double(1 << z)
        return MapRect(
            minX: Double(x) * side, minY: Double(y) * side, maxX: Double(x + 1) * side, maxY: Double(y + 1) * side)
    }

    /// `z/x/y`.
    public var description: String { "\(z)/\(x)/\(y)" }
}

/// Clusters as Mapbox Vector Tiles (specification 2.1): one layer, `clusters`, of Point features, for MapLibre, Mapbox
/// and OpenLayers.
///
/// A tile's clusters are those of the world-aligned grid whose cells lie in the tile: each cell lies in exactly one
/// tile, so neighbouring tiles never disagree and each cluster belongs to one tile. Features within a small buffer
/// around the tile are repeated from its neighbours (the same cluster, at the same place), so that markers at a tile's
/// edge are not clipped.
///
/// Zooms are those of MapLibre's vector tiles, 512 points a tile: tile zoom *z* clusters as
/// `Clustering.clusters(in:zoom:)` does at zoom *z* + 1, with the same cell size on screen as the
/// GeoJSON API.
///
/// With an ``overlap`` resolution, markers that would overlap at its sizes are merged, as the GeoJSON API merges them:
/// a merged marker is one cluster feature whose `cluster_id` names its parts. The merge is the world's layout at the
/// tile's zoom (`MarkerClustering`'s), the same in every tile, every view of the API and every route.
public struct ClusterTiles: Sendable {
    /// The points the clusters' elements (indices into `PointSet.records`) refer to.
    public let points: PointSet
    /// The clustering of their index: what the tiles' clusters, expansion zooms and aggregates are asked of.
    public let clustering: Clustering<Int>
    /// How markers that would overlap are merged; `nil` when they aren't.
    public let overlap: OverlapResolution?
    /// The merged layout, when markers merge: shared with the API that serves the same points, so that both lay a
    /// block out once.
    let markers: MarkerClustering<Int>?
    /// Their index.
    public var index: ClusterIndex<Int> { clustering.index }
    /// The name of the one layer.
    public static let layerName = "clusters"
    /// A tile's coordinates run 0..<extent on each side.
    public static let extent: UInt32 = 4_096
    /// How far beyond its edges a tile repeats its neighbours' features, in the tile's coordinates.
    public static let buffer = 80.0
    /// A tile's side on screen, in points: MapLibre's vector tiles are 512.
    public static let tileSize = 512.0
    /// What the property of a cluster's count of a category starts with: `category_EU`.
    static let categoryPrefix = "category_"

    /// Tiles of the clusters `clustering` makes of `points`' records, merged where they would overlap by `overlap`
    /// (which must pass its `validate()`).
    ///
    /// A tile asks for its own area and buffer: the clustering's margin plays no part.
    public init(points: PointSet, clustering: Clustering<Int>, overlap: OverlapResolution? = nil) {
        var layout = ClusterManagerOptions<Int>()
        layout.clustering = clustering.options
        layout.overlap = overlap
        self.init(points: points, markers: MarkerClustering(validated: clustering.index, options: layout))
    }

    /// Tiles of the markers `markers` lays out of `points`' records: its clustering, merged where its options merge.
    public init(points: PointSet, markers: MarkerClustering<Int>) {
        self.points = points
        clustering = markers.clustering
        overlap = markers.options.overlap
        self.markers = overlap == nil ? nil : markers
    }

    /// The tile at `address` as Mapbox Vector Tile bytes; `nil` when it has no feature.
    ///
    /// `categories`, when given, shows only the points of those categories and their clusters (see
    /// `ClusterOptions.categories`).
    public func tile(_ address: TileAddress, categories: Set<String>? = nil) -> Data? {
        encode(items(around: address, categories: categories), in: address)
    }

    /// What the tile at `address` holds, feature by feature, as ``tile(_:categories:)`` encodes them: for a check of
    /// what a decoder reads back (the tile fuzz target's).
    package func features(of address: TileAddress, categories: Set<String>? = nil) -> [TileFeature] {
        items(around: address, categories: categories).compactMap { item in
            Self.position(of: item.point, in: address).map {
                TileFeature(id: item.id, properties: item.properties, x: $0.x, y: $0.y)
            }
        }
    }

    /// The features of the tile at `address` and its buffer.
    private func items(around address: TileAddress, categories: Set<String>?) -> [Item] {
        let tile = address.rect
        let margin = tile.size.width * Self.buffer / Double(Self.extent)
        let area = MapRect(
            minX: tile.origin.x - margin, minY: max(tile.origin.y - margin, 0),
            // The far edges belong to the next tiles' cells.
            maxX: (tile.origin.x + tile.size.width + margin).nextDown,
            maxY: min(tile.origin.y + tile.size.height + margin, MapSize.worldWidth).nextDown)
        return items(in: area, tileZoom: address.z, categories: categories)
    }

    /// A feature of the tiles being made: where it is, what it carries, and its feature id.
    struct Item {
        let point: MapPoint
        let properties: [(String, PropertyValue)]
        let id: UInt64?
    }

    /// The features of an area at a tile zoom: its clusters and points, merged where they would overlap when the
    /// tiles merge.
    func items(in area: MapRect, tileZoom: Int, categories: Set<String>? = nil) -> [Item] {
        let zoom = Self.clusteringZoom(ofTileZoom: tileZoom)
        let clustering = clustering.selecting(categories: categories)
        guard let markers else {
            let (clusters, aggregates) = clustering.clustersWithAggregates(in: area, zoom: zoom)
            return clusters.enumerated().map { offset, cluster in
                Item(
                    point: cluster.coordinate.mapPoint,
                    properties: properties(of: cluster, aggregates: aggregates?[offset], clustering: clustering),
                    id: featureID(of: cluster))
            }
        }
        let snapshot = markers.selecting(categories: categories).recordMarkers(
            in: Viewport(rect: area, size: ViewSize(showing: area, atZoom: zoom)))
        let aggregates = snapshot.clustering.aggregates(ofMarkers: snapshot.markers)
        return snapshot.markers.enumerated().map { offset, marker in
            let markerAggregates = aggregates?[offset] ?? nil
            let point = marker.coordinate.mapPoint
            guard marker.element == nil else {
                return Item(
                    point: point,
                    properties: properties(of: marker.cluster, aggregates: markerAggregates, clustering: clustering),
                    id: featureID(of: marker.cluster))
            }
            // A cluster's expansion zoom, merged or not, is the layout's: where its points show apart.
            return Item(
                point: point,
                properties: clusterProperties(
                    id: marker.id.text.description, count: marker.count,
                    expansionZoom: snapshot.expansionZoom(ofOwn: marker), aggregates: markerAggregates),
                id: nil)
        }
    }

    /// The zoom a tile of zoom `tileZoom` clusters at: one more, the zoom of a 256-point world of the same scale.
    static func clusteringZoom(ofTileZoom tileZoom: Int) -> Double { Double(tileZoom) + 1 }

    /// Where `point` lies in the tile at `address`, in the tile's coordinates; `nil` if it lies outside the tile and
    /// its buffer.
    ///
    /// The copy of the position nearest the tile's middle counts: a cluster across the antimeridian is the tile's
    /// neighbour, and at zoom 0 every position is the one tile's.
    static func position(of point: MapPoint, in address: TileAddress) -> (x: Int64, y: Int64)? {
        let tile = address.rect
        let scale = Double(extent) / tile.size.width
        let dx = MapSize.wrappedDeltaX(from: tile.origin.x + tile.size.width / 2, to: point.x)
        let x = ((dx + tile.size.width / 2) * scale).rounded(.down)
        let y = ((point.y - tile.origin.y) * scale).rounded(.down)
        let reach = buffer
        guard x >= -reach && x < Double(extent) + reach && y >= -reach && y < Double(extent) + reach else {
            return nil
        }
        return (Int64(x), Int64(y))
    }

    /// The tile at `address` of those of `items` that lie in it or its buffer (the others are left out), as Mapbox
    /// Vector Tile bytes; `nil` when none does.
    func encode(_ items: some Sequence<Item>, in address: TileAddress) -> Data? {
        var layer = LayerBuilder()
        for item in items {
            guard let (x, y) = Self.position(of: item.point, in: address) else { continue }
            layer.add(item.properties, id: item.id, x: x, y: y)
        }
        guard !layer.isEmpty else { return nil }
        var message = VectorTile_Tile()
        message.layers = [layer.layer(name: Self.layerName, extent: Self.extent)]
        return try? message.serializedData()
    }

    /// The layer's fields and what each holds, as TileJSON lists them: the properties features carry.
    public var fields: [String: String] {
        var fields: [String: String] = [
            "cluster": "Boolean: true for a cluster", "cluster_id": "String: the cluster's id in the API",
            "point_count": "Number: the points in the cluster", "point_count_abbreviated": "String or Number: 1.2k",
            "expansion_zoom": "Number: the tile zoom at which the cluster has split",
            "id": "String: a single point's id, unless it is a whole number, which is the feature's id",
        ]
        for name in points.propertyNames { fields[name] = "a single point's \(name)" }
        for reduction in index.schema?.reductions ?? [] where reduction.valueType != ValueCounts.self {
            fields[reduction.name] = "Number: the cluster's \(reduction.name)"
        }
        // The values of each column of categories after the first that the points have now.
        for (name, counts) in countedCategories {
            for (field, _) in counts.properties(named: name) {
                fields[field] = "Number: the cluster's points whose \(name) is \(field.dropFirst(name.count + 1))"
            }
        }
        if index.schema?.isWeighted == true { fields["weight"] = "Number: the cluster's total weight" }
        for category in index.schema?.categories ?? [] {
            fields[Self.categoryPrefix + category] = "Number: the cluster's points of category \(category)"
        }
        return fields
    }

    /// The counts of each column of categories after the first, over every point, by the column's name.
    public var countedCategories: [(name: String, counts: ValueCounts)] {
        guard let schema = index.schema, schema.reductions.contains(where: { $0.valueType == ValueCounts.self }),
            let world = try? clustering.aggregates(of: clustering.clusters(in: .world, zoom: 0))
        else { return [] }
        var totals: [String: ValueCounts] = [:]
        for aggregates in world {
            for (position, name) in aggregates.reductionNames.enumerated() {
                guard let counts = aggregates.reduction(at: position) as? ValueCounts else { continue }
                totals[name, default: .identity].merge(counts)
            }
        }
        return schema.reductions.compactMap { reduction in totals[reduction.name].map { (reduction.name, $0) } }
    }

    /// A single point's id as MVT's feature id, when it is a whole number written plainly (`42`, not `042` or
    /// `4.2e1`), whether it came as a number or as text; other ids, and clusters, have none (their `id` or
    /// `cluster_id` property names them).
    private func featureID(of cluster: Cluster<Int>) -> UInt64? {
        guard case .element(let record) = cluster.id else { return nil }
        let id = points.records[record].id
        guard let number = UInt64(id), String(number) == id else { return nil }
        return number
    }

    /// What a feature carries: a cluster's `cluster`, `cluster_id`, `point_count`, `point_count_abbreviated`,
    /// `expansion_zoom` (a tile zoom) and aggregates (`category_EU` for each category's count); a single point's id
    /// and properties.
    private func properties(
        of cluster: Cluster<Int>, aggregates: ClusterAggregates?, clustering: Clustering<Int>
    ) -> [(String, PropertyValue)] {
        if case .element(let record) = cluster.id {
            let point = points.records[record]
            let properties = points.properties(of: point).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            // An id that is the feature's id is not repeated: a tile of single points is mostly ids.
            return (featureID(of: cluster) == nil ? [("id", .string(point.id))] : []) + properties
        }
        return clusterProperties(
            id: ClusterIDText.text(of: cluster.id), count: cluster.count,
            expansionZoom: clustering.expansionZoom(ofOwn: cluster), aggregates: aggregates)
    }

    /// A cluster feature's properties: `cluster`, `cluster_id`, `point_count`, `point_count_abbreviated`,
    /// `expansion_zoom` (a tile zoom, from the index's `expansionZoom`) and the aggregates.
    private func clusterProperties(id: String, count: Int, expansionZoom: Double?, aggregates: ClusterAggregates?)
        -> [(String, PropertyValue)]
    {
        let abbreviated = ClusterGeoJSON.abbreviated(count)
        var properties: [(String, PropertyValue)] = [
            ("cluster", .bool(true)), ("cluster_id", .string(id)), ("point_count", .number(Double(count))),
            ("point_count_abbreviated", Double(abbreviated).map { .number($0) } ?? .string(abbreviated)),
        ]
        if let expansion = expansionZoom {
            // The index's zooms are the 256-point world's; a tile zoom is one less.
            properties.append(("expansion_zoom", .number((expansion - 1).rounded(.up))))
        }
        if let aggregates {
            for (position, name) in aggregates.reductionNames.enumerated() {
                if let number = aggregates.number(at: position) {
                    properties.append((name, .number(number)))
                } else if let counts = aggregates.reduction(at: position) as? ValueCounts {
                    properties += counts.properties(named: name).map { ($0.name, .number(Double($0.count))) }
                }
            }
            if index.schema?.isWeighted == true { properties.append(("weight", .number(aggregates.weight))) }
            for (category, count) in zip(aggregates.categories, aggregates.categoryCounts) where count > 0 {
                properties.append((Self.categoryPrefix + category, .number(Double(count))))
            }
        }
        return properties
    }
}

/// A layer's features, keys and values, each key and value stored once.
struct LayerBuilder {
    private var features: [VectorTile_Tile.Feature] = []
    private var keys: [String] = []
    private var keyIndex: [String: UInt32] = [:]
    private var values: [VectorTile_Tile.Value] = []
    // Keyed by the property, not the protobuf message, whose hashing walks its fields one by one.
    private var valueIndex: [PropertyValue: UInt32] = [:]

    var isEmpty: Bool { features.isEmpty }

    /// Adds a Point feature at `x`, `y` in the tile's coordinates.
    mutating func add(_ properties: [(String, PropertyValue)], id: UInt64?, x: Int64, y: Int64) {
        var feature = VectorTile_Tile.Feature()
        if let id { feature.id = id }
        feature.type = .point
        // One MoveTo with one point, then the zigzag-encoded position.
        feature.geometry = [Self.command(1, count: 1), Self.zigzag(x), Self.zigzag(y)]
        for (key, value) in properties {
            guard let valuePosition = index(of: value) else { continue }
            feature.tags.append(index(ofKey: key))
            feature.tags.append(valuePosition)
        }
        features.append(feature)
    }

    func layer(name: String, extent: UInt32) -> VectorTile_Tile.Layer {
        var layer = VectorTile_Tile.Layer()
        layer.version = 2
        layer.name = name
        layer.extent = extent
        layer.features = features
        layer.keys = keys
        layer.values = values
        return layer
    }

    private mutating func index(ofKey key: String) -> UInt32 {
        if let index = keyIndex[key] { return index }
        let index = UInt32(keys.count)
        keys.append(key)
        keyIndex[key] = index
        return index
    }

    /// The index of `property`'s value in the layer's values; `nil` for null, which MVT has no value for.
    private mutating func index(of property: PropertyValue) -> UInt32? {
        if let index = valueIndex[property] { return index }
        guard let value = Self.value(property) else { return nil }
        let index = UInt32(values.count)
        values.append(value)
        valueIndex[property] = index
        return index
    }

    /// A property as an MVT value: whole numbers as integers, other numbers as doubles, arrays and objects as their
    /// JSON text; `nil` for null, which MVT has no value for.
    static func value(_ property: PropertyValue) -> VectorTile_Tile.Value? {
        var value = VectorTile_Tile.Value()
        switch property {
        case .null: return nil
        case .string(let text): value.stringValue = text
        case .bool(let bool): value.boolValue = bool
        case .number(let number):
            if number.rounded() == number, abs(number) < 9.0e15 {
                if number >= 0 { value.uintValue = UInt64(number) } else { value.sintValue = Int64(number) }
            } else {
                value.doubleValue = number
            }
        case .array, .object:
            var json = JSONText()
            json.value(property)
            value.stringValue = json.text
        }
        return value
    }

    static func command(_ id: UInt32, count: UInt32) -> UInt32 { (id & 0x7) | (count << 3) }

    static func zigzag(_ value: Int64) -> UInt32 { UInt32(truncatingIfNeeded: (value << 1) ^ (value >> 63)) }
}

/// One feature of a tile, as the encoder writes it: its properties in order (a null one is left out of the tile), its
/// feature id, and its position in the tile's coordinates.
package struct TileFeature {
    package let id: UInt64?
    package let properties: [(String, PropertyValue)]
    package let x: Int64
    package let y: Int64
}
