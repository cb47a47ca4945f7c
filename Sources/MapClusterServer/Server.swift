public import Hummingbird
public import Logging
import NIOCore

/// The HTTP side of `mapcluster serve`: the API over a ``ClusterService`` and the web map page.
public enum MapClusterServer {
    /// Where the page loads Leaflet from when the Debian package `libjs-leaflet` is not installed.
    public static let leafletCDN = "https://unpkg.com/leaflet@1.9.4/dist"
    /// Where Debian's `libjs-leaflet` puts Leaflet.
    public static let localLeaflet = "/usr/share/javascript/leaflet"
    /// The largest request body taken; the API has no use for any.
    public static let maximumBodySize = 64 * 1024

    /// The routes, with one log line per request and JSON bodies for every error.
    ///
    /// - Throws: An error if the page's bundled files can't be read.
    public static func router(service: ClusterService, leafletDirectory: String = localLeaflet) throws
        -> Router<BasicRequestContext>
    {
        let files = try StaticFiles(leafletDirectory: leafletDirectory)
        let router = Router()
        router.add(middleware: LogRequestsMiddleware(.info))
        router.add(middleware: RequestErrorMiddleware())

        router.get("/api/clusters") { request, context in
            let query = try request.uri.decodeQuery(as: ClustersQuery.self, context: context)
            return try service.clusters(bbox: query.bbox, zoom: query.zoom, categories: query.categories)
        }
        router.get("/api/clusters/:id/leaves") { request, context in
            let query = try request.uri.decodeQuery(as: LeavesQuery.self, context: context)
            return try service.leaves(
                of: try context.parameters.require("id"), limit: query.limit, offset: query.offset)
        }
        router.get("/api/clusters/:id/children") { _, context in
            try service.children(of: try context.parameters.require("id"))
        }
        router.get("/api/clusters/:id/expansion-zoom") { _, context in
            try service.expansionZoom(of: try context.parameters.require("id"))
        }
        router.get("/api/stats") { _, _ in service.stats() }
        router.get("/api/config") { _, _ in service.configuration() }

        for path in ["/", "/app.js", "/app.css", "/basemap.geojson"] {
            router.get(RouterPath(path)) { _, _ in try file(at: path, in: files) }
        }
        router.get("/leaflet/**") { request, _ in
            let path = request.uri.path
            guard !files.hasLocalLeaflet else { return try file(at: path, in: files) }
            // No local copy: the same file from the CDN, for a path that names one.
            let parts = path.split(separator: "/").dropFirst()
            guard !parts.isEmpty, !parts.contains(where: { $0.hasPrefix(".") }) else {
                throw RequestError(.notFound, "no such path: \(path)")
            }
            return Response(status: .found, headers: [.location: "\(leafletCDN)/\(parts.joined(separator: "/"))"])
        }
        return router
    }

    /// The application: the router on a host and port, shutting down cleanly on SIGINT and SIGTERM when run with
    /// `runService()`.
    public static func application(
        service: ClusterService, host: String, port: Int, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        Application(
            router: try router(service: service),
            server: .http1(),
            configuration: .init(address: .hostname(host, port: port), serverName: "mapcluster"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    /// A file read at start, or 404.
    static func file(at path: String, in files: StaticFiles) throws -> Response {
        guard let file = files[path] else { throw RequestError(.notFound, "no such path: \(path)") }
        return Response(status: .ok, headers: [.contentType: file.type], body: ResponseBody(byteBuffer: file.bytes))
    }
}
