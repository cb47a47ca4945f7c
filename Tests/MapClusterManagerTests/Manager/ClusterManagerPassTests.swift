import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster
@testable import MapClusterManager

/// The overlap and fan-out passes, titles, find and reveal, and the debug grid.
struct ClusterManagerPassTests {
    static let screen = testScreen
    static let zoom = 4.0
    /// Points per map unit at ``zoom``.
    static let scale = WebMercator.pointsPerMapUnit(atZoom: zoom)
    /// The grid at zoom 4 is level 6, whose cells are 64 points wide there; with cells of 64√2 points (a hair less),
    /// zoom 4 is where level 6 starts, the zoom its merged layout is laid out at.
    static let cellSize = 64 * 2.0.squareRoot() * 0.999
    static let cellWidth = MapSize.worldWidth / 64

    /// The coordinate `dx`, `dy` points away from a corner of the level-6 grid.
    static func coordinate(corner: (x: Double, y: Double), dx: Double, dy: Double) -> Coordinate {
        MapPoint(x: corner.x * cellWidth + dx / scale, y: corner.y * cellWidth + dy / scale).coordinate
    }

    static func update(
        _ placements: [Placement<Int>], center: Coordinate, zoom: Double = zoom,
        configure: (inout ClusterManagerOptions<Int>) -> Void
    ) async throws -> ClusterUpdate<Int> {
        var options = ClusterManagerOptions<Int>()
        options.clustering.cellSize = cellSize
        configure(&options)
        let manager = try ClusterManager(options: options)
        try await manager.add(placements)
        return try await manager.update(for: Viewport(center: center, zoom: zoom, size: screen))
    }

    /// The distance between two coordinates on screen at `zoom`, in points, the short way around the world.
    static func screenDistance(_ a: Coordinate, _ b: Coordinate, zoom: Double = zoom) -> (dx: Double, dy: Double) {
        let scale = WebMercator.pointsPerMapUnit(atZoom: zoom)
        var dx = (b.mapPoint.x - a.mapPoint.x)
        if dx > MapSize.worldWidth / 2 { dx -= MapSize.worldWidth }
        if dx < -MapSize.worldWidth / 2 { dx += MapSize.worldWidth }
        return (dx * scale, (b.mapPoint.y - a.mapPoint.y) * scale)
    }

    // MARK: - Merging

    @Test func mergesKeepTheClusteringsMinimumCountAndLastZoom() async throws {
        let corner = (x: 20.0, y: 20.0)
        let center = Self.coordinate(corner: corner, dx: 0, dy: 0)
        let size = ViewSize(width: 40, height: 40)
        // Four single-element cells around one corner: every pair of their 40-point markers overlaps or touches.
        let four = [(-20.0, -20.0), (20, -20), (-20, 20), (20, 20)].enumerated().map { offset, delta in
            Placement(offset, at: Self.coordinate(corner: corner, dx: delta.0, dy: delta.1))
        }
        let all = try await Self.update(four, center: center) { $0.overlap = .merge(markerSize: size) }
        #expect(all.snapshot.markers.map(\.count) == [4])

        // A merge is a cluster: with five points the least a cluster holds, the four stay apart.
        let fewest = try await Self.update(four, center: center) {
            $0.overlap = .merge(markerSize: size)
            $0.clustering.minCountForClustering = 5
        }
        #expect(fewest.snapshot.markers.map(\.count) == [1, 1, 1, 1])
        // With three the four merge, as a group that overlaps is counted whole.
        let three = try await Self.update(four, center: center) {
            $0.overlap = .merge(markerSize: size)
            $0.clustering.minCountForClustering = 3
        }
        #expect(three.snapshot.markers.map(\.count).sorted() == [4])

        // Past the last zoom that clusters, nothing merges.
        let past = try await Self.update(four, center: center) {
            $0.overlap = .merge(markerSize: size)
            $0.clustering.maxZoomLevelForClustering = Self.zoom - 1
        }
        #expect(past.snapshot.markers.map(\.count) == [1, 1, 1, 1])
    }

