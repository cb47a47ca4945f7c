package import Hummingbird
package import HummingbirdCore
import NIOConcurrencyHelpers
package import NIOCore
import NIOHTTPTypes

/// What the server bounds, so that no client can hold or swamp it: open connections, the time a request may take to
/// arrive, and the size of its URL, query and headers. (Bodies are bounded by route: ``ServerLimits/maximumBodySize``
/// and ``LiveService/maximumEditSize``.)
package struct ServerLimits: Sendable, Hashable {
    /// The most connections open at once.
    ///
    /// `nil`: no limit. Past it, new connections wait to be accepted.
    package var maximumConnections: Int?
    /// How long a request may take to arrive.
    ///
    /// The time runs from the connection's opening or the end of the previous answer to the end of the request's
    /// body; a client slower than that (one that sends a byte a second, say) is disconnected, and so is a kept-alive
    /// connection idle that long. Answers, and the change streams, are not bounded.
    package var requestTimeout: Duration
    /// The longest URL, in bytes (414 past it).
    package var maximumURLLength: Int
    /// The most query parameters (400 past them).
    package var maximumQueryParameters: Int
    /// The most bytes of headers, all together and each one (the connection is closed past them).
    package var maximumHeaderBytes: Int
    /// The most requests a second from one client address, on average; `nil`: no limit.
    ///
    /// A client may send a second's worth at once; past that, its requests are answered 429 with a `Retry-After`
    /// until its allowance refills. Other clients are not held up.
    package var requestsPerSecond: Double?

    /// The largest request body taken, but an edit's (``LiveService/maximumEditSize``): the API has no use for any.
    package static let maximumBodySize = 64 * 1024

    /// The defaults: no limit on connections or request rates, 30 s to send a request, URLs of 8 KiB, 64 query
    /// parameters, 16 KiB of headers.
    package init(
        maximumConnections: Int? = nil, requestTimeout: Duration = .seconds(30), maximumURLLength: Int = 8_192,
        maximumQueryParameters: Int = 64, maximumHeaderBytes: Int = 16_384, requestsPerSecond: Double? = nil
    ) {
        self.maximumConnections = maximumConnections
        self.requestTimeout = requestTimeout
        self.maximumURLLength = maximumURLLength
        self.maximumQueryParameters = maximumQueryParameters
        self.maximumHeaderBytes = maximumHeaderBytes
        self.requestsPerSecond = requestsPerSecond
    }

    /// The HTTP/1.1 server these limits make.
    var server: HTTPServerBuilder {
        let timeout = TimeAmount.nanoseconds(
            requestTimeout.components.seconds * 1_000_000_000 + requestTimeout.components.attoseconds / 1_000_000_000)
        return .http1(
            configuration: .init(
                additionalChannelHandlers: [RequestDeadlineHandler(timeout: timeout)],
                httpDecoderConfiguration: .init(
                    maxHeaderFieldSize: maximumHeaderBytes, maxHeaderListSize: maximumHeaderBytes,
                    maxHeaderFieldCount: 200)))
    }

    /// What decides whether to accept another connection.
    var connections: (any AvailableConnectionsDelegate)? {
        maximumConnections.map { MaximumAvailableConnections($0) }
    }
}

/// Refuses URLs and queries past the limits with a JSON error, before any route parses them.
struct RequestLimitsMiddleware<Context: RequestContext>: RouterMiddleware {
    let limits: ServerLimits

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let length = request.uri.description.utf8.count
        guard length <= limits.maximumURLLength else {
            throw RequestError(.uriTooLong, "the URL is \(length) bytes; at most \(limits.maximumURLLength)")
        }
        let query = request.uri.query ?? ""
        let parameters = query.isEmpty ? 0 : query.utf8.count { $0 == UInt8(ascii: "&") } + 1
        guard parameters <= limits.maximumQueryParameters else {
            throw RequestError(
                .badRequest, "the query has \(parameters) parameters; at most \(limits.maximumQueryParameters)")
        }
        return try await next(request, context)
    }
}

/// The context of the server's requests: Hummingbird's, and the client's address (for the rate limit).
package struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    /// What every request context has.
    package var coreContext: CoreRequestContextStorage
    /// The address the request came from; `nil` off a socket (in the router's tests).
    package let remoteAddress: SocketAddress?
    /// The connection: what a stopping server closes under a change stream whose client doesn't read.
    let channel: any Channel

    /// The context of a request arriving on a channel.
    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}

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

/// Answers 429, with a `Retry-After`, a client past its allowance of requests (``ServerLimits/requestsPerSecond``).
struct RateLimitMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    let limiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let address = context.remoteAddress?.ipAddress, let wait = limiter.take(for: address) else {
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

/// Closes a connection whose request doesn't arrive in time.
///
/// The clock starts when the connection opens and when an answer ends, and stops when a request's end arrives. A slow
/// client (slowloris) is cut off; one that is answered, or is being answered, is left alone.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { arm(context) }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }
}
