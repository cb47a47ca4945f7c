import ArgumentParser
import Foundation
import Hummingbird
import Logging
import MapCluster
import MapClusterIO
import MapClusterServer
import MapClusterTiles

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
            that take it. Stops cleanly on SIGINT (Ctrl-C) and SIGTERM.
            """)

    @OptionGroup var input: PointInput

    @Option(parsing: .unconditional, help: "The port to listen on (0: any free port).")
    var port: Int = 8080

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(
        help:
            "A raster tile URL template for the page's basemap, such as https://tile.openstreetmap.org/{z}/{x}/{y}.png."
    )
    var tiles: String?

    @Option(
        parsing: .unconditional,
        help: """
            The grid cell size in points. The default, 128, gives cells 91 to 181 points wide: a map as calm as \
            Leaflet.markercluster's.
            """)
    var cellSize: Double = ClusterService.defaultCellSize

    @Option(help: "The column whose value titles a point's popup on the page (default: 'name' if there is one).")
    var nameColumn: String?

    @Option(
        help: ArgumentHelp(
            "The origin allowed to call the API from another site's page (CORS); 'none' for no other.",
            valueName: "origin"))
    var corsOrigin = "*"

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

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be within 0...65535, not \(port)") }
        try Self.validate(cellSize: cellSize)
        if tilesFrom != nil {
            guard input.files.isEmpty else {
                throw ValidationError("--tiles-from serves an archive's tiles: give it without point files")
            }
        }
        if let maplibre, !FileManager.default.fileExists(atPath: "\(maplibre)/maplibre-gl.js") {
            throw ValidationError("--maplibre: no maplibre-gl.js in '\(maplibre)'")
        }
        if let tiles {
            guard ["{z}", "{x}", "{y}"].allSatisfy(tiles.contains),
                let url = URL(
                    string: tiles.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")),
                ["http", "https"].contains(url.scheme ?? ""), url.host != nil
            else {
                throw ValidationError(
                    "--tiles must be an http(s) URL with {z}, {x} and {y} in it, such as "
                        + "https://tile.openstreetmap.org/{z}/{x}/{y}.png, not '\(tiles)'")
            }
        }
    }

    /// Checks a `--cell-size`.
    static func validate(cellSize: Double) throws {
        guard cellSize > 0 && cellSize.isFinite && cellSize <= 4_096 else {
            throw ValidationError("--cell-size must be a number of points within 1...4096, not \(cellSize)")
        }
    }

    func run() async throws {
        var logger = Logger(label: "mapcluster")
        logger.logLevel = .info
        // Before the data, which can take a while to load: a port someone else has.
        if let problem = PortCheck.problem(host: host, port: port) { throw InputError(problem) }
        let router: Router<BasicRequestContext>
        let mapLibre = maplibre ?? MapClusterServer.localMapLibre()
        let corsOrigin = corsOrigin == "none" ? nil : corsOrigin
        if let tilesFrom {
            let archive: any TileArchive
            do {
                archive = try TileArchiveFormat.open(URL(fileURLWithPath: tilesFrom))
            } catch {
                throw InputError("--tiles-from \(error)")
            }
            let zooms = "\(archive.metadata.minimumZoom)–\(archive.metadata.maximumZoom)"
            logger.info("serving the tiles of \(tilesFrom), zooms \(zooms)")
            router = try MapClusterServer.router(archive: archive, mapLibreDirectory: mapLibre, corsOrigin: corsOrigin)
        } else {
            router = try MapClusterServer.router(
                service: try service(logger: logger), mapLibreDirectory: mapLibre, corsOrigin: corsOrigin)
        }
        let application = MapClusterServer.application(router: router, host: host, port: port, logger: logger) {
            [host] port in
            // Written at once, not buffered: whoever started the server may be waiting for this line.
            FileHandle.standardOutput.write(Data("serving the map on http://\(host):\(port)/  (Ctrl-C stops)\n".utf8))
        }
        try await application.runService()
    }

    /// The points of the input, indexed.
    private func service(logger: Logger) throws -> ClusterService {
        let points = try input.load()
        if let nameColumn, !points.propertyNames.contains(nameColumn) {
            throw InputError(
                "--name-column: the points have no column '\(nameColumn)'; they have "
                    + points.propertyNames.joined(separator: ", "))
        }
        let service: ClusterService
        var clustering = ClusterService.defaultClustering
        clustering.cellSize = cellSize
        do {
            service = try ClusterService(
                points: points, aggregation: try input.aggregation(), tileURL: tiles, nameColumn: nameColumn,
                clustering: clustering)
        } catch let error as PointFileError {
            throw InputError("\(error)")
        }
        logger.info(
            "indexed \(points.records.count) points in \(service.buildTime.formatted(.units(allowed: [.milliseconds])))"
        )
        return service
    }
}

/// Whether the server could listen where it is asked to, found out before anything else takes time.
enum PortCheck {
    /// Why `host`:`port` can't be listened on, in one sentence; `nil` if it can (or for port 0, any free one).
    static func problem(host: String, port: Int) -> String? {
        guard port != 0 else { return nil }
        var hints = addrinfo()
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_PASSIVE
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else {
            return "Cannot listen on \(host): no such address."
        }
        defer { freeaddrinfo(found) }
        let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // As the server itself binds: a port left in TIME_WAIT by an earlier run is free.
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
            switch errno {
            case EADDRINUSE:
                return "Port \(port) on \(host) is already in use: stop what uses it, or pick another with --port."
            case EACCES: return "Port \(port) needs more privileges than this user has: pick another with --port."
            case EADDRNOTAVAIL: return "Cannot listen on \(host): it is not an address of this machine."
            default: return "Cannot listen on \(host):\(port): \(String(cString: strerror(errno)))."
            }
        }
        return nil
    }
}
