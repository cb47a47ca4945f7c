import Foundation
import MapClusterTestSupport
import Testing

/// The `mapcluster` tool run as a user runs it: a child process, its output and exit status.
@Suite(.tags(.processes), .tier(.processes))
struct CommandLineTests {
    struct Run {
        var status: Int32
        var output: String
        var error: String
    }

    /// The built `mapcluster` beside this test bundle.
    static var executable: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
        return directory.appendingPathComponent("mapcluster")
    }

    static func run(_ arguments: String...) throws -> Run {
        try run(executable, arguments)
    }

    /// Runs a program to its end: its exit status, and what it wrote to standard output and error.
    static func run(_ program: URL, _ arguments: [String], in directory: URL? = nil) throws -> Run {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Both pipes at once: a child that fills one (64 KiB) while this reads the other to its end would wait forever.
        let errors = ErrorOutput()
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) { errors.data = error.fileHandleForReading.readDataToEndOfFile() }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        reading.wait()
        let err = errors.data
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            error: String(decoding: err, as: UTF8.self))
    }

    /// What a child wrote on standard error, read on another thread.
    private final class ErrorOutput: @unchecked Sendable {
        var data = Data()
    }

    static func temporaryFile(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mapcluster-\(UUID().uuidString).csv")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    struct Report: Decodable {
        struct Row: Decodable {
            var id: String
            var kind: String
            var name: String?
            var latitude: Double
            var longitude: Double
            var count: Int
        }
        var zoom: Double
        var points: Int
        var crossesAntimeridian: Bool
        var clusters: [Row]

        enum CodingKeys: String, CodingKey {
            case zoom, points, clusters
            case crossesAntimeridian = "crosses_antimeridian"
        }
    }

    @Test func clustersTheBundledSampleAsJSON() throws {
        let run = try Self.run("cluster", "--zoom", "2", "--json")
        #expect(run.status == 0, "\(run.error)")
        let report = try JSONDecoder().decode(Report.self, from: Data(run.output.utf8))
        #expect(report.points == 34_006)
        #expect(report.clusters.map(\.count).reduce(0, +) == 34_006)
        #expect(report.clusters.contains { $0.kind == "cluster" })
        #expect(report.clusters.filter { $0.kind == "single" }.allSatisfy { $0.name != nil && $0.count == 1 })
    }

    @Test func printsAReadableTable() throws {
        let run = try Self.run("cluster", "--zoom", "2")
        #expect(run.status == 0)
        let lines = run.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("zoom 2.0, grid level 3:") == true)
        #expect(lines.contains { $0.hasPrefix("id ") && $0.contains("latitude") && $0.contains("count") })
    }

    @Test func aBoxAcrossTheAntimeridianHoldsBothSidesOnce() throws {
        let file = try Self.temporaryFile("id,lat,lon,name\na,0,179.9,East\nb,0,-179.9,West\nc,0,0,Far\n")
        let run = try Self.run("cluster", file, "--zoom", "6", "--bbox", "170,-10,-170,10", "--json")
        #expect(run.status == 0, "\(run.error)")
        let report = try JSONDecoder().decode(Report.self, from: Data(run.output.utf8))
        #expect(report.clusters.map(\.id).sorted() == ["a", "b"])
        #expect(report.crossesAntimeridian)
    }

    @Test func aBoxWithWestAndEastSwappedIsAnsweredAroundTheWorldWithANote() throws {
        let file = try Self.temporaryFile("id,lat,lon,name\na,50,10,Inside\nb,50,-100,Beyond\n")
        let run = try Self.run("cluster", file, "--zoom", "5", "--bbox", "20,45,5,55", "--json")
        #expect(run.status == 0, "\(run.error)")
        // The antimeridian meaning is kept: 345° from 20° E eastwards to 5° E, which holds b and not a.
        let report = try JSONDecoder().decode(Report.self, from: Data(run.output.utf8))
        #expect(report.crossesAntimeridian)
        #expect(report.clusters.map(\.id) == ["b"])
        #expect(
            run.error == "note: --bbox 20,45,5,55 has its east edge (5) west of its west edge (20), so it crosses the "
                + "antimeridian and spans 345° of longitude; for the other way round, give --bbox 5,45,20,55\n")
        let geojson = try Self.run("cluster", file, "--zoom", "2", "--bbox", "20,45,5,55", "--format", "geojson")
        #expect(
            geojson.output.hasPrefix(
                #"{"type":"FeatureCollection","zoom_convention":"leaflet","crosses_antimeridian":true,"features":["#))
        let plain = try Self.run("cluster", file, "--zoom", "5", "--bbox", "5,45,20,55", "--json")
        #expect(plain.error.isEmpty)
        let plainReport = try JSONDecoder().decode(Report.self, from: Data(plain.output.utf8))
        #expect(!plainReport.crossesAntimeridian && plainReport.clusters.map(\.id) == ["a"])
    }

    @Test(arguments: [
        (["cluster", "--zoom", "30"], "--zoom must be within 0...24, not 30.0"),
        (["cluster", "--zoom", "2", "--bbox", "1,2,3"], "--bbox '1,2,3' has 3 values, not 4 (west,south,east,north)"),
        (["cluster", "--zoom", "2", "--bbox", "1,95,3,96"], "--bbox: latitude 95.0 is outside -90...90"),
        (["cluster", "--zoom", "2", "--bbox", "1,10,3,5"], "--bbox south 10.0 is north of its north 5.0"),
        (["cluster", "--zoom", "2", "--bbox", "1,2,1,4"], "--bbox is empty"),
        (
            ["cluster", "--zoom", "2", "--cell-size", "0"],
            "--cell-size must be a number of points within 1...4096, not 0.0"
        ),
        (["bench", "--workload", "nope"], "unknown workload 'nope'"),
        (["render", "--zoom", "3", "--size", "800", "-o", "-"], "--size must be WIDTHxHEIGHT"),
        (["render", "--zoom", "30", "-o", "-"], "--zoom must be within 0...24"),
        (["render", "--zoom", "3", "--bbox", "1,2,3", "-o", "-"], "--bbox '1,2,3' has 3 values, not 4"),
        (["render", "--zoom", "3"], "Missing expected argument '--output <output>'"),
        (["serve", "--port", "70000"], "--port must be within 0...65535"),
        (["cluster", "--zoom", "-1"], "--zoom must be within 0...24, not -1.0"),
        (
            ["cluster", "--zoom", "2", "--cell-size", "-5"],
            "--cell-size must be a number of points within 1...4096, not -5.0"
        ),
        (["serve", "--tiles", "https://tiles.example/a.png"], "--tiles must be an http(s) URL with {z}, {x} and {y}"),
        (["serve", "--tiles", "tiles/{z}/{x}/{y}.png"], "--tiles must be an http(s) URL"),
    ])
    func badArgumentsAreRejectedWithAMessage(arguments: [String], message: String) throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        let error = Pipe()
        process.standardError = error
        process.standardOutput = Pipe()
        try process.run()
        let text = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(text.contains(message), "\(text)")
    }

    @Test func aBadFileIsOneLineThatNamesFileLineAndFieldAndExitsWith1() throws {
        let file = try Self.temporaryFile("id,lat,lon\n1,10,20\n2,abc,20\n")
        let run = try Self.run("cluster", file, "--zoom", "2")
        #expect(run.status == 1)
        #expect(run.error == "Error: \(file):3 (field lat): 'abc' is not a number\n", "\(run.error)")
    }

    @Test func aFileWithoutPointsIsAnError() throws {
        let empty = try Self.temporaryFile("id,lat,lon\n")
        let run = try Self.run("cluster", empty, "--zoom", "2")
        #expect(run.status == 1)
        #expect(run.error == "Error: \(empty): no points to cluster\n", "\(run.error)")
    }

    @Test func aNegativeNumberIsAnOptionsValue() throws {
        // West of Greenwich, without the `=` that a value starting with a dash used to need.
        let run = try Self.run("cluster", "--zoom", "3", "--bbox", "-12,34,32,60", "--json")
        #expect(run.status == 0, "\(run.error)")
        let report = try JSONDecoder().decode(Report.self, from: Data(run.output.utf8))
        #expect(report.clusters.contains { $0.longitude < 0 })
    }

    @Test func clusterJSONCarriesTheAggregatesTheOptionsAskFor() throws {
        let file = try Self.temporaryFile(
            "id,lat,lon,kind,people,w\na,48.85,2.35,x,100,1\nb,48.86,2.36,y,50,3\nc,48.87,2.37,x,,0\n")
        let run = try Self.run(
            "cluster", file, "--zoom", "3", "--json", "--category", "kind", "--reduce", "people:sum", "--reduce",
            "people:max", "--weight", "w")
        #expect(run.status == 0, "\(run.error)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let cluster = try #require((json["clusters"] as? [[String: Any]])?.first)
        #expect(cluster["count"] as? Int == 3)
        #expect(cluster["people_sum"] as? Double == 150)
        #expect(cluster["people_max"] as? Double == 100)
        #expect(cluster["weight"] as? Double == 4)
        #expect(cluster["categories"] as? [String: Int] == ["x": 2, "y": 1])
    }

    @Test func aReductionOfTextIsAnErrorThatNamesTheFileLineAndField() throws {
        let file = try Self.temporaryFile("id,lat,lon,kind\na,1,1,x\n")
        let run = try Self.run("cluster", file, "--zoom", "3", "--reduce", "kind:sum")
        #expect(run.status != 0)
        #expect(run.error.contains(":2 (field kind): 'x' is not a number"), "\(run.error)")
        let bad = try Self.run("cluster", file, "--zoom", "3", "--reduce", "kind")
        #expect(bad.status != 0 && bad.error.contains("COLUMN:OPERATION"), "\(bad.error)")
    }
}

