import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster

/// A map turned by its camera's heading, as MapKit's maps turn: the viewport clusters what the turned screen shows.
struct RotatedMapTests {
    static let screen = ViewSize(width: 1024, height: 768)
    static let headings: [Double] = [0, 45, 90, 180, 270]

    @Test(arguments: headings)
    func aTurnedMapKeepsItsZoomAndItsCellSizesOnScreen(heading: Double) {
        let upright = Viewport(center: .checked(48.85, 2.35), zoom: 9.3, size: Self.screen)
        let turned = Viewport(center: .checked(48.85, 2.35), zoom: 9.3, size: Self.screen, heading: heading)
        #expect(abs(turned.zoom - 9.3) < 1e-9)
        #expect(abs(turned.pointsPerMapUnit / upright.pointsPerMapUnit - 1) < 1e-9)
        let options = ClusterOptions<Int>()
        #expect(options.gridLevel(forZoom: turned.zoom) == options.gridLevel(forZoom: upright.zoom))
        // A cell's side on screen, whatever the heading: within √2 of the requested 60 points.
        let cellPoints =
            MapSize.worldWidth / Double(1 << options.gridLevel(forZoom: turned.zoom)) * turned.pointsPerMapUnit
        #expect(cellPoints >= 60 / 2.0.squareRoot() && cellPoints <= 60 * 2.0.squareRoot())
    }

    @Test(arguments: headings)
    func theRectangleIsTheUprightOneAroundTheTurnedScreen(heading: Double) {
        let viewport = Viewport(center: .checked(10, 20), zoom: 6, size: Self.screen, heading: heading)
        let points = (
            width: viewport.rect.size.width * viewport.pointsPerMapUnit,
            height: viewport.rect.size.height * viewport.pointsPerMapUnit
        )
        let expected: (width: Double, height: Double) =
            switch heading {
            case 90, 270: (768, 1024)
            case 45: ((1024 + 768) / 2.0.squareRoot(), (1024 + 768) / 2.0.squareRoot())
            default: (1024, 768)
            }
        #expect(abs(points.width - expected.width) < 1e-6 && abs(points.height - expected.height) < 1e-6)
        #expect(abs(viewport.rect.center.x - Coordinate.checked(10, 20).mapPoint.x) < 1e-3)
    }

    /// Every point the turned screen shows lies in a cell the viewport clusters, and the clusters hold exactly the
    /// points of those cells; also on a map centered on the antimeridian.
    @Test(arguments: headings)
    func everyPointTheTurnedScreenShowsIsInItsClusters(heading: Double) {
        for center in [Coordinate.checked(-33.9, 151.2), .checked(-17.7, 179.95)] {
            var random = SplitMix64(seed: 7_919 &+ UInt64(heading))
            let coordinates = (0..<4_000).map { _ -> Coordinate in
                let latitude = center.latitude + Double.random(in: -4..<4, using: &random)
                var longitude = center.longitude + Double.random(in: -4..<4, using: &random)
                if longitude >= 180 { longitude -= 360 }
                return .checked(latitude, longitude)
            }
            let index = ClusterIndex(coordinates.enumerated().map { ($0.offset, $0.element) })
            let viewport = Viewport(center: center, zoom: 7, size: Self.screen, heading: heading)
            let options = ClusterOptions<Int>()
            let level = options.gridLevel(forZoom: viewport.zoom)
            let cells = Set(index.clustering(options).gridCells(in: viewport))
            let middle = center.mapPoint
            let radians = heading * Double.pi / 180
            var seen = 0
            var inCells = 0
            for coordinate in coordinates {
                let point = coordinate.mapPoint
                // Plane offset (x wrapped to the nearer copy), then turned into screen points.
                var dx = point.x - middle.x
                if dx > MapSize.worldWidth / 2 { dx -= MapSize.worldWidth }
                if dx < -MapSize.worldWidth / 2 { dx += MapSize.worldWidth }
                let dy = point.y - middle.y
                let screenX = (dx * mathCos(radians) + dy * mathSin(radians)) * viewport.pointsPerMapUnit
                let screenY = (-dx * mathSin(radians) + dy * mathCos(radians)) * viewport.pointsPerMapUnit
                let cell = GridCell(containing: point, level: level)
                if cells.contains(cell) { inCells += 1 }
                guard abs(screenX) <= Self.screen.width / 2, abs(screenY) <= Self.screen.height / 2 else { continue }
                seen += 1
                #expect(cells.contains(cell), "heading \(heading), \(coordinate) on screen but not clustered")
            }
            #expect(seen > 100, "the test needs points on screen")
            let clusters = index.clustering(options).clusters(in: viewport)
            #expect(clusters.reduce(0) { $0 + $1.count } == inCells, "heading \(heading), center \(center)")
        }
    }
}

