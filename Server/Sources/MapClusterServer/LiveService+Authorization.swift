import HTTPTypes
import Hummingbird

extension LiveService {
    /// Checks a request's bearer token.
    func authorize(_ request: Request) throws(RequestError) {
        guard let token else {
            throw RequestError(
                .forbidden, "this server follows its store without taking edits: start it with --writable to edit")
        }
        guard let header = request.headers[.authorization] else {
            throw RequestError(.unauthorized, "writes need the server's token: Authorization: Bearer TOKEN")
        }
        let prefix = "Bearer "
        guard header.hasPrefix(prefix), Self.equal(String(header.dropFirst(prefix.count)), token) else {
            throw RequestError(.unauthorized, "the token is not this server's")
        }
    }

    /// Compares in time that doesn't depend on where the texts differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
