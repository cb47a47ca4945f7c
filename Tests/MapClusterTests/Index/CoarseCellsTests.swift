import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster

/// The coarse cells a large tree keeps (``CoarseCells``) answer world maps: they must follow every edit, appear and go
/// with the tree's size, and give the clusters the tree itself gives.
struct CoarseCellsTests {
    /// Above ``CoarseCells/keptFrom``, so that the tree keeps coarse cells from the start.
    static let size = CoarseCells.keptFrom + 4_000

    @Test(arguments: [DataShape.uniform, .clustered, .antimeridian])
    func coarseCellsFollowEditsAndGiveTheClustersOfBruteForce(shape: DataShape) {
        var rng = SplitMix64(seed: 23)
        let initial = shape.coordinates(count: Self.size, seed: 29)
        var index = ClusterIndex(initial.enumerated().map { ($0.offset, $0.element) })
        var truth = BruteForce(
            points: Dictionary(uniqueKeysWithValues: initial.enumerated().map { ($0.offset, $0.element) }))
        #expect(index.tree.coarseCells != nil)
        index._checkInvariants()
        Self.expectWorldClustersMatch(index, truth, zooms: [0, 3])

        // Single edits, among them removals of the first and last member of a coarse cell (the smallest and largest
        // keys), whose cells then ask the tree.
        var nextID = initial.count
        let snapshot = index
        let snapshotClusters = Self.worldClusters(snapshot, zoom: 2)
        for step in 0..<1_500 {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:
                let coordinate = shape.coordinate(using: &rng)
                index.insert(nextID, at: coordinate)
                truth.points[nextID] = coordinate
                nextID += 1
            case 1:
                let victim = truth.points.keys.randomElement(using: &rng)!
                index.remove(victim)
                truth.points[victim] = nil
            case 2:
                let victim = truth.points.keys.randomElement(using: &rng)!
                let coordinate = shape.coordinate(using: &rng)
                index.move(victim, to: coordinate)
                truth.points[victim] = coordinate
            default:
                let world = GridCell(level: 0, x: 0, y: 0)
                let offset = Bool.random(using: &rng) ? 0 : index.count - 1
                if let extreme = index.members(of: world, offset: offset, limit: 1).first {
                    index.remove(extreme.element)
                    truth.points[extreme.element] = nil
                }
            }
            if step % 500 == 499 { index._checkInvariants() }
        }
        Self.expectWorldClustersMatch(index, truth, zooms: [1, 4])
        #expect(Self.worldClusters(snapshot, zoom: 2) == snapshotClusters, "a snapshot keeps its coarse cells")

