import Dispatch
import Foundation
@_spi(MapClusterServer) import MapCluster
import MapClusterIO
@_spi(MapClusterServer) import MapClusterManager
import MapClusterServer
import MapClusterTiles

/// A measured piece of work: `prepare` builds its input once (not timed) and returns what each
/// iteration does.
struct Workload {
    var name: String
    var iterations: Int
    /// How many runs one timed sample makes (its time is their mean): more than one for work so short that reading
    /// the clock would weigh on its time, and only for work whose runs need no `setUp`.
    var runsPerSample = 1
    var prepare: () -> Iteration

    /// One iteration: `setUp` runs untimed before each `run`, which is timed.
    struct Iteration {
        var setUp: () -> Void = {}
        var run: () -> Void
    }

    /// The clustering of a workload's constant options, which are valid.
    static func clustering(_ index: ClusterIndex<Int>, _ options: ClusterOptions<Int>) -> Clustering<Int> {
        do { return try Clustering(index, options: options) } catch { preconditionFailure("\(error)") }
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
            worldViewport("viewport-1M-world-z2", aggregated: false),
            emptyViewport(),
            Workload(name: "world-10M-z2", iterations: 51) {
                let index = ClusterIndex(BenchmarkData.uniformPoints(count: 10_000_000, seed: 45))
                let world = Viewport(rect: .world, size: ViewSize(width: 1024, height: 1024))
                let clustering = Clustering(index)
                return Iteration { blackHole(clustering.clusters(in: world)) }
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
                        blackHole(Clustering(index).clusters(in: viewport))
                        round += 1
                    })
            },
            managerPath(),
            Workload(name: "tile-1M-z8", iterations: 101) {
                // One live vector tile request: the z8 tiles around the standard center in turn, clustered and
                // encoded.
                let points = BenchmarkData.uniformPoints(count: 1_000_000, seed: 42)
                let set = PointSet(
                    propertyNames: [],
                    records: points.map { PointRecord(id: String($0.0), coordinate: $0.1, properties: []) })
                var options = ClusterOptions<Int>()
                options.cellSize = 128
                let tiles = ClusterTiles(points: set, clustering: Self.clustering(set.indexByRecord(), options))
                let center = standardCenter.mapPoint
                let side = MapSize.worldWidth / 256
                let addresses = (-1...1).flatMap { dy in
                    (-1...1).compactMap { dx in
                        TileAddress(z: 8, x: Int(center.x / side) + dx, y: Int(center.y / side) + dy)
                    }
                }
                var round = 0
                return Iteration {
                    blackHole(tiles.tile(addresses[round % addresses.count]))
                    round += 1
                }
            },
            tilePyramid("tiles-1M-z0-14", merging: false),
            tilePyramid("tiles-1M-z0-14-merged", merging: true),
            randomViews("views-1M-random", merging: false),
            randomViews("views-1M-random-merged", merging: true),
            Workload(name: "load-1M-aggregates", iterations: 7) {
                let points = BenchmarkData.uniformPoints(count: 1_000_000, seed: 42)
                let values = BenchmarkData.aggregateColumns(count: points.count, seed: 50)
                return Iteration {
                    do {
                        blackHole(try ClusterIndex(points, values: values, schema: BenchmarkData.aggregateSchema))
                    } catch {
                        preconditionFailure("the benchmark's values are valid: \(error)")
                    }
                }
            },
            aggregateViewport("viewport-1M-z3-aggregates", zoom: 3, categories: nil),
            aggregateViewport(
                "viewport-1M-z3-filtered", zoom: 3, categories: Set(BenchmarkData.aggregateCategories.prefix(3))),
            aggregateViewport("viewport-1M-z8-aggregates", zoom: 8, categories: nil),
            worldViewport("viewport-1M-world-z2-aggregates", aggregated: true),
            Workload(name: "snapshot-1M-aggregates", iterations: 21) {
                // As snapshot-1M, on an index that keeps aggregates: the first insert while a reader's copy is alive.
                var index = BenchmarkData.aggregatedIndex(
                    BenchmarkData.uniformPoints(count: 1_000_000, seed: 47), seed: 54)
                var snapshot = index
                var round = 0
                let place = BenchmarkData.uniformPoints(count: 1, seed: 48)[0].1
                var rng = BenchmarkData.Generator(seed: 55)
                return Iteration(
                    setUp: { snapshot = index },
                    run: {
                        do {
                            try index.insert(
                                2_000_000 + round, at: place, values: BenchmarkData.aggregateValues(using: &rng))
                        } catch {
                            preconditionFailure("the benchmark's values are valid: \(error)")
                        }
                        round += 1
                        blackHole(snapshot)
                    })
            },
            Workload(name: "update-1M-aggregates", iterations: 21) {
                var index = BenchmarkData.aggregatedIndex(
                    BenchmarkData.uniformPoints(count: 1_000_000, seed: 46), seed: 51)
                let viewport = Viewport(center: standardCenter, zoom: 8, size: screen)
                var round = 0
                var added: [(Int, Coordinate, ElementValues)] = []
                var rng = BenchmarkData.Generator(seed: 52)
                // As update-1M, each new point with its weight, category and value.
                return Iteration(
                    setUp: {
                        let points = BenchmarkData.uniformPoints(
                            count: 10_000, seed: 1_000 + UInt64(round), firstID: 1_000_000 + round * 10_000)
                        added = points.map { ($0.0, $0.1, BenchmarkData.aggregateValues(using: &rng)) }
                    },
                    run: {
                        do {
                            try index.insert(contentsOf: added)
                        } catch {
                            preconditionFailure("the benchmark's values are valid: \(error)")
                        }
                        index.remove(contentsOf: (round * 10_000)..<((round + 1) * 10_000))
                        blackHole(Clustering(index).clustersWithAggregates(in: viewport))
                        round += 1
                    })
            },
        ]
    }

    /// The pyramid the vector tiles guide sets beside tippecanoe's: the peers' 1,000,000 clustered points, every
    /// non-empty tile of zooms 0 to 14 written to a PMTiles archive; with `merging`, markers that would overlap at the
    /// server's sizes merged, as `mapcluster tiles` does by default.
    static func tilePyramid(_ name: String, merging: Bool) -> Workload {
        Workload(name: name, iterations: 3) {
            let points = BenchmarkData.peerClusteredPoints(count: 1_000_000)
            let set = PointSet(
                propertyNames: [],
                records: points.map { PointRecord(id: String($0.0), coordinate: $0.1, properties: []) })
            var options = ClusterOptions<Int>()
            options.cellSize = 128
            let url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "mapcluster-bench-\(ProcessInfo.processInfo.processIdentifier).pmtiles")
            let clustering = Self.clustering(set.indexByRecord(), options)
            return Iteration {
                // A layout of its own each time, as each run of `mapcluster tiles` lays its markers out afresh.
                let overlap = merging ? OverlapResolution.mergeCircles(ClusterService.defaultMarkerDiameters) : nil
                let pyramid = TilePyramid(
                    tiles: ClusterTiles(points: set, clustering: clustering, overlap: overlap), zooms: 0...14)
                do {
                    blackHole(try pyramid.write(to: url, format: .pmtiles))
                } catch {
                    preconditionFailure("could not write \(url.path): \(error)")
                }
                try? FileManager.default.removeItem(at: url)
            }
        }
    }

    /// What `scripts/loadcheck.py` asks a server for, without the HTTP: the markers of random views (the server's
    /// options, 1280 x 800 points, zoom 0 to 12) of 1,000,000 uniform points, one after another on one layout; with
    /// `merging`, markers that would overlap merged, as `serve` does by default.
    static func randomViews(_ name: String, merging: Bool) -> Workload {
        Workload(name: name, iterations: 2_001) {
            let index = ClusterIndex(BenchmarkData.uniformPoints(count: 1_000_000, seed: 44))
            var options = MarkerOptions()
            options.merges = merging
            let markers: MarkerClustering<Int>
            do { markers = try MarkerClustering(index, options: options.layout) } catch {
                preconditionFailure("the server's options are valid: \(error)")
            }
            var rng = BenchmarkData.Generator(seed: 54)
            let views = (0..<2_001).map { _ in
                let center = BenchmarkData.uniformPoints(count: 1, seed: rng.next())[0].1
                let zoom = Double(Int.random(in: 0...12, using: &rng))
                return Viewport(center: center, zoom: zoom, size: ViewSize(width: 1280, height: 800))
            }
            var round = 0
            return Iteration {
                // What the server calls: the markers of record numbers, compiled for them.
                blackHole(markers.recordMarkers(in: views[round % views.count]))
                round += 1
            }
        }
    }

    /// The whole world at zoom 2 (a 1,024-point square), over 1,000,000 points: its clusters, and with `aggregated`
    /// (weights, 8 categories and a sum) their aggregates.
    static func worldViewport(_ name: String, aggregated: Bool) -> Workload {
        Workload(name: name, iterations: 201) {
            let points = BenchmarkData.uniformPoints(count: 1_000_000, seed: 44)
            let index = aggregated ? BenchmarkData.aggregatedIndex(points, seed: 53) : ClusterIndex(points)
            let world = Viewport(rect: .world, size: ViewSize(showing: .world, atZoom: 2))
            let clustering = Clustering(index)
            return Iteration {
                blackHole(
                    aggregated ? clustering.clustersWithAggregates(in: world) : (clustering.clusters(in: world), nil))
            }
        }
    }

    /// A viewport of 1,000,000 points with weights, 8 categories and a sum, unfiltered or filtered: its clusters and
    /// their aggregates.
    static func aggregateViewport(_ name: String, zoom: Double, categories: Set<String>?) -> Workload {
        Workload(name: name, iterations: 201) {
            let index = BenchmarkData.aggregatedIndex(BenchmarkData.uniformPoints(count: 1_000_000, seed: 44), seed: 53)
            let viewport = Viewport(center: standardCenter, zoom: zoom, size: screen)
            var options = ClusterOptions<Int>()
            options.categories = categories
            let clustering = Self.clustering(index, options)
            return Iteration {
                // The clusters and what they add up to: what a map with aggregates draws.
                blackHole(clustering.clustersWithAggregates(in: viewport))
            }
        }
    }

    /// A user flicking a map of 1,000,000 markers for a second: 60 manager updates, one per frame, panning east,
    /// zooming in two levels while panning north, then zooming out one.
    static func managerPath() -> Workload {
        let frames = 60
        return Workload(name: "manager-1M", iterations: frames) {
            let manager = ClusterManager<Int>()
            let points = BenchmarkData.uniformPoints(count: 1_000_000, seed: 49)
            let start = Viewport(center: standardCenter, zoom: 8, size: screen)
            runBlocking {
                do {
                    try await manager.replaceAll(with: points.map { Placement($0.0, at: $0.1) })
                    _ = try await manager.update(for: start)
                } catch {
                    preconditionFailure("the benchmark's data is valid: \(error)")
                }
            }
            let path = (1...frames).map { frame -> Viewport in
                let progress = Double(frame) / Double(frames)
                let zoom = 8 + (progress < 2.0 / 3 ? 3 * progress : 2 - 3 * (progress - 2.0 / 3))
                var viewport = Viewport(center: standardCenter, zoom: zoom, size: screen)
                viewport.rect.origin.x += start.rect.size.width * progress
                viewport.rect.origin.y -= start.rect.size.height * max(0, progress - 1.0 / 3)
                return viewport
            }
            var frame = 0
            return Iteration {
                let viewport = path[frame]
                frame += 1
                blackHole(runBlocking { try? await manager.update(for: viewport) })
            }
        }
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

    /// A zoom-15 viewport with no point in it or its margin: what a query costs when it has nothing to answer.
    static func emptyViewport() -> Workload {
        Workload(name: "viewport-1M-empty", iterations: 201, runsPerSample: 1_000) {
            let index = ClusterIndex(BenchmarkData.uniformPoints(count: 1_000_000, seed: 44))
            // Eastward from the standard center, a view's width at a time, to the first view with nothing in it.
            var viewport = Viewport(center: standardCenter, zoom: 15, size: screen)
            let clustering = Clustering(index)
            while !clustering.clusters(in: viewport).isEmpty { viewport.rect.origin.x += viewport.rect.size.width }
            return Iteration { blackHole(clustering.clusters(in: viewport)) }
        }
    }

    static func viewport(_ name: String, zoom: Double) -> Workload {
        Workload(name: name, iterations: 201) {
            let index = ClusterIndex(BenchmarkData.uniformPoints(count: 1_000_000, seed: 44))
            let viewport = Viewport(center: standardCenter, zoom: zoom, size: screen)
            let clustering = Clustering(index)
            return Iteration { blackHole(clustering.clusters(in: viewport)) }
        }
    }
}

/// Runs asynchronous work to its end from synchronous code, such as the benchmark's timing loop.
func runBlocking<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        outcome.value = await operation()
        done.signal()
    }
    done.wait()
    guard let value = outcome.value else { preconditionFailure("the task signals only once it has a value") }
    return value
}

/// The value a ``runBlocking(_:)`` task hands back: written by the task before it signals, read after the wait, so the
/// semaphore orders the two.
private final class BlockingOutcome<T>: @unchecked Sendable {
    var value: T?
}

/// Keeps the optimizer from dropping work whose result nobody reads.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
