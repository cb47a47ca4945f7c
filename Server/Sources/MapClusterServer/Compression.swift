import CompressNIO
import HTTPTypes
import Hummingbird
import NIOCore

/// gzip for answers, when the client says it takes it (`Accept-Encoding`).
enum Compression {
    /// Bodies smaller than this go as they are: compressing them saves less than its own cost.
    static let minimumSize = 1_024

    /// Whether a request accepts gzip: `gzip` (or `*`) in `Accept-Encoding`, with a quality above zero.
    static func accepts(_ request: Request) -> Bool {
        guard let header = request.headers[.acceptEncoding] else { return false }
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
            guard let coding = parts.first, coding == "gzip" || coding == "*" else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
            return (quality ?? 1) > 0
        }
        return false
    }

    /// `bytes` in gzip; `nil` if it is smaller than `minimumSize`, too small to be worth it.
    static func gzip(_ bytes: ByteBuffer, minimumSize: Int = minimumSize) -> ByteBuffer? {
        guard bytes.readableBytes >= minimumSize else { return nil }
        var input = bytes
        return try? input.compress(with: .gzip())
    }

    /// A 200 answer of `bytes`, gzipped when the request takes it.
    ///
    /// `gzipped` is the compressed body if it was made before. `Vary: Accept-Encoding` tells caches that the body
    /// depends on that header.
    static func response(
        _ bytes: ByteBuffer, gzipped: ByteBuffer? = nil, minimumSize: Int = minimumSize, headers: HTTPFields,
        for request: Request
    ) -> Response {
        var headers = headers
        headers[.vary] = "Accept-Encoding"
        guard accepts(request), let compressed = gzipped ?? gzip(bytes, minimumSize: minimumSize) else {
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: bytes))
        }
        headers[.contentEncoding] = "gzip"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: compressed))
    }
}
