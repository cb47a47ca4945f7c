import HTTPTypes
public import MapCluster
public import MapClusterIO

/// What the server answers, apart from HTTP: points, their index, and the queries of the API, each checked.
///
/// Every query validates its input first and throws a ``RequestError`` (a status and a message) for anything it can't
/// take: nothing a client sends reaches a precondition of the engine.
public struct ClusterService: Sendable {
    /// The points served.
    public let points: PointSet
    /// Their index; elements are indices into ``PointSet/records``.
    public let index: ClusterIndex<Int>
    /// How long building the index took.
    public let buildTime: Duration
    /// The raster tile URL template the page offers as a basemap, if any.
    public let tileURL: String?
    /// What clusters add up, by column.
    public let aggregation: PointAggregation
    let options: ClusterOptions<Int>
    let writer: ClusterGeoJSON

    /// The largest viewport side, in points, that a bbox and zoom may ask for.
    public static let maximumViewSide = 16_384.0
    /// The most leaves one request may ask for.
    public static let maximumLimit = 1_000
    /// The highest zoom the API takes.
    public static let zoomRange = 0.0...24.0

    /// Indexes `points`, keeping the aggregates `aggregation` asks for.
    ///
    /// - Throws: ``MapClusterIO/PointFileError`` for a value the aggregation can't take, naming its file, line and
    ///   field.
    public init(points: PointSet, aggregation: PointAggregation = PointAggregation(), tileURL: String? = nil)
        throws(PointFileError)
    {
        let clock = ContinuousClock()
        let start = clock.now
        let index = try points.indexByRecord(aggregating: aggregation)
        buildTime = clock.now - start
        self.points = points
        self.index = index
        self.tileURL = tileURL
        self.aggregation = aggregation
        // The API's bbox is the area asked for: no margin around it.
        var options = ClusterOptions<Int>()
        options.marginFactor = 0
        self.options = options
        writer = ClusterGeoJSON(points: points, index: index, options: options)
    }

    // MARK: - Queries

    /// The clusters of a bbox at a zoom, as a GeoJSON FeatureCollection.
    ///
    /// The bbox is `W,S,E,N` in degrees; east below west crosses the antimeridian. The viewport's size in points
    /// follows from the bbox and the zoom.
    ///
    /// `categories`, a comma-separated list of the index's categories, shows only the points of those categories, and
    /// their clusters (with ids of their own).
    public func clusters(bbox: String?, zoom: String?, categories: String? = nil) throws(RequestError) -> GeoJSONAnswer
    {
        let zoom = try Self.zoom(zoom)
        var options = options
        options.categories = try self.categories(categories)
        guard let bbox else { throw RequestError(.badRequest, "bbox is missing (bbox=west,south,east,north)") }
        let rect: MapRect
        do {
            rect = try MapRect(boundingBox: bbox)
        } catch {
            throw RequestError(.badRequest, "bbox \(error)")
        }
        let size = ViewSize(showing: rect, atZoom: zoom)
        guard size.width <= Self.maximumViewSide && size.height <= Self.maximumViewSide else {
            throw RequestError(
                .badRequest,
                "bbox is \(Int(size.width)) × \(Int(size.height)) points at zoom \(zoom); at most "
                    + "\(Int(Self.maximumViewSide)) a side: zoom out or ask for a smaller bbox")
        }
        let clusters = index.clusters(in: Viewport(rect: rect, size: size), options: options)
        return GeoJSONAnswer(text: writer.featureCollection(clusters))
    }

    /// A page of a cluster's points, as a GeoJSON FeatureCollection.
    public func leaves(of id: String, limit: String?, offset: String?) throws(RequestError) -> GeoJSONAnswer {
        let cluster = try self.cluster(id)
        let limit = try Self.integer(limit, name: "limit", default: 10, range: 0...Self.maximumLimit)
        let offset = try Self.integer(offset, name: "offset", default: 0, range: 0...Int(Int32.max))
        let page = index.members(of: cluster, options: options, offset: offset, limit: limit)
        return GeoJSONAnswer(text: writer.featureCollection(records: page))
    }

    /// The clusters a cluster splits into at its expansion zoom, as a GeoJSON FeatureCollection.
    public func children(of id: String) throws(RequestError) -> GeoJSONAnswer {
        GeoJSONAnswer(text: writer.featureCollection(index.children(of: try cluster(id), options: options)))
    }

    /// The zoom at which a cluster splits (`nil` if it never does).
    public func expansionZoom(of id: String) throws(RequestError) -> ExpansionZoomAnswer {
        ExpansionZoomAnswer(clusterID: id, expansionZoom: index.expansionZoom(of: try cluster(id), options: options))
    }

    /// The number of points, memory in use, how long the index took to build, and its categories and reductions.
    public func stats() -> StatsAnswer {
        StatsAnswer(
            points: index.count, skipped: points.skipped.count, memoryMB: ProcessMemory.residentMegabytes,
            buildMS: buildTime.milliseconds, categories: index.schema?.categories ?? [],
            reductions: index.schema?.reductions.map(\.name) ?? [], weighted: index.schema?.isWeighted ?? false)
    }

    /// What the page needs to know: the tile URL, if any, and the categories and reductions clusters carry.
    public func configuration() -> ConfigurationAnswer {
        ConfigurationAnswer(
            tiles: tileURL, points: index.count, categories: index.schema?.categories ?? [],
            reductions: index.schema?.reductions.map(\.name) ?? [], categoryColumn: aggregation.category)
    }

    // MARK: - Checking input

    /// The categories of a `categories` parameter, `nil` when it is absent; an empty list selects nothing.
    private func categories(_ text: String?) throws(RequestError) -> Set<String>? {
        guard let text else { return nil }
        let names = text.split(separator: ",", omittingEmptySubsequences: true).map(String.init)
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

    private func cluster(_ text: String) throws(RequestError) -> Cluster<Int> {
        guard let id = ClusterID<Int>(text: text) else {
            throw RequestError(
                .badRequest, "'\(text)' is not a cluster id (such as c12.2200.1343, l48.85_2.35 or f6-c12.2200.1343)")
        }
        guard let cluster = index.cluster(id: id, options: options), cluster.isCluster else {
            throw RequestError(.notFound, "no cluster has the id '\(text)'")
        }
        return cluster
    }

    static func zoom(_ text: String?) throws(RequestError) -> Double {
        guard let text else { throw RequestError(.badRequest, "zoom is missing") }
        guard let zoom = Double(text), zoom.isFinite else {
            throw RequestError(.badRequest, "zoom '\(text)' is not a number")
        }
        guard zoomRange.contains(zoom) else {
            throw RequestError(
                .badRequest, "zoom \(text) is outside \(Int(zoomRange.lowerBound))...\(Int(zoomRange.upperBound))")
        }
        return zoom
    }

    static func integer(_ text: String?, name: String, default value: Int, range: ClosedRange<Int>)
        throws(RequestError) -> Int
    {
        guard let text else { return value }
        guard let number = Int(text) else { throw RequestError(.badRequest, "\(name) '\(text)' is not a whole number") }
        guard range.contains(number) else {
            throw RequestError(.badRequest, "\(name) \(number) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }
}
