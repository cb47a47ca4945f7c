import ArgumentParser
import Foundation
import Hummingbird
import Logging
import MapCluster
import MapClusterIO
import MapClusterServer
import MapClusterStore

/// `mapcluster serve`: the web map and the cluster API over point files.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a live, clustered web map of point files, and its GeoJSON API.",
        discussion: """
            Without FILES, serves the bundled sample: the 34,006 cities of 15,000 or more people (contains data from \
            GeoNames, geonames.org, CC BY 4.0). Open the printed address in a browser. The API: \
            /api/clusters?bbox=W,S,E,N&zoom=Z[&categories=A,B], /api/clusters/{id}/leaves?limit=&offset=, /api/clusters/{id}/children, \
            /api/clusters/{id}/expansion-zoom, /api/stats, /api/config; vector tiles at /tiles/{z}/{x}/{y}.mvt and \
            /tiles.json, drawn by MapLibre at /maplibre.html. With --tiles-from, serves the tiles of an archive \
            written by `mapcluster tiles` instead, without points or /api. Answers are gzip-compressed for clients \
            that take it. Stops cleanly on SIGINT (Ctrl-C) and SIGTERM, within seconds whatever its clients do: change \
            streams get a last event and close, edits under way are committed and answered.

            Every option can come from an environment variable instead: MAPCLUSTER_ and its name in capitals, with \
            _ for - (MAPCLUSTER_PORT=9000, MAPCLUSTER_CACHE_CONTROL='public, max-age=60'; a flag takes true or false; \
            --reduce and --category take several values separated by commas). An option on the command line wins.

            Example: mapcluster serve places.csv --category kind --reduce capacity:sum --min-points 3 --max-zoom 14

            Examples:
              mapcluster serve                      # the world cities, on port 8080
              mapcluster serve places.csv --category kind
              mapcluster serve places.csv --radius 40 --max-zoom 16 --min-points 3
              mapcluster serve --writable --store points.sqlite   # takes edits
              mapcluster serve --tiles-from places.pmtiles
            """)

    /// The options an environment variable may give several values of, separated by commas.
    static let repeatableOptions: Set<String> = ["reduce", "category"]

    @OptionGroup var input: PointInput

    @Option(parsing: .unconditional, help: "The port to listen on (0: any free port).")
    var port: Int = 8080

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The most connections open at once; more wait to be accepted. Default: no limit.")
    var maxConnections: Int?

    @Option(
        help: """
            The seconds a request may take to arrive (from the connection's opening or the previous answer's end); a \
            slower client, or a kept-alive connection idle that long, is disconnected.
            """)
    var requestTimeout: Double = 30

    @Option(
        help: """
            The most requests a second from one client address, on average (a second's worth may come at once); past \
            it, requests are answered 429 with a Retry-After. Default: no limit.
            """)
    var rateLimit: Double?

    @Option(
        help:
            """
            A raster tile URL template for the page's basemap; 'none' for the bundled outline alone. Default: \
            OpenStreetMap's standard tiles where the browser reaches them, else the outline.
            """
    )
    var tiles: String?

    @OptionGroup(title: "Clustering") var clustering: ClusteringInput

    @Option(help: "The column whose value titles a point's popup on the page (default: 'name' if there is one).")
    var nameColumn: String?

    @Option(
        help: ArgumentHelp(
            "The origin allowed to call the API from another site's page (CORS); 'none' for no other.",
            valueName: "origin"))
    var corsOrigin = "*"

    @Option(
        help: ArgumentHelp(
            "Whether to keep metrics and answer them at /metrics, in Prometheus' text format: 'on' or 'off'.",
            valueName: "on|off"))
    var metrics = "on"

    @Option(
        help: ArgumentHelp(
            "Serve the tiles of this archive (.pmtiles or .mbtiles, from `mapcluster tiles`) instead of points.",
            valueName: "archive"))
    var tilesFrom: String?

    @Option(
        help: ArgumentHelp(
            """
            A folder with MapLibre GL JS 5's maplibre-gl.js and .css (default: the Python package maplibre's, if \
            installed; else the CDN).
            """, valueName: "folder"))
    var maplibre: String?

    @Flag(
        help: ArgumentHelp(
            """
            Take edits of the points (POST /api/points, POST /api/points/delete, DELETE /api/points/{id}) from \
            clients with the token, keep them in --store, and stream the changes (/api/changes).
            """))
    var writable = false

    @Option(
        help: ArgumentHelp(
            """
            Where live points are kept: a SQLite file (default: points.sqlite), postgres://user:password@host:port/db \
            (several servers can share it), or 'memory' (nothing kept). Without --writable, the server follows the \
            store's points without taking edits. FILES (or the sample) seed an empty store.
            """, valueName: "location"))
    var store: String?

    @Option(
        help: ArgumentHelp(
            "A file holding the token edits must carry (Authorization: Bearer TOKEN); default: one made up at start.",
            valueName: "file"))
    var tokenFile: String?

    @Option(
        help: ArgumentHelp(
            """
            The Cache-Control of the answers made from the points (/api/clusters…, /tiles/…, /tiles.json), which \
            carry the data's ETag. Default: 'no-cache' for live points (each use revalidates), else \
            'public, max-age=3600'.
            """, valueName: "value"))
    var cacheControl: String?

    @Option(
        help: ArgumentHelp(
            """
            The URL clients reach the server at, behind a proxy or CDN: /tiles.json names the tiles under it, such as \
            https://maps.example.org/base/tiles/{z}/{x}/{y}.mvt. Default: the host each request came to.
            """, valueName: "url"))
    var publicURL: String?

    @Flag(
        help: """
            Believe X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Prefix for the public URL: only behind a \
            proxy that sets them (and strips a client's).
            """)
    var trustForwardedHeaders = false

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be within 0...65535, not \(port)") }
        guard metrics == "on" || metrics == "off" else {
            throw ValidationError("--metrics must be 'on' or 'off', not '\(metrics)'")
        }
        if let cacheControl, cacheControl.isEmpty || cacheControl.contains(where: { $0.isNewline || !$0.isASCII }) {
            throw ValidationError(
                "--cache-control must be a Cache-Control value on one line, such as 'public, max-age=60'")
        }
        if let publicURL {
            guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil,
                url.query == nil, url.fragment == nil
            else {
                throw ValidationError(
                    "--public-url must be an http(s) URL without a query, such as https://maps.example.org/base, not '\(publicURL)'"
                )
            }
        }
        if let maxConnections, maxConnections < 1 {
            throw ValidationError("--max-connections must be at least 1, not \(maxConnections)")
        }
        if let rateLimit, !(rateLimit > 0 && rateLimit <= 1_000_000) {
            throw ValidationError(
                "--rate-limit must be a number of requests a second within 0...1000000, not \(rateLimit)")
        }
        guard requestTimeout > 0 && requestTimeout <= 86_400 else {
            throw ValidationError(
                "--request-timeout must be a number of seconds within 0...86400, not \(requestTimeout)")
        }
        if tilesFrom != nil {
            guard input.files.isEmpty else {
                throw ValidationError("--tiles-from serves an archive's tiles: give it without point files")
            }
            guard !writable && store == nil else {
                throw ValidationError("--tiles-from serves an archive's tiles: it takes no --writable or --store")
            }
        }
        if let store, StoreLocation.isPostgreSQL(store), !StoreLocation.hasPostgreSQL {
            throw ValidationError(StoreLocation.postgreSQLUnavailable("--store postgres://…"))
        }
        if tokenFile != nil && !writable {
            throw ValidationError("--token-file is the token of edits: give it with --writable")
        }
        if let maplibre, !FileManager.default.fileExists(atPath: "\(maplibre)/maplibre-gl.js") {
            throw ValidationError("--maplibre: no maplibre-gl.js in '\(maplibre)'")
        }
        if let tiles, tiles != "none" {
            guard ["{z}", "{x}", "{y}"].allSatisfy(tiles.contains),
                let url = URL(
                    string: tiles.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")),
                ["http", "https"].contains(url.scheme ?? ""), url.host != nil
            else {
                throw ValidationError(
                    "--tiles must be an http(s) URL with {z}, {x} and {y} in it, such as "
                        + "https://tile.openstreetmap.org/{z}/{x}/{y}.png, or 'none', not '\(tiles)'")
            }
        }
    }

    func run() async throws {
        var logger = Logger(label: "mapcluster")
        logger.logLevel = .info
        // Before the data, which can take a while to load: a port someone else has.
        if let problem = PortCheck.problem(host: host, port: port) { throw InputError(problem) }
        var configuration = ServerConfiguration()
        if let tilesFrom {
            configuration.source = .archive(URL(fileURLWithPath: tilesFrom))
        } else if writable || store != nil {
            var token: String?
            if writable {
                let made = try Self.token(file: tokenFile)
                token = made
                if tokenFile == nil {
                    FileHandle.standardOutput.write(Data("edits need the header  Authorization: Bearer \(made)\n".utf8))
                }
            }
            configuration.source = .store(location: store ?? "points.sqlite", token: token)
        }
        let input = input
        configuration.load = { try input.load() }
        configuration.files = input.files
        configuration.aggregation = try input.aggregation()
        configuration.host = host
        configuration.port = port
        configuration.limits = ServerLimits(
            maximumConnections: maxConnections, requestTimeout: .seconds(requestTimeout), requestsPerSecond: rateLimit)
        configuration.corsOrigin = corsOrigin == "none" ? nil : corsOrigin
        configuration.metrics = metrics == "on"
        configuration.tileURL = tiles
        configuration.nameColumn = nameColumn
        configuration.markers = try clustering.options()
        configuration.cacheControl = cacheControl
        configuration.publicURL = publicURL
        configuration.trustsForwardedHeaders = trustForwardedHeaders
        if let maplibre { configuration.mapLibreDirectory = maplibre }
        do {
            let server = try await buildApplication(configuration, logger: logger) { [host] port in
                // Written at once, not buffered: whoever started the server may be waiting for this line.
                let line = "serving the map on http://\(host):\(port)/, its API reference on /docs  (Ctrl-C stops)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            }
            try await server.run(logger: logger)
        } catch let error as ServerSetupError {
            throw InputError(error.description)
        } catch let error as PointFileError {
            throw InputError("\(error)")
        }
    }

    /// The token of edits: the first line of `file`, or a random one.
    static func token(file: String?) throws -> String {
        guard let file else {
            var generator = SystemRandomNumberGenerator()
            return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
        }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw InputError("--token-file: can't read '\(file)'")
        }
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let token = line.trimmingCharacters(in: .whitespaces)
        guard token.count >= 16, token.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw InputError("--token-file: the token in '\(file)' must be one line of 16 or more printable characters")
        }
        return token
    }

}
