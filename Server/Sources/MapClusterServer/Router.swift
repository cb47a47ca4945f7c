import Foundation
package import Hummingbird
package import MapClusterTiles

/// The routes, with one log line per request and JSON bodies for every error.
///
/// Every route answers GET and HEAD; another method is 405 with an `Allow` header (OPTIONS: 204 with it). With a
/// `corsOrigin` (`*` for any), GET answers carry CORS headers, so that a map on another origin can call the API.
/// Answers are gzip-compressed for a client that accepts it.
///
/// With `live`, the points are its current ones, and edits (`POST /api/points`, `POST /api/points/delete`,
/// `DELETE /api/points/{id}`, with its bearer token), a point by id (`GET /api/points/{id}`) and the changes of a
/// viewport (`GET /api/changes`, Server-Sent Events) are answered; without, writes are 403.
///
/// `limits` bounds each request's URL and query, and each client's rate of requests; the application bounds the
/// rest (``buildApplication(router:host:port:logger:limits:onServerRunning:)``).
package func buildRouter(
    service: ClusterService, live: LiveService? = nil, files: PageFiles, corsOrigin: String? = "*",
    limits: ServerLimits = ServerLimits(), caching: CachePolicy? = nil, publicURL: PublicURL = PublicURL()
) -> Router<ServerRequestContext> {
    buildRouter(
        points: ServedPoints(service: service, live: live), writable: live != nil, files: files,
        corsOrigin: corsOrigin, limits: limits, caching: caching, publicURL: publicURL)
}

/// The routes of a server of points that may still be loading (``ServedPoints``).
///
/// Until the points are loaded, the routes that answer from them are 503, `/healthz` is 200 and `/readyz` 503.
/// `writable` says whether the edit routes take edits (a server of a store) or are 403.
///
/// The answers made from the points carry their content's `ETag` and `caching`'s `Cache-Control` (by default
/// ``CachePolicy/live`` for a server of a store, ``CachePolicy/fixed`` for one of files); `/tiles.json` names the
/// tiles at `publicURL`.
package func buildRouter(
    points: ServedPoints, writable: Bool, files: PageFiles, corsOrigin: String? = "*",
    limits: ServerLimits = ServerLimits(), metrics: ServerMetrics? = nil, caching: CachePolicy? = nil,
    publicURL: PublicURL = PublicURL()
) -> Router<ServerRequestContext> {
    let routes = Routes(corsOrigin: corsOrigin, writable: writable, limits: limits, metrics: metrics)
    routes.probes { await points.unreadiness() }
    if let metrics { routes.metrics(metrics, points: points) }
    let policy = caching ?? (writable ? .live : .fixed)
    routes.cachedGet("/api/clusters", policy: policy) { request, context in
        try points.service().clusters(try request.uri.decodeQuery(as: ViewQuery.self, context: context))
    }
    routes.cachedGet("/api/clusters/:id/leaves", policy: policy) { request, context in
        let query = try request.uri.decodeQuery(as: LeavesQuery.self, context: context)
        return try points.service().leaves(of: try context.parameters.require("id"), query)
    }
    routes.cachedGet("/api/clusters/:id/children", policy: policy) { _, context in
        try points.service().children(of: try context.parameters.require("id"))
    }
    routes.cachedGet("/api/clusters/:id/expansion-zoom", policy: policy) { _, context in
        try points.service().expansionZoom(of: try context.parameters.require("id"))
    }
    routes.get("/api/stats") { _, _ in try points.service().stats() }
    routes.get("/api/config") { _, _ in try points.configuration() }
    routes.tiles(
        policy: policy, publicURL: publicURL,
        tile: { address, categories throws(RequestError) in
            try points.service().tile(address, categories: categories)
        },
        tileJSON: { baseURL throws(RequestError) in try points.service().tileJSON(baseURL: baseURL) })
    if writable {
        liveRoutes(points, on: routes)
    } else {
        let readOnly = RequestError(
            .forbidden, "this server's points are read-only: start it with --writable to edit them")
        routes.route("/api/points", [.post: { _, _ in throw readOnly }])
        routes.route("/api/points/delete", [.post: { _, _ in throw readOnly }])
        routes.route(
            "/api/points/:id",
            [
                .delete: { _, _ in throw readOnly },
                .get: { _, _ in
                    throw RequestError(
                        .notFound, "points by id are a live server's: start it with --writable (and a --store) to ask")
                },
            ])
    }
    routes.files(files, paths: files.pagePaths)
    return routes.router
}

/// The routes of edits, points and changes.
private func liveRoutes(_ points: ServedPoints, on routes: Routes) {
    routes.route(
        "/api/points",
        [
            .post: { request, context in
                let live = try points.requireLive()
                try live.authorize(request)
                let body = try await Routes.editBody(of: request)
                return try await live.put(body).response(from: request, context: context)
            }
        ])
    routes.route(
        "/api/points/delete",
        [
            .post: { request, context in
                let live = try points.requireLive()
                try live.authorize(request)
                let body = try await Routes.editBody(of: request)
                return try await live.delete(list: body).response(from: request, context: context)
            }
        ])
    routes.route(
        "/api/points/:id",
        [
            .get: { request, context in
                try points.requireLive().point(id: try context.parameters.require("id")).response(
                    from: request, context: context)
            },
            .delete: { request, context in
                let live = try points.requireLive()
                try live.authorize(request)
                return try await live.delete(id: try context.parameters.require("id"))
                    .response(from: request, context: context)
            },
        ])
    routes.get("/api/tile-changes") { request, context in
        try points.requireLive().tileChanges(
            try request.uri.decodeQuery(as: TileChangesQuery.self, context: context), channel: context.channel)
    }
    routes.get("/api/changes") { request, context in
        try points.requireLive().changes(
            try request.uri.decodeQuery(as: ViewQuery.self, context: context), channel: context.channel)
    }
}

/// The routes of a server of a tile archive: `/tiles`, `/tiles.json` and the MapLibre page (at `/` too), without
/// points and so without `/api`.
///
package func buildRouter(
    archive: any TileArchive, files: PageFiles, corsOrigin: String? = "*", limits: ServerLimits = ServerLimits(),
    metrics: ServerMetrics? = nil, caching: CachePolicy = .fixed, publicURL: PublicURL = PublicURL()
) -> Router<ServerRequestContext> {
    let routes = Routes(corsOrigin: corsOrigin, limits: limits, metrics: metrics)
    // The archive was opened before the server listens: ready from the start.
    routes.probes { nil }
    if let metrics { routes.metrics(metrics, points: nil) }
    let service = ArchiveService(archive: archive)
    routes.tiles(
        policy: caching, publicURL: publicURL, tile: service.tile(_:categories:), tileJSON: service.tileJSON(baseURL:))
    // The pages' files but the Leaflet page, which needs /api: `/` is the MapLibre page.
    routes.files(files, paths: files.pagePaths.filter { $0 != "/" })
    // Relative, so that it holds behind a proxy's path prefix.
    routes.get("/") { _, _ in Response(status: .found, headers: [.location: "maplibre.html"]) }
    routes.get("/api/**") { request, _ -> Response in
        throw RequestError(
            .notFound, "\(request.uri.path): this server serves a tile archive; /api needs a server of points")
    }
    return routes.router
}
