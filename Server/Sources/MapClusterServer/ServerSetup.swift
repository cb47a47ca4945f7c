package import Foundation
package import Hummingbird
package import Logging
import MapCluster
package import MapClusterIO
import MapClusterLive
import MapClusterManager
import MapClusterSampleData
import MapClusterStore
import MapClusterTiles
import ServiceLifecycle

/// What a server serves and how: what `mapcluster serve` takes from its options, checked already.
package struct ServerConfiguration: Sendable {
    /// Where the points come from.
    package enum Source: Sendable {
        /// Points loaded once, from files or the bundled sample.
        case points
        /// The points of a store at a location (`StoreLocation`), seeded with the loaded ones if it
        /// is empty; with a `token`, taking edits that carry it.
        case store(location: String, token: String?)
        /// The tiles of an archive written by `mapcluster tiles`, without points or `/api`.
        case archive(URL)
    }

    package var source: Source = .points
    /// The points a server of points serves, or seeds an empty store with; `files` names them in messages.
    package var load: @Sendable () throws -> PointSet = {
        try PointFileReader().read(contentsOf: [SampleData.worldCitiesURL])
    }
    package var files: [String] = []
    /// The aggregates the clusters carry.
    package var aggregation = PointAggregation()
    package var host = "127.0.0.1"
    /// The port to listen on; 0 for any free one.
    package var port = 8080
    package var limits = ServerLimits()
    /// The origin allowed to call the API from another site's page; `nil` for none.
    package var corsOrigin: String? = "*"
    /// A raster tile URL template for the page's basemap.
    package var tileURL: String?
    /// The property that titles a point's popup (default: `name` if there is one).
    package var nameColumn: String?
    /// How points are clustered and laid out, and how zooms are counted.
    package var markers = MarkerOptions()
    /// How the answers made from the data may be cached (`/api/clusters…`, `/tiles…`): a `Cache-Control` value;
    /// `nil` for the default of the source (``CachePolicy``).
    package var cacheControl: String?
    /// The URL clients reach the server at behind a proxy (scheme, host and any path prefix), which `/tiles.json`
    /// names; `nil` for the one each request came to.
    package var publicURL: String?
    /// Whether `X-Forwarded-Proto`, `X-Forwarded-Host` and `X-Forwarded-Prefix` say the public URL (when there is no
    /// ``publicURL``): only behind a proxy that sets them.
    package var trustsForwardedHeaders = false
    /// Where Leaflet's and MapLibre GL JS's local copies are.
    package var leafletDirectory = PageFiles.localLeaflet
    package var mapLibreDirectory: String? = PageFiles.localMapLibre()
    /// Whether the server keeps metrics and answers them at `/metrics` (``ServerMetrics``).
    package var metrics = true

    package init() {}

    /// Where `/tiles.json` names the tiles.
    var publicURLPolicy: PublicURL {
        PublicURL(fixed: publicURL, trustsForwardedHeaders: trustsForwardedHeaders)
    }
}

