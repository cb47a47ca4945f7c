import Foundation
import MapClusterIO
import MapClusterSampleData
import MapClusterTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `mapcluster serve` as a user runs it, with a real browser on its page, and `mapcluster render`.
@Suite(.tags(.processes), .tier(.processes))
struct ServeAndRenderTests {
    /// A running `mapcluster serve` on a free port; stopped with SIGTERM.
    final class Server: @unchecked Sendable {
        let process = Process()
        let port: Int
        private let output = Pipe()

        private let errors = Pipe()
        /// What the server wrote on standard error, gathered as it comes (so that it never fills the pipe).
        private let errorText = PipeText()

        /// Starts `mapcluster serve` and waits for the line with its address: at most `timeout`; a server that
        /// stops or stays silent that long throws, with what it wrote on standard error.
        ///
        /// It listens on any free port, unless `environment` names one (`MAPCLUSTER_PORT`).
        init(_ arguments: [String] = [], environment: [String: String] = [:], timeout: Duration = .seconds(300)) throws
        {
            process.executableURL = CommandLineTests.executable
            process.arguments = ["serve"] + (environment["MAPCLUSTER_PORT"] == nil ? ["--port", "0"] : []) + arguments
            var variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            // The MapLibre GL JS of the tests' Python: the server looks in ./.venv, and the tests run in Server/.
            if let mapLibre = Python.mapLibre, variables["MAPCLUSTER_MAPLIBRE"] == nil {
                variables["MAPCLUSTER_MAPLIBRE"] = mapLibre
            }
            process.environment = variables
            process.standardOutput = output
            process.standardError = errors
            errors.fileHandleForReading.readabilityHandler = { [errorText] handle in
                errorText.append(handle.availableData)
            }
            try process.run()
            // The server prints its address once it listens; the lines are read on another thread, and waited for
            // here with a deadline.
            let lines = PipeText()
            let printed = DispatchSemaphore(value: 0)
            output.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                lines.append(data)
                if data.isEmpty || lines.text.contains("(Ctrl-C stops)") {
                    handle.readabilityHandler = nil
                    printed.signal()
                }
            }
            let seconds = Double(timeout.components.seconds)
            let answered = printed.wait(timeout: .now() + seconds) == .success
            let text = lines.text
            guard answered, let range = text.range(of: #"http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression),
                let port = Int(text[range].split(separator: ":").last?.dropLast() ?? "")
            else {
                process.terminate()
                process.waitUntilExit()
                throw ServerDidNotStart(
                    output: (answered ? "" : "no address within \(timeout); ") + text + "\nstandard error:\n"
                        + String(errorText.text.suffix(4_000)))
            }
            self.port = port
        }

        /// Bytes gathered from a pipe on another thread.
        final class PipeText: @unchecked Sendable {
            private let lock = NSLock()
            private var data = Data()

            func append(_ more: Data) { lock.withLock { data.append(more) } }
            var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
        }

        struct ServerDidNotStart: Error {
            var output: String
        }

        func get(_ path: String) async throws -> (status: Int, body: Data) {
            let (status, body, _) = try await getWithHeaders(path)
            return (status, body)
        }

        /// A GET's status, body and headers.
        func getWithHeaders(_ path: String) async throws -> (status: Int, body: Data, headers: [String: String]) {
            let url = try #require(URL(string: "http://127.0.0.1:\(port)\(path)"))
            let (data, response) = try await URLSession.shared.data(from: url)
            let http = response as? HTTPURLResponse
            var headers: [String: String] = [:]
            for (name, value) in http?.allHeaderFields ?? [:] {
                headers[String(describing: name).lowercased()] = String(describing: value)
            }
            return (http?.statusCode ?? 0, data, headers)
        }

        /// The features of `/api/clusters` for a view.
        func features(bbox: String, zoom: Double) async throws -> [[String: Any]] {
            let (status, body) = try await get("/api/clusters?bbox=\(bbox)&zoom=\(zoom)")
            #expect(status == 200, "\(String(decoding: body, as: UTF8.self))")
            let collection = try JSONSerialization.jsonObject(with: body) as? [String: Any]
            return try #require(collection?["features"] as? [[String: Any]])
        }