/// ClusterMap's and Cluster's whole zoom levels, beside CCHMapClusterController's continuous one.
struct ZoomLevelTests {
    /// ClusterMap's formula, with MapKit's 2^28-unit world (the plane's own).
    static func clusterMapZoom(of viewport: Viewport) -> Double {
        max(0, 20 + (mathLog2(viewport.size.width / viewport.rect.size.width)).rounded(.toNearestOrAwayFromZero))
    }

    @Test func wholeLevelsAreClusterMapsZoomLevel() {
        var options = ClusterOptions<Int>()
        options.zoomLevels = .whole
        for zoom in [0.3, 3.2, 11.49, 11.5, 11.51, 14.499_999, 17.8, 20.5] {
            let viewport = Viewport(center: .checked(37.77, -122.42), zoom: zoom, size: testScreen)
            #expect(options.zoomLevel(forZoom: viewport.zoom) == Self.clusterMapZoom(of: viewport), "zoom \(zoom)")
        }
        #expect(options.zoomLevel(forZoom: -0.7) == 0)
        #expect(options.zoomLevel(forZoom: 12.5) == 13)
        options.zoomLevels = .continuous
        #expect(options.zoomLevel(forZoom: 12.5) == 12.5)
    }

    /// Two elements a metre apart, in one grid cell at every zoom the test uses.
    static let pair = ClusterIndex([
        (1, Coordinate.checked(51.500_000, -0.120_000)), (2, .checked(51.500_009, -0.120_000)),
    ])

    static func clusterCounts(atZoom zoom: Double, _ options: ClusterOptions<Int>) -> [Int] {
        let viewport = Viewport(center: .checked(51.5, -0.12), zoom: zoom, size: testScreen)
        return pair.clustering(options).clusters(in: viewport).map(\.count).sorted()
    }

    /// ClusterMap and Cluster cluster while `zoomLevel <= maxZoomLevel`, their zoom rounded; CCH compares the
    /// continuous zoom.
    @Test func clusteringStopsPastTheMaximumAsEachLibraryCountsTheZoom() throws {
        for zoom in [14.0, 15.0, 15.49, 15.5] {
            let cell = GridCell(
                containing: Coordinate.checked(51.5, -0.12).mapPoint,
                level: ClusterOptions<Int>().gridLevel(forZoom: zoom))
            try #require(
                Self.pair.summary(of: cell)?.count == 2, "the pair must share a cell at zoom \(zoom) for this test")
        }
        var options = ClusterOptions<Int>()
        options.maxZoomLevelForClustering = 15
        #expect(Self.clusterCounts(atZoom: 15, options) == [2])
        #expect(Self.clusterCounts(atZoom: 15.0001, options) == [1, 1])
        #expect(Self.clusterCounts(atZoom: 15.49, options) == [1, 1])
        #expect(options.clusters(atZoom: 15) && !options.clusters(atZoom: 15.0.nextUp))
        options.zoomLevels = .whole
        #expect(Self.clusterCounts(atZoom: 15, options) == [2])
        #expect(Self.clusterCounts(atZoom: 15.499_999, options) == [2], "rounds to 15")
        #expect(Self.clusterCounts(atZoom: 15.500_001, options) == [1, 1], "rounds to 16")
        #expect(Self.clusterCounts(atZoom: 14.6, options) == [2])
        // Exactly at the boundary (a viewport's zoom, computed from its rectangle, lands a few ulps either side).
        #expect(options.clusters(atZoom: 15.5.nextDown) && !options.clusters(atZoom: 15.5))
        #expect(options.clusters(atZoom: 14.5) && options.clusters(atZoom: 14.5.nextDown))
    }

    @Test func theExpansionZoomIsWhereEachCountingStopsClustering() throws {
        let viewport = Viewport(center: .checked(51.5, -0.12), zoom: 12, size: testScreen)
        var options = ClusterOptions<Int>()
        options.maxZoomLevelForClustering = 15
        let cluster = try #require(Self.pair.clustering(options).clusters(in: viewport).first)
        #expect(try Self.pair.clustering(options).expansionZoom(of: cluster) == 15.0.nextUp)
        options.zoomLevels = .whole
        // Counted in whole levels, the same pair clusters to 15.5: a cluster of the other counting is refused.
        #expect(throws: ClusteringMismatch.self) { try Self.pair.clustering(options).expansionZoom(of: cluster) }
        let whole = try #require(Self.pair.clustering(options).clusters(in: viewport).first)
        #expect(try Self.pair.clustering(options).expansionZoom(of: whole) == 15.5)
        let reveal = try #require(Self.pair.clustering(options).revealingZoom(of: 1))
        #expect(reveal > 15.49 && reveal < 15.5 + 1e-5)
        #expect(Self.clusterCounts(atZoom: reveal, options) == [1, 1])
    }
}