        // Below half the threshold the tree drops them; back above it, it builds them again.
        let victims = Array(
            truth.points.keys.shuffled(using: &rng).prefix(truth.points.count - CoarseCells.keptFrom / 3))
        index.remove(contentsOf: victims)
        for victim in victims { truth.points[victim] = nil }
        #expect(index.tree.coarseCells == nil)
        index._checkInvariants()
        Self.expectWorldClustersMatch(index, truth, zooms: [2])
        let arrivals = (0..<CoarseCells.keptFrom).map { offset in (nextID + offset, shape.coordinate(using: &rng)) }
        index.insert(contentsOf: arrivals)
        for (id, coordinate) in arrivals { truth.points[id] = coordinate }
        #expect(index.tree.coarseCells != nil)
        index._checkInvariants()
        Self.expectWorldClustersMatch(index, truth, zooms: [0, 2, 4])
    }

    /// A batch changes the deepest level alone and brings the levels above up to date at its end: its removals of a
    /// cell's first or last member, of every member of a cell, and its moves leave the cells as a recomputation.
    @Test func batchesLeaveTheCellsAsARecomputation() {
        var rng = SplitMix64(seed: 31)
        let initial = DataShape.clustered.coordinates(count: Self.size, seed: 37)
        var index = ClusterIndex(initial.enumerated().map { ($0.offset, $0.element) })
        var truth = BruteForce(
            points: Dictionary(uniqueKeysWithValues: initial.enumerated().map { ($0.offset, $0.element) }))
        for round in 0..<4 {
            // Every member of a few deepest cells, the world's first and last members, and a random thousand. The ids
            // in order, so that the seed alone decides (a dictionary's order changes from run to run).
            let ids = truth.points.keys.sorted()
            var victims: Set<Int> = []
            var emptied = 0
            while emptied < 3 {
                let someone = truth.points[ids.randomElement(using: &rng)!]!
                let cell = GridCell(containing: someone.mapPoint, level: CoarseCells.deepestLevel)
                // A cell of a few hundred at most: the clustered shape's densest hold tens of thousands.
                let members = index.members(of: cell, limit: 301)
                guard members.count <= 300 else { continue }
                victims.formUnion(members.map(\.element))
                emptied += 1
            }
            let world = GridCell(level: 0, x: 0, y: 0)
            victims.formUnion(index.members(of: world, limit: 2).map(\.element))
            victims.formUnion(index.members(of: world, offset: index.count - 2).map(\.element))
            victims.formUnion(ids.shuffled(using: &rng).prefix(1_000))
            index.remove(contentsOf: victims.sorted())
            for victim in victims { truth.points[victim] = nil }
            index._checkInvariants()
            // Moves and arrivals, some of them into the emptied cells.
            let moved = truth.points.keys.sorted().shuffled(using: &rng).prefix(500).map {
                ($0, DataShape.clustered.coordinate(using: &rng))
            }
            let arrivals = (0..<500).map { (Self.size + round * 1_000 + $0, initial.randomElement(using: &rng)!) }
            index.insert(contentsOf: moved + arrivals)
            for (id, coordinate) in moved + arrivals { truth.points[id] = coordinate }
            index._checkInvariants()
        }
        #expect(index.tree.coarseCells != nil)
        Self.expectWorldClustersMatch(index, truth, zooms: [0, 2, 4])
    }

    /// The clusters of a world map at `zoom`, by id, with their counts and coordinates.
    static func worldClusters(_ index: ClusterIndex<Int>, zoom: Double) -> [ClusterID<Int>: Coordinate] {
        let viewport = Viewport(rect: .world, size: ViewSize(showing: .world, atZoom: zoom))
        return Dictionary(
            uniqueKeysWithValues: index.clustering().clusters(in: viewport).map { ($0.id, $0.coordinate) })
    }

    /// A world map's clusters at each zoom against the points grouped by cell: every cell's count, and a cluster of
    /// several locations at its cell's center of mass.
    static func expectWorldClustersMatch(_ index: ClusterIndex<Int>, _ truth: BruteForce<Int>, zooms: [Double]) {
        let options = ClusterOptions<Int>()
        for zoom in zooms {
            let level = options.gridLevel(forZoom: zoom)
            #expect(level <= CoarseCells.deepestLevel, "the zooms are those the coarse cells answer")
            var cells: [GridCell: (count: Int, latitudeSum: Int64, longitudeSum: Int64)] = [:]
            for coordinate in truth.points.values {
                let cell = GridCell(containing: coordinate.mapPoint, level: level)
                cells[cell, default: (0, 0, 0)].count += 1
                cells[cell, default: (0, 0, 0)].latitudeSum += Summary.fixedPoint(coordinate.latitude)
                cells[cell, default: (0, 0, 0)].longitudeSum += Summary.fixedPoint(coordinate.wrappedLongitude)
            }
            let viewport = Viewport(rect: .world, size: ViewSize(showing: .world, atZoom: zoom))
            var counted: [GridCell: Int] = [:]
            for cluster in index.clustering(options).clusters(in: viewport) {
                counted[cluster.cell, default: 0] += cluster.count
                guard case .cell = cluster.id, let cell = cells[cluster.cell] else { continue }
                let n = Double(cell.count)
                let center = Coordinate(
                    uncheckedLatitude: Double(cell.latitudeSum) / n / Summary.fixedPointScale,
                    longitude: Double(cell.longitudeSum) / n / Summary.fixedPointScale)
                #expect(cluster.count == cell.count && cluster.coordinate == center, "zoom \(zoom), \(cluster.cell)")
            }
            #expect(counted == cells.mapValues(\.count), "zoom \(zoom): every point is in its cell's clusters")
        }
    }
}
