import Hummingbird
import Logging
import MapClusterLive
import NIOConcurrencyHelpers

/// What the routes of a server of points answer from: its points' service, and the live one of a store, once they are
/// loaded; until then those routes are 503, and `/readyz` says why.
///
/// A server listens before it loads (`MapServer.run(logger:)`), so that a load balancer or an orchestrator can tell a
/// server that is starting (`/healthz` 200, `/readyz` 503) from one that is gone.
package final class ServedPoints: Sendable {
    private struct Loaded {
        let service: ClusterService
        let live: LiveService?
    }

    private let loaded = NIOLockedValueBox<Loaded?>(nil)
    /// Why the points can't be answered from, or nil once they can.
    private let problem = NIOLockedValueBox<String?>("the points are loading")

    /// Points still to load.
    package init() {}

    /// Points loaded already: a server built around a service (`buildRouter(service:live:files:corsOrigin:limits:)`).
    package init(service: ClusterService, live: LiveService?) {
        load(service: service, live: live)
    }

    /// Makes the loaded points the answer of every route.
    package func load(service: ClusterService, live: LiveService?) {
        loaded.withLockedValue { $0 = Loaded(service: service, live: live) }
        problem.withLockedValue { $0 = nil }
    }

    /// Says why the points will never load (the server is stopping with that error).
    package func fail(_ reason: String) {
        problem.withLockedValue { $0 = reason }
    }

    /// The live service, once loaded, for a server of a store.
    package var live: LiveService? { loaded.withLockedValue { $0?.live } }

    /// Why `/readyz` is 503: the points are loading or failed to, a follower reloads them from the store, or the store
    /// doesn't answer (the live writer's last commit or catch-up failed); nil when ready.
    package func unreadiness() async -> String? {
        if let problem = problem.withLockedValue({ $0 }) { return problem }
        guard let writer = live?.writer else { return nil }
        if await writer.reloading { return "the points are reloading from the store" }
        return await writer.storeProblem.map { "the store does not answer: \($0)" }
    }

    /// The service the read routes answer from: the live points' current one, or the loaded points'.
    func service() throws(RequestError) -> ClusterService {
        let loaded = try current()
        return loaded.live?.current ?? loaded.service
    }

    /// The live service the edit routes answer from.
    func requireLive() throws(RequestError) -> LiveService {
        guard let live = try current().live else { throw Self.notYet(problem.withLockedValue { $0 }) }
        return live
    }

    /// What `/api/config` answers.
    func configuration() throws(RequestError) -> ConfigurationAnswer {
        let loaded = try current()
        return loaded.live?.configuration() ?? loaded.service.configuration()
    }

    /// The loaded points, or a 503 that says why there are none yet.
    private func current() throws(RequestError) -> Loaded {
        guard let loaded = loaded.withLockedValue({ $0 }) else { throw Self.notYet(problem.withLockedValue { $0 }) }
        return loaded
    }

    private static func notYet(_ reason: String?) -> RequestError {
        RequestError(
            .serviceUnavailable, "\(reason ?? "the points are loading"): try again in a moment",
            headers: [.retryAfter: "1"])
    }
}

/// The paths that probes ask (`/healthz`, `/readyz`): cheap, never rate-limited, logged at debug level only.
enum Probes {
    static let paths: Set<String> = ["/healthz", "/readyz"]

    /// What `/healthz` and `/readyz` answer when all is well.
    struct Answer: ResponseEncodable {
        let status: String
    }
}

extension Routes {
    /// The probes' routes.
    ///
    /// `/healthz` is 200 while the process serves; `/readyz` is 200 once `unreadiness` is nil, else 503 with why.
    func probes(unreadiness: @escaping @Sendable () async -> String?) {
        get("/healthz") { _, _ in Probes.Answer(status: "ok") }
        get("/readyz") { _, _ in
            if let reason = await unreadiness() {
                throw RequestError(.serviceUnavailable, "not ready: \(reason)", headers: [.retryAfter: "1"])
            }
            return Probes.Answer(status: "ready")
        }
    }
}

/// Hummingbird's request log, at info level but for probes, which a load balancer sends every few seconds: those at
/// debug level.
struct LogRequests<Context: RequestContext>: RouterMiddleware {
    private let requests = LogRequestsMiddleware<Context>(.info)
    private let probes = LogRequestsMiddleware<Context>(.debug)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let log = Probes.paths.contains(request.uri.path) ? probes : requests
        return try await log.handle(request, context: context, next: next)
    }
}
