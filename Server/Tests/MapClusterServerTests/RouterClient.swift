import Hummingbird
import Logging
import MapClusterServer
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded

/// Requests handed to a router's responder in process, as the server hands them on, with no socket between.
///
/// HummingbirdTesting's router mode does the same; its package, though, brings async-http-client and swift-nio-ssl
/// (a BoringSSL) into every test build. The server as a process, on real sockets, is tested by `mapclusterTests`.
struct RouterClient: Sendable {
    /// An answer: its status, headers and whole body.
    struct Answer {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: ByteBuffer
    }

    private let responder: RouterResponder<ServerRequestContext>
    private let logger: Logger

    /// A client of `router` whose requests log warnings only: a test's thousands of requests would bury its report.
    init(_ router: Router<ServerRequestContext>) {
        responder = router.buildResponder()
        var logger = Logger(label: "mapcluster.tests")
        logger.logLevel = .warning
        self.logger = logger
    }

    /// Sends a request and hands its answer, body and all, to `check`.
    ///
    /// An error that escapes the router (none should: its middleware answers them) is a 500, as the server makes it.
    func execute<Value>(
        uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil,
        _ check: (Answer) async throws -> Value
    ) async throws -> Value {
        var headers = headers
        if let body { headers[.contentLength] = String(body.readableBytes) }
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: uri, headerFields: headers),
            body: RequestBody(buffer: body ?? ByteBuffer()))
        let context = ServerRequestContext(
            source: ApplicationRequestContextSource(channel: NIOAsyncTestingChannel(), logger: logger))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch {
            response = Response(status: .internalServerError)
        }
        let collector = BodyCollector()
        try await response.body.write(collector)
        return try await check(
            Answer(status: response.status, headers: response.headers, body: collector.buffer.withLockedValue { $0 }))
    }
}

/// What a response body writes, gathered into one buffer.
private struct BodyCollector: ResponseBodyWriter {
    let buffer = NIOLockedValueBox(ByteBuffer())

    func write(_ part: ByteBuffer) async throws {
        buffer.withLockedValue { _ = $0.writeImmutableBuffer(part) }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
