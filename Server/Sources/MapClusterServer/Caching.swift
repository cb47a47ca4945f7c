import Foundation
import HTTPTypes
package import Hummingbird

/// How the answers made from the data may be cached by browsers, proxies and CDNs.
///
/// Each answer of `/api/clusters…`, `/tiles/…` and `/tiles.json` carries an `ETag`, a hash of what it says
/// (`CacheableAnswer`), and the policy's `Cache-Control`. A request whose `If-None-Match` names the current tag is
/// answered 304 without the body: a tile that an edit left as it was revalidates to a 304.
package struct CachePolicy: Sendable, Equatable {
    /// The `Cache-Control` value answers carry.
    package var cacheControl: String

    package init(cacheControl: String) { self.cacheControl = cacheControl }

    /// The default for points that change while the server runs: every use revalidates, and gets a 304 while they
    /// haven't changed.
    package static let live = CachePolicy(cacheControl: "no-cache")
    /// The default for points or tiles that don't change while the server runs: kept for an hour.
    package static let fixed = CachePolicy(cacheControl: "public, max-age=3600")
}

/// A 64-bit FNV-1a hash: the same for the same bytes in every process, as an `ETag` shared by several servers must
/// be (Swift's `Hasher` is seeded per process).
package struct StableHash {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func add(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value ^= UInt64(byte)
            value = value &* 0x100_0000_01b3
        }
    }

    package mutating func add(_ text: String) {
        add(text.utf8)
        add(CollectionOfOne(0))
    }

    /// The hash in 16 hexadecimal digits.
    package var text: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The hash of one text.
    package static func of(_ text: String) -> String {
        var hash = StableHash()
        hash.add(text)
        return hash.text
    }
}

/// An answer made from the data, whose `ETag` is a hash of what it says: the same answer has the same tag on every
/// server and in every process, and an answer that didn't change keeps its tag's hash across edits.
protocol CacheableAnswer: ResponseGenerator {
    /// The hash of what the answer says.
    var contentHash: String { get }
    /// The version of the data it was made from, which its `ETag` carries after its hash (`W/"hash.v12"`); `nil` for
    /// none.
    var version: Int64? { get }
}

extension CacheableAnswer {
    var version: Int64? { nil }
}

extension CacheableAnswer where Self: Encodable {
    /// The hash of the answer as JSON with sorted keys (the body's keys may come in another order, which says the same).
    var contentHash: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var hash = StableHash()
        hash.add((try? encoder.encode(self)) ?? Data())
        return hash.text
    }
}

extension Routes {
    /// A GET route whose answers are made from the data: each carries its content's `ETag` and `policy`'s
    /// `Cache-Control`, and a request whose `If-None-Match` names the tag is answered 304 without the body.
    func cachedGet(
        _ path: String, policy: CachePolicy,
        _ handler: @escaping @Sendable (Request, ServerRequestContext) async throws -> some CacheableAnswer
    ) {
        route(
            path,
            [
                .get: { request, context in
                    let answer = try await handler(request, context)
                    let entityTag = "W/\"\(answer.contentHash)\(answer.version.map { ".v\($0)" } ?? "")\""
                    let headers: HTTPFields = [.eTag: entityTag, .cacheControl: policy.cacheControl]
                    if Self.isNotModified(request, entityTag: entityTag) {
                        return Response(status: .notModified, headers: headers + [.vary: "Accept-Encoding"])
                    }
                    var response = try answer.response(from: request, context: context)
                    response.headers[.eTag] = entityTag
                    response.headers[.cacheControl] = policy.cacheControl
                    return response
                }
            ])
    }

    /// Whether a request's `If-None-Match` names `entityTag` (or `*`), weakly compared as RFC 9110 says for it.
    ///
    /// A tag's version (`.v12`) doesn't count: an answer that says the same is not modified, whichever version made
    /// it, and the 304 carries the current version's tag.
    static func isNotModified(_ request: Request, entityTag: String) -> Bool {
        let opaque = { (tag: Substring) in
            var trimmed = Substring(tag.trimmingCharacters(in: .whitespaces))
            if trimmed.hasPrefix("W/") { trimmed = trimmed.dropFirst(2) }
            if let version = trimmed.range(of: ".v") { trimmed = trimmed[..<version.lowerBound] + "\"" }
            return String(trimmed)
        }
        let wanted = opaque(Substring(entityTag))
        return request.headers[values: .ifNoneMatch].flatMap { $0.split(separator: ",") }.contains {
            let asked = opaque($0)
            return asked == "*" || asked == wanted
        }
    }
}

/// The URL clients reach a server at, which `/tiles.json` names the tiles under: a fixed one (`--public-url`, behind a
/// proxy or CDN), the one a trusted proxy's forwarded headers give, or the one the request came to.
package struct PublicURL: Sendable {
    /// The scheme, host and path prefix, without a `/` at the end; `nil` to take it from each request.
    package var fixed: String?
    /// Whether `X-Forwarded-Proto`, `X-Forwarded-Host` and `X-Forwarded-Prefix` are believed.
    package var trustsForwardedHeaders: Bool

    /// A public URL; `fixed` may end in `/`.
    package init(fixed: String? = nil, trustsForwardedHeaders: Bool = false) {
        self.fixed = fixed.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.trustsForwardedHeaders = trustsForwardedHeaders
    }

    /// The base URL of a request's answer: `https://maps.example.org/base`.
    package func base(of request: Request) -> String {
        if let fixed { return fixed }
        let host = request.head.authority ?? "localhost"
        guard trustsForwardedHeaders else { return "http://\(host)" }
        let forwarded = { (name: String) in
            HTTPField.Name(name).flatMap { request.headers[$0] }.flatMap {
                // A chain of proxies lists theirs in order; the first is the client's.
                $0.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) }
            }
        }
        let scheme = forwarded("X-Forwarded-Proto").flatMap { ["http", "https"].contains($0) ? $0 : nil } ?? "http"
        let prefix = forwarded("X-Forwarded-Prefix").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? ""
        let safePrefix = prefix.isEmpty || prefix.hasPrefix("/") ? prefix : "/" + prefix
        return "\(scheme)://\(forwarded("X-Forwarded-Host") ?? host)\(safePrefix)"
    }
}