        /// Sends a signal and waits for the exit; the status, or `nil` if it didn't stop within 10 seconds.
        func stop(with signal: Int32 = SIGTERM) async -> Int32? {
            kill(process.processIdentifier, signal)
            for _ in 0..<200 {
                if !process.isRunning { return process.terminationStatus }
                try? await Task.sleep(for: .milliseconds(50))
            }
            process.terminate()
            return nil
        }

        deinit {
            if process.isRunning { process.terminate() }
        }
    }

    @Test func servesTheBundledSampleAndStopsCleanlyOnSignals() async throws {
        for signal in [SIGTERM, SIGINT] {
            let server = try Server()
            let (status, body) = try await server.get("/api/clusters?bbox=-180,-85,180,85&zoom=0")
            #expect(status == 200)
            let collection = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            let features = try #require(collection["features"] as? [[String: Any]])
            let total = features.reduce(0) { sum, feature in
                let properties = feature["properties"] as? [String: Any] ?? [:]
                return sum + (properties["cluster"] as? Bool == true ? properties["point_count"] as? Int ?? 0 : 1)
            }
            #expect(total == 34_006)
            let (badStatus, badBody) = try await server.get("/api/clusters?bbox=1,2,3&zoom=2")
            #expect(badStatus == 400)
            #expect(String(decoding: badBody, as: UTF8.self).contains("has 3 values, not 4"))
            #expect(await server.stop(with: signal) == 0, "signal \(signal)")
        }
    }

    @Test func clusterPrintsTheGeoJSONTheAPIAnswers() async throws {
        let server = try Server()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        for (bbox, zoom) in [("-12,34,32,60", "4"), ("170,-50,-170,-10", "3"), ("-180,-85,180,85", "1")] {
            let (status, body) = try await server.get("/api/clusters?bbox=\(bbox)&zoom=\(zoom)")
            #expect(status == 200)
            let run = try CommandLineTests.run("cluster", "--zoom", zoom, "--bbox", bbox, "--format", "geojson")
            #expect(run.status == 0, "\(run.error)")
            #expect(run.output == String(decoding: body, as: UTF8.self) + "\n", "bbox \(bbox) at zoom \(zoom)")
        }
    }

    /// The limits against real sockets (Tests/tools/limits_check.py): a slowloris client cut off at the request
    /// timeout while others are served, idle connections closed, --max-connections held, and URLs, queries and
    /// headers past their limits refused.
    @Test func aServerBoundsSlowClientsConnectionsAndRequestSizes() async throws {
        let result = try await LiveServerTests.check(
            [CommandLineTests.executable.path], tool: "Tests/tools/limits_check.py")
        #expect((result["slowloris_closed_after_s"] as? Double ?? 99) <= 3.5)
        #expect((result["prompt_client_max_s"] as? Double ?? 99) <= 1)
        #expect((5...8).contains(result["rate_limited_answered_of_15"] as? Int ?? 0))
    }

    /// What an operator's tools see (Tests/tools/operations_check.py): /healthz and /readyz, and /metrics as
    /// prometheus-client's parser reads it, its request counts growing with the requests sent; off with --metrics off.
    @Test(
        .enabled(
            if: Python.hasPrometheusClient || ServeAndRenderTests.browserRequired, Python.needs("prometheus-client")))
    func probesAndMetricsAnswerAsAnOperatorsToolsRead() async throws {
        let result = try await LiveServerTests.check(
            [CommandLineTests.executable.path], tool: "Tests/tools/operations_check.py")
        #expect(result["stats_counted"] as? Int == 5)
        #expect(result["points"] as? Double == 34_009)
    }

