import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster

struct ClusterIndexTests {
    /// Cells of several levels around the data, and random ones.
    static func probeCells(for coordinates: [Coordinate], using rng: inout SplitMix64) -> [GridCell] {
        var cells: [GridCell] = [GridCell(level: 0, x: 0, y: 0)]
        for level in [1, 2, 5, 9, 14, 20, 27, 32] {
            for coordinate in coordinates.prefix(12) {
                cells.append(GridCell(containing: coordinate.mapPoint, level: level))
            }
            let limit = UInt32(truncatingIfNeeded: (UInt64(1) << level) - 1)
            for _ in 0..<4 {
                cells.append(
                    GridCell(
                        level: level, x: .random(in: 0...limit, using: &rng), y: .random(in: 0...limit, using: &rng)))
            }
        }
        return cells
    }

    static func expectMatchesBruteForce(_ index: ClusterIndex<Int>, _ truth: BruteForce<Int>, cells: [GridCell]) {
        index._checkInvariants()
        #expect(index.count == truth.points.count)
        for cell in cells {
            #expect(index.summary(of: cell) == truth.summary(of: cell), "cell \(cell)")
            #expect(Set(index.members(of: cell).map(\.element)) == Set(truth.members(of: cell)), "cell \(cell)")
        }
    }

    @Test(arguments: DataShape.allCases, [0, 1, 7, 64, 3_000])
    func bulkLoadMatchesBruteForce(shape: DataShape, count: Int) {
        let coordinates = shape.coordinates(count: count, seed: 1)
        let index = ClusterIndex(coordinates.enumerated().map { ($0.offset, $0.element) })
        let truth = BruteForce(
            points: Dictionary(uniqueKeysWithValues: coordinates.enumerated().map { ($0.offset, $0.element) }))
        var rng = SplitMix64(seed: 99)
        Self.expectMatchesBruteForce(index, truth, cells: Self.probeCells(for: coordinates, using: &rng))
    }

