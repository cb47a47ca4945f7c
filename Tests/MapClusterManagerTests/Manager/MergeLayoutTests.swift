import Testing

@testable @_spi(MapClusterServer) import MapCluster
@testable import MapClusterManager

/// The pieces of the world-anchored merge: markers merged block by block, and what a layout keeps.
struct MergeLayoutTests {
    /// Circles as the server draws them.
    static let diameters = MarkerDiameters(single: 14, cluster: 26, perDecade: 8, gap: 2)

    /// Markers merged in two blocks that share an edge, each alone, never overlap across it: each keeps its inset
    /// from the edge, whatever crowds against it on either side.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func markersOfTwoBlocksMergedAloneNeverOverlap(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let zoom = 6.0
        let scale = WebMercator.pointsPerMapUnit(atZoom: zoom)
        let resolution = OverlapResolution.mergeCircles(Self.diameters)
        // Two blocks of 256 points side by side, at level 8 (4 × 64 points at zoom 6).
        let west = GridCell(level: 8, x: 100, y: 90)
        let east = GridCell(level: 8, x: 101, y: 90)
        var placed: [(point: MapPoint, count: Int)] = []
        for block in [west, east] {
            // Half the markers crowd within 20 points of the shared edge.
            let rect = block.rect
            let points = (0..<60).map { n -> MapPoint in
                let nearEdge = n % 2 == 0
                let edge = block == west ? rect.maxX : rect.minX
                let x =
                    nearEdge
                    ? edge + (block == west ? -1 : 1) * Double.random(in: 0..<20, using: &random) / scale
                    : Double.random(in: rect.minX..<rect.maxX, using: &random)
                return MapPoint(x: x, y: Double.random(in: rect.minY..<rect.maxY, using: &random))
            }
            let counts = (0..<60).map { _ in [1, 1, 3, 40, 900][Int.random(in: 0..<5, using: &random)] }
            let merge = MarkerMerge(
                points: points, counts: counts, scale: scale, resolution: resolution, within: rect, minimumCount: 2)
            #expect(merge.markers.map(\.count).reduce(0, +) == counts.reduce(0, +), "every element once")
            for marker in merge.markers {
                #expect(rect.contains(marker.point), "drawn inside its block")
                placed.append((marker.point, marker.count))
            }
        }
        for (offset, a) in placed.enumerated() {
            for b in placed[(offset + 1)...] {
                let (dx, dy) = a.point.screenDelta(to: b.point, scale: scale)
                let needed = (Self.diameters.diameter(ofCount: a.count) + Self.diameters.diameter(ofCount: b.count)) / 2
                #expect((dx * dx + dy * dy).squareRoot() >= needed + Self.diameters.gap - 1e-6)
            }
        }
    }

    /// A merge of a few markers pairs them directly, by their buckets, without the table of buckets a larger one
    /// builds: the two ways merge the same pairs in the same order, crowded or sparse, across the antimeridian too.
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func pairingDirectlyMergesAsTheTableOfBucketsDoes(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let resolution = OverlapResolution.mergeCircles(Self.diameters)
        for (zoom, count, across) in [
            (1.0, 60, 0.9), (6.0, 40, 0.004), (6.0, 150, 0.002), (12.0, 30, 0.0001), (4.0, 400, 0.02),
            (8.0, 300, 0.0004),
        ] {
            let scale = WebMercator.pointsPerMapUnit(atZoom: zoom)
            // Around the antimeridian every other set, so that columns meet around the back of the world.
            let centre = MapPoint(x: seed.isMultiple(of: 2) ? 0 : MapSize.worldWidth / 2, y: MapSize.worldWidth / 2)
            let points = (0..<count).map { _ in
                MapPoint(
                    x: MapSize.wrappedX(centre.x + Double.random(in: -across...across, using: &random)),
                    y: centre.y + Double.random(in: -across...across, using: &random))
            }
            let counts = (0..<count).map { _ in [1, 1, 2, 7, 60, 4000][Int.random(in: 0..<6, using: &random)] }
            func merge(pairingDirectlyUpTo directly: Int) -> MarkerMerge {
                MarkerMerge(
                    points: points, counts: counts, scale: scale, resolution: resolution, within: nil, minimumCount: 2,
                    pairingDirectlyUpTo: directly)
            }
            let (direct, table) = (merge(pairingDirectlyUpTo: .max), merge(pairingDirectlyUpTo: 0))
            #expect(direct.parts == table.parts, "zoom \(zoom), \(count) markers")
            #expect(direct.markers.map(\.parts) == table.markers.map(\.parts))
            #expect(direct.markers.map(\.point) == table.markers.map(\.point))
            #expect(direct.markers.map(\.count) == table.markers.map(\.count))
            #expect(direct.markers.count < count, "some merged")
        }
    }

    /// A layout's store keeps the newer half of its capacity and the older half before it, and a value asked for from
    /// the older half moves into the newer.
    @Test func aRecentStoreKeepsTheLatestAndWhatWasAskedForAgain() {
        var store = RecentStore<Int, String>(capacity: 4)
        store.insert("a", for: 1, weight: 1)
        store.insert("b", for: 2, weight: 1)
        // The newer half is full: 1 and 2 become the older.
        store.insert("c", for: 3, weight: 1)
        #expect(store.value(for: 1) == "a")
        // 3 and 1 become the older; 2, neither asked for again nor newer, goes.
        store.insert("d", for: 4, weight: 1)
        #expect(store.value(for: 2) == nil)
        #expect(store.value(for: 3) == "c")
        #expect(store.value(for: 4) == "d")
        #expect(store.value(for: 5) == nil)
    }
}