/// ClusterMap's default cell sizes, as a preset beside MapCluster's steady 60 points.
struct ClusterMapCellSizeTests {
    @Test func theClusterMapPresetAsksTheirSizesAtWholeLevels() {
        let options = ClusterOptions<Int>.clusterMap
        let expected: [(zoom: Double, size: Double)] = [
            (3, 88), (12, 88), (12.49, 88), (12.5, 64), (15, 64), (15.49, 64), (15.5, 32), (18, 32), (18.49, 32),
            (18.5, 16), (21, 16),
        ]
        for (zoom, size) in expected {
            #expect(options.cellSize(forZoom: zoom) == size, "zoom \(zoom)")
        }
        #expect(options.zoomLevels == .whole && options.maxZoomLevelForClustering == 20)
        #expect(options.minCountForClustering == 2)
        #expect(throws: Never.self) { try options.validate() }
        // The grid cells are those sizes on screen, within √2 (the grid is a power of two across the world).
        for (zoom, size) in expected {
            let side = 256 * mathExp2(zoom) / Double(1 << options.gridLevel(forZoom: zoom))
            #expect(side >= size / 2.0.squareRoot() - 1e-9 && side <= size * 2.0.squareRoot() + 1e-9, "zoom \(zoom)")
        }
    }

    @Test func theDefaultStaysSixtyPointsAtEveryZoom() {
        let options = ClusterOptions<Int>()
        for zoom in [0.0, 7.5, 12.5, 19] { #expect(options.cellSize(forZoom: zoom) == 60) }
        #expect(options.zoomLevels == .continuous)
        // Continuous zooms ask the sizes as they are: past 12 is 64 points.
        var continuous = ClusterOptions<Int>.clusterMap
        continuous.zoomLevels = .continuous
        #expect(continuous.cellSize(forZoom: 12.3) == 64)
    }
}

/// `firstMember` is the member added first, as Cluster's `.first`; `firstInZOrder` is the cheap corner.
struct FirstMemberTests {
    /// Three members of one cell at zoom 3; the first added is the last along the Z-order curve.
    static let coordinates: [Coordinate] = [.checked(10.1, 20.6), .checked(10.3, 20.2), .checked(10, 20)]
    static let viewport = Viewport(center: .checked(10, 20), zoom: 3, size: testScreen)

    static func position(_ index: ClusterIndex<Int>, _ position: ClusterPosition<Int> = .firstMember) throws
        -> Coordinate
    {
        var options = ClusterOptions<Int>()
        options.position = position
        let clusters = index.clustering(options).clusters(in: viewport).filter(\.isCluster)
        try #require(clusters.count == 1)
        return clusters[0].coordinate
    }

    @Test func theFirstMemberIsTheOneAddedFirstHoweverTheIndexWasFilled() throws {
        // Z order puts the last of these first.
        let bulk = ClusterIndex(Self.coordinates.enumerated().map { ($0.offset, $0.element) })
        let zFirst = try bulk.clustering().membersWithCoordinates(
            of: bulk.clustering().clusters(in: Self.viewport)[0], limit: 1)[0].coordinate
        try #require(zFirst != Self.coordinates[0], "the case needs the first added elsewhere than first in Z order")
        #expect(try Self.position(bulk) == Self.coordinates[0])
        #expect(try Self.position(bulk, .firstInZOrder) == zFirst)

        var oneByOne = ClusterIndex<Int>()
        for (i, coordinate) in Self.coordinates.enumerated() { oneByOne.insert(i, at: coordinate) }
        #expect(try Self.position(oneByOne) == Self.coordinates[0])

        var batched = ClusterIndex<Int>()
        batched.insert(contentsOf: Self.coordinates.enumerated().map { ($0.offset, $0.element) })
        #expect(try Self.position(batched) == Self.coordinates[0])
    }

    @Test func aMoveKeepsTheOrderAndARemovalPassesItOn() throws {
        var index = ClusterIndex(Self.coordinates.enumerated().map { ($0.offset, $0.element) })
        index.move(0, to: .checked(10.2, 20.4))
        #expect(try Self.position(index) == .checked(10.2, 20.4), "moved, still first added")
        index.remove(0)
        #expect(try Self.position(index) == Self.coordinates[1])
        // Re-added, it comes last.
        index.insert(0, at: Self.coordinates[0])
        #expect(try Self.position(index) == Self.coordinates[1])
    }

