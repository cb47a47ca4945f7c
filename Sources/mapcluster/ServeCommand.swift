import ArgumentParser
import Foundation
import Hummingbird
import Logging
import MapClusterIO
import MapClusterServer

/// `mapcluster serve`: the web map and the cluster API over point files.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a live, clustered web map of point files, and its GeoJSON API.",
        discussion: """
            Without FILES, serves the bundled sample: the 34,006 cities of 15,000 or more people (contains data from \
            GeoNames, geonames.org, CC BY 4.0). Open the printed address in a browser. The API: \
            /api/clusters?bbox=W,S,E,N&zoom=Z[&categories=A,B], /api/clusters/{id}/leaves?limit=&offset=, /api/clusters/{id}/children, \
            /api/clusters/{id}/expansion-zoom, /api/stats. Stops cleanly on SIGINT (Ctrl-C) and SIGTERM.
            """)

    @OptionGroup var input: PointInput

    @Option(help: "The port to listen on (0: any free port).")
    var port: Int = 8080

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(
        help:
            "A raster tile URL template for the page's basemap, such as https://tile.openstreetmap.org/{z}/{x}/{y}.png."
    )
    var tiles: String?

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be within 0...65535, not \(port)") }
    }

    func run() async throws {
        var logger = Logger(label: "mapcluster")
        logger.logLevel = .info
        let points = try input.load()
        let service: ClusterService
        do {
            service = try ClusterService(points: points, aggregation: try input.aggregation(), tileURL: tiles)
        } catch let error as PointFileError {
            throw ValidationError("\(error)")
        }
        logger.info(
            "indexed \(points.records.count) points in \(service.buildTime.formatted(.units(allowed: [.milliseconds])))"
        )
        let application = try MapClusterServer.application(
            service: service, host: host, port: port, logger: logger
        ) { [host] port in
            // Written at once, not buffered: whoever started the server may be waiting for this line.
            FileHandle.standardOutput.write(Data("serving the map on http://\(host):\(port)/  (Ctrl-C stops)\n".utf8))
        }
        try await application.runService()
    }
}
