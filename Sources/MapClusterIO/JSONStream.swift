/// A JSON parser over bytes (RFC 8259) that can walk a document's top-level object and hand over the elements of one
/// array member one at a time: a GeoJSON file's features are parsed each on its own, so a large file never exists in
/// memory as one tree.
struct JSONStream {
    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var position = 0
    /// How deep values may nest: beyond it a document is refused rather than recursed into.
    static let maximumDepth = 512

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// What went wrong, and the line it went wrong on.
    struct Failure: Error {
        var line: Int
        var message: String
    }

    /// How much of the input is behind the parser, from 0 to 1.
    var fractionRead: Double { bytes.isEmpty ? 1 : Double(position) / Double(bytes.count) }

    // MARK: - Walking a document

    /// Walks the top-level object: `member` gets the name of each member and decides how to take its value, by
    /// calling ``value()``, ``elements(_:)`` or ``skip()`` on the stream.
    mutating func members(_ member: (inout JSONStream, String) throws(Failure) -> Void) throws(Failure) {
        skipWhitespace()
        try eachMember(notAnObject: "the document is not a JSON object", member)
        skipWhitespace()
        guard position == bytes.count else { throw failure("unexpected text after the document") }
    }

    /// Whether the next value is an array.
    var isAtArray: Bool { peek() == UInt8(ascii: "[") }

    /// Parses an array value one element at a time, handing each to `element` with its index; `progress` hears the
    /// fraction of the input read every 65,536 elements.
    mutating func elements(
        progress: ((Double) -> Void)? = nil, _ element: (Int, PropertyValue) throws(Failure) -> Void
    ) throws(Failure) {
        guard isAtArray else { throw failure("expected an array") }
        try eachElement { stream, index throws(Failure) in
            try element(index, try stream.value(depth: 1))
            if let progress, (index + 1) % 65_536 == 0 { progress(stream.fractionRead) }
        }
    }

    /// Walks an object (the stream is at its `{`): `member` takes each member's value, given its name.
    private mutating func eachMember(
        notAnObject: String = "expected an object", _ member: (inout JSONStream, String) throws(Failure) -> Void
    ) throws(Failure) {
        try expect(UInt8(ascii: "{"), notAnObject)
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            let name = try string()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "expected ':' after a member name")
            skipWhitespace()
            try member(&self, name)
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                position += 1
                continue
            }
            try expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
            return
        }
    }

    /// Walks an array (the stream is at its `[`): `element` takes each element's value, given its index.
    private mutating func eachElement(_ element: (inout JSONStream, Int) throws(Failure) -> Void) throws(Failure) {
        try expect(UInt8(ascii: "["), "expected an array")
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return
        }
        var index = 0
        while true {
            skipWhitespace()
            try element(&self, index)
            index += 1
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                position += 1
                continue
            }
            try expect(UInt8(ascii: "]"), "expected ',' or ']' in an array")
            return
        }
    }

    /// Parses one value.
    mutating func value() throws(Failure) -> PropertyValue {
        try value(depth: 0)
    }

    /// Checks that nothing but whitespace follows.
    mutating func end() throws(Failure) {
        skipWhitespace()
        guard position == bytes.count else { throw failure("unexpected text after the JSON value") }
    }

    /// Passes over one value.
    mutating func skip() throws(Failure) {
        _ = try value(depth: 0)
    }

    // MARK: - Values

    private mutating func value(depth: Int) throws(Failure) -> PropertyValue {
        guard depth < Self.maximumDepth else { throw failure("values nest deeper than \(Self.maximumDepth) levels") }
        skipWhitespace()
        guard let byte = peek() else { throw failure("the document ends where a value was expected") }
        switch byte {
        case UInt8(ascii: "{"):
            var members: [String: PropertyValue] = [:]
            try eachMember { stream, name throws(Failure) in members[name] = try stream.value(depth: depth + 1) }
            return .object(members)
        case UInt8(ascii: "["):
            var elements: [PropertyValue] = []
            try eachElement { stream, _ throws(Failure) in elements.append(try stream.value(depth: depth + 1)) }
            return .array(elements)
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return .number(try number())
        }
    }

    private mutating func number() throws(Failure) -> Double {
        let start = position
        if peek() == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), isDigit(first) else { throw failure("expected a value") }
        // No leading zeros: 0 alone, or 1-9 followed by digits.
        position += 1
        if first != UInt8(ascii: "0") { while let byte = peek(), isDigit(byte) { position += 1 } }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard let byte = peek(), isDigit(byte) else { throw failure("expected a digit after '.'") }
            while let byte = peek(), isDigit(byte) { position += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard let byte = peek(), isDigit(byte) else { throw failure("expected a digit in an exponent") }
            while let byte = peek(), isDigit(byte) { position += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text) else { throw failure("'\(text)' is not a number") }
        return value
    }

    private mutating func string() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""), "expected a string")
        var start = position
        var text = ""
        while true {
            guard let byte = peek() else { throw failure("a string is never closed") }
            switch byte {
            case UInt8(ascii: "\""):
                text += String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return text
            case UInt8(ascii: "\\"):
                text += String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                text.unicodeScalars.append(try escape())
                start = position
            case 0..<0x20:
                throw failure("a control character inside a string")
            default:
                position += 1
            }
        }
    }

    private mutating func escape() throws(Failure) -> Unicode.Scalar {
        guard let byte = peek() else { throw failure("a string is never closed") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try hex4()
            if (0xD800..<0xDC00).contains(high) {
                // A surrogate pair: the low half must follow.
                guard peek() == UInt8(ascii: "\\") else { throw failure("a lone surrogate in a \\u escape") }
                position += 1
                guard peek() == UInt8(ascii: "u") else { throw failure("a lone surrogate in a \\u escape") }
                position += 1
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low),
                    let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                else { throw failure("a lone surrogate in a \\u escape") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(high) else { throw failure("a lone surrogate in a \\u escape") }
            return scalar
        default:
            throw failure("'\\\(Character(Unicode.Scalar(byte)))' is not an escape")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek(), let digit = Self.hexValue(byte) else {
                throw failure("a \\u escape needs 4 hex digits")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let length = word.utf8CodeUnitCount
        guard position + length <= bytes.count,
            word.withUTF8Buffer({ expected in
                (0..<length).allSatisfy { bytes[position + $0] == expected[$0] }
            })
        else { throw failure("expected a value") }
        position += length
    }

    // MARK: - Bytes

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws(Failure) {
        guard peek() == byte else { throw failure(message) }
        position += 1
    }

    /// A failure at the current position, with its line.
    func failure(_ message: String) -> Failure {
        var line = 1
        for index in 0..<min(position, bytes.count) where bytes[index] == 0x0A { line += 1 }
        return Failure(line: line, message: message)
    }
}
