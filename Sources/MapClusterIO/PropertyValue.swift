/// A property of a point, as JSON has it: a CSV field is a string, a GeoJSON property keeps its type.
public enum PropertyValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Text.
    case string(String)
    /// A number.
    case number(Double)
    /// True or false.
    case bool(Bool)
    /// JSON's `null`, or a property a point doesn't have.
    case null
    /// A JSON array.
    case array([PropertyValue])
    /// A JSON object.
    case object([String: PropertyValue])

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([PropertyValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: PropertyValue].self))
        }
    }

    /// Encodes the value as the JSON it came from.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as text: a string as it is, a whole number without a fraction, anything else as JSON would write it.
    public var description: String {
        switch self {
        case .string(let value): value
        case .number(let value): value.shortestText
        case .bool(let value): String(value)
        case .null: "null"
        case .array(let value): "[" + value.map(\.description).joined(separator: ",") + "]"
        case .object(let value):
            "{" + value.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",") + "}"
        }
    }

    /// The string, if it is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}

extension PropertyValue: ExpressibleByStringLiteral, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral
{
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A number value.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A number value.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension PropertyValue {
    /// The value of a JSON text, or `nil` if the text is not one JSON value.
    @_spi(MapClusterServer) public init?(jsonText text: String) {
        var text = text
        let value = text.withUTF8 { bytes -> PropertyValue? in
            var stream = JSONStream(bytes: bytes)
            guard let value = try? stream.value(), (try? stream.end()) != nil else { return nil }
            return value
        }
        guard let value else { return nil }
        self = value
    }

    /// The value as JSON text (object members sorted by name).
    @_spi(MapClusterServer) public var jsonText: String {
        var json = JSONText()
        json.value(self)
        return json.text
    }
}
