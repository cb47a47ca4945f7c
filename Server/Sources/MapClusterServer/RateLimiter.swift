import Hummingbird
import NIOConcurrencyHelpers

/// Each client address's allowance of requests: a token bucket of a second's worth, refilled at the rate.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let rate: Double
    let burst: Double
    /// Addresses kept before full (idle) buckets are dropped.
    static var trackedAddresses: Int { 10_000 }
    private let buckets = NIOLockedValueBox([String: Bucket]())

    init(requestsPerSecond rate: Double) {
        self.rate = rate
        burst = max(1, rate.rounded(.up))
    }

    /// Takes one request from the address's allowance: `nil` if it had one, or how long until it will.
    func take(for address: String, at now: ContinuousClock.Instant = .now) -> Duration? {
        buckets.withLockedValue { buckets in
            var bucket = buckets[address] ?? Bucket(tokens: burst, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + seconds * rate)
            bucket.updated = now
            defer {
                if buckets.count >= Self.trackedAddresses { Self.dropIdle(&buckets, at: now, rate: rate, burst: burst) }
                buckets[address] = bucket
            }
            guard bucket.tokens >= 1 else { return .seconds((1 - bucket.tokens) / rate) }
            bucket.tokens -= 1
            return nil
        }
    }

    /// How many addresses it keeps an allowance for.
    var trackedCount: Int { buckets.withLockedValue { $0.count } }

    /// Forgets the addresses whose allowance has refilled: they are as new ones.
    private static func dropIdle(
        _ buckets: inout [String: Bucket], at now: ContinuousClock.Instant, rate: Double, burst: Double
    ) {
        buckets = buckets.filter { _, bucket in
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return bucket.tokens + seconds * rate < burst
        }
    }
}

/// Answers 429, with a `Retry-After`, a client past its allowance of requests (``ServerLimits/requestsPerSecond``);
/// probes are exempt.
struct RateLimitMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    let limiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        // A probe (/healthz, /readyz) is never refused: a load balancer would take a busy server for a dead one.
        guard !Probes.paths.contains(request.uri.path), let address = context.remoteAddress?.ipAddress,
            let wait = limiter.take(for: address)
        else {
            return try await next(request, context)
        }
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        let retry = max(1, Int(seconds.rounded(.up)))
        throw RequestError(
            .tooManyRequests,
            "too many requests from \(address): at most \(Self.rate(limiter.rate)) a second; retry after \(retry) s",
            headers: [.retryAfter: String(retry)])
    }

    private static func rate(_ value: Double) -> String {
        value == value.rounded() && value < 1e15 ? String(Int(value)) : String(value)
    }
}
