import Foundation
@_spi(MapClusterServer) import MapCluster
import Testing

@testable @_spi(MapClusterServer) import MapClusterIO

/// The streaming JSON parser against the JSON writer and Foundation's encoder, on random documents.
struct JSONStreamTests {
    static func randomValue(depth: Int, using rng: inout SplitMix64) -> PropertyValue {
        let kinds = depth > 3 ? 4 : 6
        switch Int.random(in: 0..<kinds, using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2:
            let number = [0, -0.5, 1e-7, 123_456_789, -2.5e300, Double.random(in: -1e6...1e6, using: &rng)]
            return .number(number.randomElement(using: &rng) ?? 0)
        case 3:
            let pieces = ["a", "é", "\"", "\\", "/", "\n", "\t", "\u{01}", "日本", "🗺️", " ", "\u{7F}"]
            return .string(
                (0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng) ?? "" }.joined())
        case 4:
            return .array(
                (0..<Int.random(in: 0...4, using: &rng)).map { _ in randomValue(depth: depth + 1, using: &rng) })
        default:
            var members: [String: PropertyValue] = [:]
            for index in 0..<Int.random(in: 0...4, using: &rng) {
                members["k\(index)\(["", "\"", "é"].randomElement(using: &rng) ?? "")"] = randomValue(
                    depth: depth + 1, using: &rng)
            }
            return .object(members)
        }
    }

    static func parse(_ text: String) throws -> PropertyValue {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer in
            var stream = JSONStream(bytes: buffer)
            let value = try stream.value()
            let rest = buffer[stream.position...].drop { [0x20, 0x0A, 0x0D, 0x09].contains($0) }
            guard rest.isEmpty else { throw stream.failure("text after the value") }
            return value
        }
    }

    @Test func parsesWhatTheWritersWrite() throws {
        var rng = SplitMix64(seed: 45)
        for _ in 0..<500 {
            let value = Self.randomValue(depth: 0, using: &rng)
            var ours = JSONText()
            ours.value(value)
            #expect(try Self.parse(ours.text) == value, "\(ours.text)")
            let foundation = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
            #expect(try Self.parse(foundation) == value, "\(foundation)")
        }
    }

    @Test func readsEscapesAndRefusesWhatJSONForbids() throws {
        #expect(try Self.parse(#""\u00e9\ud83d\uddfa\n\/""#) == .string("é🗺\n/"))
        #expect(try Self.parse(" [ 1 , -0 , 2.5e-3 ] ") == .array([1, 0, 0.0025]))
        for bad in [
            "01", "1.", "-", "+1", ".5", "1e", "\"\\x\"", "\"\\ud800\"", "[1,]", "{\"a\" 1}", "tru", "nul",
            "\"\u{01}\"",
        ] {
            #expect(throws: JSONStream.Failure.self, "\(bad)") { try Self.parse(bad) }
        }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONStream.Failure.self) { try Self.parse(deep) }
    }
}
