// MapCluster on the peer benchmark's data: builds of the index and bounding-box queries, timed in one process, printed
// as one JSON line (--json) in the shape the other two harnesses print.
//
//   mapcluster-peers --n 100000 --dist uniform|clustered [--runs 5] [--qruns 11] [--cell-size 40] [--aggregates] [--json]
//                    [--query "view z15"]
//   mapcluster-peers --dist cities --csv FILE.csv
//
// The points come from ../../points.mjs's generator, written again here: the fingerprint printed must be the other
// harnesses' for the same data set. A query is a `Clustering`'s `clusters(in:)` of the bbox's viewport at its zoom with a 40-point
// cell (32-point cells at integer zooms, supercluster's radius 40 at extent 512 being 20 points) and no margin, as
// supercluster's getClusters asks for the bbox alone. With --aggregates each query also reads every cluster's sum and
// category counts, as a map that draws them must. --query runs the named query alone (to profile it), after the builds.

import Foundation
import HeapInUse
import MapCluster

// MARK: - Arguments

let arguments = CommandLine.arguments
func value(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.index(after: $0) < arguments.endIndex ? arguments[$0 + 1] : nil }
}
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("mapcluster-peers: \(message)\n".utf8))
    exit(2)
}
let distribution = value("--dist") ?? "uniform"
guard let buildRuns = Int(value("--runs") ?? "5"), buildRuns > 0 else { fail("--runs takes a positive number") }
guard let queryRuns = Int(value("--qruns") ?? "11"), queryRuns > 0 else { fail("--qruns takes a positive number") }
guard let cellSize = Double(value("--cell-size") ?? "40"), cellSize > 0 else { fail("--cell-size takes a size") }
let aggregated = arguments.contains("--aggregates")

// MARK: - The points

/// mulberry32: the generator all three harnesses share, seeded with 42.
struct Mulberry32 {
    private var state: UInt32

    init(seed: UInt32) { state = seed }

    mutating func next() -> Double {
        state &+= 0x6D2B_79F5
        var t = state
        t = (t ^ (t >> 15)) &* (t | 1)
        t ^= t &+ ((t ^ (t >> 7)) &* (t | 61))
        return Double(t ^ (t >> 14)) / 4_294_967_296
    }
}

/// Longitude and latitude of each point, in the order the generator draws them.
func generated(_ count: Int, _ distribution: String) -> [(longitude: Double, latitude: Double)] {
    var random = Mulberry32(seed: 42)
    switch distribution {
    case "uniform":
        return (0..<count).map { _ in
            let a = random.next()
            let b = random.next()
            return (-180 + 360 * a, -85 + 170 * b)
        }
    case "clustered":
        // 100 blobs, the first a small one at Paris; each point an approximate normal (the sum of four uniforms).
        var blobs = [(longitude: 2.3522, latitude: 48.8566, spread: 0.3)]
        for _ in 1..<100 {
            let longitude = -180 + 360 * random.next()
            let latitude = -60 + 130 * random.next()
            blobs.append((longitude, latitude, 0.5 + 4.5 * random.next()))
        }
        func normal() -> Double {
            var sum = 0.0
            for _ in 0..<4 { sum += random.next() }
            return (sum - 2) * 1.732_050_807_568_877_2
        }
        return (0..<count).map { _ in
            let blob = blobs[Int((100 * random.next()).rounded(.down))]
            let dx = normal()
            let dy = normal()
            var longitude = blob.longitude + blob.spread * dx
            if longitude > 180 { longitude -= 360 }
            if longitude < -180 { longitude += 360 }
            return (longitude, min(max(blob.latitude + blob.spread * dy, -85), 85))
        }
    default:
        fail("no distribution '\(distribution)' (uniform, clustered, cities)")
    }
}

/// The lat and lon columns of a CSV file with a header row (before any quoted field), in file order.
func readCSV(_ path: String) -> [(longitude: Double, latitude: Double)] {
    guard let data = FileManager.default.contents(atPath: path) else { fail("can't read \(path)") }
    var lines = data.split(separator: UInt8(ascii: "\n")).map { Array($0) }
    guard !lines.isEmpty else { fail("\(path) is empty") }
    let header = lines.removeFirst().split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    guard let lat = header.firstIndex(of: "lat"), let lon = header.firstIndex(of: "lon") else {
        fail("\(path) has no lat and lon columns")
    }
    return lines.enumerated().map { number, line in
        let fields = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard fields.count > max(lat, lon), let longitude = Double(String(decoding: fields[lon], as: UTF8.self)),
            let latitude = Double(String(decoding: fields[lat], as: UTF8.self))
        else { fail("\(path):\(number + 2): no number in lat or lon") }
        return (longitude, latitude)
    }
}

