import Foundation
import HTTPTypes
public import Hummingbird
public import Logging
public import MapClusterTiles
import NIOCore
import ServiceLifecycle
import UnixSignals

/// The HTTP side of `mapcluster serve`: the API over a ``ClusterService`` and the web map page.
public enum MapClusterServer {
    /// Where the page loads Leaflet from when the Debian package `libjs-leaflet` is not installed.
    public static let leafletCDN = "https://unpkg.com/leaflet@1.9.4/dist"
    /// Where Debian's `libjs-leaflet` puts Leaflet.
    public static let localLeaflet = "/usr/share/javascript/leaflet"
    /// The largest request body taken; the API has no use for any.
    public static let maximumBodySize = 64 * 1024

    /// Where the MapLibre page loads MapLibre GL JS from when no local copy is found.
    public static let mapLibreCDN = "https://unpkg.com/maplibre-gl@5.3.0/dist"

    /// The routes, with one log line per request and JSON bodies for every error.
    ///
    /// Every route answers GET and HEAD; another method is 405 with an `Allow` header (OPTIONS: 204 with it). With a
    /// `corsOrigin` (`*` for any), GET answers carry CORS headers, so that a map on another origin can call the API.
    /// Answers are gzip-compressed for a client that accepts it.
    ///
    /// - Throws: An error if the page's bundled files can't be read.
    ///
    /// With `live`, the points are its current ones, and edits (`POST /api/points`, `POST /api/points/delete`,
    /// `DELETE /api/points/{id}`, with its bearer token), a point by id (`GET /api/points/{id}`) and the changes of a
    /// viewport (`GET /api/changes`, Server-Sent Events) are answered; without, writes are 403.
    ///
    /// `limits` bounds each request's URL and query, and each client's rate of requests; the application bounds the
    /// rest (``application(router:host:port:logger:limits:onServerRunning:)``).
    public static func router(
        service: ClusterService, live: LiveService? = nil, leafletDirectory: String = localLeaflet,
        mapLibreDirectory: String? = localMapLibre(), corsOrigin: String? = "*", limits: ServerLimits = ServerLimits()
    ) throws -> Router<ServerRequestContext> {
        let files = try StaticFiles(leafletDirectory: leafletDirectory, mapLibreDirectory: mapLibreDirectory)
        let routes = Routes(corsOrigin: corsOrigin, writable: live != nil, limits: limits)
        let current: @Sendable () -> ClusterService = { live?.current ?? service }
        routes.get("/api/clusters") { request, context in
            let query = try request.uri.decodeQuery(as: ClustersQuery.self, context: context)
            return try current().clusters(bbox: query.bbox, zoom: query.zoom, categories: query.categories)
        }
        routes.get("/api/clusters/:id/leaves") { request, context in
            let query = try request.uri.decodeQuery(as: LeavesQuery.self, context: context)
            return try current().leaves(
                of: try context.parameters.require("id"), limit: query.limit, offset: query.offset)
        }
        routes.get("/api/clusters/:id/children") { _, context in
            try current().children(of: try context.parameters.require("id"))
        }
        routes.get("/api/clusters/:id/expansion-zoom") { _, context in
            try current().expansionZoom(of: try context.parameters.require("id"))
        }
        routes.get("/api/stats") { _, _ in current().stats() }
        routes.get("/api/config") { _, _ in live?.configuration() ?? service.configuration() }
        routes.tiles(
            tile: { address, categories throws(RequestError) in
                TileAnswer(bytes: try current().tile(address, categories: categories))
            },
            tileJSON: { current().tileJSON(baseURL: $0) })
        if let live {
            liveRoutes(live, on: routes)
        } else {
            let readOnly = RequestError(
                .forbidden, "this server's points are read-only: start it with --writable to edit them")
            routes.route("/api/points", [.post: { _, _ in throw readOnly }])
            routes.route("/api/points/delete", [.post: { _, _ in throw readOnly }])
            routes.route("/api/points/:id", [.delete: { _, _ in throw readOnly }])
        }
        routes.files(files, paths: files.pagePaths)
        return routes.router
    }

    /// The routes of edits, points and changes.
    private static func liveRoutes(_ live: LiveService, on routes: Routes) {
        routes.route(
            "/api/points",
            [
                .post: { request, context in
                    try live.authorize(request)
                    let body = try await Routes.editBody(of: request)
                    return try await live.put(body).response(from: request, context: context)
                }
            ])
        routes.route(
            "/api/points/delete",
            [
                .post: { request, context in
                    try live.authorize(request)
                    let body = try await Routes.editBody(of: request)
                    return try await live.delete(list: body).response(from: request, context: context)
                }
            ])
        routes.route(
            "/api/points/:id",
            [
                .get: { request, context in
                    try live.point(id: try context.parameters.require("id")).response(from: request, context: context)
                },
                .delete: { request, context in
                    try live.authorize(request)
                    return try await live.delete(id: try context.parameters.require("id"))
                        .response(from: request, context: context)
                },
            ])
        routes.get("/api/changes") { request, context in
            let query = try request.uri.decodeQuery(as: ClustersQuery.self, context: context)
            return try live.changes(
                bbox: query.bbox, zoom: query.zoom, categories: query.categories, channel: context.channel)
        }
    }

