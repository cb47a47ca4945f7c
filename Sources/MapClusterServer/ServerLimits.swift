public import Hummingbird
public import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// What the server bounds, so that no client can hold or swamp it: open connections, the time a request may take to
/// arrive, and the size of its URL, query and headers. (Bodies are bounded by route: ``MapClusterServer/maximumBodySize``
/// and ``LiveService/maximumEditSize``.)
public struct ServerLimits: Sendable, Hashable {
    /// The most connections open at once.
    ///
    /// `nil`: no limit. Past it, new connections wait to be accepted.
    public var maximumConnections: Int?
    /// How long a request may take to arrive.
    ///
    /// The time runs from the connection's opening or the end of the previous answer to the end of the request's
    /// body; a client slower than that (one that sends a byte a second, say) is disconnected, and so is a kept-alive
    /// connection idle that long. Answers, and the change streams, are not bounded.
    public var requestTimeout: Duration
    /// The longest URL, in bytes (414 past it).
    public var maximumURLLength: Int
    /// The most query parameters (400 past them).
    public var maximumQueryParameters: Int
    /// The most bytes of headers, all together and each one (the connection is closed past them).
    public var maximumHeaderBytes: Int

    /// The defaults: no limit on connections, 30 s to send a request, URLs of 8 KiB, 64 query parameters, 16 KiB of
    /// headers.
    public init(
        maximumConnections: Int? = nil, requestTimeout: Duration = .seconds(30), maximumURLLength: Int = 8_192,
        maximumQueryParameters: Int = 64, maximumHeaderBytes: Int = 16_384
    ) {
        self.maximumConnections = maximumConnections
        self.requestTimeout = requestTimeout
        self.maximumURLLength = maximumURLLength
        self.maximumQueryParameters = maximumQueryParameters
        self.maximumHeaderBytes = maximumHeaderBytes
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
