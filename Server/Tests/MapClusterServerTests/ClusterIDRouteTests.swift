import Foundation
import HTTPTypes
@_spi(MapClusterServer) import MapCluster
import MapClusterIO
import MapClusterServer
import MapClusterTestSupport
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

    @Test(arguments: [(1 as UInt64, 32.0), (2, 64), (3, 128), (4, 256)])
    func everyIDOfAnAnswerIsAnsweredByEveryRoute(seed: UInt64, cellSize: Double) async throws {
        var options = MarkerOptions()
        options.clustering.cellSize = cellSize
        let points = Self.points(seed: seed, count: 400)
        let client = RouterClient(
            buildRouter(service: try ClusterService(points: points, options: options), files: try PageFiles()))
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
                // A merged marker's expansion zoom in a layout is taken past the view's zoom, which its id alone
                // doesn't carry, so the route's differs from the feature's; neither is yet the zoom at which the
                // marker splits under the layout (issue 34). A plain cluster's agree.
                if !id.hasPrefix("m") {
                    #expect(
                        answer["expansion_zoom_exact"] as? Double == properties["expansion_zoom_exact"] as? Double,
                        "\(id) at zoom \(zoom): the route's expansion zoom is the feature's")
                }
                checked += 1
            }
        }
        #expect(checked > 50)
    }
}
