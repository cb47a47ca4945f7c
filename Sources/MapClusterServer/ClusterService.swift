import Foundation
public import MapCluster
public import MapClusterIO

/// What the server answers, apart from HTTP: points, their index, and the queries of the API, each checked.
///
/// Every query validates its input first and answers a ``RequestError`` (a status and a message) for anything it
/// can't take: nothing a client sends reaches a precondition of the core.
public struct ClusterService: Sendable {
    /// The points served.
    public let points: PointSet
    /// Their index; elements are indices into ``PointSet/records``.
    public let index: ClusterIndex<Int>
    /// How long building the index took.
    public let buildTime: Duration
    /// The raster tile URL template the page offers as a basemap, if any.
    public let tileURL: String?
    let options: ClusterOptions<Int>
    let writer: ClusterGeoJSON

    /// The largest viewport side, in points, that a bbox and zoom may ask for.
    public static let maximumViewSide = 16_384.0
    /// The most leaves one request may ask for.
    public static let maximumLimit = 1_000
    /// The highest zoom the API takes.
    public static let zoomRange = 0.0...24.0

    /// Indexes `points`.
    public init(points: PointSet, tileURL: String? = nil) {
        let clock = ContinuousClock()
        var index = ClusterIndex<Int>()
        buildTime = clock.measure {
            index = points.indexByRecord()
        }
        self.points = points
        self.index = index
        self.tileURL = tileURL
        // The API's bbox is the area asked for: no margin around it.
        var options = ClusterOptions<Int>()
        options.marginFactor = 0
        self.options = options
        writer = ClusterGeoJSON(points: points)
    }

    // MARK: - Queries

    /// The clusters of a bbox at a zoom, as a GeoJSON FeatureCollection.
    ///
    /// The bbox is `W,S,E,N` in degrees; east below west crosses the antimeridian. The viewport's size in points
    /// follows from the bbox and the zoom.
    public func clusters(bbox: String?, zoom: String?) throws(RequestError) -> String {
        let zoom = try Self.zoom(zoom)
        let rect = try Self.rect(bbox)
        let size = ViewSize(showing: rect, atZoom: zoom)
        guard size.width <= Self.maximumViewSide && size.height <= Self.maximumViewSide else {
            throw RequestError(
                .badRequest,
                "bbox is \(Int(size.width)) × \(Int(size.height)) points at zoom \(zoom); at most "
                    + "\(Int(Self.maximumViewSide)) a side: zoom out or ask for a smaller bbox")
        }
        guard size.width > 0 && size.height > 0 else {
            throw RequestError(.badRequest, "bbox is empty: west must differ from east and south from north")
        }
        return writer.featureCollection(index.clusters(in: Viewport(rect: rect, size: size), options: options))
    }

    /// A page of a cluster's points, as a GeoJSON FeatureCollection.
    public func leaves(of id: String, limit: String?, offset: String?) throws(RequestError) -> String {
        let cluster = try self.cluster(id)
        let limit = try Self.integer(limit, name: "limit", default: 10, range: 0...Self.maximumLimit)
        let offset = try Self.integer(offset, name: "offset", default: 0, range: 0...Int(Int32.max))
        let page = cluster.members(offset: offset, limit: limit)
        return writer.featureCollection(records: page)
    }

    /// The clusters a cluster splits into at its expansion zoom, as a GeoJSON FeatureCollection.
    public func children(of id: String) throws(RequestError) -> String {
        writer.featureCollection(try cluster(id).children())
    }

    /// The zoom at which a cluster splits, as `{"expansion_zoom":Z}` (`null` if it never does).
    public func expansionZoom(of id: String) throws(RequestError) -> String {
        let zoom = try cluster(id).expansionZoom
        var json = "{\"cluster_id\":\"\(id)\",\"expansion_zoom\":"
        json += zoom.map { String($0) } ?? "null"
        return json + "}"
    }

    /// The number of points, memory in use, and how long the index took to build, as JSON.
    public func stats() -> String {
        let build = Double(buildTime.components.seconds) * 1e3 + Double(buildTime.components.attoseconds) * 1e-15
        return "{\"points\":\(index.count),\"skipped\":\(points.skipped.count),"
            + "\"memory_mb\":\(Self.residentMemoryMB().map { String(format: "%.1f", $0) } ?? "null"),"
            + "\"build_ms\":\(String(format: "%.1f", build))}"
    }

    /// What the page needs to know: the tile URL, if any.
    public func configuration() -> String {
        var json = JSONText()
        json.raw("{\"tiles\":")
        if let tileURL { json.string(tileURL) } else { json.raw("null") }
        json.raw(",\"points\":\(index.count)}")
        return json.text
    }

    // MARK: - Checking input

    private func cluster(_ text: String) throws(RequestError) -> Cluster<Int> {
        guard let id: ClusterID<Int> = ClusterIdentifier.id(from: text) else {
            throw RequestError(.badRequest, "'\(text)' is not a cluster id (such as c12.2200.1343 or l48.85_2.35)")
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

    static func rect(_ text: String?) throws(RequestError) -> MapRect {
        guard let text else { throw RequestError(.badRequest, "bbox is missing (bbox=west,south,east,north)") }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else {
            throw RequestError(.badRequest, "bbox '\(text)' has \(parts.count) values, not 4 (west,south,east,north)")
        }
        var values: [Double] = []
        for (part, name) in zip(parts, ["west", "south", "east", "north"]) {
            guard let value = Double(part.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                throw RequestError(.badRequest, "bbox \(name) '\(part)' is not a number")
            }
            values.append(value)
        }
        guard values[1] <= values[3] else {
            throw RequestError(.badRequest, "bbox south \(values[1]) is north of its north \(values[3])")
        }
        do {
            return try MapRect(west: values[0], south: values[1], east: values[2], north: values[3])
        } catch {
            throw RequestError(.badRequest, "bbox: \(error)")
        }
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

    /// The process's resident memory, from /proc on Linux; `nil` where that isn't there.
    static func residentMemoryMB() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }
}

/// A request the service can't answer: the HTTP status and what was wrong.
public struct RequestError: Error, Sendable, Equatable {
    /// The status: 400 for bad input, 404 for something unknown.
    public enum Status: Int, Sendable {
        /// 400: the request is malformed or out of range.
        case badRequest = 400
        /// 404: the thing asked for doesn't exist.
        case notFound = 404
    }

    /// The status.
    public var status: Status
    /// What was wrong, for the client.
    public var message: String

    /// An error with a status and a message.
    public init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The JSON body: `{"error":"…","status":400}`.
    public var json: String { Self.json(message, status: status.rawValue) }

    /// The JSON body of any error the server answers: `{"error":"…","status":code}`.
    static func json(_ message: String, status: Int) -> String {
        var json = JSONText()
        json.raw("{\"error\":")
        json.string(message)
        json.raw(",\"status\":\(status)}")
        return json.text
    }
}