    /// The routes of a server of a tile archive: `/tiles`, `/tiles.json` and the MapLibre page (at `/` too), without
    /// points and so without `/api`.
    ///
    /// - Throws: An error if the page's bundled files can't be read.
    public static func router(
        archive: any TileArchive, mapLibreDirectory: String? = localMapLibre(), corsOrigin: String? = "*",
        limits: ServerLimits = ServerLimits()
    ) throws -> Router<ServerRequestContext> {
        let files = try StaticFiles(leafletDirectory: localLeaflet, mapLibreDirectory: mapLibreDirectory)
        let routes = Routes(corsOrigin: corsOrigin, limits: limits)
        let service = ArchiveService(archive: archive)
        routes.tiles(tile: service.tile(_:categories:), tileJSON: service.tileJSON(baseURL:))
        // The pages' files but the Leaflet page, which needs /api: `/` is the MapLibre page.
        routes.files(files, paths: files.pagePaths.filter { $0 != "/" })
        routes.get("/") { _, _ in Response(status: .found, headers: [.location: "/maplibre.html"]) }
        routes.get("/api/**") { request, _ -> Response in
            throw RequestError(
                .notFound, "\(request.uri.path): this server serves a tile archive; /api needs a server of points")
        }
        return routes.router
    }

    /// Where a local copy of MapLibre GL JS 5 is: `MAPCLUSTER_MAPLIBRE`, or the `maplibre` Python package's
    /// `srcjs` folder in `./.venv` or the system's Python packages; `nil` if there is none.
    public static func localMapLibre() -> String? {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment["MAPCLUSTER_MAPLIBRE"] { candidates.append(path) }
        let home = FileManager.default.homeDirectoryForCurrentUser.path
        for libraries in [".venv/lib", "\(home)/.local/lib", "/usr/local/lib", "/usr/lib"] {
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: libraries)) ?? []
            for version in versions.sorted().reversed() where version.hasPrefix("python3") {
                for packages in ["site-packages", "dist-packages"] {
                    candidates.append("\(libraries)/\(version)/\(packages)/maplibre/srcjs")
                }
            }
        }
        return candidates.first { FileManager.default.fileExists(atPath: "\($0)/maplibre-gl.js") }
    }

    /// The application: `router` on a host and port, shutting down cleanly on SIGINT and SIGTERM when run with
    /// `runService()`.
    ///
    /// `limits` bounds connections, the time a request may take to arrive, and its headers; the router's middleware
    /// bounds its URL and query (``ServerLimits``).
    public static func application(
        router: Router<ServerRequestContext>, host: String, port: Int, logger: Logger,
        limits: ServerLimits = ServerLimits(), onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router,
            server: limits.server,
            configuration: .init(
                address: .hostname(host, port: port), serverName: "mapcluster",
                availableConnectionsDelegate: limits.connections),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    /// The longest a stop may take before what still runs is cancelled.
    static let stopLimit = Duration.seconds(7)

    /// Runs `application` until SIGINT or SIGTERM, then stops it, whatever its clients do.
    ///
    /// With `live`, the change streams end first (each with a last event; a client that doesn't read is disconnected,
    /// ``LiveService/stop(grace:)``); then the server takes no new connection, finishes the requests under way and
    /// returns. Whatever still runs 7 seconds after the signal is cancelled. The caller then stops the live writer,
    /// which commits or refuses the edits it was given.
    public static func run(_ application: some ApplicationProtocol, live: LiveService?, logger: Logger) async throws {
        // A service group stops its services last to first: the streams' stop runs before the server's, which waits
        // for every open request, a change stream's too, to end.
        var services: [any Service] = [application]
        if let live { services.append(ChangeStreamsStop(live: live)) }
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = stopLimit
        try await ServiceGroup(configuration: configuration).run()
    }
}

/// Ends a live server's change streams once the server is asked to stop.
private struct ChangeStreamsStop: Service {
    let live: LiveService

    func run() async throws {
        try? await gracefulShutdown()
        await live.stop()
    }
}

/// A router being filled: the middleware every server has, and the ways its routes are added.
struct Routes {
    let router = Router(context: ServerRequestContext.self, options: .autoGenerateHeadEndpoints)

    /// What a route's method answers.
    typealias Handler = @Sendable (Request, ServerRequestContext) async throws -> Response

    init(corsOrigin: String?, writable: Bool = false, limits: ServerLimits) {
        router.add(middleware: LogRequestsMiddleware(.info))
        router.add(middleware: RequestErrorMiddleware())
        if let rate = limits.requestsPerSecond {
            router.add(middleware: RateLimitMiddleware(limiter: RateLimiter(requestsPerSecond: rate)))
        }
        router.add(middleware: RequestLimitsMiddleware(limits: limits))
        if let corsOrigin {
            router.add(
                middleware: CORSMiddleware(
                    allowOrigin: corsOrigin == "*" ? .all : .custom(corsOrigin),
                    allowHeaders: writable ? [.accept, .authorization, .contentType, .origin] : [.accept, .origin],
                    allowMethods: writable ? [.get, .head, .options, .post, .delete] : [.get, .head, .options]))
        }
    }

