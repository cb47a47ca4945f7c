import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster

struct GeometryTests {
    @Test func originProjectsToTheCenterOfTheWorld() {
        let point = Coordinate.checked(0, 0).mapPoint
        #expect(point == MapPoint(x: 134_217_728, y: 134_217_728))
    }

    @Test func longitudeMinus180IsTheWestEdge() {
        #expect(Coordinate.checked(0, -180).mapPoint.x == 0)
    }

    @Test func longitude180IsTheSameMeridianAsMinus180() {
        #expect(Coordinate.checked(10, 180).mapPoint == Coordinate.checked(10, -180).mapPoint)
        #expect(Coordinate.checked(10, 180).wrappedLongitude == -180)
    }

    @Test func roundTripStaysWithinABillionthOfADegree() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<10_000 {
            let coordinate = Coordinate.checked(
                .random(in: -85...85, using: &rng), .random(in: -180..<180, using: &rng))
            let back = coordinate.mapPoint.coordinate
            #expect(abs(back.latitude - coordinate.latitude) < 1e-9)
            #expect(abs(back.longitude - coordinate.longitude) < 1e-9)
        }
    }

    @Test func latitudesBeyondThePlaneLandOnItsEdgeButKeepTheirValue() throws {
        let pole = try Coordinate(latitude: 90, longitude: 0)
        #expect(pole.mapPoint.y == 0)
        #expect(pole.latitude == 90)
        #expect(Coordinate.checked(-89, 0).mapPoint.y == MapSize.world.height)
    }

    @Test(arguments: [
        (Double.nan, 0.0, "latitude nan is not a finite number"),
        (.infinity, 0, "latitude inf is not a finite number"),
        (90.5, 0, "latitude 90.5 is outside -90...90"),
        (0, 180.0001, "longitude 180.0001 is outside -180...180"),
        (0, -.infinity, "longitude -inf is not a finite number"),
        (0, .nan, "longitude nan is not a finite number"),
    ])
    func invalidCoordinatesAreRejectedNamingTheValue(latitude: Double, longitude: Double, message: String) {
        #expect {
            _ = try Coordinate(latitude: latitude, longitude: longitude)
        } throws: { error in
            (error as? CoordinateError)?.description == message
        }
    }

    @Test func zoomLevelFollowsTheWebMapConvention() {
        let world = MapSize.world.width
        #expect(WebMercator.zoomLevel(mapWidth: world, pointWidth: 256) == 0)
        #expect(WebMercator.zoomLevel(mapWidth: world / 2, pointWidth: 256) == 1)
        #expect(abs(WebMercator.zoomLevel(mapWidth: world * 10 / 360, pointWidth: 300) - 5.3987) < 1e-4)
    }

    @Test func viewportRoundTripsItsZoom() {
        let viewport = Viewport(center: .checked(48.85, 2.35), zoom: 7.25, size: ViewSize(width: 1024, height: 768))
        #expect(abs(viewport.zoom - 7.25) < 1e-12)
    }

    @Test func rectAcrossTheAntimeridianRunsPastTheEastEdge() throws {
        let rect = try MapRect(west: 170, south: -10, east: -170, north: 10)
        #expect(abs(rect.size.width - MapSize.world.width * 20 / 360) < 1e-6)
        #expect(rect.maxX > MapSize.world.width)
        let whole = try MapRect(west: -180, south: -85, east: 180, north: 85)
        #expect(whole.size.width == MapSize.world.width)
    }

    @Test func aCellIsExactlyFourCellsOneLevelDown() {
        let cell = GridCell(level: 5, x: 17, y: 9)
        let children = cell.children
        #expect(children.count == 4)
        #expect(children.allSatisfy { $0.parent == cell })
        let union = children.map(\.keyRange)
        #expect(union.first?.lowerBound == cell.keyRange.lowerBound)
        #expect(union.last?.upperBound == cell.keyRange.upperBound)
        for (a, b) in zip(union, union.dropFirst()) { #expect(a.upperBound &+ 1 == b.lowerBound) }
    }

    @Test func theWorldCellSpansEveryKeyAndTheFinestCellsOne() {
        #expect(GridCell(level: 0, x: 0, y: 0).keyRange == 0...UInt64.max)
        let finest = GridCell(level: 32, x: 0xDEAD_BEEF, y: 0x0123_4567)
        #expect(finest.keyRange.count == 1)
        #expect(GridCell(holdingKey: finest.keyRange.lowerBound, level: 32) == finest)
        #expect(GridCell(level: 32, x: .max, y: .max).keyRange == UInt64.max...UInt64.max)
    }

    @Test func aCellKeepsItsColumnAndRowThroughItsFamily() {
        var rng = SplitMix64(seed: 9)
        for _ in 0..<2_000 {
            let level = Int.random(in: 1...32, using: &rng)
            let side = UInt64(1) << level
            let (x, y) = (
                UInt32(UInt64.random(in: 0..<side, using: &rng)), UInt32(UInt64.random(in: 0..<side, using: &rng))
            )
            let cell = GridCell(level: level, x: x, y: y)
            #expect((cell.x, cell.y) == (x, y))
            #expect(cell.description == "\(level)/\(x)/\(y)")
            #expect(cell.parent == GridCell(level: level - 1, x: x >> 1, y: y >> 1))
            let up = Int.random(in: 0...level, using: &rng)
            #expect(cell.ancestor(atLevel: up) == GridCell(level: up, x: x >> (level - up), y: y >> (level - up)))
            #expect(GridCell(holdingKey: cell.keyRange.lowerBound, level: level) == cell)
            #expect(GridCell(holdingKey: cell.keyRange.upperBound, level: up) == cell.ancestor(atLevel: up))
            guard level < 32 else { continue }
            // North-west, north-east, south-west, south-east.
            #expect(
                cell.children.map { [$0.x, $0.y] } == [
                    [2 * x, 2 * y], [2 * x + 1, 2 * y], [2 * x, 2 * y + 1], [2 * x + 1, 2 * y + 1],
                ])
        }
    }

    @Test func cellsHoldThePointsTheirRectsHold() {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<2_000 {
            let point = Coordinate.checked(.random(in: -85...85, using: &rng), .random(in: -180..<180, using: &rng))
                .mapPoint
            let level = Int.random(in: 0...32, using: &rng)
            let cell = GridCell(containing: point, level: level)
            #expect(cell.keyRange.contains(GridPosition(point).key))
            if level < 24 { #expect(cell.rect.contains(point)) }
        }
    }
}

