package import Hummingbird
import Logging
import NIOCore

/// A request the server can't answer: the HTTP status and what was wrong, answered as `{"error":"…","status":400}`.
///
/// It is Hummingbird's `HTTPResponseError`: thrown from a route, it becomes its own response.
package struct RequestError: HTTPResponseError, Sendable, Equatable {
    /// The status: 400 for bad input, 404 for something unknown, 413 for a body too large.
    package let status: HTTPResponse.Status
    /// What was wrong, for the client.
    package let message: String
    /// Headers the answer carries besides its content type (a 429's `Retry-After`).
    package let headers: HTTPFields

    /// An error with a status, a message, and headers for its answer.
    package init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    /// The JSON body and its status.
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var body = try context.responseEncoder.encode(
            Body(error: message, status: status.code), from: request, context: context)
        body.status = status
        body.headers[.contentType] = "application/json"
        body.headers.append(contentsOf: headers)
        return body
    }

    private struct Body: ResponseEncodable {
        let error: String
        let status: Int
    }
}

/// Answers what the framework itself refuses (an unknown path, a method no route takes) in the API's JSON shape, and
/// refuses request bodies larger than the API could want.
struct RequestErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        // An edit's points can be many; no other request has a use for a body.
        let isEdit = request.method == .post && request.uri.path.hasPrefix("/api/points")
        let maximum = isEdit ? LiveService.maximumEditSize : ServerLimits.maximumBodySize
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maximum {
            throw RequestError(
                .contentTooLarge,
                "the request body is \(length) bytes; at most \(maximum)"
                    + (isEdit ? ": send the points in smaller batches" : ""))
        }
        do {
            return try await next(request, context)
        } catch let error as RequestError {
            throw error
        } catch let error as HTTPError {
            // Hummingbird's own errors (a query it could not decode, a body past a limit) say what was wrong: kept.
            let status = error.status
            let fallback = status == .notFound ? "no such path: \(request.uri.path)" : status.reasonPhrase
            var headers = error.headers
            headers[.contentType] = nil
            throw RequestError(status, error.body ?? fallback, headers: headers)
        } catch let error as any HTTPResponseError {
            let status = error.status
            throw RequestError(status, status == .notFound ? "no such path: \(request.uri.path)" : status.reasonPhrase)
        } catch let error as URLEncodedFormError {
            // A query Hummingbird's decoder could not read as parameters (a name given twice, bad percent-encoding).
            throw RequestError(.badRequest, "the query: \(error.description)")
        } catch {
            context.logger.error("\(request.uri.path): \(error)")
            throw RequestError(.internalServerError, "the server could not answer this request")
        }
    }
}
