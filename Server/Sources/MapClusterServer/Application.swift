package import Hummingbird
package import Logging
package import ServiceLifecycle
import UnixSignals

/// The application: `router` on a host and port, shutting down cleanly on SIGINT and SIGTERM when run with
/// ``runServer(_:points:logger:)``.
///
/// `limits` bounds connections, the time a request may take to arrive, and its headers; the router's middleware
/// bounds its URL and query (``ServerLimits``).
package func buildApplication(
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
let serverStopLimit = Duration.seconds(7)

/// Runs `application` until SIGINT or SIGTERM, then stops it, whatever its clients do.
///
/// With live points (`points` of a store, once loaded), the change streams end first (each with a last event; a client that doesn't read is disconnected,
/// ``LiveService/stop(grace:)``); then the server takes no new connection, finishes the requests under way and
/// returns. Whatever still runs 7 seconds after the signal is cancelled. The caller then stops the live writer,
/// which commits or refuses the edits it was given.
///
/// `loading`, when given, runs beside the server (it loads the points while the server listens): its end leaves the
/// server running; its error stops the server gracefully and is thrown from here.
package func runServer(
    _ application: some ApplicationProtocol, points: ServedPoints?, loading: (any Service)? = nil, logger: Logger
) async throws {
    // A service group stops its services last to first: the streams' stop runs before the server's, which waits
    // for every open request, a change stream's too, to end.
    var services = [ServiceGroupConfiguration.ServiceConfiguration(service: application)]
    if let loading {
        services.append(
            .init(
                service: loading, successTerminationBehavior: .ignore,
                failureTerminationBehavior: .gracefullyShutdownGroup))
    }
    if let points { services.append(.init(service: ChangeStreamsStop(points: points, logger: logger))) }
    var configuration = ServiceGroupConfiguration(
        services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    configuration.maximumGracefulShutdownDuration = serverStopLimit
    try await ServiceGroup(configuration: configuration).run()
}

/// Ends a live server's change streams once the server is asked to stop.
private struct ChangeStreamsStop: Service {
    let points: ServedPoints
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        guard let live = points.live else { return }
        logger.info("stopping: ending the change streams")
        await live.stop()
        logger.info("stopping: the change streams ended; finishing the requests under way")
    }
}

/// A service whose work is a closure: what loads a server's points beside it.
struct LoadingService: Service {
    let work: @Sendable () async throws -> Void

    func run() async throws {
        try await work()
    }
}
