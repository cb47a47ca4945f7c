import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// The methods each route's path takes, as the routes are added.
final class AllowedMethods: Sendable {
    private struct Entry {
        /// The path's segments; `:name` matches any one, `**` the rest.
        let pattern: [Substring]
        var methods: Set<HTTPRequest.Method>
    }

    private let entries = NIOLockedValueBox([Entry]())

    /// Adds methods to a route's path.
    func add(_ path: String, _ methods: Set<HTTPRequest.Method>) {
        let pattern = path.split(separator: "/")
        entries.withLockedValue { entries in
            if let index = entries.firstIndex(where: { $0.pattern == pattern }) {
                entries[index].methods.formUnion(methods)
            } else {
                entries.append(Entry(pattern: pattern, methods: methods))
            }
        }
    }

    /// The methods a request's path takes, in the order an `Allow` header lists them (HEAD with GET); `nil` for a path
    /// no route has.
    func allowed(for path: String) -> [String]? {
        let segments = path.split(separator: "/")
        let methods = entries.withLockedValue { entries in
            // As the router does: a path's literal segments win over captures (`/api/points/delete` is not
            // `/api/points/:id`), so only the most literal patterns that match say what it takes.
            let matching = entries.filter { Self.matches($0.pattern, segments) }
            let literal = matching.map { $0.pattern.count { !$0.hasPrefix(":") && $0 != "**" } }.max() ?? 0
            return matching.filter { $0.pattern.count { !$0.hasPrefix(":") && $0 != "**" } == literal }
                .reduce(into: Set<HTTPRequest.Method>()) { $0.formUnion($1.methods) }
        }
        guard !methods.isEmpty else { return nil }
        var allowed = [HTTPRequest.Method.get, .post, .delete].filter(methods.contains).map(\.rawValue)
        if methods.contains(.get) { allowed.insert("HEAD", at: 1) }
        return allowed
    }

    private static func matches(_ pattern: [Substring], _ segments: [Substring]) -> Bool {
        for (offset, part) in pattern.enumerated() {
            if part == "**" { return segments.count > offset }
            guard offset < segments.count, part.hasPrefix(":") || part == segments[offset] else { return false }
        }
        return pattern.count == segments.count
    }
}

/// What HTTP asks of a method a path doesn't take: 405 with the path's `Allow`.
///
/// OPTIONS is answered 204 with it. One answer for every route, from the table the routes fill (``AllowedMethods``).
struct AllowedMethodsMiddleware<Context: RequestContext>: RouterMiddleware {
    let methods: AllowedMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            // The router found no route for the method: is there one for the path? Then any other method, one HTTP
            // defines or not (QUERY, a client's own), is a 405 that says which the path takes.
            guard let allowed = methods.allowed(for: request.uri.path) else { throw error }
            let list = allowed.joined(separator: ", ")
            if request.method == .options {
                return Response(status: .noContent, headers: [.allow: list + ", OPTIONS"])
            }
            let spoken =
                allowed.count == 1
                ? "\(list) is" : allowed.dropLast().joined(separator: ", ") + " and \(allowed[allowed.count - 1]) are"
            throw RequestError(
                .methodNotAllowed, "\(request.method.rawValue) is not allowed here; \(spoken)",
                headers: [.allow: list + ", OPTIONS"])
        }
    }
}
