import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster

struct GridClusteringTests {
    static let screen = testScreen

    static func index<S: Sequence<Coordinate>>(_ coordinates: S) -> ClusterIndex<Int> {
        ClusterIndex(coordinates.enumerated().map { ($0.offset, $0.element) })
    }

    // MARK: - The cases the issue names

    @Test func centerOfMassOfThreePointsIsExact() {
        let index = Self.index([.checked(0, 0), .checked(0, 2), .checked(0, 10)])
        let clusters = index.clustering().clusters(in: Viewport(center: .checked(0, 5), zoom: 0, size: Self.screen))
        #expect(clusters.count == 1)
        #expect(clusters.first?.count == 3)
        #expect(clusters.first?.coordinate == .checked(0, 4))
    }

    /// A cluster is answered only by a clustering of the options that made it: one of other options refuses, naming
    /// what differs, where it used to answer on its own grid (children on the default grid of a cluster made on
    /// 128-point cells, with no error).
    @Test func aClusteringRefusesAClusterThatOtherOptionsMade() throws {
        let index = Self.index(
            (0..<400).map { Coordinate.checked(40 + Double($0 % 20) * 0.05, Double($0 / 20) * 0.05) })
        let viewport = Viewport(center: .checked(40.5, 0.5), zoom: 8, size: Self.screen)
        var coarse = ClusterOptions<Int>()
        coarse.cellSize = 128
        let made = try Clustering(index, options: coarse)
        let cluster = try #require(made.clusters(in: viewport).first { $0.isCluster })

        // The same options answer, of this index and of a later copy of it.
        #expect(try made.children(of: cluster).map(\.count).reduce(0, +) == cluster.count)
        var later = index
        later.insert(10_000, at: .checked(10, 10))
        #expect(try made.of(later).members(of: cluster).count == cluster.count)

        // Other options refuse every question, and say what differs.
        let other = Clustering(index)
        #expect {
            try other.children(of: cluster)
        } throws: { error in
            let text = "\(error)"
            return text.contains("the grid differs") && text.contains("level") && text.contains(cluster.id.description)
        }
        #expect(throws: ClusteringMismatch.self) { try other.members(of: cluster) }
        #expect(throws: ClusteringMismatch.self) { try other.expansionZoom(of: cluster) }
        #expect(throws: ClusteringMismatch.self) { try other.bounds(of: cluster) }
        #expect(throws: ClusteringMismatch.self) { try other.parent(of: cluster) }
        var fewer = coarse
        fewer.minCountForClustering = 3
        #expect {
            try Clustering(index, options: fewer).members(of: cluster)
        } throws: { error in
            (error as? ClusteringMismatch)?.differences == [
                "minCountForClustering is 3 here, 2 where the cluster was made"
            ]
        }
        // A category filter shapes no grid: the same options with a filter answer.
        #expect(try made.selecting(categories: ["a"]).bounds(of: cluster) == made.bounds(of: cluster))
    }

    /// Distinct points closer than a level-32 cell (about a centimetre) share one key: no zoom separates them, and the
    /// cluster of that deepest cell, which clustering hands out, is answered by every question that takes its id.
    @Test func aClusterOfTheDeepestCellIsFoundByItsID() throws {
        let index = Self.index([.checked(48.8566, 2.3522), .checked(48.856_600_001, 2.352_200_001)])
        let clusters = index.clustering().clusters(
            in: Viewport(center: .checked(48.8566, 2.3522), zoom: 20, size: Self.screen))
        let cluster = try #require(clusters.first)
        #expect(clusters.count == 1 && cluster.count == 2)
        guard case .cell(let cell) = cluster.id else {
            Issue.record("\(cluster.id) is not a cell's id")
            return
        }
        #expect(cell.level == GridCell.maxLevel)
        let found = try #require(index.clustering().cluster(id: cluster.id))
        #expect(found.count == 2)
        #expect(try index.clustering().members(of: found).count == 2)
        #expect(try index.clustering().children(of: found).isEmpty)
        #expect(try index.clustering().expansionZoom(of: found) == nil)
    }

    @Test func nearestToCenterPicksTheClosestMember() {
        let index = Self.index([.checked(40, 40), .checked(47, 47), .checked(45.1, 44.9), .checked(42.1, 43.7)])
        let cell = GridCell(containing: Coordinate.checked(45, 45).mapPoint, level: 2)
        #expect(index.member(of: cell, nearestTo: .checked(45, 45))?.coordinate == .checked(45.1, 44.9))
    }

    @Test func nearestToCellCenterPositionUsesTheGridCellsCenter() throws {
        // At level 2 the cell of these points spans longitude 0...90 and latitude 0...66.5: its center
        // is at (40.98°, 45°), nearest to (42.1, 43.7).
        let index = Self.index([.checked(40, 40), .checked(47, 47), .checked(45.1, 44.9), .checked(42.1, 43.7)])
        var options = ClusterOptions<Int>()
        options.position = .nearestToCellCenter
        let clusters = index.clustering(options).clusters(
            in: Viewport(center: .checked(45, 45), zoom: 0, size: Self.screen))
        #expect(clusters.map(\.coordinate) == [.checked(42.1, 43.7)])
        let cell = try #require(clusters.first?.cell)
        #expect(cell.level == 2)
        let brute = index.elements.min { a, b in
            func d(_ c: Coordinate) -> Double {
                let p = c.mapPoint
                let q = cell.rect.center
                return (p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y)
            }
            return d(a.coordinate) < d(b.coordinate)
        }
        #expect(brute?.coordinate == clusters.first?.coordinate)
    }

    @Test(arguments: [(9, 9, 0), (10, 0, 1)])
    func minCountDecidesWhetherACellClusters(elements: Int, singles: Int, clusters: Int) {
        let index = Self.index((0..<elements).map { Coordinate.checked(10 + Double($0) * 0.01, 20) })
        var options = ClusterOptions<Int>()
        options.minCountForClustering = 10
        let result = index.clustering(options).clusters(
            in: Viewport(center: .checked(10, 20), zoom: 3, size: Self.screen))
        #expect(result.filter { !$0.isCluster }.count == singles)
        #expect(result.filter(\.isCluster).count == clusters)
        #expect(result.map(\.count).reduce(0, +) == elements)
        if clusters == 1 { #expect(result.first?.count == 10) }
    }

    @Test func anElementThatOptsOutStandsBesideTheCluster() throws {
        let index = Self.index([.checked(10, 20), .checked(10.01, 20.01), .checked(10.02, 20.02)])
        var options = ClusterOptions<Int>()
        options.shouldCluster = { $0 != 1 }
        let result = index.clustering(options).clusters(
            in: Viewport(center: .checked(10, 20), zoom: 3, size: Self.screen))
        #expect(result.count == 2)
        let cluster = result.first(where: \.isCluster)
        #expect(cluster?.count == 2)
        #expect(try Set(cluster.map { try index.clustering(options).members(of: $0) } ?? []) == [0, 2])
        #expect(result.first(where: { !$0.isCluster })?.id == .element(1))
    }

    @Test func aViewportAcrossTheAntimeridianReturnsEachSideOnce() throws {
        let index = Self.index([.checked(0, 179.9), .checked(0, -179.9), .checked(0, 0)])
        let rect = try MapRect(west: 170, south: -10, east: -170, north: 10)
        var options = ClusterOptions<Int>()
        options.marginFactor = 0
        options.maxZoomLevelForClustering = 0  // every element on its own
        let result = index.clustering(options).clusters(
            in: Viewport(rect: rect, size: ViewSize(width: 1024, height: 1024)))
        #expect(try result.flatMap { try index.clustering(options).members(of: $0) }.sorted() == [0, 1])
        // Clustered, the two sides of the seam are two cells and so two singles, each once.
        let clustered = index.clustering().clusters(in: Viewport(rect: rect, size: ViewSize(width: 1024, height: 1024)))
        #expect(try clustered.flatMap { try index.clustering().members(of: $0) }.sorted() == [0, 1])
    }

    @Test func aViewportWiderThanTheWorldReturnsEveryCellOnce() throws {
        let coordinates = DataShape.uniform.coordinates(count: 2_000, seed: 8)
        let index = Self.index(coordinates)
        let viewport = Viewport(center: .checked(0, 0), zoom: 0, size: ViewSize(width: 2_000, height: 300))
        let members = try index.clustering().clusters(in: viewport).flatMap { try index.clustering().members(of: $0) }
        #expect(members.count == Set(members).count)
        #expect(Set(members) == elementsInCells(index, viewport, ClusterOptions()))
    }

    // MARK: - Same location and switching clustering off

    @Test func elementsOnOneCoordinateNeverSplit() throws {
        var coordinates = Array(repeating: Coordinate.checked(52.52, 13.405), count: 25)
        coordinates.append(.checked(52.53, 13.41))
        let index = Self.index(coordinates)
        var alone = 0
        for zoom in stride(from: 0.0, through: 30, by: 0.5) {
            let result = index.clustering().clusters(
                in: Viewport(center: .checked(52.52, 13.405), zoom: zoom, size: Self.screen))
            let holder = try result.first { try index.clustering().members(of: $0).contains(0) }
            #expect(holder.map { $0.count >= 25 } == true, "zoom \(zoom)")
            if let holder, holder.count == 25 {
                #expect(holder.isSameLocation)
                #expect(holder.id == ClusterID<Int>.location(.checked(52.52, 13.405)))
                #expect(try index.clustering().expansionZoom(of: holder) == nil)
                #expect(try index.clustering().children(of: holder).isEmpty)
                alone += 1
            }
        }
        // Deep enough, the 25 stand apart from their neighbour: the checks above ran.
        #expect(alone > 10)
    }

    @Test func pastTheMaxZoomElementsComeBackOneByOneAndStackedOnesTogether() {
        let index = Self.index([.checked(1, 1), .checked(1, 1), .checked(1.001, 1), .checked(1.002, 1)])
        var options = ClusterOptions<Int>()
        options.maxZoomLevelForClustering = 5
        let viewport = Viewport(center: .checked(1, 1), zoom: 5, size: Self.screen)
        #expect(index.clustering(options).clusters(in: viewport).count == 1)
        let past = Viewport(center: .checked(1, 1), zoom: 5.01, size: Self.screen)
        let result = index.clustering(options).clusters(in: past)
        #expect(result.map(\.count).sorted() == [1, 1, 2])
        #expect(result.first { $0.count == 2 }?.isSameLocation == true)
        #expect(result.first { $0.count == 2 }?.id == .location(.checked(1, 1)))
    }

    @Test func tooFewLocationsSwitchClusteringOff() {
        let index = Self.index([
            .checked(1, 1), .checked(1, 1), .checked(1.001, 1), .checked(1.001, 1), .checked(1.002, 1),
        ])
        var options = ClusterOptions<Int>()
        let viewport = Viewport(center: .checked(1, 1), zoom: 5, size: Self.screen)
        options.minUniqueLocationsForClustering = 3
        #expect(index.clustering(options).clusters(in: viewport).map(\.count) == [5])
        options.minUniqueLocationsForClustering = 4
        #expect(index.clustering(options).clusters(in: viewport).map(\.count).sorted() == [1, 2, 2])
    }

    // MARK: - Positions

    /// Three members of one cell at zoom 3, and the viewport that clusters them.
    static let positionCase = (
        index: index([.checked(10, 20), .checked(10.3, 20.2), .checked(10.1, 20.6)]),
        viewport: Viewport(center: .checked(10, 20), zoom: 3, size: screen)
    )

    static func positioned(_ position: ClusterPosition<Int>) throws -> Cluster<Int> {
        var options = ClusterOptions<Int>()
        options.position = position
        let clusters = positionCase.index.clustering(options).clusters(in: positionCase.viewport)
        try #require(clusters.count == 1)
        return clusters[0]
    }

    @Test func centerOfMassIsTheMeanOfTheMembers() throws {
        let cluster = try Self.positioned(.centerOfMass)
        #expect(cluster.count == 3)
        #expect(abs(cluster.coordinate.latitude - (10 + 10.3 + 10.1) / 3) < 1e-7)
        #expect(abs(cluster.coordinate.longitude - (20 + 20.2 + 20.6) / 3) < 1e-7)
    }

    @Test func cellCenterIsTheCentreOfTheGridCell() throws {
        let cluster = try Self.positioned(.cellCenter)
        #expect(cluster.coordinate.mapPoint.x == cluster.cell.rect.center.x)
        #expect(abs(cluster.coordinate.mapPoint.y - cluster.cell.rect.center.y) < 1e-6)
    }

    @Test func firstInZOrderIsTheFirstAlongTheCurve() throws {
        let cluster = try Self.positioned(.firstInZOrder)
        var options = ClusterOptions<Int>()
        options.position = .firstInZOrder
        let first = try Self.positionCase.index.clustering(options).membersWithCoordinates(of: cluster, limit: 1)
        #expect(first.count == 1)
        #expect(cluster.coordinate == first.first?.coordinate)
    }

    @Test func aCustomPositionIsTheFunctionsAnswer() throws {
        let corner = Coordinate.checked(-12.5, 33.25)
        let cluster = try Self.positioned(.custom { _ in corner })
        #expect(cluster.coordinate == corner)
        #expect(cluster.count == 3)
    }

    // MARK: - Across zoom levels

    @Test(arguments: DataShape.allCases)
    func childrenSplitTheParentAndPointBackToIt(shape: DataShape) throws {
        let index = Self.index(shape.coordinates(count: 1_500, seed: 21))
        let viewport = Viewport(center: .checked(0, 0), zoom: 1, size: Self.screen)
        var checked = 0
        for cluster in index.clustering().clusters(in: viewport) where cluster.isCluster {
            let children = try index.clustering().children(of: cluster)
            guard let zoom = try index.clustering().expansionZoom(of: cluster) else {
                #expect(cluster.isSameLocation || children.isEmpty)
                continue
            }
            checked += 1
            #expect(zoom > viewport.zoom)
            #expect(children.count >= 2, "\(cluster.id) splits at \(zoom)")
            #expect(children.map(\.count).reduce(0, +) == cluster.count)
            #expect(
                try Set(children.flatMap { try index.clustering().members(of: $0) })
                    == Set(index.clustering().members(of: cluster)))
            for child in children { #expect(try index.clustering().parent(of: child)?.id == cluster.id) }
            // Just before the expansion zoom the members are still one cluster, with the same id; just
            // after it they are not. (A viewport's zoom is recomputed from its rect, to within 1e-14.)
            let before = Viewport(center: cluster.coordinate, zoom: zoom - 1e-9, size: Self.screen)
            #expect(
                index.clustering().clusters(in: before).contains { $0.id == cluster.id && $0.count == cluster.count })
            let after = Viewport(center: cluster.coordinate, zoom: zoom + 1e-9, size: Self.screen)
            let member = try index.clustering().members(of: cluster, limit: 1)[0]
            #expect(
                index.clustering().clusters(in: after).first {
                    (try? index.clustering().members(of: $0))?.contains(member) == true
                }.map {
                    $0.count < cluster.count
                } == true)
        }
        // Every shape but one location has clusters that split.
        #expect(shape == .oneLocation || checked > 0)
    }

    // MARK: - Properties on seeded data

    @Test(arguments: DataShape.allCases, [0.0, 2.5, 6, 11.3])
    func everyElementOfTheCellsIsInExactlyOneCluster(shape: DataShape, zoom: Double) throws {
        let coordinates = shape.coordinates(count: 4_000, seed: 31)
        let index = Self.index(coordinates)
        var rng = SplitMix64(seed: 77)
        for _ in 0..<5 {
            let center = coordinates.randomElement(using: &rng) ?? .checked(0, 0)
            let viewport = Viewport(center: center, zoom: zoom, size: Self.screen)
            let clusters = index.clustering().clusters(in: viewport)
            let members = try clusters.flatMap { try index.clustering().members(of: $0) }
            #expect(members.count == Set(members).count, "no element twice")
            #expect(Set(members) == elementsInCells(index, viewport, ClusterOptions()))
            #expect(clusters.map(\.count).reduce(0, +) == members.count)
            #expect(Set(clusters.map(\.id)).count == clusters.count, "ids are unique")
            for cluster in clusters {
                #expect(
                    cluster.isSameLocation
                        == (Set(try index.clustering().membersWithCoordinates(of: cluster).map(\.coordinate)).count == 1)
                )
            }
        }
    }

    @Test(arguments: DataShape.allCases)
    func resultsDoNotDependOnInsertionOrder(shape: DataShape) throws {
        let coordinates = shape.coordinates(count: 3_000, seed: 41)
        let bulk = Self.index(coordinates)
        var rng = SplitMix64(seed: 5)
        var oneByOne = ClusterIndex<Int>()
        for (id, coordinate) in coordinates.enumerated().shuffled(using: &rng) { oneByOne.insert(id, at: coordinate) }
        for zoom in [0.0, 3, 7.5, 13] {
            let viewport = Viewport(center: coordinates[0], zoom: zoom, size: Self.screen)
            func digest(_ index: ClusterIndex<Int>) throws -> [ClusterID<Int>: (Int, Coordinate, Set<Int>)] {
                let clustering = index.clustering()
                return Dictionary(
                    uniqueKeysWithValues: try clustering.clusters(in: viewport).map {
                        ($0.id, ($0.count, $0.coordinate, Set(try clustering.members(of: $0))))
                    })
            }
            let a = try digest(bulk)
            let b = try digest(oneByOne)
            #expect(a.keys == b.keys)
            for (id, value) in a {
                #expect(b[id]?.0 == value.0 && b[id]?.1 == value.1 && b[id]?.2 == value.2, "\(id)")
            }
        }
    }

    @Test(arguments: DataShape.allCases)
    func panningLessThanACellChangesNoClusterThatStaysInView(shape: DataShape) {
        let coordinates = shape.coordinates(count: 3_000, seed: 51)
        let index = Self.index(coordinates)
        var rng = SplitMix64(seed: 9)
        let options = ClusterOptions<Int>()
        for zoom in [1.0, 4.2, 9] {
            let viewport = Viewport(center: coordinates[0], zoom: zoom, size: Self.screen)
            let cellSide = viewport.rect.size.width / viewport.size.width * options.cellSize * 0.7
            var panned = viewport
            panned.rect.origin.x += Double.random(in: -cellSide...cellSide, using: &rng)
            panned.rect.origin.y += Double.random(in: -cellSide...cellSide, using: &rng)
            let before = Dictionary(
                uniqueKeysWithValues: index.clustering().clusters(in: viewport).map { ($0.cell, $0) })
            var compared = 0
            for cluster in index.clustering().clusters(in: panned) {
                guard let old = before[cluster.cell] else { continue }
                #expect(old.id == cluster.id && old.count == cluster.count && old.coordinate == cluster.coordinate)
                compared += 1
            }
            // The view centres on data, and cells stay in view after so small a pan: the comparison above ran.
            #expect(compared > 0, "zoom \(zoom)")
        }
    }

    @Test func cellsAreNearestToTheRequestedSize() {
        var options = ClusterOptions<Int>()
        for cellSize in [20.0, 60, 100, 256] {
            options.cellSize = cellSize
            for zoom in stride(from: 0.0, through: 20, by: 0.37) {
                let level = options.gridLevel(forZoom: zoom)
                let side = 256 * mathExp2(zoom) / mathExp2(Double(level))
                if level > 0 && level < 32 { #expect(side / cellSize > 0.7 && side / cellSize < 1.42, "zoom \(zoom)") }
                #expect(options.zoom(forLevel: level) <= zoom)
            }
        }
    }

    @Test(arguments: DataShape.allCases, [1.0, 4.5, 9])
    func aClusterIsFoundAgainByItsIdAlone(shape: DataShape, zoom: Double) throws {
        let index = Self.index(shape.coordinates(count: 3_000, seed: 61))
        let viewport = Viewport(center: shape.coordinates(count: 1, seed: 62)[0], zoom: zoom, size: Self.screen)
        for cluster in index.clustering().clusters(in: viewport) {
            let found = try #require(index.clustering().cluster(id: cluster.id), "\(cluster.id)")
            #expect(found.id == cluster.id)
            #expect(found.count == cluster.count)
            #expect(try Set(index.clustering().members(of: found)) == Set(index.clustering().members(of: cluster)))
            #expect(try index.clustering().expansionZoom(of: found) == index.clustering().expansionZoom(of: cluster))
            #expect(
                try index.clustering().children(of: found).map(\.id)
                    == index.clustering().children(of: cluster).map(\.id))
        }
        // Ids no clustering makes: a cell with no members, and a cell larger than its members need.
        #expect(index.clustering().cluster(id: .cell(GridCell(level: 31, x: 5, y: 5))) == nil)
        let world = Viewport(center: .checked(0, 0), zoom: 1, size: Self.screen)
        let several = index.clustering().clusters(in: world).filter { $0.isCluster && !$0.isSameLocation }
        if shape != .oneLocation { try #require(!several.isEmpty, "the view has a cluster of several locations") }
        for cluster in several {
            guard case .cell(let tight) = cluster.id, let parent = tight.parent else {
                Issue.record("a cluster of several locations is named by its cell")
                continue
            }
            let loose = index.clustering().cluster(id: .cell(parent))
            #expect(loose == nil || loose?.count ?? 0 > cluster.count)
        }
    }
}
