import Foundation
import HTTPTypes
@_spi(MapClusterServer) import MapCluster
import MapClusterIO
import MapClusterServer
import MapClusterTestSupport
import MapClusterTiles
import Testing

/// Every id an answer hands out is answered by every route that takes one: over random point sets (with points a
/// millimetre apart, on one spot, and across the antimeridian) and layouts (cell sizes, marker sizes), each cluster and
/// merged marker of `/api/clusters` at world views of zooms 0 to 6 gets 200 from `/leaves`, `/children` and
/// `/expansion-zoom`; its leaves count its points; and a cluster's expansion zoom from the route is its feature's.
struct ClusterIDRouteTests {
    /// A seeded set of points: blobs, some points doubled a millimetre away or on the same spot.
    static func points(seed: UInt64, count: Int) -> PointSet {
        var random = SplitMix64(seed: seed)
        var records: [PointRecord] = []
        let blobs = (0..<6).map { _ in
            (Double.random(in: -60...60, using: &random), Double.random(in: -179...179, using: &random))
        }
        for i in 0..<count {
            let (latitude, longitude) = blobs[i % blobs.count]
            let spread = [0.001, 0.5, 8][i % 3]
            var lat = latitude + Double.random(in: -spread...spread, using: &random)
            var lon = longitude + Double.random(in: -spread...spread, using: &random)
            lon = lon > 180 ? lon - 360 : lon < -180 ? lon + 360 : lon
            lat = min(max(lat, -84), 84)
            records.append(PointRecord(id: "\(i)", coordinate: .checked(lat, lon), properties: []))
            switch i % 7 {
            case 0:
                // A point a millimetre away: apart, but in the same deepest grid cell.
                records.append(
                    PointRecord(id: "\(i)n", coordinate: .checked(lat + 1e-8, lon + 1e-8), properties: []))
            case 1: records.append(PointRecord(id: "\(i)s", coordinate: .checked(lat, lon), properties: []))
            default: break
            }
        }
        return PointSet(propertyNames: [], records: records)
    }

    static let cases: [(UInt64, Double, Bool)] = [(1, 32.0), (2, 64), (3, 128), (4, 256)].flatMap {
        [($0.0, $0.1, true), ($0.0, $0.1, false)]
    }

