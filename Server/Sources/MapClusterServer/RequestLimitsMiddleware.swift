import Hummingbird

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
