package import Foundation
import HTTPTypes
package import MapCluster
package import MapClusterIO
@_spi(MapClusterServer) package import MapClusterManager
package import MapClusterTiles

/// What the server answers, apart from HTTP: points, their index, and the queries of the API, each checked.
///
/// Every query validates its input first and throws a ``RequestError`` (a status and a message) for anything it can't
/// take: nothing a client sends reaches a precondition of the engine.
package struct ClusterService: Sendable {
    /// The points served.
    package let points: PointSet
    /// Their index; elements are indices into `PointSet.records`.
    package var index: ClusterIndex<Int> { markers.clustering.index }
    /// How long building the index took.
    package let buildTime: Duration
    /// The raster tile URL template the page offers as a basemap, if any.
    package let tileURL: String?
    /// What clusters add up, by column.
    package let aggregation: PointAggregation
    /// The index clustered and laid out as markers: the grid's cell size, and the merge of markers that would overlap.
    package let markers: MarkerClustering<Int>
    /// How clusters are made and laid out.
    package var layout: ClusterManagerOptions<Int> { markers.options }
    /// The property that titles a point's popup: `name` when the points have one, unless another is asked for.
    package let nameColumn: String?
    /// How the points are clustered, how their markers are laid out, and how zooms are counted.
    package let options: MarkerOptions
    /// The sizes the page draws markers at, which the layout keeps apart when markers merge.
    package var markerDiameters: MarkerDiameters { options.diameters }
    /// The smallest box holding every point, as west, south, east, north in degrees (east below west when it crosses
    /// the antimeridian); `nil` without points.
    package let bounds: [Double]?
    let writer: MarkerGeoJSON
    /// The clusters as vector tiles.
    package let tiles: ClusterTiles
    /// The version of live points (the store's sequence number of the last edit applied, the same on every server of
    /// the store); `nil` for points that don't change.
    package private(set) var dataVersion: Int64?

    /// The largest viewport side, in points, that a bbox and zoom may ask for.
    package static let maximumViewSide = 16_384.0
    /// The most leaves one request may ask for.
    package static let maximumLimit = 1_000
    /// The highest zoom the API takes.
    package static let zoomRange = 0.0...24.0
    /// The highest zoom the page lets a user reach: where its basemap tiles end.
    package static let pageMaximumZoom = 18

    /// The grid's cell size by default, in points.
    ///
    /// At a whole zoom its cells are 128 points wide (between 91 and 181 as the zoom goes between whole ones). That
    /// makes a map as calm as Leaflet.markercluster's, whose clusters gather what lies within 80 pixels, with room
    /// for the largest markers between cells.
    package static let defaultCellSize = 128.0

    /// The clustering options by default: cells of ``defaultCellSize``, and no margin, since the API's bbox is the
    /// area asked for.
    package static var defaultClustering: ClusterOptions<Int> {
        var options = ClusterOptions<Int>()
        options.cellSize = defaultCellSize
        options.marginFactor = 0
        return options
    }

    /// The markers the page draws: 14 points for a single point, and for a cluster 26 points and 8 more for each
    /// tenfold of its count (30 for 3, 42 for 100, 58 for 10,000), kept 2 points apart.
    package static let defaultMarkerDiameters = MarkerDiameters(single: 14, cluster: 26, perDecade: 8, gap: 2)

    /// Indexes `points`, keeping the aggregates `aggregation` asks for, to cluster and lay out as `options` says.
    ///
    /// - Throws: `PointFileError` for a value the aggregation can't take, naming its file, line and
    ///   field.
    package init(
        points: PointSet, aggregation: PointAggregation = PointAggregation(), tileURL: String? = nil,
        nameColumn: String? = nil, options: MarkerOptions = MarkerOptions()
    ) throws(PointFileError) {
        let clock = ContinuousClock()
        let start = clock.now
        let index = try points.indexByRecord(aggregating: aggregation)
        self.init(
            points: points, index: index, buildTime: clock.now - start, aggregation: aggregation, tileURL: tileURL,
            nameColumn: nameColumn, options: options)
    }

    /// Serves points indexed already (a live server's): `index` holds the positions of `points`' records, with the
    /// values `aggregation` asks for.
    ///
    /// The options must pass ``MarkerOptions/validate()``, as `buildApplication(_:logger:onServerRunning:)` checks
    /// before a server starts.
    package init(
        points: PointSet, index: ClusterIndex<Int>, buildTime: Duration, aggregation: PointAggregation,
        tileURL: String? = nil, nameColumn: String? = nil, options: MarkerOptions = MarkerOptions()
    ) {
        self.buildTime = buildTime
        self.points = points
        self.tileURL = tileURL
        self.aggregation = aggregation
        self.options = options
        self.nameColumn = nameColumn ?? (points.propertyNames.contains("name") ? "name" : nil)
        markers = MarkerClustering(validated: index, options: options.layout)
        bounds = Self.boundingBox(of: points.records.lazy.map(\.coordinate))
        writer = MarkerGeoJSON(points: points, clustering: markers.clustering, zoomConvention: options.zoomConvention)
        tiles = ClusterTiles(points: points, markers: markers)
    }

    /// The service of another version of the same kind of points (a live server's): `base`'s options, these points,
    /// `version` the store's sequence number of the last edit they hold.
    init(_ base: ClusterService, points: PointSet, index: ClusterIndex<Int>, version: Int64? = nil) {
        dataVersion = version
        self.points = points
        buildTime = base.buildTime
        tileURL = base.tileURL
        aggregation = base.aggregation
        options = base.options
        markers = MarkerClustering(validated: index, options: base.layout)
        nameColumn = base.nameColumn
        bounds = base.bounds
        writer = MarkerGeoJSON(points: points, clustering: markers.clustering, zoomConvention: options.zoomConvention)
        tiles = ClusterTiles(points: points, markers: markers)
    }

    /// The smallest box holding `coordinates`: the widest band of longitudes without any (to a tenth of a degree) is
    /// left out, so that points on both sides of the antimeridian get a box across it, not around the world.
    package static func boundingBox(of coordinates: some Sequence<Coordinate>) -> [Double]? {
        let bins = 3_600
        // One pass: each band's westmost and eastmost longitude, and the latitudes' range.
        var westmost = [Double](repeating: .infinity, count: bins)
        var eastmost = [Double](repeating: -.infinity, count: bins)
        var south = Double.infinity
        var north = -Double.infinity
        for coordinate in coordinates {
            let bin = min(Int((coordinate.longitude + 180) * 10), bins - 1)
            westmost[bin] = min(westmost[bin], coordinate.longitude)
            eastmost[bin] = max(eastmost[bin], coordinate.longitude)
            south = min(south, coordinate.latitude)
            north = max(north, coordinate.latitude)
        }
        let used = westmost.indices.filter { westmost[$0].isFinite }
        guard let first = used.first, let last = used.last else { return nil }
        // The widest gap between neighbouring occupied bands, against the one around the back of the world. When a
        // gap between two is wider, the box crosses the antimeridian: from the band east of it around to the one west.
        var widest = (after: last, before: first, width: first + bins - last)
        for (a, b) in zip(used, used.dropFirst()) where b - a > widest.width { widest = (a, b, b - a) }
        return [westmost[widest.before], south, eastmost[widest.after], north]
    }

    // MARK: - Queries

    /// The clusters of a bbox at a zoom, as a GeoJSON FeatureCollection.
    ///
    /// The bbox is `W,S,E,N` in degrees; east below west crosses the antimeridian, and the answer then has
    /// `"crosses_antimeridian": true`. The viewport's size in points follows from the bbox and the zoom.
    ///
    /// `categories`, a comma-separated list of the index's categories, shows only the points of those categories, and
    /// their clusters (with ids of their own).
    package func clusters(_ query: ViewQuery) throws(RequestError) -> GeoJSONAnswer {
        let (rect, zoom, categories) = try view(query)
        return GeoJSONAnswer(text: featureCollection(in: rect, zoom: zoom, categories: categories))
    }

    /// The area, zoom and categories of a request for clusters, checked against these points.
    func view(_ query: ViewQuery) throws(RequestError) -> (rect: MapRect, zoom: Double, categories: Set<String>?) {
        let (rect, zoom) = (query.rect, options.zoomConvention.engineZoom(query.zoom))
        let categories = try self.categories(query.categories)
        let size = ViewSize(showing: rect, atZoom: zoom)
        guard size.width <= Self.maximumViewSide && size.height <= Self.maximumViewSide else {
            throw RequestError(
                .badRequest,
                "bbox is \(Int(size.width)) × \(Int(size.height)) points at zoom \(query.zoom); at most "
                    + "\(Int(Self.maximumViewSide)) a side: zoom out or ask for a smaller bbox")
        }
        return (rect, zoom, categories)
    }

    /// The markers of an area at a zoom, as a GeoJSON FeatureCollection, without the API's limit on the size of the
    /// area: what `mapcluster cluster --format geojson` prints.
    ///
    package func featureCollection(in rect: MapRect, zoom: Double, categories: Set<String>? = nil) -> String {
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: zoom))
        return writer.featureCollection(
            markers.selecting(categories: categories).recordMarkers(in: viewport),
            crossesAntimeridian: rect.crossesAntimeridian)
    }

    /// A page of a cluster's points (a merged marker's, cluster by cluster), as a GeoJSON FeatureCollection.
    func leaves(of id: String, _ query: LeavesQuery) throws(RequestError) -> GeoJSONAnswer {
        let (snapshot, marker) = try self.marker(id)
        let (limit, offset) = (query.limit, query.offset)
        let page = try Self.own { () throws(ClusteringMismatch) in
            try snapshot.members(of: marker, offset: offset, limit: limit)
        }
        return GeoJSONAnswer(text: writer.clusters.featureCollection(records: page))
    }

    /// What a cluster splits into when the map zooms in, as a GeoJSON FeatureCollection: a cluster's children at its
    /// expansion zoom, a merged marker's clusters.
    package func children(of id: String) throws(RequestError) -> GeoJSONAnswer {
        let (snapshot, marker) = try self.marker(id)
        let text = try Self.own { () throws(ClusteringMismatch) in
            try writer.clusters.featureCollection(snapshot.children(of: marker))
        }
        return GeoJSONAnswer(text: text)
    }

    /// The zoom at which a cluster splits (`nil` if it never does).
    package func expansionZoom(of id: String) throws(RequestError) -> ExpansionZoomAnswer {
        let (snapshot, marker) = try self.marker(id)
        let zoom = try Self.own { () throws(ClusteringMismatch) in try snapshot.expansionZoom(of: marker) }
        return ExpansionZoomAnswer(
            clusterID: id, expansionZoom: zoom.map(options.zoomConvention.zoom(ofEngineZoom:)),
            zoomConvention: options.zoomConvention)
    }

    /// The vector tile at `address`, of the points in `categories` (all when `nil`), and the version of the points it
    /// was made from; no bytes for a tile without a feature.
    package func tile(_ address: TileAddress, categories: [String]? = nil) throws(RequestError) -> TileAnswer {
        TileAnswer(bytes: tiles.tile(address, categories: try self.categories(categories)), version: dataVersion)
    }

    /// TileJSON 3.0 for the tiles at `baseURL` (the server's scheme, host and port).
    package func tileJSON(baseURL: String) -> TileJSONAnswer {
        let bounds = self.bounds.map(TileArchiveMetadata.westToEast) ?? [-180, -85.0511, 180, 85.0511]
        return TileJSONAnswer(
            tiles: ["\(baseURL)/tiles/{z}/{x}/{y}.mvt"], minZoom: 0, maxZoom: TileAddress.maximumZoom, bounds: bounds,
            layers: [
                .init(
                    id: ClusterTiles.layerName, fields: tiles.fields, minzoom: 0, maxzoom: TileAddress.maximumZoom)
            ])
    }

    /// The number of points, memory in use, how long the index took to build, and its categories and reductions.
    package func stats() -> StatsAnswer {
        StatsAnswer(
            points: index.count, skipped: points.skipped.count, memoryMB: ProcessMemory.residentMegabytes,
            buildMS: buildTime.milliseconds, categories: index.schema?.categories ?? [],
            reductions: index.schema?.reductions.map(\.name) ?? [], weighted: index.schema?.isWeighted ?? false)
    }

    /// What the page needs to know: the tile URL, if any, the categories and reductions clusters carry, the marker
    /// sizes the answers keep apart, and where the points are.
    package func configuration() -> ConfigurationAnswer {
        configuration(bounds: bounds, live: false)
    }

    /// What the page needs to know, with the box around the points given, and whether the points change (and
    /// `/api/changes` tells how).
    func configuration(bounds: [Double]?, live: Bool) -> ConfigurationAnswer {
        ConfigurationAnswer(
            tiles: tileURL, points: index.count, categories: index.schema?.categories ?? [],
            reductions: index.schema?.reductions.filter { $0.valueType != ValueCounts.self }.map(\.name) ?? [],
            categoryColumn: aggregation.category, countedCategories: Array(aggregation.countedCategories),
            nameColumn: nameColumn, markers: markerDiameters, mergesMarkers: options.merges,
            zoomConvention: options.zoomConvention, bounds: bounds, maxZoom: Self.pageMaximumZoom, live: live)
    }

    // MARK: - Checking input

    /// The categories of a `categories` parameter, checked against the points' own; `nil` when it is absent, and an
    /// empty list selects nothing.
    private func categories(_ names: [String]?) throws(RequestError) -> Set<String>? {
        guard let names else { return nil }
        guard let schema = index.schema, !schema.categories.isEmpty else {
            if names.isEmpty { return [] }
            throw RequestError(.badRequest, "categories: the points have none (serve them with --category COLUMN)")
        }
        do {
            _ = try schema.categorySet(names)
        } catch {
            if case .unknownCategory(let unknown, let known) = error {
                throw RequestError(
                    .badRequest,
                    "categories: unknown category '\(unknown)'; the categories are \(known.joined(separator: ", "))")
            }
            throw RequestError(.badRequest, "categories: \(error)")
        }
        return Set(names)
    }

    /// The marker a cluster id names, in a snapshot of its own.
    private func marker(_ text: String) throws(RequestError) -> (ClusterSnapshot<Int>, ClusterMarker<Int>) {
        guard let id = ClusterIDText(text).map(ClusterMarker<Int>.ID.init) else {
            throw RequestError(
                .badRequest,
                "'\(text)' is not a cluster id (such as c12.2200.1343, l48.85_2.35, f6-c12.2200.1343 or "
                    + "mc9.261.176~p1204)")
        }
        guard let snapshot = markers.marker(id: id), let marker = snapshot.markers.first,
            marker.isCluster
        else {
            throw RequestError(.notFound, "no cluster has the id '\(text)'")
        }
        return (snapshot, marker)
    }

    /// The answer about a marker of the service's own clustering, which never refuses it; a 500 if it ever did.
    private static func own<Answer>(_ answer: () throws(ClusteringMismatch) -> Answer) throws(RequestError) -> Answer {
        do {
            return try answer()
        } catch {
            throw RequestError(.internalServerError, "the server's own cluster was refused: \(error)")
        }
    }
}

/// How a server clusters its points, lays out their markers, and counts zooms: what `serve`'s options ask for.
package struct MarkerOptions: Sendable {
    /// How points are clustered: the grid, the fewest points a cluster has, the last zoom that clusters.
    package var clustering = ClusterService.defaultClustering
    /// The sizes markers are drawn at.
    package var diameters = ClusterService.defaultMarkerDiameters
    /// Whether markers that would overlap at those sizes merge into one (in the API's answers and in tiles alike).
    package var merges = true
    /// How the API and the options count zooms.
    package var zoomConvention = ZoomConvention.leaflet

    package init() {}

    /// The layout of the markers: the clustering, with the merge of markers that would overlap when asked for.
    package var layout: ClusterManagerOptions<Int> {
        var layout = ClusterManagerOptions<Int>()
        layout.clustering = clustering
        layout.overlap = merges ? .mergeCircles(diameters) : nil
        return layout
    }

    /// Checks the clustering and the marker sizes.
    ///
    /// - Throws: `OptionError` naming the first option out of its range.
    package func validate() throws(OptionError) {
        try layout.validate()
        try OverlapResolution.mergeCircles(diameters).validate()
    }
}