extension CommandLineTests {
    /// The examples of a help text: the lines under "Examples:" that run `mapcluster` (or a path to it), without their
    /// comments.
    static func examples(in help: String) -> [[String]] {
        guard let start = help.range(of: "Examples:\n") else { return [] }
        return help[start.upperBound...].split(separator: "\n").prefix { $0.hasPrefix("  ") }.compactMap { line in
            let command = line.split(separator: "#", maxSplits: 1)[0].split(separator: " ").map(String.init)
            let program = command.first ?? ""
            return program == "mapcluster" || program.hasSuffix("/mapcluster") ? Array(command.dropFirst()) : nil
        }
    }

    /// `mapcluster --help` and each subcommand's give examples, and those that write files run as they are, on a
    /// `places.csv` of three cities (serve's serve until stopped, and bench's run for minutes: only their words are
    /// checked, against the subcommand).
    @Test func everyHelpGivesExamplesThatRun() throws {
        let root = try Self.run("--help")
        let rootExamples = Self.examples(in: root.output)
        #expect(
            Set(rootExamples.compactMap(\.first)) == ["serve", "cluster", "tiles", "render", "bench"], "\(root.output)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("help-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let places = [
            "id,lat,lon,population", "paris,48.8566,2.3522,2100000", "lyon,45.764,4.8357,520000",
            "berlin,52.52,13.405,3600000",
        ]
        try places.joined(separator: "\n").write(
            to: directory.appendingPathComponent("places.csv"), atomically: true, encoding: .utf8)
        for subcommand in ["serve", "cluster", "tiles", "render", "bench"] {
            let help = try Self.run(subcommand, "--help")
            let examples = Self.examples(in: help.output)
            #expect(examples.count >= 2, "\(subcommand) --help: \(help.output)")
            for example in examples {
                #expect(example.first == subcommand, "an example of \(subcommand) runs \(example)")
                guard ["cluster", "tiles", "render"].contains(subcommand) else { continue }
                let run = try Self.run(Self.executable, example, in: directory)
                #expect(run.status == 0, "mapcluster \(example.joined(separator: " ")): \(run.error)")
            }
        }
    }
}
