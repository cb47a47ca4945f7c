import Dispatch
import Foundation
import MapClusterTestSupport
import Testing

@testable @_spi(MapClusterServer) import MapCluster
@testable import MapClusterManager

/// The manager under concurrent use.
///
/// `.ci/run` runs this suite under the thread sanitizer too.
struct ClusterManagerConcurrencyTests {
    static let screen = testScreen

    @Test func theLatestUpdateWinsAmongConcurrentUpdatesAndEdits() async throws {
        var rng = SplitMix64(seed: 21)
        let options = {
            var options = ClusterManagerOptions<Int>()
            options.reusesMarkers = false
            return options
        }()
        let manager = try ClusterManager(options: options)
        try await manager.add(
            (0..<1_000).map { Placement($0, at: DataShape.uniform.coordinate(using: &rng)) })
        let viewports = (0..<101).map { _ in
            Viewport(
                center: DataShape.uniform.coordinate(using: &rng), zoom: Double.random(in: 0...8, using: &rng),
                size: Self.screen)
        }
        let edits = (0..<20).map { round in
            (
                adds: (0..<25).map {
                    Placement(1_000 + round * 25 + $0, at: DataShape.uniform.coordinate(using: &rng))
                },
                removals: (0..<25).map { _ in Int.random(in: 0..<1_000, using: &rng) }
            )
        }

        let outcomes = await withTaskGroup(of: Bool?.self) { group in
            for viewport in viewports {
                group.addTask {
                    do throws(ClusterUpdateError) {
                        let update = try await manager.update(for: viewport)
                        // Every answer is consistent in itself: what it shows is what the cells hold.
                        let shown = update.snapshot.markers.reduce(0) { $0 + $1.count }
                        return shown == elementsInCells(update.snapshot.index, viewport, options.clustering).count
                    } catch {
                        #expect(error == .superseded)
                        return nil
                    }
                }
            }
            for edit in edits {
                group.addTask {
                    try? await manager.add(edit.adds)
                    await manager.remove(edit.removals)
                    return nil
                }
            }
            var outcomes: [Bool] = []
            for await outcome in group { if let outcome { outcomes.append(outcome) } }
            return outcomes
        }
        #expect(!outcomes.isEmpty)
        #expect(outcomes.allSatisfy { $0 })

        // The final snapshot is a fresh computation for its viewport, from its elements.
        let snapshot = await manager.snapshot
        let viewport = try #require(snapshot.viewport)
        #expect(viewports.contains(viewport))
        let fresh = snapshot.index.clustering(options.clustering).clusters(in: viewport)
        #expect(snapshot.markers.map(\.id) == fresh.map { ClusterMarker<Int>.ID.cluster($0.id) })
        #expect(snapshot.markers.map(\.coordinate) == fresh.map(\.coordinate))
        #expect(snapshot.markers.map(\.count) == fresh.map(\.count))
        #expect(
            snapshot.markers.reduce(0) { $0 + $1.count }
                == elementsInCells(snapshot.index, viewport, options.clustering).count)
        // And once the edits are in, one more update brings it up to date.
        let last = try await manager.update(for: viewport)
        #expect(last.snapshot.index.count == (await manager.count))
    }

    // Task executors are iOS 18's and macOS 15's: the test needs one, and skips on older systems.
    @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aSupersededUpdateStopsEarlyAndIsToldSo() async throws {
        let gate = Gate()
        var options = ClusterManagerOptions<Int>()
        // Every cluster asks for its position: a way to watch the work of each update, told apart by zoom.
        options.clustering.position = .custom { cluster in
            gate.arrive(zoom: cluster.zoom)
            return cluster.coordinate
        }
        let manager = try ClusterManager(options: options)
        // The gate holds the stale update's clustering: on threads of its own, not on one of the cooperative pool's
        // (two, on two cores), which the newer update, the manager and this test need meanwhile.
        await manager.useWorkExecutor(OwnThreadExecutor())
        try await manager.add(
            DataShape.uniform.coordinates(count: 50_000, seed: 22).enumerated().map {
                Placement($0.offset, at: $0.element)
            })
        let first = Viewport(rect: .world, size: ViewSize(width: 2_048, height: 2_048))
        let second = Viewport(center: .checked(0, 0), zoom: 4, size: Self.screen)

        let stale = Task { try await manager.update(for: first) }
        try await gate.waitUntil { $0.blocked }
        let latest = Task { try await manager.update(for: second) }
        // The newer update has begun its own work, so the stale one has been told to stop.
        try await gate.waitUntil { $0.calls[second.zoom, default: 0] > 0 }
        gate.release()

        await #expect(throws: ClusterUpdateError.superseded) { try await stale.value }
        let update = try await latest.value
        #expect(update.snapshot.viewport == second)
        #expect(await manager.snapshot.viewport == second)
        // The stale update stopped within one check's worth of cells after it was released.
        let staleCalls = gate.state.calls[first.zoom, default: 0]
        let cells = Set(
            DataShape.uniform.coordinates(count: 50_000, seed: 22).map {
                GridCell(containing: $0.mapPoint, level: options.clustering.gridLevel(forZoom: first.zoom))
            }
        ).count
        #expect(staleCalls <= Clustering<Int>.clusteringCellsPerStopCheck + 1)
        #expect(staleCalls < cells / 4)
    }

    @Test func managersOnOneMapAreIndependent() async throws {
        var red = ClusterManagerOptions<Int>()
        red.clustering.cellSize = 30
        let redManager = try ClusterManager(options: red)
        let blueManager = ClusterManager<Int>()
        try await redManager.add(
            DataShape.uniform.coordinates(count: 2_000, seed: 23).enumerated().map {
                Placement($0.offset, at: $0.element)
            })
        try await blueManager.add(
            DataShape.clustered.coordinates(count: 500, seed: 24).enumerated().map {
                Placement($0.offset, at: $0.element)
            })
        let viewport = Viewport(rect: .world, size: ViewSize(width: 1_024, height: 1_024))
        async let redUpdate = redManager.update(for: viewport)
        async let blueUpdate = blueManager.update(for: viewport)
        let (redSnapshot, blueSnapshot) = try await (redUpdate.snapshot, blueUpdate.snapshot)
        #expect(redSnapshot.markers.reduce(0) { $0 + $1.count } == 2_000)
        #expect(blueSnapshot.markers.reduce(0) { $0 + $1.count } == 500)
        #expect(redSnapshot.gridCells.first?.level == red.clustering.gridLevel(forZoom: viewport.zoom))
        #expect(blueSnapshot.gridCells.first?.level == ClusterOptions<Int>().gridLevel(forZoom: viewport.zoom))
        // An update of one leaves the other alone.
        await blueManager.removeAll()
        _ = try await blueManager.reload()
        #expect(await redManager.snapshot.markers.count == redSnapshot.markers.count)
    }
}

