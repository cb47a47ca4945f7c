import MapCluster

/// A measured piece of work: `prepare` builds its input once (not timed) and returns what each
/// iteration does.
struct Workload {
    var name: String
    var iterations: Int
    var prepare: () -> Iteration

    /// One iteration: `setUp` runs untimed before each `run`, which is timed.
    struct Iteration {
        var setUp: () -> Void = {}
        var run: () -> Void
    }

    /// The standard workloads: the bars of the design's performance budget.
    static var standard: [Workload] {
        [
            load("load-1M-uniform") { BenchmarkData.uniformPoints(count: 1_000_000, seed: 42) },
            load("load-1M-clustered") { BenchmarkData.clusteredPoints(count: 1_000_000, seed: 43) },
            viewport("viewport-1M-z0", zoom: 0),
            viewport("viewport-1M-z3", zoom: 3),
            viewport("viewport-1M-z8", zoom: 8),
            viewport("viewport-1M-z14", zoom: 14),
            Workload(name: "world-10M-z2", iterations: 51) {
                let index = ClusterIndex(BenchmarkData.uniformPoints(count: 10_000_000, seed: 45))
                let world = Viewport(rect: .world, size: ViewSize(width: 1024, height: 1024))
                return Iteration { blackHole(index.clusters(in: world)) }
            },
            Workload(name: "snapshot-1M", iterations: 21) {
                // The first change to an index while a copy of it (a reader's snapshot) is alive.
                var index = ClusterIndex(BenchmarkData.uniformPoints(count: 1_000_000, seed: 47))
                var snapshot = index
                var round = 0
                let place = BenchmarkData.uniformPoints(count: 1, seed: 48)[0].1
                return Iteration(
                    setUp: { snapshot = index },
                    run: {
                        index.insert(2_000_000 + round, at: place)
                        round += 1
                        blackHole(snapshot)
                    })
            },
            Workload(name: "update-1M", iterations: 21) {
                var index = ClusterIndex(BenchmarkData.uniformPoints(count: 1_000_000, seed: 46))
                let viewport = Viewport(center: standardCenter, zoom: 8, size: screen)
                var round = 0
                var added: [(Int, Coordinate)] = []
                // Each round adds 10,000 new points and removes the 10,000 oldest: the size stays 1,000,000.
                return Iteration(
                    setUp: {
                        added = BenchmarkData.uniformPoints(
                            count: 10_000, seed: 1_000 + UInt64(round), firstID: 1_000_000 + round * 10_000)
                    },
                    run: {
                        index.insert(contentsOf: added)
                        index.remove(contentsOf: (round * 10_000)..<((round + 1) * 10_000))
                        blackHole(index.clusters(in: viewport))
                        round += 1
                    })
            },
        ]
    }

    static let screen = ViewSize(width: 1024, height: 768)
    static let standardCenter: Coordinate = {
        do { return try Coordinate(latitude: 40.7, longitude: -74.0) } catch { preconditionFailure("\(error)") }
    }()

    static func load(_ name: String, points: @escaping () -> [(Int, Coordinate)]) -> Workload {
        Workload(name: name, iterations: 7) {
            let input = points()
            return Iteration { blackHole(ClusterIndex(input)) }
        }
    }

    static func viewport(_ name: String, zoom: Double) -> Workload {
        Workload(name: name, iterations: 201) {
            let index = ClusterIndex(BenchmarkData.uniformPoints(count: 1_000_000, seed: 44))
            let viewport = Viewport(center: standardCenter, zoom: zoom, size: screen)
            return Iteration { blackHole(index.clusters(in: viewport)) }
        }
    }
}

/// Keeps the optimizer from dropping work whose result nobody reads.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
