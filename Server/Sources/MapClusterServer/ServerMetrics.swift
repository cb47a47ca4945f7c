import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MapCluster
package import MapClusterLive
import Metrics
import NIOCore
import Prometheus

/// What `GET /metrics` shows Prometheus: swift-metrics' counters, gauges and timers of this server, kept in a registry
/// of its own (no process-wide bootstrap) and written in Prometheus' text format by swift-prometheus.
///
/// - `mapcluster_http_requests_total{route,method,status}` and `mapcluster_http_request_duration_seconds{route,method}`
///   (a histogram): every request, by the route it matched (`NotFound` for none);
/// - `mapcluster_rejected_requests_total{reason}`: requests refused for `rate_limit`, `too_large`, `bad_input` or
///   `unauthorized`;
/// - `mapcluster_points`, `mapcluster_live_version` and `mapcluster_live_subscribers`: read at each scrape;
/// - `mapcluster_store_commit_duration_seconds` (a histogram) and `mapcluster_edits_applied_total`: a store's commits
///   and the points its edits changed.
package final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

    /// The metrics of one server.
    package init() {
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// Counts a request that was answered, and its time.
    func request(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status, duration: Duration) {
        Counter(
            label: "mapcluster_http_requests_total",
            dimensions: [("route", route), ("method", method.rawValue), ("status", String(status.code))],
            factory: factory
        ).increment()
        Metrics.Timer(
            label: "mapcluster_http_request_duration_seconds",
            dimensions: [("route", route), ("method", method.rawValue)], factory: factory
        ).record(duration: duration)
        if let reason = Self.rejection(status) {
            Counter(label: "mapcluster_rejected_requests_total", dimensions: [("reason", reason)], factory: factory)
                .increment()
        }
    }

    /// Why a request with this status was refused, or nil for one that wasn't.
    static func rejection(_ status: HTTPResponse.Status) -> String? {
        switch status.code {
        case 429: "rate_limit"
        case 413, 414, 431: "too_large"
        case 400, 422: "bad_input"
        case 401, 403: "unauthorized"
        default: nil
        }
    }

    /// Records a store's commit: how long it took, and how many points the edits it held changed.
    package func commit(duration: Duration, changedPoints: Int) {
        Metrics.Timer(label: "mapcluster_store_commit_duration_seconds", factory: factory).record(duration: duration)
        Counter(label: "mapcluster_edits_applied_total", factory: factory).increment(by: changedPoints)
    }

    /// Watches a live writer's commits.
    package func watch(_ writer: LiveWriter) async {
        await writer.observeCommits { [self] duration, changed in commit(duration: duration, changedPoints: changed) }
    }

    /// The metrics in Prometheus' text format, the gauges read now from `points`.
    func text(of points: ServedPoints?) -> [UInt8] {
        if let points {
            if let service = try? points.service() {
                Gauge(label: "mapcluster_points", factory: factory).record(service.index.count)
            }
            if let live = points.live {
                Gauge(label: "mapcluster_live_version", factory: factory).record(live.live.current.version)
                Gauge(label: "mapcluster_live_subscribers", factory: factory).record(live.live.subscriberCount)
            }
        }
        return registry.emitToBuffer()
    }
}

extension Routes {
    /// `GET /metrics`, in Prometheus' text format.
    func metrics(_ metrics: ServerMetrics, points: ServedPoints?) {
        get("/metrics") { _, _ in
            var buffer = ByteBuffer()
            buffer.writeBytes(metrics.text(of: points))
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: buffer))
        }
    }
}

/// Counts each request in ``ServerMetrics``, by the route it matched, its method and its answer's status, with its
/// time.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await next(request, context)
            metrics.request(
                route: context.endpointPath ?? "NotFound", method: request.method, status: response.status,
                duration: clock.now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            metrics.request(
                route: context.endpointPath ?? "NotFound", method: request.method, status: status,
                duration: clock.now - start)
            throw error
        }
    }
}