/// A server built from a configuration, ready to run: listening at once, its points loaded while it listens.
package struct MapServer<Application: ApplicationProtocol>: Sendable {
    package let application: Application
    /// What a server of points answers from, filled by ``load(logger:)``; nil for a server of an archive.
    package let points: ServedPoints?
    /// Loads the points, or opens the store and loads its points; nil for a server of an archive.
    let loader: (@Sendable (Logger) async throws -> (service: ClusterService, live: LiveService?))?
    /// Tells the caller's `onServerRunning` the port once the server both listens and has loaded its points.
    let startup: Startup

    /// The live points, for a server of a store, once loaded.
    package var live: LiveService? { points?.live }

    /// Loads the points (a store's, for a server of a store) and makes the routes answer from them.
    ///
    /// ``run(logger:)`` calls it while the server listens; a test may call it alone.
    ///
    /// - Throws: ``ServerSetupError`` for a store that can't be opened, a name column the points don't have;
    ///   `PointFileError` for points that can't be read. `/readyz` then says why until the server stops.
    package func load(logger: Logger) async throws {
        guard let points, let loader else { return }
        do {
            let loaded = try await loader(logger)
            points.load(service: loaded.service, live: loaded.live)
        } catch {
            points.fail("the points could not be loaded: \(error)")
            throw error
        }
    }

    /// Listens, loads the points meanwhile, and runs until SIGINT or SIGTERM, then stops (``runServer(_:points:logger:)``):
    /// a live server's edits under way are committed or refused, and its store closed.
    ///
    /// Until the points are loaded, `/healthz` is 200 and `/readyz` and the routes that need the points are 503. A load
    /// that fails stops the server with its error.
    package func run(logger: Logger) async throws {
        let loading = loader.map { _ in
            LoadingService {
                try await load(logger: logger)
                await startup.loaded()
                guard let live else { return }
                // Idle change streams hear from the server every 15 seconds, until it stops.
                try? await cancelWhenGracefulShutdown {
                    while true {
                        try await Task.sleep(for: .seconds(15))
                        live.live.remind()
                    }
                }
            }
        }
        do {
            try await runServer(application, points: points, loading: loading, logger: logger)
        } catch {
            await stopLive(logger: logger)
            throw error
        }
        await stopLive(logger: logger)
    }

    /// Stops a live server's writer (committing or refusing what it was given) and closes its store.
    ///
    /// Each step is logged, so that a stop that takes long says where it waits.
    private func stopLive(logger: Logger) async {
        guard let live else { return }
        logger.info("stopping: the server stopped; committing the edits under way")
        await live.writer.stop()
        logger.info("stopping: closing \(live.writer.store.description)")
        await live.writer.store.close()
        logger.info("stopped")
    }
}

/// Tells whoever started a server its port, once: when it listens and has loaded its points, whichever comes last.
actor Startup {
    private let onServerRunning: @Sendable (Int) async -> Void
    private var port: Int?
    private var isLoaded: Bool

    init(loaded: Bool, onServerRunning: @escaping @Sendable (Int) async -> Void) {
        self.onServerRunning = onServerRunning
        isLoaded = loaded
    }

    func listening(on port: Int) async {
        self.port = port
        if isLoaded { await onServerRunning(port) }
    }

    func loaded() async {
        isLoaded = true
        if let port { await onServerRunning(port) }
    }
}

/// Why a server could not be built: a sentence that names the option or file at fault.
package struct ServerSetupError: Error, CustomStringConvertible {
    package let description: String

    init(_ description: String) { self.description = description }
}