/// Two 32-bit sums over the little-endian 32-bit words of the coordinates (lon, lat, lon, …), in hexadecimal.
func fingerprint(_ points: [(longitude: Double, latitude: Double)]) -> String {
    var plain: UInt32 = 0
    var indexed: UInt32 = 0
    var position: UInt32 = 0
    for point in points {
        for bits in [point.longitude.bitPattern, point.latitude.bitPattern] {
            for word in [UInt32(truncatingIfNeeded: bits), UInt32(truncatingIfNeeded: bits >> 32)] {
                plain &+= word
                indexed &+= word ^ position
                position &+= 1
            }
        }
    }
    return [plain, indexed].map { String(format: "%08x", $0) }.joined()
}

// MARK: - Measuring

func milliseconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e6 }

func residentMB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let pages = text.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

func peakResidentMB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

func heapMB() -> Double { Double(heap_bytes_in_use()) / 1_048_576 }

/// Median, least and most of samples, with the samples, as the JSON lines keep them.
func summary(_ samples: [Double]) -> [String: Any] {
    let sorted = samples.sorted()
    let median = (sorted[(sorted.count - 1) / 2] + sorted[sorted.count / 2]) / 2
    return [
        "median": median, "min": sorted[0], "max": sorted[sorted.count - 1], "runs": samples.count,
        "samples": samples,
    ]
}

@inline(never) func keep<T>(_ value: T) { withExtendedLifetime(value) {} }

// MARK: - The run

var started = milliseconds()
// The input once, as the index's elements, as an app holds its points (and the Python harness its one array): the
// generated pairs are let go once fingerprinted.
let (input, dataFingerprint) = {
    let points =
        distribution == "cities"
        ? readCSV(value("--csv") ?? "") : generated(Int(value("--n") ?? "100000") ?? 0, distribution)
    let input = points.enumerated().map { i, point in
        guard let coordinate = try? Coordinate(latitude: point.latitude, longitude: point.longitude) else {
            fail("point \(i) is no coordinate: \(point)")
        }
        return (i, coordinate)
    }
    return (input, fingerprint(points))
}()
let count = input.count
let generationMs = milliseconds() - started

// With --aggregates, point i is of category c((7i + i/8) mod 8) and carries the value ((i·2654435761) mod 2^32) mod
// 1000 / 10, which every cluster sums.
let categoryNames = (0..<8).map { "c\($0)" }
let schema = try AggregateSchema(categories: categoryNames, reductions: [.sum("v")])
// Only with --aggregates: a plain run holds no columns it doesn't use.
let values =
    aggregated
    ? ElementValueColumns(
        categories: (0..<count).map { categoryNames[($0 &* 7 &+ ($0 >> 3)) % 8] },
        reductions: [.numbers((0..<count).map { Double(UInt32(truncatingIfNeeded: $0 &* 2_654_435_761) % 1000) / 10 })])
    : nil
func build() throws -> ClusterIndex<Int> {
    if let values { try ClusterIndex(input, values: values, schema: schema) } else { ClusterIndex(input) }
}

let residentBefore = residentMB()
let heapBefore = heapMB()
started = milliseconds()
var built = try build()
let firstBuildMs = milliseconds() - started
keep(built)
let peakAfterFirstBuild = peakResidentMB()
let indexMB = residentMB() - residentBefore
let heapIndexMB = heapMB() - heapBefore

var builds: [Double] = []
for _ in 0..<buildRuns {
    // The index before goes first, as a process that rebuilds would let it go.
    built = ClusterIndex()
    started = milliseconds()
    built = try build()
    builds.append(milliseconds() - started)
    keep(built)
}

let options = {
    var options = ClusterOptions<Int>()
    options.cellSize = cellSize
    options.marginFactor = 0
    return options
}()
let clustering = try Clustering(built, options: options)

