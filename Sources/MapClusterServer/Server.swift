import Foundation
public import Hummingbird
public import Logging
import MapClusterIO

/// The HTTP side of `mapcluster serve`: the API over a ``ClusterService`` and the web map page.
public enum MapClusterServer {
    /// Where the page loads Leaflet from when the Debian package `libjs-leaflet` is not installed.
    public static let leafletCDN = "https://unpkg.com/leaflet@1.9.4/dist"
    /// Where Debian's `libjs-leaflet` puts Leaflet.
    public static let localLeaflet = "/usr/share/javascript/leaflet"
    /// The largest request body taken; the API has no use for any.
    public static let maximumBodySize = 64 * 1024

    /// The routes, with one log line per request and JSON bodies for every error.
    public static func router(service: ClusterService, leafletDirectory: String = localLeaflet)
        -> Router<BasicRequestContext>
    {
        let router = Router()
        router.add(middleware: LogRequestsMiddleware(.info))
        router.add(middleware: JSONErrorMiddleware())

        router.get("/api/clusters") { request, _ in
            try answer { () throws(RequestError) in
                try service.clusters(bbox: request.query("bbox"), zoom: request.query("zoom"))
            }
        }
        router.get("/api/clusters/:id/leaves") { request, context in
            try answer { () throws(RequestError) in
                try service.leaves(
                    of: context.parameters.get("id") ?? "", limit: request.query("limit"),
                    offset: request.query("offset"))
            }
        }
        router.get("/api/clusters/:id/children") { _, context in
            try answer { () throws(RequestError) in try service.children(of: context.parameters.get("id") ?? "") }
        }
        router.get("/api/clusters/:id/expansion-zoom") { _, context in
            try answer(type: "application/json") { () throws(RequestError) in
                try service.expansionZoom(of: context.parameters.get("id") ?? "")
            }
        }
        router.get("/api/stats") { _, _ in text(service.stats(), type: "application/json") }
        router.get("/api/config") { _, _ in text(service.configuration(), type: "application/json") }

        router.get("/") { _, _ in try resource("index.html", type: "text/html; charset=utf-8") }
        router.get("/app.js") { _, _ in try resource("app.js", type: "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in try resource("app.css", type: "text/css; charset=utf-8") }
        router.get("/basemap.geojson") { _, _ in try file(SampleData.worldOutlineURL, type: "application/geo+json") }
        router.get("/leaflet/**") { _, context in
            try leaflet(context.parameters.getCatchAll().joined(separator: "/"), directory: leafletDirectory)
        }
        return router
    }

    /// The application: the router on a host and port, shutting down cleanly on SIGINT and SIGTERM when run with
    /// `runService()`.
    public static func application(
        service: ClusterService, host: String, port: Int, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(service: service),
            server: .http1(),
            configuration: .init(address: .hostname(host, port: port), serverName: "mapcluster"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    // MARK: - Responses

    static func text(_ body: String, status: HTTPResponse.Status = .ok, type: String) -> Response {
        Response(
            status: status, headers: [.contentType: type, .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    static func answer(type: String = "application/geo+json", _ body: () throws(RequestError) -> String) throws
        -> Response
    {
        do {
            return text(try body(), type: type)
        } catch {
            return failure(error.message, status: .init(code: error.status.rawValue))
        }
    }

    /// An error answer: its status, and a JSON body that says what was wrong.
    static func failure(_ message: String, status: HTTPResponse.Status) -> Response {
        text(RequestError.json(message, status: status.code), status: status, type: "application/json")
    }

    static func resource(_ name: String, type: String) throws -> Response {
        guard let url = Bundle.module.url(forResource: "Public/\(name)", withExtension: nil) else {
            throw HTTPError(.notFound)
        }
        return try file(url, type: type)
    }

    static func file(_ url: URL, type: String) throws -> Response {
        let data = try Data(contentsOf: url)
        return Response(
            status: .ok, headers: [.contentType: type],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A file of Leaflet's: from the local Debian copy when there is one, else a redirect to the CDN.
    static func leaflet(_ path: String, directory: String) throws -> Response {
        guard !path.split(separator: "/").contains(where: { $0 == ".." || $0.hasPrefix(".") }) else {
            throw HTTPError(.notFound)
        }
        let local = URL(fileURLWithPath: directory).appendingPathComponent(path)
        if FileManager.default.isReadableFile(atPath: local.path) {
            let type =
                switch local.pathExtension {
                case "js": "text/javascript; charset=utf-8"
                case "css": "text/css; charset=utf-8"
                case "png": "image/png"
                case "svg": "image/svg+xml"
                default: "application/octet-stream"
                }
            return try file(local, type: type)
        }
        return Response(status: .found, headers: [.location: "\(leafletCDN)/\(path)"])
    }
}

extension Request {
    /// A query parameter, if given.
    func query(_ name: String) -> String? {
        uri.queryParameters[Substring(name)].map(String.init)
    }
}

/// Answers every error with a JSON body, and refuses request bodies larger than the API could want.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > MapClusterServer.maximumBodySize
        {
            return MapClusterServer.failure(
                "the request body is \(length) bytes; at most \(MapClusterServer.maximumBodySize)",
                status: .contentTooLarge)
        }
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            let status = error.status
            let message = status == .notFound ? "no such path: \(request.uri.path)" : status.reasonPhrase
            return MapClusterServer.failure(message, status: status)
        } catch {
            context.logger.error("\(request.uri.path): \(error)")
            return MapClusterServer.failure(
                "the server could not answer this request", status: .internalServerError)
        }
    }
}
