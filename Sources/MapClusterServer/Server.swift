import HTTPTypes
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
    /// Every route answers GET and HEAD; another method is 405 with an `Allow` header (OPTIONS: 204 with it). With a
    /// `corsOrigin` (`*` for any), GET answers carry CORS headers, so that a map on another origin can call the API.
    /// Answers are gzip-compressed for a client that accepts it.
    ///
    /// - Throws: An error if the page's bundled files can't be read.
    public static func router(
        service: ClusterService, leafletDirectory: String = localLeaflet, corsOrigin: String? = "*"
    ) throws -> Router<BasicRequestContext> {
        let files = try StaticFiles(leafletDirectory: leafletDirectory)
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: LogRequestsMiddleware(.info))
        router.add(middleware: RequestErrorMiddleware())
        if let corsOrigin {
            router.add(
                middleware: CORSMiddleware(
                    allowOrigin: corsOrigin == "*" ? .all : .custom(corsOrigin), allowMethods: [.get, .head, .options]))
        }

        func get(
            _ path: String,
            _ handler: @escaping @Sendable (Request, BasicRequestContext) async throws -> some ResponseGenerator
        ) {
            router.get(RouterPath(path), use: handler)
            // What HTTP asks for the other methods: which ones the path takes.
            for method in [HTTPRequest.Method.post, .put, .delete, .patch] {
                router.on(RouterPath(path), method: method) { _, _ -> Response in
                    throw RequestError(.methodNotAllowed, "\(method.rawValue) is not allowed here; GET and HEAD are")
                }
            }
            router.on(RouterPath(path), method: .options) { _, _ in
                Response(status: .noContent, headers: [.allow: "GET, HEAD, OPTIONS"])
            }
        }

        get("/api/clusters") { request, context in
            let query = try request.uri.decodeQuery(as: ClustersQuery.self, context: context)
            return try service.clusters(bbox: query.bbox, zoom: query.zoom, categories: query.categories)
        }
        get("/api/clusters/:id/leaves") { request, context in
            let query = try request.uri.decodeQuery(as: LeavesQuery.self, context: context)
            return try service.leaves(
                of: try context.parameters.require("id"), limit: query.limit, offset: query.offset)
        }
        get("/api/clusters/:id/children") { _, context in
            try service.children(of: try context.parameters.require("id"))
        }
        get("/api/clusters/:id/expansion-zoom") { _, context in
            try service.expansionZoom(of: try context.parameters.require("id"))
        }
        get("/tiles/:z/:x/:y") { request, context in
            let query = try request.uri.decodeQuery(as: ClustersQuery.self, context: context)
            return try service.tile(
                z: try context.parameters.require("z"), x: try context.parameters.require("x"),
                y: try context.parameters.require("y"), categories: query.categories)
        }
        get("/tiles.json") { request, _ in
            // The tiles' URLs are absolute, on the host and scheme the client reached (a TLS proxy says which).
            let forwarded = HTTPField.Name("X-Forwarded-Proto").flatMap { request.headers[$0] }
            let scheme = forwarded == "https" ? "https" : "http"
            return service.tileJSON(baseURL: "\(scheme)://\(request.head.authority ?? "localhost")")
        }
        get("/api/stats") { _, _ in service.stats() }
        get("/api/config") { _, _ in service.configuration() }

        for path in ["/", "/app.js", "/app.css", "/basemap.geojson"] {
            get(path) { request, _ in try file(at: path, in: files, for: request) }
        }
        get("/leaflet/**") { request, _ in
            let path = request.uri.path
            guard !files.hasLocalLeaflet else { return try file(at: path, in: files, for: request) }
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
        service: ClusterService, host: String, port: Int, corsOrigin: String? = "*", logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        Application(
            router: try router(service: service, corsOrigin: corsOrigin),
            server: .http1(),
            configuration: .init(address: .hostname(host, port: port), serverName: "mapcluster"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    /// A file read at start, gzip-compressed for a client that accepts it, or 404.
    static func file(at path: String, in files: StaticFiles, for request: Request) throws -> Response {
        guard let file = files[path] else { throw RequestError(.notFound, "no such path: \(path)") }
        return Compression.response(
            file.bytes, gzipped: file.gzipped, headers: [.contentType: file.type], for: request)
    }
}