extension GeometryTests {
    @Test func gridPositionsOfCoordinatesAndOfTheirPointsAgree() {
        var rng = SplitMix64(seed: 17)
        var probes: [Coordinate] = [
            .checked(0, 0), .checked(0, 180), .checked(0, -180), .checked(90, 0), .checked(-90, 179.99999999),
        ]
        for _ in 0..<20_000 {
            probes.append(.checked(.random(in: -90...90, using: &rng), .random(in: -180...180, using: &rng)))
        }
        for coordinate in probes {
            #expect(GridPosition(coordinate) == GridPosition(coordinate.mapPoint), "\(coordinate)")
        }
    }

    @Test func aRectShownAtAZoomHasThatZoom() throws {
        for zoom in [0.0, 3.25, 11, 24] {
            let rect = try MapRect(west: -12, south: 34, east: 32, north: 60)
            let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: zoom))
            #expect(abs(viewport.zoom - zoom) < 1e-9)
            #expect(abs(viewport.size.width / viewport.size.height - rect.size.width / rect.size.height) < 1e-9)
        }
    }

    /// A code's membership, tested in Morton form, against its cell's row and column: random regions, wrapped or not,
    /// and codes inside them, beside them and anywhere, down to the deepest level; and a key of the cell, whatever its
    /// bits below the region's level (none, all, or any), against the region's key bounds.
    @Test(arguments: [7, 12, 18, 24, 31, 32])
    func aRegionHoldsTheCodesOfItsCellsAndNoOthers(level: Int) {
        var rng = SplitMix64(seed: 900 + UInt64(level))
        let last = UInt32(truncatingIfNeeded: (UInt64(1) << level) - 1)
        var (inside, outside) = (0, 0)
        for _ in 0..<200 {
            let y0 = UInt32.random(in: 0...last, using: &rng)
            let y1 = UInt32.random(in: y0...min(last, y0 &+ 40), using: &rng)
            let x0 = UInt32.random(in: 1...last, using: &rng)
            let x1 = UInt32.random(in: x0...last, using: &rng)
            let region =
                Bool.random(using: &rng)
                ? CellRegion(level: level, rows: y0...y1, columns: x1...last, wrappedColumns: 0...(x0 - 1))
                : CellRegion(level: level, rows: y0...y1, columns: x0...x1)
            for _ in 0..<50 {
                // Near the region's corners (one cell either side), or anywhere.
                func near(_ value: UInt32) -> UInt32 {
                    UInt32(clamping: Int64(value) + Int64.random(in: -1...1, using: &rng)) & last
                }
                let x =
                    Bool.random(using: &rng)
                    ? near([x0, x1, last, 0].randomElement(using: &rng)!) : .random(in: 0...last, using: &rng)
                let y =
                    Bool.random(using: &rng)
                    ? near([y0, y1].randomElement(using: &rng)!) : .random(in: 0...last, using: &rng)
                let cell = GridCell(level: level, x: x, y: y)
                #expect(region.contains(code: cell.code) == region.contains(cell), "level \(level), \(region), \(cell)")
                let shift = UInt64(64 - 2 * level)
                let below: UInt64 = shift == 0 ? 0 : (1 << shift) - 1
                let bitsBelow = [0, below, .random(in: 0...below, using: &rng)].randomElement(using: &rng)!
                let key = cell.code << shift | bitsBelow
                #expect(
                    region.keyBounds.contains(key: key) == region.contains(cell), "level \(level), \(region), \(key)")
                if region.contains(cell) { inside += 1 } else { outside += 1 }
            }
        }
        #expect(inside > 1_000 && outside > 1_000, "both kinds of code asked: \(inside) inside, \(outside) outside")
    }

    /// Every code of the small levels, for random regions with and without a wrap across the antimeridian: the code's
    /// test and the key bounds' agree with the cell's row and column, for a key of the cell with its lowest and highest
    /// bits below the level.
    @Test(arguments: 0...5)
    func everyCodeOfASmallLevelIsInTheRegionExactlyWhenItsCellIs(level: Int) {
        var rng = SplitMix64(seed: UInt64(level))
        let side = UInt32(1) << level
        let shift = UInt64(64 - 2 * level)
        let below: UInt64 = shift == 64 ? .max : (1 << shift) - 1
        for _ in 0..<40 {
            let y0 = UInt32.random(in: 0..<side, using: &rng)
            let y1 = UInt32.random(in: y0..<side, using: &rng)
            let x0 = UInt32.random(in: 0..<side, using: &rng)
            let x1 = UInt32.random(in: x0..<side, using: &rng)
            let wraps = x0 > 0 && Bool.random(using: &rng)
            let region =
                wraps
                ? CellRegion(level: level, rows: y0...y1, columns: x1...(side - 1), wrappedColumns: 0...(x0 - 1))
                : CellRegion(level: level, rows: y0...y1, columns: x0...x1)
            for code in 0..<(UInt64(1) << (2 * level)) {
                let isInside = region.contains(GridCell(level: level, code: code))
                #expect(region.contains(code: code) == isInside, "level \(level), \(region), \(code)")
                let key = shift == 64 ? 0 : code << shift
                #expect(region.keyBounds.contains(key: key) == isInside, "level \(level), \(region), \(code)")
                #expect(region.keyBounds.contains(key: key | below) == isInside, "level \(level), \(region), \(code)")
            }
        }
    }
}