    @Test func theOrderSurvivesTheStoresCompaction() throws {
        // 3,000 far away, removed again: the store compacts (renumbering slots in key order).
        var index = ClusterIndex(Self.coordinates.enumerated().map { ($0.offset, $0.element) })
        index.insert(contentsOf: (100..<3_100).map { ($0, Coordinate.checked(-40, -60 + Double($0) / 1_000)) })
        index.insert(99, at: .checked(10.2, 20.1))
        index.remove(contentsOf: Array(100..<3_100))
        #expect(index.elementSlots.store.count == 4, "compacted")
        #expect(try Self.position(index) == Self.coordinates[0])
        index.remove(0)
        #expect(try Self.position(index) == Self.coordinates[1])
    }
}

/// The destination point on the sphere, for fan-outs measured in metres.
struct DestinationPointTests {
    /// One degree of a great circle on the mean Earth, in metres.
    static let degree = 2 * Double.pi * Coordinate.earthRadius / 360

    @Test func aDegreeOfArcIsADegreeOnTheEquatorAndTheMeridian() {
        let origin = Coordinate.checked(0, 0)
        let east = origin.destination(metres: Self.degree, bearing: 90)
        #expect(abs(east.latitude) < 1e-9 && abs(east.longitude - 1) < 1e-9)
        let north = origin.destination(metres: Self.degree, bearing: 0)
        #expect(abs(north.latitude - 1) < 1e-9 && abs(north.longitude) < 1e-9)
        #expect(abs(Self.degree - 111_195.08) < 0.01)
    }

    @Test(arguments: [0.0, 45, 90, 180, 270, 333])
    func theDestinationLiesTheDistanceAwayFromAnywhere(bearing: Double) {
        for start in [Coordinate.checked(60, 10), .checked(-33.87, 151.21), .checked(0, 179.999_99), .checked(89.9, 0)]
        {
            for metres in [3.0, 1_000, 250_000] {
                let end = start.destination(metres: metres, bearing: bearing)
                #expect(
                    abs(start.distance(to: end) - metres) < 1e-6 * max(1, metres), "\(start) \(bearing)° \(metres) m")
                #expect((-180...180).contains(end.longitude) && (-90...90).contains(end.latitude))
            }
        }
    }

    @Test func aPathOverThePoleComesDownTheOtherSide() {
        let end = Coordinate.checked(89, 0).destination(metres: 2 * Self.degree, bearing: 0)
        #expect(abs(end.latitude - 89) < 1e-6)
        #expect(abs(abs(end.longitude) - 180) < 1e-6)
    }

    @Test func crossingTheAntimeridianWrapsTheLongitude() {
        let end = Coordinate.checked(0, 179.5).destination(metres: Self.degree, bearing: 90)
        #expect(abs(end.longitude - -179.5) < 1e-9)
    }
}

/// Near-equal coordinates as one location: CCHMapClusterController's 9-character geohash, as a grid level.
struct LocationToleranceTests {
    /// Three fixes of one spot a few centimetres apart, and a fourth 400 m away.
    static let spot = Coordinate.checked(48.858_370, 2.294_481)
    static let fixes: [Coordinate] = [spot, .checked(48.858_370_3, 2.294_481_2), .checked(48.858_369_8, 2.294_480_7)]
    static let index = ClusterIndex(
        (fixes + [.checked(48.861_9, 2.294_5)]).enumerated().map { ($0.offset, $0.element) })

    static func options(_ tolerance: LocationTolerance) -> ClusterOptions<Int> {
        var options = ClusterOptions<Int>()
        options.maxZoomLevelForClustering = 15
        options.locationTolerance = tolerance
        return options
    }

    static func clusters(atZoom zoom: Double, _ options: ClusterOptions<Int>) -> [Cluster<Int>] {
        index.clustering(options).clusters(in: Viewport(center: spot, zoom: zoom, size: testScreen))
    }