/// Builds the server a configuration describes.
///
/// It reads the pages' files and opens the archive of a server of an archive; a server of points loads and indexes
/// them (a store's, for a server of a store) once it listens, in ``MapServer/run(logger:)``. `onServerRunning` gets
/// the port it listens on, once its points are loaded.
///
/// - Throws: ``ServerSetupError`` for an archive that can't be opened, or a cell size the markers can't use.
package func buildApplication(
    _ configuration: ServerConfiguration, logger: Logger,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> MapServer<some ApplicationProtocol> {
    let files = try PageFiles(
        leafletDirectory: configuration.leafletDirectory, mapLibreDirectory: configuration.mapLibreDirectory)
    let loader: (@Sendable (Logger) async throws -> (service: ClusterService, live: LiveService?))?
    let metrics = configuration.metrics ? ServerMetrics() : nil
    switch configuration.source {
    case .archive(let url):
        let archive: any TileArchive
        do {
            archive = try TileArchiveFormat.open(url)
        } catch {
            throw ServerSetupError("--tiles-from \(error)")
        }
        let zooms = "\(archive.metadata.minimumZoom)–\(archive.metadata.maximumZoom)"
        logger.info("serving the tiles of \(url.path), zooms \(zooms)")
        let router = buildRouter(
            archive: archive, files: files, corsOrigin: configuration.corsOrigin, limits: configuration.limits,
            metrics: metrics, caching: configuration.cacheControl.map(CachePolicy.init) ?? .fixed,
            publicURL: configuration.publicURLPolicy)
        // Nothing to load: the port is told as soon as the server listens.
        let startup = Startup(loaded: true, onServerRunning: onServerRunning)
        return MapServer(
            application: buildApplication(
                router: router, host: configuration.host, port: configuration.port, logger: logger,
                limits: configuration.limits, onServerRunning: { await startup.listening(on: $0) }),
            points: nil, loader: nil, startup: startup)
    case .store(let location, let token):
        loader = { logger in
            let live = try await liveService(configuration, location: location, token: token, logger: logger)
            await metrics?.watch(live.writer)
            return (live.base, live)
        }
    case .points:
        loader = { logger in (try pointService(configuration, logger: logger), nil) }
    }
    do {
        try configuration.markers.validate()
    } catch {
        throw ServerSetupError("the clustering options or the marker sizes: \(error)")
    }
    let points = ServedPoints()
    var writable = false
    if case .store = configuration.source { writable = true }
    let router = buildRouter(
        points: points, writable: writable, files: files, corsOrigin: configuration.corsOrigin,
        limits: configuration.limits, metrics: metrics, caching: configuration.cacheControl.map(CachePolicy.init),
        publicURL: configuration.publicURLPolicy)
    let startup = Startup(loaded: false, onServerRunning: onServerRunning)
    let application = buildApplication(
        router: router, host: configuration.host, port: configuration.port, logger: logger,
        limits: configuration.limits, onServerRunning: { await startup.listening(on: $0) })
    return MapServer(application: application, points: points, loader: loader, startup: startup)
}

/// Checks that the points have the configuration's name column.
private func checkNameColumn(_ configuration: ServerConfiguration, of points: PointSet) throws(ServerSetupError) {
    guard let nameColumn = configuration.nameColumn, !points.propertyNames.contains(nameColumn) else { return }
    throw ServerSetupError(
        "--name-column: the points have no column '\(nameColumn)'; they have "
            + points.propertyNames.joined(separator: ", "))
}

/// The points of the configuration, indexed.
private func pointService(_ configuration: ServerConfiguration, logger: Logger) throws -> ClusterService {
    let points = try configuration.load()
    try checkNameColumn(configuration, of: points)
    let service = try ClusterService(
        points: points, aggregation: configuration.aggregation, tileURL: configuration.tileURL,
        nameColumn: configuration.nameColumn, options: configuration.markers)
    logger.info(
        "indexed \(points.records.count) points in \(service.buildTime.formatted(.units(allowed: [.milliseconds])))")
    return service
}

/// Why the points meant to seed a store could not be loaded.
private struct SeedFailure: Error {
    let error: any Error
}

/// The points of the store (seeded with the configuration's if it is empty), their writer, and the service of both.
private func liveService(
    _ configuration: ServerConfiguration, location: String, token: String?, logger: Logger
) async throws -> LiveService {
    let store: any PointStore
    do {
        store = try await StoreLocation.open(location, logger: logger)
    } catch {
        throw ServerSetupError("--store \(error)")
    }
    let clock = ContinuousClock()
    let start = clock.now
    let opened: (index: LiveIndex, seeded: Int?)
    do {
        opened = try await LiveIndex.open(store, aggregation: configuration.aggregation) {
            do { return try configuration.load() } catch { throw SeedFailure(error: error) }
        }
    } catch let failure as SeedFailure {
        throw failure.error  // the points' own error, as a server of points gives it
    } catch let error as PointFileError {
        throw error
    } catch {
        throw ServerSetupError("--store \(store.description): \(error)")
    }
    let state = opened.index.current
    if let seeded = opened.seeded {
        logger.info("\(store.description) was empty: seeded it with \(seeded) points")
    } else if !configuration.files.isEmpty {
        let files = configuration.files.joined(separator: ", ")
        logger.notice("\(store.description) holds points already: \(files) not loaded (files seed an empty store only)")
    }
    try checkNameColumn(configuration, of: state.points)
    let base = ClusterService(
        points: state.points, index: state.index, buildTime: clock.now - start, aggregation: configuration.aggregation,
        tileURL: configuration.tileURL, nameColumn: configuration.nameColumn, options: configuration.markers)
    let writer = LiveWriter(live: opened.index, store: store)
    await writer.startFollowing()
    logger.info("\(state.index.count) live points in \(store.description)\(token != nil ? ", taking edits" : "")")
    return LiveService(writer: writer, base: base, token: token)
}