    @Test func markersTouchingAtTheSharedCornerMergeAtTheWeightedCenter() async throws {
        let corner = (x: 20.0, y: 20.0)
        let center = Self.coordinate(corner: corner, dx: 0, dy: 0)
        let size = ViewSize(width: 40, height: 40)

        // Two single-element cells, diagonal: their 40-point markers touch at the cells' shared corner.
        let diagonal = [
            Placement(0, at: Self.coordinate(corner: corner, dx: -20, dy: -20)),
            Placement(1, at: Self.coordinate(corner: corner, dx: 20, dy: 20)),
        ]
        let unmerged = try await Self.update(diagonal, center: center) { _ in }
        #expect(unmerged.snapshot.markers.map(\.count) == [1, 1])
        let merged = try await Self.update(diagonal, center: center) { $0.overlap = .merge(markerSize: size) }
        let only = try #require(merged.snapshot.markers.first)
        #expect(merged.snapshot.markers.count == 1)
        #expect(only.count == 2 && only.isCluster)
        #expect(only.id == .merged([.element(0), .element(1)]))
        #expect(abs(Self.screenDistance(only.coordinate, center).dx) < 1e-6)
        #expect(abs(Self.screenDistance(only.coordinate, center).dy) < 1e-6)
        #expect(try Set(merged.snapshot.members(of: only)) == [0, 1])
        #expect(try merged.snapshot.children(of: only).map(\.count) == [1, 1])

        // All four cells of the 2 × 2 grid, one with three elements on one spot: the mean is weighted by count.
        let four =
            (0..<3).map { Placement($0, at: Self.coordinate(corner: corner, dx: -20, dy: -20)) } + [
                Placement(3, at: Self.coordinate(corner: corner, dx: 20, dy: -20)),
                Placement(4, at: Self.coordinate(corner: corner, dx: -20, dy: 20)),
                Placement(5, at: Self.coordinate(corner: corner, dx: 20, dy: 20)),
            ]
        let weighted = try await Self.update(four, center: center) { $0.overlap = .merge(markerSize: size) }
        let group = try #require(weighted.snapshot.markers.first)
        #expect(weighted.snapshot.markers.count == 1 && group.count == 6)
        // x: (3 · -20 + 20 - 20 + 20) / 6 = -40 / 6; y likewise.
        let offset = Self.screenDistance(center, group.coordinate)
        #expect(abs(offset.dx - -40.0 / 6) < 1e-6 && abs(offset.dy - -40.0 / 6) < 1e-6)
        #expect(
            try weighted.snapshot.bounds(of: group).contains(Self.coordinate(corner: corner, dx: 19, dy: 19).mapPoint))
        #expect(try #require(try weighted.snapshot.expansionZoom(of: group)) > Self.zoom)
    }

    /// A snapshot answers for its own markers, and for those of a snapshot of the same options; one of other options
    /// refuses a marker, as a clustering refuses a cluster, so a server never answers an id on a grid it didn't use.
    @Test func aSnapshotRefusesAMarkerThatOtherOptionsMade() throws {
        let index = ClusterIndex(
            (0..<200).map { ($0, Coordinate.checked(Double($0 % 10) * 0.1, Double($0 / 10) * 0.1)) })
        let viewport = Viewport(center: .checked(0.5, 1), zoom: 7, size: Self.screen)
        var coarse = ClusterManagerOptions<Int>()
        coarse.clustering.cellSize = 128
        let mine = try MarkerClustering(index, options: coarse).markers(in: viewport)
        let marker = try #require(mine.markers.first { $0.isCluster })
        #expect(try mine.members(of: marker).count == marker.count)
        let same = try MarkerClustering(index, options: coarse).markers(in: viewport)
        #expect(try same.expansionZoom(of: marker) == mine.expansionZoom(of: marker))
        let other = try MarkerClustering(index, options: ClusterManagerOptions()).markers(in: viewport)
        #expect(throws: ClusteringMismatch.self) { try other.members(of: marker) }
        #expect(throws: ClusteringMismatch.self) { try other.children(of: marker) }
        #expect(throws: ClusteringMismatch.self) { try other.bounds(of: marker) }
    }

    @Test func markersFarApartAreLeftAlone() async throws {
        let corner = (x: 20.0, y: 20.0)
        let placements = [(-32.0, -32.0), (32, -32), (-32, 32), (32, 32)].enumerated().map {
            Placement($0.offset, at: Self.coordinate(corner: corner, dx: $0.element.0, dy: $0.element.1))
        }
        let center = Self.coordinate(corner: corner, dx: 0, dy: 0)
        let plain = try await Self.update(placements, center: center) { _ in }
        let merged = try await Self.update(placements, center: center) {
            $0.overlap = .merge(markerSize: ViewSize(width: 40, height: 40))
        }
        #expect(merged.snapshot.markers.map(\.id) == plain.snapshot.markers.map(\.id))
        #expect(merged.snapshot.markers.map(\.coordinate) == plain.snapshot.markers.map(\.coordinate))
        #expect(merged.snapshot.markers.count == 4)
    }

    @Test func markersOnEitherSideOfTheAntimeridianMergeWhereTheWorldIsOneBlock() async throws {
        // At zoom 1 the grid is level 3, 8 cells across, and the world is one block of the merged layout.
        let zoom = 1.0
        let scale = WebMercator.pointsPerMapUnit(atZoom: zoom)
        func onSeam(dx: Double, dy: Double) -> Coordinate {
            MapPoint(x: MapSize.wrappedX(dx / scale), y: MapSize.worldWidth / 2 + dy / scale).coordinate
        }
        let placements = [Placement(0, at: onSeam(dx: -15, dy: 5)), Placement(1, at: onSeam(dx: 15, dy: -5))]
        #expect(placements[0].longitude > 150 && placements[1].longitude < -150)
        let center = onSeam(dx: 0, dy: 0)
        let update = try await Self.update(placements, center: center, zoom: zoom) {
            $0.overlap = .merge(markerSize: ViewSize(width: 40, height: 40))
        }
        let only = try #require(update.snapshot.markers.first)
        #expect(update.snapshot.markers.count == 1 && only.count == 2)
        // On the seam, not on the far side of the world.
        #expect(abs(Self.screenDistance(only.coordinate, center, zoom: zoom).dx) < 1e-6)
    }

    /// Markers merge within blocks of the world fixed for each grid level: whatever a viewport covers, a marker is the
    /// same, and two markers on either side of a block's edge stay apart even where they touch.
    @Test func theMergedLayoutIsTheWorldsWhateverTheViewport() async throws {
        // Level 6 at zoom 4: blocks of 8 × 8 cells, so the corner (24, 20) lies on a block's west edge.
        let edge = (x: 24.0, y: 20.0)
        let size = ViewSize(width: 40, height: 40)
        let across = [
            Placement(0, at: Self.coordinate(corner: edge, dx: -10, dy: -5)),
            Placement(1, at: Self.coordinate(corner: edge, dx: 10, dy: -5)),
            Placement(2, at: Self.coordinate(corner: edge, dx: 10, dy: 25)),
        ]
        var views: [[ClusterMarker<Int>.ID]] = []
        for (dx, dy) in [(0.0, 0.0), (-150, 80), (140, -90), (30, 120)] {
            let update = try await Self.update(across, center: Self.coordinate(corner: edge, dx: dx, dy: dy)) {
                $0.overlap = .merge(markerSize: size)
            }
            views.append(update.snapshot.markers.map(\.id).sorted { $0.description < $1.description })
        }
        #expect(Set(views).count == 1)
        // The element west of the edge stands alone, 20 points from its neighbour; the two east of it, in cells of
        // their own, merge.
        #expect(views[0] == [.cluster(.element(0)), .merged([.element(1), .element(2)])])
    }

    @Test func circlesMergeWhenTheyOverlapAndGrowWithTheirCount() async throws {
        let corner = (x: 20.0, y: 20.0)
        let center = Self.coordinate(corner: corner, dx: 0, dy: 0)
        // Singles are 12 points across: 11 points apart they overlap, 13 apart they don't (a 40-point box would).
        let circles = OverlapResolution.mergeCircles(MarkerDiameters(single: 12, cluster: 20, perDecade: 10))
        for (distance, count) in [(11.0, 1), (13.0, 2)] {
            let pair = [
                Placement(0, at: Self.coordinate(corner: corner, dx: -distance / 2, dy: 0)),
                Placement(1, at: Self.coordinate(corner: corner, dx: distance / 2, dy: 0)),
            ]
            let update = try await Self.update(pair, center: center) { $0.overlap = circles }
            #expect(update.snapshot.markers.count == count, "\(distance) points apart")
        }
        // A cluster of 100 is 40 points across: a single 25 points from its center touches it (20 + 6 ≥ 25).
        let crowd = (0..<100).map { Placement($0, at: Self.coordinate(corner: corner, dx: -16, dy: -16)) }
        let beside = Placement(100, at: Self.coordinate(corner: corner, dx: 9, dy: -16))
        let update = try await Self.update(crowd + [beside], center: center) { $0.overlap = circles }
        let only = try #require(update.snapshot.markers.first)
        #expect(update.snapshot.markers.count == 1 && only.count == 101)
        // The two stand apart at the next level, where the map is twice as large; at the zoom it starts.
        let expansion = try #require(try update.snapshot.expansionZoom(of: only))
        var grid = ClusterOptions<Int>()
        grid.cellSize = Self.cellSize
        let next = grid.zoom(forLevel: 7)
        #expect(expansion == next)
        let apart = try await Self.update(crowd + [beside], center: center, zoom: expansion + 1e-9) {
            $0.overlap = circles
        }
        #expect(apart.snapshot.markers.map(\.count).sorted() == [1, 100])
        #expect(MarkerDiameters(single: 12, cluster: 20, perDecade: 10).diameter(ofCount: 100) == 40)
    }

    @Test(arguments: [2.0, 5.0, 8.0])
    func aOneShotLayoutLeavesNoCircleOverlappingAnotherAndLosesNoElement(zoom: Double) throws {
        var rng = SplitMix64(seed: 7)
        let index = ClusterIndex<Int>(
            (0..<20_000).map {
                (
                    $0,
                    Coordinate.checked(
                        Double.random(in: 35...60, using: &rng), Double.random(in: -10...30, using: &rng))
                )
            })
        let diameters = MarkerDiameters(single: 12, cluster: 24, perDecade: 8, gap: 1)
        var options = ClusterManagerOptions<Int>()
        options.clustering.cellSize = 128
        options.overlap = .mergeCircles(diameters)
        let viewport = Viewport(center: .checked(48, 10), zoom: zoom, size: Self.screen)
        let layout = try MarkerClustering(index, options: options)
        let snapshot = layout.markers(in: viewport)
        let markers = snapshot.markers
        let plain = index.clustering(options.clustering).clusters(in: viewport)
        #expect(markers.map(\.count).reduce(0, +) == plain.map(\.count).reduce(0, +))
        // Zoomed out, where a cell holds thousands, the grid alone leaves markers overlapping.
        #expect(markers.contains { $0.isMerged } || zoom > 2)
        for (offset, marker) in markers.enumerated() {
            for other in markers[(offset + 1)...] {
                let (dx, dy) = Self.screenDistance(marker.coordinate, other.coordinate, zoom: zoom)
                let needed = (diameters.diameter(ofCount: marker.count) + diameters.diameter(ofCount: other.count)) / 2
                #expect((dx * dx + dy * dy).squareRoot() > needed, "\(marker.id) and \(other.id) at zoom \(zoom)")
            }
            // A marker known only by its id is the same marker.
            let known = try #require(layout.marker(id: marker.id))
            let again = try #require(known.markers.first)
            #expect(again.count == marker.count)
            #expect(try Set(known.members(of: again)) == Set(snapshot.members(of: marker)))
            // Its expansion zoom is the same, and there its members show as more than one marker.
            let expansion = try snapshot.expansionZoom(of: marker)
            #expect(try known.expansionZoom(of: again) == expansion)
            if let expansion {
                #expect(expansion > zoom)
                let members = try Set(snapshot.members(of: marker))
                let bounds = try snapshot.bounds(of: marker)
                // A billionth past it: a viewport's zoom, which its rectangle gives back, may come back an ulp short.
                let deeper = layout.markers(
                    in: Viewport(center: bounds.center.coordinate, zoom: expansion + 1e-9, size: Self.screen))
                let holding = try deeper.markers.filter { try !members.isDisjoint(with: deeper.members(of: $0)) }
                #expect(
                    holding.count > 1, "\(marker.id) at \(expansion): \(holding.map(\.id)) of \(deeper.markers.count)")
            }
            if marker.isMerged {
                #expect(try known.children(of: again).map(\.id) == marker.clusters.map(\.id))
            }
        }
        #expect(layout.marker(id: .merged([.element(0)])) == nil)
        #expect(layout.marker(id: .cluster(.element(-1))) == nil)
    }

    // MARK: - Separating

    @Test(arguments: [false, true])
    func overlappingMarkersAreNudgedApart(acrossTheAntimeridian: Bool) async throws {
        var rng = SplitMix64(seed: 31)
        let corner = (x: acrossTheAntimeridian ? 0.0 : 20.0, y: 24.0)
        let placements = (0..<16).map {
            Placement(
                $0,
                at: Self.coordinate(
                    corner: corner, dx: Double.random(in: -30...30, using: &rng),
                    dy: Double.random(in: -30...30, using: &rng)))
        }
        let size = ViewSize(width: 20, height: 20)
        let update = try await Self.update(placements, center: Self.coordinate(corner: corner, dx: 0, dy: 0)) {
            $0.clustering.maxZoomLevelForClustering = 0
            $0.overlap = .separate(markerSize: size)
        }
        let markers = update.snapshot.markers
        #expect(markers.count == 16)
        for (offset, marker) in markers.enumerated() {
            // The element's own coordinate is untouched; only where it is drawn moved.
            let member = try #require(update.snapshot.members(of: marker).first)
            #expect(marker.clusters[0].coordinate.latitude == placements[member].latitude)
            for other in markers[(offset + 1)...] {
                let (dx, dy) = Self.screenDistance(marker.coordinate, other.coordinate)
                #expect(abs(dx) >= size.width - 0.5 || abs(dy) >= size.height - 0.5, "\(marker.id) \(other.id)")
            }
        }
    }

    // MARK: - Same location

    @Test func elementsOnOneCoordinateFanOutOnACircleOnceClusteringStops() async throws {
        let location = Coordinate.checked(45, 7)
        let placements =
            (0..<5).map { Placement($0, at: location) } + [Placement(5, latitude: 45.05, longitude: 7.05)]
        for zoom in [12.0, 17.0] {
            let update = try await Self.update(placements, center: location, zoom: zoom) {
                $0.clustering.maxZoomLevelForClustering = 10
                $0.sameLocation = SameLocationFanOut(radius: 30)
            }
            let fanned = update.snapshot.markers.filter { $0.clusters[0].coordinate == location }
            #expect(fanned.count == 5)
            #expect(Set(fanned.map(\.id)) == Set((0..<5).map { ClusterMarker<Int>.ID.cluster(.element($0)) }))
            for marker in fanned {
                let (dx, dy) = Self.screenDistance(location, marker.coordinate, zoom: zoom)
                #expect(abs((dx * dx + dy * dy).squareRoot() - 30) < 1e-3, "zoom \(zoom)")
                #expect(marker.count == 1)
            }
            #expect(update.snapshot.markers.count == (zoom == 12 ? 6 : 5))
        }
        // While clustering is on, they stay one cluster of their location.
        let clustered = try await Self.update(placements, center: location, zoom: 12) {
            $0.clustering.maxZoomLevelForClustering = 14
            $0.sameLocation = SameLocationFanOut(radius: 30)
        }
        #expect(clustered.snapshot.markers.contains { $0.id == .cluster(.location(location)) && $0.count == 5 })
        // Unless asked from a zoom on.
        let early = try await Self.update(placements, center: location, zoom: 12) {
            $0.sameLocation = SameLocationFanOut(radius: 30, startZoom: 11)
        }
        #expect(early.snapshot.markers.count == 6)
    }

    // MARK: - Titles

    struct Place: Hashable, Sendable, TitledElement {
        var name: String
        var title: String? { name }
        var subtitle: String? { "a place" }
    }

    @Test func titlesComeFromTheProvidersOrTheElements() async throws {
        let manager = ClusterManager<Place>()
        try await manager.add([
            Placement(Place(name: "Lyon"), latitude: 45.76, longitude: 4.83),
            Placement(Place(name: "Paris"), latitude: 48.85, longitude: 2.35),
            Placement(Place(name: "Versailles"), latitude: 48.80, longitude: 2.13),
        ])
        let viewport = Viewport(center: .checked(47, 3), zoom: 5, size: Self.screen)
        let snapshot = try await manager.update(for: viewport).snapshot
        let markers = snapshot.markers
        #expect(Set(markers.compactMap(snapshot.title(of:))) == ["Lyon", "2 items"])
        #expect(markers.first { $0.count == 1 }.flatMap(snapshot.subtitle(of:)) == "a place")
        #expect(markers.first { $0.count == 2 }.flatMap(snapshot.subtitle(of:)) == nil)

        // Titles come from the options the snapshot was made with, asked when they are wanted.
        var options = ClusterManagerOptions<Place>()
        options.title = { marker in marker.isCluster ? "\(marker.count) towns" : marker.element?.name }
        options.subtitle = { _ in "France" }
        try await manager.setOptions(options)
        let renamed = try await manager.reload().snapshot
        #expect(Set(renamed.markers.compactMap(renamed.title(of:))) == ["Lyon", "2 towns"])
        #expect(renamed.markers.allSatisfy { renamed.subtitle(of: $0) == "France" })
        #expect(Set(markers.compactMap(snapshot.title(of:))) == ["Lyon", "2 items"], "the earlier snapshot's own")

        // An element without a title of its own is described.
        let plain = ClusterManager<String>()
        try await plain.add([Placement("pin 7", latitude: 47, longitude: 3)])
        let single = try await plain.update(for: viewport).snapshot
        #expect(single.markers.first.flatMap(single.title(of:)) == "pin 7")
    }

    // MARK: - Find and reveal

    @Test func revealFindsTheZoomWhereAnElementStandsAlone() async throws {
        let coordinates = DataShape.clustered.coordinates(count: 5_000, seed: 32)
        let shared = coordinates[7]
        let manager = ClusterManager<Int>()
        try await manager.add(
            coordinates.enumerated().map { Placement($0.offset, at: $0.element) } + [
                Placement(-1, at: shared), Placement(-2, at: shared),
            ])
        for element in [0, 1, 2, 3, 7] {
            let reveal = try #require(await manager.reveal(element, in: Self.screen))
            let alone = try await manager.update(for: reveal.viewport)
            let marker = try #require(alone.snapshot.marker(holding: element))
            if element == 7 {
                #expect(marker.isSameLocation && marker.count == 3)
            } else {
                #expect(marker.count == 1 && marker.id == .cluster(.element(element)))
            }
            #expect(reveal.viewport.rect.contains(marker.coordinate.mapPoint))
            // A grid level less, it is in a larger cluster.
            let before = Viewport(center: marker.coordinate, zoom: reveal.zoom - 1, size: Self.screen)
            let clustered = try await manager.update(for: before)
            let holder = try #require(clustered.snapshot.marker(holding: element))
            #expect(holder.count > marker.count, "element \(element)")
            #expect(await manager.marker(holding: element)?.id == holder.id)
            // The index answers the same for any viewport, without clustering all of it.
            let index = await manager.index
            #expect(index.clustering().cluster(holding: element, in: before).map { .cluster($0.id) } == holder.id)
            #expect(
                index.clustering().cluster(holding: element, in: reveal.viewport).map { .cluster($0.id) } == marker.id)
        }
        #expect(await manager.reveal(99_999, in: Self.screen) == nil)
    }

    @Test func revealStopsAtTheMaximumClusteringZoom() async throws {
        var options = ClusterManagerOptions<Int>()
        options.clustering.maxZoomLevelForClustering = 6
        let manager = try ClusterManager(options: options)
        try await manager.add([
            Placement(0, latitude: 10, longitude: 10), Placement(1, latitude: 10.000_001, longitude: 10),
        ])
        let reveal = try #require(await manager.reveal(0, in: Self.screen))
        #expect(reveal.zoom > 6 && reveal.zoom < 6.001)
    }

    // MARK: - Debug grid

    @Test func theDebugGridIsTheCellsOfTheLastUpdate() async throws {
        let update = try await Self.update(
            [Placement(0, latitude: 10, longitude: 10)], center: .checked(0, 179), zoom: 3
        ) { _ in }
        var options = ClusterOptions<Int>()
        options.cellSize = Self.cellSize
        let viewport = try #require(update.snapshot.viewport)
        #expect(update.snapshot.gridCells == update.snapshot.index.clustering(options).gridCells(in: viewport))
        // Across the antimeridian: cells from both ends of the world.
        let columns = Set(update.snapshot.gridCells.map(\.x))
        #expect(columns.contains(0) && columns.contains(UInt32((1 << update.snapshot.gridCells[0].level) - 1)))
    }
}
