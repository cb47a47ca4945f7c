import Foundation
import Logging
@_spi(MapClusterServer) import MapCluster
import MapClusterIO
import MapClusterLive
import MapClusterServer
import MapClusterStore

/// `live-1M-sqlite` and `live-1M-postgres`: a store of 1,000,000 points, 4 writers sending edits of 1,000 moves as
/// fast as they are acknowledged, and 4 readers each asking for the clusters of a random zoom-8 view 50 times a second
/// (the API's work, JSON included, without HTTP), for 20 seconds.
///
/// Reports the acknowledged edits per second, and the writes' and the reads' latencies.
struct LiveBench {
    static let names = ["live-1M-sqlite", "live-1M-postgres"]
    static let pointCount = 1_000_000
    static let editSize = 1_000
    static let writers = 4
    static let readers = 4

    var name: String
    var seconds = 20.0

    struct Result: Encodable {
        var name: String
        var store: String
        var points: Int
        var seconds: Double
        var edits: Int
        var editsPerSecond: Double
        var writeP50MS: Double
        var writeP99MS: Double
        var reads: Int
        var readP50MS: Double
        var readP99MS: Double

        var lines: [String] {
            [
                "\(name): \(points) points in \(store)",
                String(
                    format: "  %d edits of %d points in %.1f s: %.1f edits/s; write p50 %.1f ms, p99 %.1f ms",
                    edits, LiveBench.editSize, seconds, editsPerSecond, writeP50MS, writeP99MS),
                String(format: "  %d reads meanwhile: p50 %.2f ms, p99 %.2f ms", reads, readP50MS, readP99MS),
            ]
        }
    }

    func run() async throws -> Result {
        let store = try await openStore()
        defer { Task { await store.close() } }
        let points = PointSet(
            propertyNames: ["speed"],
            records: BenchmarkData.uniformPoints(count: Self.pointCount, seed: 42).map {
                PointRecord(id: "p\($0.0)", coordinate: $0.1, properties: [.number(Double($0.0 % 120))])
            })
        let (live, _) = try await LiveIndex.open(store, aggregation: PointAggregation()) { points }
        let state = live.current
        let base = ClusterService(
            points: state.points, index: state.index, buildTime: .zero, aggregation: PointAggregation())
        let writer = LiveWriter(live: live, store: store)
        let service = LiveService(writer: writer, base: base, token: nil)
        let deadline = ContinuousClock.now + .seconds(seconds)
        let started = ContinuousClock.now

        let (writes, reads) = try await withThrowingTaskGroup(of: ([Double], [Double]).self) { tasks in
            for number in 0..<Self.writers {
                tasks.addTask {
                    var rng = SeededNumbers(seed: 500 + UInt64(number))
                    var latencies: [Double] = []
                    while ContinuousClock.now < deadline {
                        let moves = BenchmarkData.uniformPoints(count: Self.editSize, seed: rng.next())
                        var records: [PointRecord] = []
                        for (offset, move) in moves.enumerated() {
                            let id = Int(rng.next() % UInt64(Self.pointCount))
                            records.append(
                                PointRecord(
                                    id: "p\(id)", coordinate: move.1, properties: [.number(Double(offset % 120))]))
                        }
                        // One move per point in an edit.
                        var seen: Set<String> = []
                        records = records.filter { seen.insert($0.id).inserted }
                        let sent = ContinuousClock.now
                        _ = try await writer.write(
                            PointEdit(puts: PointSet(propertyNames: ["speed"], records: records)))
                        latencies.append((ContinuousClock.now - sent).milliseconds)
                    }
                    return (latencies, [])
                }
            }
            for number in 0..<Self.readers {
                tasks.addTask {
                    var rng = SeededNumbers(seed: 900 + UInt64(number))
                    var latencies: [Double] = []
                    while ContinuousClock.now < deadline {
                        let center = BenchmarkData.uniformPoints(count: 1, seed: rng.next())[0].1
                        let west = min(max(-179.0, center.longitude - 2.5), 174.0)
                        let south = min(max(-80.0, center.latitude - 1.5), 80.0)
                        let bbox = "\(west),\(south),\(west + 5),\(south + 3)"
                        let asked = ContinuousClock.now
                        _ = try service.current.clusters(ViewQuery(bbox: bbox, zoom: "8"))
                        latencies.append((ContinuousClock.now - asked).milliseconds)
                        // A busy map's reads, not as many as the machine can answer: 50 a second each.
                        try await Task.sleep(until: asked + .milliseconds(20), clock: .continuous)
                    }
                    return ([], latencies)
                }
            }
            return try await tasks.reduce(into: ([Double](), [Double]())) {
                $0.0 += $1.0
                $0.1 += $1.1
            }
        }
        let elapsed = (ContinuousClock.now - started).milliseconds / 1_000
        func percentile(_ values: [Double], _ fraction: Double) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
        }
        return Result(
            name: name, store: store.description, points: Self.pointCount, seconds: elapsed, edits: writes.count,
            editsPerSecond: Double(writes.count) / elapsed, writeP50MS: percentile(writes, 0.5),
            writeP99MS: percentile(writes, 0.99), reads: reads.count, readP50MS: percentile(reads, 0.5),
            readP99MS: percentile(reads, 0.99))
    }

    /// An empty store: a new SQLite file, or the PostgreSQL database of `MAPCLUSTER_POSTGRES_URL`, emptied.
    private func openStore() async throws -> any PointStore {
        if name == "live-1M-postgres" {
            guard let url = ProcessInfo.processInfo.environment["MAPCLUSTER_POSTGRES_URL"] else {
                throw InputError(
                    "live-1M-postgres needs MAPCLUSTER_POSTGRES_URL (scripts/postgres.sh start prints one); its "
                        + "mapcluster tables are emptied")
            }
            return try await StoreLocation.open(url, logger: Logger(label: "mapcluster.bench"), emptied: true)
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mapcluster-bench-\(ProcessInfo.processInfo.processIdentifier).sqlite"
        ).path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return try SQLitePointStore(path: path)
    }
}

/// SplitMix64: seeded whole numbers for the live benchmark's edits and views.
struct SeededNumbers {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
