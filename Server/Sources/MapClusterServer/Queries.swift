import HTTPTypes
package import MapCluster
import MapClusterIO
import MapClusterTiles

/// The view a request asks for, `bbox=W,S,E,N&zoom=Z[&categories=A,B]`, decoded into typed values, each checked as it
/// is read with a message that names the parameter (`zoom 31 is outside 0...30`).
///
/// What the points decide (whether they have those categories, how large a view may be) is checked by the service
/// that answers it (``ClusterService``).
package struct ViewQuery: Decodable, Sendable {
    /// The area: east below west crosses the antimeridian.
    package let rect: MapRect
    package let zoom: Double
    /// The categories asked for; `nil` for every one, empty for none.
    package let categories: [String]?

    /// A view from the parameters' texts.
    package init(bbox: String?, zoom: String?, categories: String? = nil) throws(RequestError) {
        self.zoom = try Self.zoom(zoom)
        self.categories = CategoriesQuery.names(categories)
        guard let bbox else { throw RequestError(.badRequest, "bbox is missing (bbox=west,south,east,north)") }
        do {
            rect = try MapRect(boundingBox: bbox)
        } catch {
            throw RequestError(.badRequest, "bbox \(error)")
        }
    }

    package init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: QueryKey.self)
        try self.init(
            bbox: values.decodeIfPresent(String.self, forKey: .bbox),
            zoom: values.decodeIfPresent(String.self, forKey: .zoom),
            categories: values.decodeIfPresent(String.self, forKey: .categories))
    }

    static func zoom(_ text: String?) throws(RequestError) -> Double {
        guard let text else { throw RequestError(.badRequest, "zoom is missing") }
        guard let zoom = Double(text), zoom.isFinite else {
            throw RequestError(.badRequest, "zoom '\(text)' is not a number")
        }
        guard ClusterService.zoomRange.contains(zoom) else {
            let range = ClusterService.zoomRange
            throw RequestError(
                .badRequest, "zoom \(text) is outside \(Int(range.lowerBound))...\(Int(range.upperBound))")
        }
        return zoom
    }
}

/// The tiles a stream of tile changes follows: `zooms=Z,Z…` (whole tile zooms, at most 8) and
/// `bbox=W,S,E,N` (the world without one).
package struct TileChangesQuery: Decodable, Sendable {
    /// The tile zooms, in order, each once.
    package let zooms: [Int]
    /// The area: east below west crosses the antimeridian.
    package let rect: MapRect

    /// The most zooms one stream follows.
    static let maximumZooms = 8

    package init(zooms: String?, bbox: String?) throws(RequestError) {
        guard let zooms, !zooms.isEmpty else {
            throw RequestError(.badRequest, "zooms is missing (zooms=Z,Z…: the tile zooms to follow)")
        }
        var list: [Int] = []
        for part in zooms.split(separator: ",", omittingEmptySubsequences: false) {
            list.append(
                try RequestValue.integer(String(part), name: "zooms", default: 0, range: 0...TileAddress.maximumZoom))
        }
        let unique = Array(Set(list)).sorted()
        guard unique.count <= Self.maximumZooms else {
            throw RequestError(
                .badRequest, "zooms names \(unique.count) zooms; a stream follows at most \(Self.maximumZooms)")
        }
        self.zooms = unique
        do {
            rect = try bbox.map { try MapRect(boundingBox: $0) } ?? .world
        } catch {
            throw RequestError(.badRequest, "bbox \(error)")
        }
    }

    package init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: QueryKey.self)
        try self.init(
            zooms: values.decodeIfPresent(String.self, forKey: .zooms),
            bbox: values.decodeIfPresent(String.self, forKey: .bbox))
    }
}

/// The categories a tile request asks for: `categories=A,B`, absent for every one.
struct CategoriesQuery: Decodable {
    let categories: [String]?

    init(from decoder: any Decoder) throws {
        categories = Self.names(
            try decoder.container(keyedBy: QueryKey.self).decodeIfPresent(String.self, forKey: .categories))
    }

    /// The names of a comma-separated list; an empty list selects nothing.
    static func names(_ text: String?) -> [String]? {
        text.map { $0.split(separator: ",", omittingEmptySubsequences: true).map(String.init) }
    }
}

/// A page of a cluster's points: `limit` (10 unless asked, at most ``ClusterService/maximumLimit``) from `offset` on.
struct LeavesQuery: Decodable {
    let limit: Int
    let offset: Int

    init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: QueryKey.self)
        limit = try RequestValue.integer(
            values.decodeIfPresent(String.self, forKey: .limit), name: "limit", default: 10,
            range: 0...ClusterService.maximumLimit)
        offset = try RequestValue.integer(
            values.decodeIfPresent(String.self, forKey: .offset), name: "offset", default: 0, range: 0...Int(Int32.max))
    }
}

/// Whole numbers in a request's query or path, checked against a range.
enum RequestValue {
    /// The number a text holds, or `value` without one.
    ///
    /// - Throws: A 400 ``RequestError`` that names the parameter: `limit '2x' is not a whole number`.
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

/// The parameters the API's queries take.
private enum QueryKey: String, CodingKey {
    case bbox, zoom, zooms, categories, limit, offset
}
