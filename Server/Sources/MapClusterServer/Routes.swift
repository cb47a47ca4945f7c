import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MapClusterTiles
import NIOCore

/// A router being filled: the middleware every server has, and the ways its routes are added.
struct Routes {
    let router = Router(context: ServerRequestContext.self, options: .autoGenerateHeadEndpoints)
    /// The methods each path takes, filled as routes are added: what answers the others.
    private let methods = AllowedMethods()

    /// What a route's method answers.
    typealias Handler = @Sendable (Request, ServerRequestContext) async throws -> Response

    init(corsOrigin: String?, writable: Bool = false, limits: ServerLimits, metrics: ServerMetrics? = nil) {
        router.add(middleware: LogRequests())
        // Outside the errors' middleware, so that it counts what the client is answered.
        if let metrics { router.add(middleware: MetricsMiddleware(metrics: metrics)) }
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
        router.add(middleware: AllowedMethodsMiddleware(methods: methods))
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
    /// which are allowed (``AllowedMethodsMiddleware``).
    func route(_ path: String, _ methods: [HTTPRequest.Method: Handler]) {
        for (method, handler) in methods { router.on(RouterPath(path), method: method, use: handler) }
        self.methods.add(path, Set(methods.keys))
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

    /// `/tiles/{z}/{x}/{y}.mvt` and `/tiles.json`, answered by `tile` and `tileJSON` (which takes the base URL the
    /// tiles are named under), each with its `ETag` and `policy`'s `Cache-Control`.
    func tiles(
        policy: CachePolicy, publicURL: PublicURL,
        tile: @escaping @Sendable (TileAddress, [String]?) throws(RequestError) -> TileAnswer,
        tileJSON: @escaping @Sendable (String) throws(RequestError) -> TileJSONAnswer
    ) {
        cachedGet("/tiles/:z/:x/:y", policy: policy) { request, context in
            let query = try request.uri.decodeQuery(as: CategoriesQuery.self, context: context)
            let address = try TileAddress(
                z: try context.parameters.require("z"), x: try context.parameters.require("x"),
                y: try context.parameters.require("y"))
            return try tile(address, query.categories)
        }
        cachedGet("/tiles.json", policy: policy) { request, _ in
            try tileJSON(publicURL.base(of: request))
        }
    }

    /// The files at `paths`, read at start, gzip-compressed for a client that accepts it; and MapLibre's and
    /// Leaflet's, from their local copies or, without them, by a redirect to their CDN.
    func files(_ files: PageFiles, paths: [String]) {
        for path in paths {
            get(path) { request, _ in try Self.file(at: path, in: files, for: request) }
        }
        for (prefix, hasLocalCopy, cdn) in [
            ("leaflet", files.hasLocalLeaflet, PageFiles.leafletCDN),
            ("maplibre", files.hasLocalMapLibre, PageFiles.mapLibreCDN),
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
    ///
    /// Each answer carries the file's `ETag`; a client that sends it back in `If-None-Match` is answered 304 without
    /// the bytes. The pages' own files are revalidated on each use (`no-cache`), so that a new server's page shows at
    /// once; Leaflet's and MapLibre's, which change with their version only, are kept a day.
    static func file(at path: String, in files: PageFiles, for request: Request) throws -> Response {
        guard let file = files[path] else { throw RequestError(.notFound, "no such path: \(path)") }
        let isLibrary = path.hasPrefix("/leaflet/") || path.hasPrefix("/maplibre/")
        let headers: HTTPFields = [
            .eTag: file.entityTag, .cacheControl: isLibrary ? "public, max-age=86400" : "no-cache",
        ]
        if isNotModified(request, entityTag: file.entityTag) {
            return Response(status: .notModified, headers: headers + [.vary: "Accept-Encoding"])
        }
        return Compression.response(
            file.bytes, gzipped: file.gzipped, headers: headers + [.contentType: file.type], for: request)
    }
}
