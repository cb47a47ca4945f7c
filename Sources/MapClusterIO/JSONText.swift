public import MapCluster

/// JSON text built by appending, with strings escaped as RFC 8259 asks.
@_spi(MapClusterServer) public struct JSONText {
    /// The text so far.
    @_spi(MapClusterServer) public var text = ""

    /// Empty text.
    @_spi(MapClusterServer) public init() {}

    /// Appends `fragment` as it is: punctuation, keys already escaped.
    @_spi(MapClusterServer) public mutating func raw(_ fragment: String) { text += fragment }

    /// A GeoJSON position, `[longitude,latitude]`; `null` for none.
    @_spi(MapClusterServer) public mutating func position(_ coordinate: Coordinate?) {
        guard let coordinate else { return raw("null") }
        raw("[")
        number(coordinate.longitude)
        raw(",")
        number(coordinate.latitude)
        raw("]")
    }

    /// A number in its shortest form that reads back the same; `null` for one that isn't finite.
    @_spi(MapClusterServer) public mutating func number(_ value: Double) {
        text += value.isFinite ? value.shortestText : "null"
    }

    /// A JSON string, escaped.
    @_spi(MapClusterServer) public mutating func string(_ value: String) {
        text += "\""
        // Most strings (ids, names, categories) need no escape: appended whole.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            text += value
            text += "\""
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    /// A property value as JSON: a number, string, boolean, null, array or object.
    @_spi(MapClusterServer) public mutating func value(_ value: PropertyValue) {
        switch value {
        case .string(let string): self.string(string)
        case .number(let number): self.number(number)
        case .bool(let bool): raw(bool ? "true" : "false")
        case .null: raw("null")
        case .array(let values):
            raw("[")
            for (offset, element) in values.enumerated() {
                if offset > 0 { raw(",") }
                self.value(element)
            }
            raw("]")
        case .object(let members):
            raw("{")
            for (offset, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if offset > 0 { raw(",") }
                string(member.key)
                raw(":")
                self.value(member.value)
            }
            raw("}")
        }
    }
}
