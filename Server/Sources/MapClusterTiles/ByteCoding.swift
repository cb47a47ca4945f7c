import Foundation

/// Little-endian integers and varints, as PMTiles writes and reads them.
extension Data {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }
}

/// Reads little-endian integers and varints from bytes, front to back.
struct ByteReader {
    private let bytes: Data
    private var position: Int

    init(_ bytes: Data) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    mutating func skip(_ count: Int) { position += count }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.endIndex ? bytes[position] : 0
    }

    mutating func uint32() -> UInt32 {
        (0..<4).reduce(0) { value, shift in value | UInt32(byte()) << (8 * shift) }
    }

    mutating func uint64() -> UInt64 {
        (0..<8).reduce(0) { value, shift in value | UInt64(byte()) << (8 * shift) }
    }

    /// The next varint, or `nil` if the bytes end inside it or it is longer than 64 bits.
    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            guard position < bytes.endIndex else { return nil }
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
        }
        return nil
    }
}

extension Comparable {
    func clamped(to range: ClosedRange<Self>) -> Self {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