    /// A GET route (HEAD comes with it); the other methods are 405, OPTIONS says which are allowed.
    func get(
        _ path: String,
        _ handler: @escaping @Sendable (Request, ServerRequestContext) async throws -> some ResponseGenerator
    ) {
        route(
            path,
            [
                .get: { request, context in
                    try await handler(request, context).response(from: request, context: context)
                }
            ])
    }

    /// A route with a handler for each of `methods` (HEAD comes with GET); the other methods are 405, OPTIONS says
    /// which are allowed.
    func route(_ path: String, _ methods: [HTTPRequest.Method: Handler]) {
        for (method, handler) in methods { router.on(RouterPath(path), method: method, use: handler) }
        var allowed = [HTTPRequest.Method.get, .post, .delete].filter { methods[$0] != nil }.map(\.rawValue)
        if methods[.get] != nil { allowed.insert("HEAD", at: 1) }
        let list = allowed.joined(separator: ", ")
        let spoken =
            allowed.count == 1
            ? "\(list) is" : allowed.dropLast().joined(separator: ", ") + " and \(allowed[allowed.count - 1]) are"
        // What HTTP asks for the other methods: which ones the path takes.
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch, .trace, .connect]
        where methods[method] == nil {
            router.on(RouterPath(path), method: method) { _, _ -> Response in
                throw RequestError(.methodNotAllowed, "\(method.rawValue) is not allowed here; \(spoken)")
            }
        }
        router.on(RouterPath(path), method: .options) { _, _ in
            Response(status: .noContent, headers: [.allow: list + ", OPTIONS"])
        }
    }

    /// The body of an edit, up to ``LiveService/maximumEditSize``.
    static func editBody(of request: Request) async throws -> Data {
        do {
            let buffer = try await request.body.collect(upTo: LiveService.maximumEditSize)
            return Data(buffer.readableBytesView)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw RequestError(
                .contentTooLarge,
                "the request body is over \(LiveService.maximumEditSize) bytes: send the points in smaller batches")
        }
    }

    /// `/tiles/{z}/{x}/{y}.mvt` and `/tiles.json`, answered by `tile` and `tileJSON`.
    func tiles(
        tile: @escaping @Sendable (TileAddress, String?) throws(RequestError) -> TileAnswer,
        tileJSON: @escaping @Sendable (String) -> TileJSONAnswer
    ) {
        get("/tiles/:z/:x/:y") { request, context in
            let query = try request.uri.decodeQuery(as: ClustersQuery.self, context: context)
            let address = try TileAddress(
                z: try context.parameters.require("z"), x: try context.parameters.require("x"),
                y: try context.parameters.require("y"))
            return try tile(address, query.categories)
        }
        get("/tiles.json") { request, _ in
            // The tiles' URLs are absolute, on the host and scheme the client reached (a TLS proxy says which).
            let forwarded = HTTPField.Name("X-Forwarded-Proto").flatMap { request.headers[$0] }
            let scheme = forwarded == "https" ? "https" : "http"
            return tileJSON("\(scheme)://\(request.head.authority ?? "localhost")")
        }
    }

    /// The files at `paths`, read at start, gzip-compressed for a client that accepts it; and MapLibre's and
    /// Leaflet's, from their local copies or, without them, by a redirect to their CDN.
    func files(_ files: StaticFiles, paths: [String]) {
        for path in paths {
            get(path) { request, _ in try Self.file(at: path, in: files, for: request) }
        }
        for (prefix, hasLocalCopy, cdn) in [
            ("leaflet", files.hasLocalLeaflet, MapClusterServer.leafletCDN),
            ("maplibre", files.hasLocalMapLibre, MapClusterServer.mapLibreCDN),
        ] {
            get("/\(prefix)/**") { request, _ in
                let path = request.uri.path
                guard !hasLocalCopy else { return try Self.file(at: path, in: files, for: request) }
                // No local copy: the same file from the CDN, for a path that names one (no file of theirs has a
                // name with a dot first or a percent sign, which may hide one).
                let parts = path.split(separator: "/").dropFirst()
                guard !parts.isEmpty, !parts.contains(where: { $0.hasPrefix(".") || $0.contains("%") }) else {
                    throw RequestError(.notFound, "no such path: \(path)")
                }
                return Response(status: .found, headers: [.location: "\(cdn)/\(parts.joined(separator: "/"))"])
            }
        }
    }

    /// A file read at start, gzip-compressed for a client that accepts it, or 404.
    static func file(at path: String, in files: StaticFiles, for request: Request) throws -> Response {
        guard let file = files[path] else { throw RequestError(.notFound, "no such path: \(path)") }
        return Compression.response(
            file.bytes, gzipped: file.gzipped, headers: [.contentType: file.type], for: request)
    }
}
