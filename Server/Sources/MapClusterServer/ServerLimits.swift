import HummingbirdCore
import NIOCore

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