    /// Large enough that the bulk load splits its work over several threads (projection, leaves, the identity
    /// table's words and the store's pages), which smaller loads do on one.
    @Test func aLargeBulkLoadOnSeveralThreadsMatchesBruteForce() {
        let coordinates = DataShape.clustered.coordinates(count: 150_000, seed: 23)
        var input = coordinates.enumerated().map { ($0.offset, $0.element) }
        input.append((17, .checked(1, 2)))  // a repeated identity: the last coordinate wins
        let index = ClusterIndex(input)
        var points = Dictionary(uniqueKeysWithValues: coordinates.enumerated().map { ($0.offset, $0.element) })
        points[17] = .checked(1, 2)
        let truth = BruteForce(points: points)
        var rng = SplitMix64(seed: 4)
        let cells = Array(Self.probeCells(for: coordinates, using: &rng).shuffled(using: &rng).prefix(24))
        #expect(index.count == 150_000)
        for cell in cells { #expect(index.summary(of: cell) == truth.summary(of: cell), "cell \(cell)") }
        for id in stride(from: 0, to: 150_000, by: 997) { #expect(index.coordinate(of: id) == points[id]) }
    }

    @Test(arguments: DataShape.allCases)
    func longRandomEditSequencesMatchBruteForce(shape: DataShape) {
        var rng = SplitMix64(seed: 7)
        // Start from a bulk load deep enough to have two branch levels, so branch splits and merges run.
        let initial = shape.coordinates(count: 3_000, seed: 11)
        var index = ClusterIndex(initial.enumerated().map { ($0.offset, $0.element) })
        var truth = BruteForce(
            points: Dictionary(uniqueKeysWithValues: initial.enumerated().map { ($0.offset, $0.element) }))
        #expect(index.tree.height >= 2)
        var nextID = initial.count
        for step in 0..<6_000 {
            let action = Int.random(in: 0..<10, using: &rng)
            if action < 5 || truth.points.isEmpty {
                let coordinate = shape.coordinate(using: &rng)
                let result = index.insert(nextID, at: coordinate)
                #expect(result)
                truth.points[nextID] = coordinate
                nextID += 1
            } else if action < 8 {
                let victim = truth.points.keys.randomElement(using: &rng)!
                let result = index.remove(victim)
                #expect(result)
                truth.points[victim] = nil
            } else {
                let victim = truth.points.keys.randomElement(using: &rng)!
                let coordinate = shape.coordinate(using: &rng)
                let result = index.move(victim, to: coordinate)
                #expect(result)
                truth.points[victim] = coordinate
            }
            index.tree._checkInvariants()
            if step % 1_000 == 999 {
                Self.expectMatchesBruteForce(
                    index, truth, cells: Self.probeCells(for: Array(truth.points.values), using: &rng))
            }
        }
        // Drain it completely: merges, root collapses and store compactions must keep everything consistent.
        for (step, victim) in truth.points.keys.shuffled(using: &rng).enumerated() {
            let removed = index.remove(victim)
            #expect(removed)
            truth.points[victim] = nil
            index.tree._checkInvariants()
            if step % 700 == 699 {
                Self.expectMatchesBruteForce(
                    index, truth, cells: Self.probeCells(for: Array(truth.points.values), using: &rng))
            }
        }
        #expect(index.isEmpty)
        #expect(index.summary(of: GridCell(level: 0, x: 0, y: 0)) == nil)
    }

    // Batches of 5,000 run on two threads (more than two 2,048-element steps); smaller ones on one. The two-thread
    // cases are a test of their own, which .ci/run also runs under the thread sanitizer.
    @Test(arguments: DataShape.allCases, [3, 700])
    func batchesMatchBruteForce(shape: DataShape, batchSize: Int) {
        Self.checkBatches(shape: shape, batchSize: batchSize)
    }

    @Test(arguments: DataShape.allCases)
    func batchesOnTwoThreadsMatchBruteForce(shape: DataShape) {
        Self.checkBatches(shape: shape, batchSize: 5_000)
    }

    /// Three rounds of a batch of inserts and moves, then a batch of removals, against brute force.
    static func checkBatches(shape: DataShape, batchSize: Int) {
        var rng = SplitMix64(seed: UInt64(batchSize))
        let initial = shape.coordinates(count: 3_000, seed: 19)
        var index = ClusterIndex(initial.enumerated().map { ($0.offset, $0.element) })
        var truth = BruteForce(
            points: Dictionary(uniqueKeysWithValues: initial.enumerated().map { ($0.offset, $0.element) }))
        var nextID = initial.count
        for _ in 0..<3 {
            // New elements, moves of existing ones, and an identity twice (its last coordinate wins).
            var batch: [(Int, Coordinate)] = []
            for _ in 0..<batchSize {
                let id = Bool.random(using: &rng) ? nextID : (truth.points.keys.randomElement(using: &rng) ?? nextID)
                if id == nextID { nextID += 1 }
                batch.append((id, shape.coordinate(using: &rng)))
            }
            if let (repeated, _) = batch.first { batch.append((repeated, shape.coordinate(using: &rng))) }
            index.insert(contentsOf: batch)
            for (id, coordinate) in batch { truth.points[id] = coordinate }
            Self.expectMatchesBruteForce(
                index, truth, cells: Self.probeCells(for: Array(truth.points.values), using: &rng))

            // Removals, with unknown elementSlots and one named twice.
            var victims = Array(truth.points.keys.shuffled(using: &rng).prefix(batchSize))
            victims += [-1, -2] + victims.prefix(1)
            let removed = index.remove(contentsOf: victims)
            var expected = 0
            for id in Set(victims) where truth.points.removeValue(forKey: id) != nil { expected += 1 }
            #expect(removed == expected)
            Self.expectMatchesBruteForce(
                index, truth, cells: Self.probeCells(for: Array(truth.points.values), using: &rng))
            for id in victims.prefix(20) { #expect(!index.contains(id)) }
        }
    }

    @Test func removingTheOutermostElementsShrinksTheBounds() {
        let coordinates: [Coordinate] = (0..<200).map { .checked(Double($0 % 20) - 10, Double($0 / 20) * 3) }
        var index = ClusterIndex(coordinates.enumerated().map { ($0.offset, $0.element) })
        var truth = BruteForce(
            points: Dictionary(uniqueKeysWithValues: coordinates.enumerated().map { ($0.offset, $0.element) }))
        let world = GridCell(level: 0, x: 0, y: 0)
        // Remove from the outside in, so that every removal lies on the current bounds.
        let order = coordinates.indices.sorted { abs(coordinates[$0].latitude) > abs(coordinates[$1].latitude) }
        for id in order.prefix(190) {
            index.remove(id)
            truth.points[id] = nil
            #expect(index.summary(of: world) == truth.summary(of: world))
        }
    }

    @Test func insertingAnIdentityAgainMovesIt() {
        var index = ClusterIndex<String>()
        let inserted = index.insert("a", at: .checked(10, 10))
        let insertedAgain = index.insert("a", at: .checked(-20, 30))
        #expect(inserted && !insertedAgain)
        #expect(index.count == 1)
        #expect(index.coordinate(of: "a") == .checked(-20, 30))
    }

    @Test func bulkLoadKeepsTheLastCoordinateOfARepeatedIdentity() {
        let index = ClusterIndex([
            ("a", Coordinate.checked(1, 1)), ("b", .checked(2, 2)), ("a", .checked(3, 3)), ("a", .checked(1, 1)),
        ])
        #expect(index.count == 2)
        #expect(index.coordinate(of: "a") == .checked(1, 1))
        #expect(index.summary(of: GridCell(level: 0, x: 0, y: 0))?.count == 2)
    }

    @Test func removingAnUnknownElementChangesNothing() {
        var index = ClusterIndex([(1, Coordinate.checked(1, 1)), (2, .checked(2, 2))])
        let before = index.elements.map(\.element)
        let removed = index.remove(3)
        let moved = index.move(3, to: .checked(0, 0))
        #expect(!removed && !moved)
        #expect(index.elements.map(\.element) == before)
        #expect(index.count == 2)
    }

    @Test func aCopyIsASnapshot() {
        let coordinates = DataShape.uniform.coordinates(count: 2_000, seed: 3)
        var index = ClusterIndex(coordinates.enumerated().map { ($0.offset, $0.element) })
        let snapshot = index
        let world = GridCell(level: 0, x: 0, y: 0)
        let before = snapshot.summary(of: world)
        for id in 0..<500 { index.remove(id) }
        index.insert(10_000, at: .checked(1, 1))
        index.move(600, to: .checked(-3, -3))
        #expect(snapshot.summary(of: world) == before)
        #expect(snapshot.count == 2_000)
        #expect(snapshot.coordinate(of: 600) == coordinates[600])
        #expect(index.count == 1_501)
    }

    @Test func membersArePagedInOneStableOrder() {
        let coordinates = DataShape.clustered.coordinates(count: 1_000, seed: 5)
        let index = ClusterIndex(coordinates.enumerated().map { ($0.offset, $0.element) })
        let cell = GridCell(containing: coordinates[0].mapPoint, level: 3)
        let all = index.members(of: cell).map(\.element)
        var paged: [Int] = []
        var offset = 0
        while true {
            let page = index.members(of: cell, offset: offset, limit: 7).map(\.element)
            if page.isEmpty { break }
            paged += page
            offset += page.count
        }
        #expect(paged == all)
        #expect(index.members(of: cell, offset: all.count).isEmpty)
        #expect(index.members(of: cell, limit: 0).isEmpty)
    }

    @Test func elementsOnOneCoordinateAreOneLocation() {
        let index = ClusterIndex((0..<300).map { ($0, Coordinate.checked(12.5, -45.25)) })
        let summary = index.summary(of: GridCell(level: 0, x: 0, y: 0))
        #expect(summary?.isSameLocation == true)
        #expect(summary?.centerOfMass == .checked(12.5, -45.25))
        #expect(summary?.count == 300)
    }
}

/// An identity whose hash puts every value in one of five buckets: long probe runs that wrap around
/// the table, the hard case for the slot table's removal.
struct CollidingID: Hashable, Sendable, CustomStringConvertible {
    var value: Int
    func hash(into hasher: inout Hasher) { hasher.combine(value % 5) }
    var description: String { "#\(value)" }
}

struct SlotTableTests {
    @Test func heavyCollisionsSurviveLongEditSequences() {
        var rng = SplitMix64(seed: 13)
        var index = ClusterIndex<CollidingID>()
        var truth: [CollidingID: Coordinate] = [:]
        for step in 0..<4_000 {
            let id = CollidingID(value: Int.random(in: 0..<600, using: &rng))
            switch Int.random(in: 0..<3, using: &rng) {
            case 0, 1:
                let coordinate = DataShape.uniform.coordinate(using: &rng)
                let inserted = index.insert(id, at: coordinate)
                #expect(inserted == (truth[id] == nil))
                truth[id] = coordinate
            default:
                let removed = index.remove(id)
                #expect(removed == (truth.removeValue(forKey: id) != nil))
            }
            if step % 500 == 0 {
                index._checkInvariants()
                #expect(index.count == truth.count)
                for probe in 0..<600 {
                    let id = CollidingID(value: probe)
                    #expect(index.coordinate(of: id) == truth[id], "\(id) at step \(step)")
                }
            }
        }
        let world = GridCell(level: 0, x: 0, y: 0)
        #expect(Set(index.members(of: world).map(\.element)) == Set(truth.keys))
    }

    @Test func aTableHasTheBucketsItsCountNeedsAndEveryHashAHomeInIt() {
        // A bulk load's table is 3/5 full: 1.67 buckets an element, where the next power of two would give 2.1.
        #expect(SlotTable(minimumCapacity: 1_000_000).buckets.count == 1_666_667)
        #expect(SlotTable(minimumCapacity: 600).buckets.count == 1_000)
        #expect(SlotTable().buckets.count == 8)
        var rng = SplitMix64(seed: 5)
        for count in [8, 1_000, 1_666_667, 447_392_425] {
            let hashes =
                [0, 1, -1, .min, .max, Int(UInt32.max), -Int(UInt32.max)]
                + (0..<200).map { _ in Int.random(in: .min ... .max, using: &rng) }
            for hash in hashes {
                #expect((0..<count).contains(SlotTable.home(of: hash, among: count)), "hash \(hash), \(count) buckets")
            }
        }
        // The low 32 bits spread over the whole table, in order.
        #expect(SlotTable.home(of: 0, among: 1_000) == 0)
        #expect(SlotTable.home(of: Int(UInt32.max), among: 1_000) == 999)
        #expect(SlotTable.home(of: 1 << 31, among: 1_000) == 500)
    }

    @Test func aBulkLoadedTableGrowsPastThreeQuartersAndKeepsEveryElement() {
        // 600 elements fill 1,000 buckets to 3/5; 151 more pass 3/4 and rebuild the table.
        var rng = SplitMix64(seed: 21)
        var index = ClusterIndex((0..<600).map { ($0, DataShape.uniform.coordinate(using: &rng)) })
        #expect(index.slots.buckets.count == 1_000)
        for id in 600..<800 { index.insert(id, at: DataShape.uniform.coordinate(using: &rng)) }
        #expect(index.slots.buckets.count == 2_500, "grown to hold twice its count 3/5 full")
        for id in stride(from: 0, to: 800, by: 3) {
            let removed = index.remove(id)
            #expect(removed)
        }
        index._checkInvariants()
        for id in 0..<800 { #expect(index.contains(id) == !id.isMultiple(of: 3), "\(id)") }
    }

    @Test func bulkLoadWithCollidingDuplicatesKeepsTheLast() {
        let input = (0..<300).map {
            (CollidingID(value: $0 % 100), Coordinate.checked(Double($0 % 80), Double($0 % 170)))
        }
        let index = ClusterIndex(input)
        #expect(index.count == 100)
        for value in 0..<100 {
            #expect(
                index.coordinate(of: CollidingID(value: value))
                    == .checked(Double((value + 200) % 80), Double((value + 200) % 170)))
        }
    }
}

/// An identity that is a reference, to see whether the index keeps removed elements alive.
final class Token: Hashable, Sendable {
    let id: Int
    init(id: Int) { self.id = id }
    static func == (lhs: Token, rhs: Token) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

struct ReleaseTests {
    struct WeakToken {
        weak var token: Token?
    }

    @Test func removedElementsAreReleased() {
        var index = ClusterIndex<Token>()
        var watched: [WeakToken] = []
        do {
            let tokens = (0..<3_000).map { Token(id: $0) }
            watched = tokens.map { WeakToken(token: $0) }
            var rng = SplitMix64(seed: 3)
            index.insert(contentsOf: tokens.map { ($0, DataShape.uniform.coordinate(using: &rng)) })
            index.remove(contentsOf: tokens[0..<1_000])  // a batch
            for token in tokens[1_000..<2_000] { index.remove(token) }  // one by one, through a compaction
        }
        #expect(watched[0..<2_000].allSatisfy { $0.token == nil }, "removed elements are released")
        #expect(watched[2_000...].allSatisfy { $0.token != nil }, "the index keeps its elements")
        #expect(index.count == 1_000)
        #expect(Set(index.elements.map(\.element.id)) == Set(2_000..<3_000))
    }
}

/// The invariant checks the random-edit tests rely on fail when what they check breaks.
struct InvariantCheckTests {
    @Test func theInvariantCheckCatchesAStaleSummary() async {
        await #expect(processExitsWith: .failure) {
            var tree = ClusterIndex((0..<2_000).map { ($0, Coordinate.checked(Double($0 % 80), Double($0 % 170))) })
                .tree
            tree.rootSummary?.count += 1
            tree._checkInvariants()
        }
    }

    @Test func theInvariantCheckCatchesStaleCoarseCells() async {
        await #expect(processExitsWith: .failure) {
            let count = CoarseCells.keptFrom
            var tree = ClusterIndex((0..<count).map { ($0, Coordinate.checked(Double($0 % 80), Double($0 % 170))) })
                .tree
            // Counted in the coarse cells, never inserted into the tree.
            let stray = Coordinate.checked(1, 1)
            tree.coarseCells?.insert(IndexEntry(key: stray.gridKey, coordinate: stray, slot: 0), values: nil)
            tree._checkInvariants()
        }
    }

    @Test func theInvariantCheckCatchesAnEntryWithTheWrongKey() async {
        await #expect(processExitsWith: .failure) {
            var index = ClusterIndex((0..<2_000).map { ($0, Coordinate.checked(Double($0 % 80), Double($0 % 170))) })
            index.store[7].key ^= 1
            index._checkInvariants()
        }
    }
}