    /// Every marker of the world views at zooms 0 to 6, merged or not: its expansion zoom is the same in its feature,
    /// from the route and in its tile, and at that zoom its points show as more than one marker in a view around them.
    @Test(arguments: cases)
    func everyIDOfAnAnswerIsAnsweredByEveryRoute(seed: UInt64, cellSize: Double, merges: Bool) async throws {
        var options = MarkerOptions()
        options.clustering.cellSize = cellSize
        options.merges = merges
        let points = Self.points(seed: seed, count: 400)
        let service = try ClusterService(points: points, options: options)
        let client = RouterClient(buildRouter(service: service, files: try PageFiles()))
        var checked = 0
        for zoom in 0...6 {
            let (status, json, _) = try await ServerTests.get(client, "/api/clusters?bbox=-180,-85,180,85&zoom=\(zoom)")
            #expect(status == .ok)
            let features = ServerTests.features(json)
            let counts = features.map { (($0["properties"] as? [String: Any])?["point_count"] as? Int) ?? 1 }
            #expect(counts.reduce(0, +) == points.records.count, "zoom \(zoom): every point once")
            for feature in features {
                guard let properties = feature["properties"] as? [String: Any], properties["cluster"] as? Bool == true
                else { continue }
                let id = try #require(properties["cluster_id"] as? String)
                let base = "/api/clusters/\(id)"
                let (leavesStatus, leaves, _) = try await ServerTests.get(client, base + "/leaves?limit=1000")
                #expect(leavesStatus == .ok, "\(id): leaves")
                #expect(ServerTests.features(leaves).count == properties["point_count"] as? Int, "\(id): its leaves")
                let (childrenStatus, _, _) = try await ServerTests.get(client, base + "/children")
                #expect(childrenStatus == .ok, "\(id): children")
                let (zoomStatus, answer, _) = try await ServerTests.get(client, base + "/expansion-zoom")
                #expect(zoomStatus == .ok, "\(id): expansion zoom")
                let exact = properties["expansion_zoom_exact"] as? Double
                #expect(
                    answer["expansion_zoom_exact"] as? Double == exact,
                    "\(id) at zoom \(zoom): the route's expansion zoom is the feature's")
                #expect(answer["expansion_zoom"] as? Int == properties["expansion_zoom"] as? Int)
                if let exact {
                    #expect(exact > Double(zoom), "\(id) at zoom \(zoom): it splits deeper than it shows")
                    let coordinates = try #require((feature["geometry"] as? [String: Any])?["coordinates"] as? [Double])
                    if zoom >= 1 {
                        #expect(
                            try Self.tileExpansionZoom(of: id, at: coordinates, zoom: zoom, service)
                                == (exact - 1).rounded(.up),
                            "\(id) at zoom \(zoom), exact \(exact): its tile's expansion zoom")
                    }
                    let whole = try #require(properties["expansion_zoom"] as? Int)
                    // Points a millimetre apart part past the API's deepest zoom, which no view can ask for.
                    guard Double(whole) <= ClusterService.zoomRange.upperBound else { continue }
                    let markers = try await Self.markersHolding(
                        ServerTests.features(leaves), zoom: whole, client)
                    #expect(markers > 1, "\(id) at zoom \(zoom): apart at its expansion zoom \(whole)")
                }
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    /// The expansion zoom of the feature `id` in the vector tile that shows the world view of `zoom`: a whole tile zoom,
    /// and MapLibre's tile zoom is the API's less one.
    static func tileExpansionZoom(of id: String, at coordinates: [Double], zoom: Int, _ service: ClusterService) throws
        -> Double?
    {
        let point = Coordinate.checked(coordinates[1], coordinates[0]).mapPoint
        let tileZoom = zoom - 1
        let side = MapSize.worldWidth / Double(1 << tileZoom)
        let last = (1 << tileZoom) - 1
        let (x, y) = (min(Int(point.x / side), last), min(Int(point.y / side), last))
        let address = try #require(TileAddress(z: tileZoom, x: x, y: y))
        let feature = service.tiles.features(of: address).first { feature in
            feature.properties.contains { $0.0 == "cluster_id" && $0.1 == .string(id) }
        }
        guard case .number(let tileZoomOfExpansion)? = feature?.properties.first(where: { $0.0 == "expansion_zoom" })?.1
        else { return nil }
        return tileZoomOfExpansion
    }

    /// How many markers of `/api/clusters` at `zoom`, over the box around `leaves`, hold some of them; `Int.max` when
    /// the box is larger than a view may be (16,384 points a side), where no marker, a few dozen points wide, could.
    static func markersHolding(_ leaves: [[String: Any]], zoom: Int, _ client: RouterClient) async throws -> Int {
        let ids = Set(leaves.compactMap { $0["id"] as? String })
        let coordinates = leaves.compactMap { ($0["geometry"] as? [String: Any])?["coordinates"] as? [Double] }
        var (west, east) = (coordinates.map { $0[0] }.min() ?? 0, coordinates.map { $0[0] }.max() ?? 0)
        if east - west > 180 { (west, east) = (-180, 180) }
        let (south, north) = (coordinates.map { $0[1] }.min() ?? 0, coordinates.map { $0[1] }.max() ?? 0)
        let pad = 1e-6
        let bbox = "\(max(west - pad, -180)),\(south - pad),\(min(east + pad, 180)),\(north + pad)"
        let (status, json, _) = try await ServerTests.get(client, "/api/clusters?bbox=\(bbox)&zoom=\(zoom)")
        if status == .badRequest, "\(json)".contains("at most 16384 a side") { return .max }
        #expect(status == .ok, "bbox \(bbox) at zoom \(zoom)")
        var holding = 0
        for feature in ServerTests.features(json) {
            guard let properties = feature["properties"] as? [String: Any] else { continue }
            if let id = properties["cluster_id"] as? String {
                let (_, leaves, _) = try await ServerTests.get(client, "/api/clusters/\(id)/leaves?limit=1000")
                let own = ServerTests.features(leaves).compactMap { $0["id"] as? String }
                if !ids.isDisjoint(with: own) { holding += 1 }
            } else if let id = feature["id"] as? String, ids.contains(id) {
                holding += 1
            }
        }
        return holding
    }

    /// Two boxes that overlap answer the same markers where they overlap: the merged layout is the world's, not the
    /// view's.
    @Test(arguments: [(5 as UInt64, 32.0), (6, 128)])
    func overlappingBoxesAgreeWhereTheyOverlap(seed: UInt64, cellSize: Double) async throws {
        var options = MarkerOptions()
        options.clustering.cellSize = cellSize
        let points = Self.points(seed: seed, count: 1_500)
        let client = RouterClient(
            buildRouter(
                service: try ClusterService(points: points, options: options),
                files: try PageFiles()))
        var random = SplitMix64(seed: seed)
        var compared = 0
        for _ in 0..<40 {
            let zoom = Int.random(in: 1...8, using: &random)
            // At most 4,000 points a side, in degrees at this zoom.
            let most = min(4_000 / (256 * pow(2, Double(zoom))) * 360, 150)
            let width = Double.random(in: most / 8...most, using: &random)
            let height = min(width, 50)
            // Around a point, so that the boxes hold some.
            let near = points.records[Int.random(in: 0..<points.records.count, using: &random)].coordinate
            let west = min(max(near.longitude - width, -179), 179 - 2 * width)
            let south = min(max(near.latitude - height, -80), 80 - 2 * height)
            let a = (west, south, west + width, south + height)
            let (dx, dy) = (Double.random(in: 0...width, using: &random), Double.random(in: 0...height, using: &random))
            let b = (west + dx, south + dy, west + dx + width, south + dy + height)
            let common = (b.0, b.1, a.2, a.3)
            func inCommon(_ feature: [String: Any]) -> Bool {
                guard let c = (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double] else { return false }
                return c[0] >= common.0 && c[0] < common.2 && c[1] >= common.1 && c[1] < common.3
            }
            func markers(_ box: (Double, Double, Double, Double)) async throws -> [String] {
                let (status, json, _) = try await ServerTests.get(
                    client, "/api/clusters?bbox=\(box.0),\(box.1),\(box.2),\(box.3)&zoom=\(zoom)")
                #expect(status == .ok)
                return ServerTests.features(json).filter(inCommon).map { feature in
                    let properties = feature["properties"] as? [String: Any] ?? [:]
                    let count = properties["point_count"] as? Int ?? 1
                    let id = properties["cluster_id"] as? String ?? feature["id"] as? String ?? "?"
                    let at = (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double] ?? []
                    return "\(id) \(count) \(at)"
                }.sorted()
            }
            let (first, second) = (try await markers(a), try await markers(b))
            #expect(first == second, "zoom \(zoom): \(a) and \(b)")
            compared += first.count
        }
        #expect(compared > 100)
    }
}