    @Test func fixesCentimetresApartAreOneLocationWithTheGeohashTolerance() throws {
        let keys = Set(Self.fixes.map { GridPosition($0).key >> UInt64(2 * (32 - 23)) })
        try #require(keys.count == 1, "the fixes must share a level-23 cell for this test")
        for zoom in [18.0, 22.0] {
            let exact = Self.clusters(atZoom: zoom, Self.options(.exact))
            // (The fourth, 400 m away, is off this map.)
            #expect(exact.map(\.count) == [1, 1, 1], "past clustering, exact coordinates stand apart")
            let tolerant = Self.clusters(atZoom: zoom, Self.options(.geohash9))
            #expect(tolerant.map(\.count) == [3], "zoom \(zoom)")
            let spot = try #require(tolerant.first { $0.count == 3 })
            #expect(spot.isSameLocation && spot.isCluster)
            #expect(try Set(Self.index.clustering(Self.options(.geohash9)).members(of: spot)) == [0, 1, 2])
            #expect(spot.coordinate.distance(to: Self.spot) < 0.05)
            #expect(
                try Self.index.clustering(Self.options(.geohash9)).expansionZoom(of: spot) == nil, "it never splits")
            #expect(Self.index.clustering(Self.options(.geohash9)).cluster(id: spot.id)?.count == 3)
        }
        // While clustering is on, all four are one cluster of several locations.
        let clustered = Self.clusters(atZoom: 12, Self.options(.geohash9))
        #expect(clustered.map(\.count) == [4] && clustered.first?.isSameLocation == false)
        let reveal = try #require(Self.index.clustering(Self.options(.geohash9)).revealingZoom(of: 0))
        let holder = Self.clusters(atZoom: reveal, Self.options(.geohash9)).first { $0.count == 3 }
        #expect(holder?.isSameLocation == true, "revealed with the other fixes of its spot")
    }

    @Test func distinctLocationsAreCountedAsTheToleranceSeesThem() {
        var options = Self.options(.exact)
        options.minUniqueLocationsForClustering = 3
        #expect(Self.clusters(atZoom: 12, options).map(\.count) == [4], "four coordinates")
        options.locationTolerance = .geohash9
        #expect(Self.clusters(atZoom: 12, options).map(\.count).sorted() == [1, 3], "two locations")
    }

    @Test func metresPickTheDeepestLevelWithCellsThatWide() throws {
        #expect(LocationTolerance.geohash9 == .gridLevel(23))
        #expect(LocationTolerance.metres(4.7) == .gridLevel(23))
        #expect(LocationTolerance.metres(4.8) == .gridLevel(22))
        #expect(LocationTolerance.metres(0) == .exact && LocationTolerance.metres(.nan) == .exact)
        #expect(LocationTolerance.metres(1e9) == .gridLevel(0))
        var options = ClusterOptions<Int>()
        options.locationTolerance = .gridLevel(33)
        #expect(throws: OptionError.self) { try options.validate() }
        options.locationTolerance = .gridLevel(23)
        #expect(options.gridLevel(forZoom: 25) == 23, "the grid stops at the tolerance's level")
    }

    /// Every zoom's clusters hold each element of their cells once, with a tolerance as without.
    @Test(arguments: [LocationTolerance.exact, .geohash9, .gridLevel(16)])
    func clustersHoldEveryElementOfTheirCellsOnce(tolerance: LocationTolerance) throws {
        var random = SplitMix64(seed: 404)
        var coordinates: [Coordinate] = []
        for _ in 0..<1_500 {
            let base = Coordinate.checked(
                45 + Double.random(in: -0.05..<0.05, using: &random),
                7 + Double.random(in: -0.05..<0.05, using: &random))
            coordinates.append(base)
            // A third of them with GPS-noise twins.
            if Double.random(in: 0..<1, using: &random) < 0.3 {
                coordinates.append(.checked(base.latitude + 2e-7, base.longitude - 1e-7))
            }
        }
        let index = ClusterIndex(coordinates.enumerated().map { ($0.offset, $0.element) })
        var options = ClusterOptions<Int>()
        options.locationTolerance = tolerance
        options.maxZoomLevelForClustering = 17
        for zoom in [6.0, 11, 14, 18, 21] {
            let viewport = Viewport(center: .checked(45, 7), zoom: zoom, size: testScreen)
            let cells = Set(index.clustering(options).gridCells(in: viewport))
            let level = options.gridLevel(forZoom: zoom)
            let expected = coordinates.filter { cells.contains(GridCell(containing: $0.mapPoint, level: level)) }.count
            let clusters = index.clustering(options).clusters(in: viewport)
            var members: [Int] = []
            for cluster in clusters { members += try index.clustering(options).members(of: cluster) }
            #expect(members.count == expected, "zoom \(zoom)")
            #expect(Set(members).count == members.count, "zoom \(zoom): an element in two clusters")
            #expect(clusters.reduce(0) { $0 + $1.count } == expected)
        }
    }
}
