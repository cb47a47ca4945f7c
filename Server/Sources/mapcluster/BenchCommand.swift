import ArgumentParser
import Foundation
import MapClusterServer
import MapClusterStore

/// `mapcluster bench`: the standard workloads on seeded data, with medians.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run the standard workloads on seeded synthetic data and print median, min and max times.",
        discussion: """
            Build in release mode first (swift build -c release, in Server/) and run .build/release/mapcluster bench: \
            a debug build is many times slower. Peak memory is the process's high-water mark, so measure \
            it with one workload at a time.

            Examples:
              swift build -c release --package-path Server
              Server/.build/release/mapcluster bench
              Server/.build/release/mapcluster bench --workload viewport-1M-z8 --json
            """)

    @Option(
        help: """
            Run one workload alone: \(Workload.standard.map(\.name).joined(separator: ", ")); or one of the live \
            store's, which run only when named: \(LiveBench.names.joined(separator: ", ")) (PostgreSQL's needs \
            MAPCLUSTER_POSTGRES_URL, and empties its mapcluster tables).
            """)
    var workload: String?

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        let names = Workload.standard.map(\.name) + LiveBench.names
        if let workload, !names.contains(workload) {
            throw ValidationError("unknown workload '\(workload)'; the workloads are \(names.joined(separator: ", "))")
        }
        if workload == "live-1M-postgres" && !StoreLocation.hasPostgreSQL {
            throw ValidationError(StoreLocation.postgreSQLUnavailable("--workload live-1M-postgres"))
        }
    }

    func run() async throws {
        #if DEBUG
            if !json {
                print("warning: this is a debug build; figures are not representative (swift build -c release)\n")
            }
        #endif
        if let workload, LiveBench.names.contains(workload) {
            let result = try await LiveBench(name: workload).run()
            if json {
                print(try jsonLine(result))
            } else {
                for line in result.lines { print(line) }
            }
            return
        }
        let selected = Workload.standard.filter { workload == nil || $0.name == workload }
        var results: [BenchResult] = []
        if !json { print(BenchResult.header) }
        for workload in selected {
            let result = BenchResult(measuring: workload)
            results.append(result)
            if !json { print(result.row) }
        }
        let peak = ProcessMemory.peakMegabytes
        if json {
            print(try jsonLine(BenchReport(workloads: results, peakMemoryMB: peak)))
        } else {
            print("\npeak memory: \(String(format: "%.1f", peak)) MB")
        }
    }
}

struct BenchResult: Encodable {
    var name: String
    var medianMS: Double
    /// What an iteration takes on average: where iterations differ (views of random places and zooms), the time a
    /// server spends on each of many requests.
    var meanMS: Double
    var minMS: Double
    var maxMS: Double

    enum CodingKeys: String, CodingKey {
        case name
        case medianMS = "median_ms"
        case meanMS = "mean_ms"
        case minMS = "min_ms"
        case maxMS = "max_ms"
    }

    init(measuring workload: Workload) {
        let iteration = workload.prepare()
        let clock = ContinuousClock()
        var times: [Double] = []
        for _ in 0..<workload.iterations {
            iteration.setUp()
            let elapsed = clock.measure {
                for _ in 0..<workload.runsPerSample { iteration.run() }
            }
            times.append(elapsed.milliseconds / Double(workload.runsPerSample))
        }
        times.sort()
        name = workload.name
        medianMS = times[times.count / 2]
        meanMS = times.reduce(0, +) / Double(times.count)
        minMS = times[0]
        maxMS = times[times.count - 1]
    }

    /// The width of the name column: the longest workload's name (`viewport-1M-world-z2-aggregates`) and a space.
    static let nameWidth = 32
    static let header =
        "workload".padding(toLength: nameWidth, withPad: " ", startingAt: 0)
        + "   median ms     mean ms      min ms      max ms"

    var row: String {
        name.padding(toLength: Self.nameWidth, withPad: " ", startingAt: 0)
            + [medianMS, meanMS, minMS, maxMS].map { String(format: "%12.4f", $0) }.joined()
    }
}

struct BenchReport: Encodable {
    var workloads: [BenchResult]
    var peakMemoryMB: Double

    enum CodingKeys: String, CodingKey {
        case workloads
        case peakMemoryMB = "peak_memory_mb"
    }
}