/// Holds the first caller of ``arrive(zoom:)`` until released, and counts callers by zoom.
final class Gate: @unchecked Sendable {
    struct State {
        var blocked = false
        var released = false
        var calls: [Double: Int] = [:]
    }

    private let lock = DispatchSemaphore(value: 1)
    private let opening = DispatchSemaphore(value: 0)
    private var current = State()

    var state: State {
        lock.wait()
        defer { lock.signal() }
        return current
    }

    func arrive(zoom: Double) {
        lock.wait()
        let holds = !current.blocked && !current.released
        if holds { current.blocked = true }
        lock.signal()
        // Ten minutes at most, so that a broken manager fails the test instead of hanging it. The thread it blocks is
        // the test's own (OwnThreadExecutor), never the cooperative pool's.
        if holds { _ = opening.wait(timeout: .now() + 600) }
        lock.wait()
        if !holds || current.released { current.calls[zoom, default: 0] += holds ? 0 : 1 }
        lock.signal()
    }

    func release() {
        lock.wait()
        current.released = true
        lock.signal()
        opening.signal()
    }

    func waitUntil(_ condition: (State) -> Bool) async throws {
        for _ in 0..<12_000 where !condition(state) { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(condition(state))
    }
}

/// Runs each job on a thread of its own: work that a test blocks on purpose holds none of the cooperative pool.
@available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class OwnThreadExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread { job.runSynchronously(on: executor) }.start()
    }
}

extension ClusterManager {
    /// Runs the updates' clustering on `executor`.
    @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func useWorkExecutor(_ executor: any TaskExecutor) {
        workExecutor = executor
    }
}