let world = (west: -180.0, south: -85.0, east: 180.0, north: 85.0)
let views = [
    (zoom: 5, west: -20.1478, south: 36.517383, east: 24.8522, north: 58.761804),
    (zoom: 10, west: 1.649075, south: 48.508433, east: 3.055325, north: 49.202362),
    (zoom: 15, west: 2.330227, south: 48.845756, east: 2.374173, north: 48.867441),
]
let queries: [(name: String, bbox: (west: Double, south: Double, east: Double, north: Double), zoom: Int)] =
    distribution == "cities"
    ? [("world z2", world, 2), ("europe z5", (views[0].west, views[0].south, views[0].east, views[0].north), 5)]
    : (0...3).map { ("world z\($0)", world, $0) }
        + views.map { ("view z\($0.zoom)", ($0.west, $0.south, $0.east, $0.north), $0.zoom) }

var sink = 0.0
/// One query as a map asks it: the clusters, and with --aggregates, in the same call, each one's sum and category
/// counts, read (added to `sink`, so that the reads are kept).
///
/// Not isolated to the main actor, as top-level code is: each call would check at run time that it runs there, a cost
/// of this file's form that an app's query doesn't pay.
func ask(_ viewport: Viewport, of clustering: Clustering<Int>, aggregated: Bool, sink: inout Double)
    -> [Cluster<Int>]
{
    guard aggregated else { return clustering.clusters(in: viewport) }
    let (clusters, aggregates) = clustering.clustersWithAggregates(in: viewport)
    if let aggregates {
        for cluster in aggregates {
            sink += cluster.number("v_sum") ?? 0
            for categoryCount in cluster.categoryCounts { sink += Double(categoryCount) }
        }
    }
    return clusters
}

var check: [String: Any]?
var answers: [[String: Any]] = []
let onlyQuery = value("--query")
if let onlyQuery, !queries.contains(where: { $0.name == onlyQuery }) {
    fail("no query named '\(onlyQuery)'; there are \(queries.map(\.name).joined(separator: ", "))")
}
for query in queries where onlyQuery == nil || query.name == onlyQuery {
    let rect = try MapRect(
        west: query.bbox.west, south: query.bbox.south, east: query.bbox.east, north: query.bbox.north)
    let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: Double(query.zoom)))
    let clusters = ask(viewport, of: clustering, aggregated: aggregated, sink: &sink)
    if aggregated, query.zoom == 0, let aggregates = try clustering.aggregates(of: clusters) {
        // The world at zoom 0 holds every point once: its sum and its count of c0 are the data's, in every harness.
        let sum = aggregates.reduce(0.0) { $0 + ($1.number("v_sum") ?? 0) }
        check = ["v": (sum * 10).rounded() / 10, "c0": aggregates.reduce(0) { $0 + $1.count(ofCategory: "c0") }]
    }
    started = milliseconds()
    keep(ask(viewport, of: clustering, aggregated: aggregated, sink: &sink))
    // Enough calls a batch for 20 ms of it, so that the clock's grain doesn't show.
    let calls = max(1, min(100_000, Int((20 / max(milliseconds() - started, 1e-4)).rounded(.up))))
    var perCall: [Double] = []
    for _ in 0..<queryRuns {
        started = milliseconds()
        for _ in 0..<calls { keep(ask(viewport, of: clustering, aggregated: aggregated, sink: &sink)) }
        perCall.append((milliseconds() - started) / Double(calls))
    }
    let groups = clusters.filter(\.isCluster).count
    answers.append([
        "name": query.name, "zoom": query.zoom, "gridLevel": options.gridLevel(forZoom: viewport.zoom),
        "count": clusters.count, "clusters": groups, "points": clusters.count - groups,
        "members": clusters.reduce(0) { $0 + $1.count }, "reps": calls, "ms": summary(perCall),
    ])
}
if sink.isNaN { print(sink) }

var result: [String: Any] = [
    "impl": "mapcluster", "n": count, "dist": distribution, "fingerprint": dataFingerprint, "genMs": generationMs,
    "aggregates": aggregated, "cellSize": cellSize, "load": summary(builds).merging(["cold": firstBuildMs]) { $1 },
    "queries": answers,
    "mem": [
        "rssBeforeLoadMB": residentBefore, "indexMB": indexMB, "heapIndexMB": heapIndexMB,
        "peakAfterFirstBuildMB": peakAfterFirstBuild, "peakRssMB": peakResidentMB(),
    ],
]
if let check { result["check"] = check }

// One line for run-all.sh; indented for a person.
let data = try JSONSerialization.data(
    withJSONObject: result, options: arguments.contains("--json") ? [.sortedKeys] : [.sortedKeys, .prettyPrinted])
print(String(decoding: data, as: UTF8.self))