    @Test func limitsThatCantBeUsedAreRefused() throws {
        for (arguments, message) in [
            (["--max-connections", "0"], "--max-connections must be at least 1, not 0"),
            (["--request-timeout", "0"], "--request-timeout must be a number of seconds within 0...86400"),
            (["--request-timeout", "nan"], "--request-timeout must be"),
            (["--rate-limit", "0"], "--rate-limit must be a number of requests a second within 0...1000000, not 0.0"),
            (["--rate-limit", "nan"], "--rate-limit must be"),
        ] {
            let run = try CommandLineTests.run(CommandLineTests.executable, ["serve", "--port", "0"] + arguments)
            #expect(run.status != 0 && run.error.contains(message), "\(arguments): \(run.error)")
        }
    }

    @Test func aPortInUseIsReportedBeforeTheDataIsLoaded() async throws {
        let server = try Server()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        // A file that would take a long while to load, were it read at all.
        let run = try CommandLineTests.run("serve", "/nonexistent/points.csv", "--port", String(server.port))
        #expect(run.status == 1)
        #expect(
            run.error
                == "Error: Port \(server.port) on 127.0.0.1 is already in use: stop what uses it, or pick another "
                + "with --port.\n", "\(run.error)")
    }

    @Test func aBadFileStopsServeBeforeItListens() throws {
        let file = try CommandLineTests.temporaryFile("id,lat,lon\n1,2,3\n2,abc,3\n")
        let run = try CommandLineTests.run("serve", file, "--port", "0")
        #expect(run.status != 0)
        #expect(run.error.contains("\(file):3 (field lat): 'abc' is not a number"))
    }

    // MARK: - The page in a browser

    /// Chromium, where Debian's package puts it; `.ci/run` installs it and asks for this test with
    /// `MAPCLUSTER_REQUIRE_BROWSER=1`.
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let browserRequired = ProcessInfo.processInfo.environment["MAPCLUSTER_REQUIRE_BROWSER"] == "1"

    static func headless(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(chromium))
        process.arguments =
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,800",
                "--virtual-time-budget=8000",
            ] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test(
        .enabled(if: chromium != nil || browserRequired, "needs Chromium: apt-get install chromium libjs-leaflet"),
        .tags(.browser), .tier(.browser))
    func theWebMapDrawsClustersThatAddUpToTheDataSet() async throws {
        try #require(Self.chromium != nil, "MAPCLUSTER_REQUIRE_BROWSER=1, but Chromium is not installed")
        let server = try Server()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        // The page writes what it drew on its body once the clusters have arrived.
        let dom = try Self.headless(["--dump-dom", "http://127.0.0.1:\(server.port)/"])
        let drawn = dom.firstMatch(of: /data-drawn="(\d+)"/).flatMap { Int($0.1) }
        let markers = dom.firstMatch(of: /data-markers="(\d+)"/).flatMap { Int($0.1) }
        #expect(drawn == 34_006, "the page drew \(drawn.map(String.init) ?? "nothing")")
        #expect((markers ?? 0) > 20 && (markers ?? .max) < 1_000)
        // Cluster markers carry their counts.
        let counts = dom.matches(of: /data-count="(\d+)"/).compactMap { Int($0.1) }
        #expect(!counts.isEmpty && counts.allSatisfy { $0 > 1 })
        // The bundled cities are served by continent: each cluster is a donut whose arcs add up to its count.
        let donuts = Self.donuts(in: dom)
        #expect(donuts.count == counts.count, "every cluster is a donut")
        for donut in donuts {
            #expect(donut.arcs.values.reduce(0, +) == donut.count, "arcs \(donut.arcs) of a cluster of \(donut.count)")
        }

        // A picture for people: MAPCLUSTER_SCREENSHOT=path keeps one.
        if let path = ProcessInfo.processInfo.environment["MAPCLUSTER_SCREENSHOT"] {
            _ = try Self.headless(["--screenshot=\(path)", "http://127.0.0.1:\(server.port)/"])
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    /// The donut clusters of a page: each one's count and the value of each category's arc.
    static func donuts(in dom: String) -> [(count: Int, arcs: [String: Int])] {
        dom.matches(of: /data-count="(\d+)"><svg class="donut"(.*?)<\/svg>/).map { match in
            let arcs = String(match.2).matches(of: /data-category="([^"]+)" data-value="(\d+)"/).map {
                (String($0.1), Int($0.2) ?? 0)
            }
            return (Int(match.1) ?? 0, Dictionary(arcs, uniquingKeysWith: +))
        }
    }

    /// The cities of the bundled sample on each continent.
    static func citiesByContinent() throws -> [String: Int] {
        let points = try CSVPointReader().read(contentsOf: SampleData.worldCitiesURL)
        return points.records.reduce(into: [:]) { counts, record in
            counts[points.property("continent", of: record)?.description ?? "", default: 0] += 1
        }
    }

    @Test(
        .enabled(if: chromium != nil || browserRequired, "needs Chromium: apt-get install chromium libjs-leaflet"),
        .tags(.browser), .tier(.browser))
    func aLegendClickFiltersTheMapAndTheURLKeepsTheFilter() async throws {
        try #require(Self.chromium != nil, "MAPCLUSTER_REQUIRE_BROWSER=1, but Chromium is not installed")
        let server = try Server()
        defer { _ = server.process.isRunning ? kill(server.process.processIdentifier, SIGTERM) : 0 }
        let byContinent = try Self.citiesByContinent()
        let page = "http://127.0.0.1:\(server.port)/"
        func drawn(_ dom: String) -> Int? { dom.firstMatch(of: /data-drawn="(\d+)"/).flatMap { Int($0.1) } }
        func link(_ category: String, in dom: String) -> String? {
            dom.matches(of: /<a class="legend-entry[^"]*" data-category="([^"]+)" href="([^"]*)"/)
                .first { $0.1 == category }.map { String($0.2).replacingOccurrences(of: "&amp;", with: "&") }
        }

        // The legend has an entry per continent; clicking Europe's (following its link) hides Europe.
        let all = try Self.headless(["--dump-dom", page])
        let europe = try #require(link("EU", in: all), "the legend has Europe")
        // The link keeps the view (#zoom/lat/lon) and changes the filter.
        #expect(europe.hasSuffix("&categories=AF,AN,AS,NA,OC,SA"), "\(europe)")
        #expect(europe.firstMatch(of: /^#\d+\/-?[\d.]+\/-?[\d.]+&/) != nil, "\(europe)")
        let withoutEurope = try Self.headless(["--dump-dom", page + europe])
        #expect(drawn(withoutEurope) == 34_006 - (byContinent["EU"] ?? 0))
        for donut in Self.donuts(in: withoutEurope) { #expect(donut.arcs["EU"] == nil, "no European arc") }

        // A URL with a filter opens filtered: Oceania alone, and its legend entry turns it off again.
        let oceania = try Self.headless(["--dump-dom", page + "#categories=OC"])
        #expect(drawn(oceania) == byContinent["OC"])
        #expect(Self.donuts(in: oceania).allSatisfy { Set($0.arcs.keys) == ["OC"] })
        #expect(link("EU", in: oceania)?.hasSuffix("&categories=OC,EU") == true)
    }

    // MARK: - Render

    @Test func rendersAnSVGWithTheOutlineAndLabelledClusters() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("map-\(UUID().uuidString).svg")
        defer { try? FileManager.default.removeItem(at: output) }
        let run = try CommandLineTests.run(
            "render", "--bbox=-12,34,32,60", "--zoom", "4", "--size", "800x600", "-o", output.path)
        #expect(run.status == 0, "\(run.error)")
        let svg = try String(contentsOf: output, encoding: .utf8)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"600\""))
        #expect(svg.components(separatedBy: "<path ").count > 100)  // the country outlines
        let labels = svg.matches(of: /font-weight="bold" fill="#fff">([0-9.k]+)<\/text>/).map { String($0.1) }
        #expect(labels.count > 5)
        #expect(svg.hasSuffix("</svg>\n"))

        let across = try CommandLineTests.run("render", "--bbox", "170,-50,-170,-10", "--zoom", "3", "-o", "-")
        #expect(across.status == 0)
        #expect(across.output.contains("<circle"))
    }
}
