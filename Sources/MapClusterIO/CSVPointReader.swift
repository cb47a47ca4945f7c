public import Foundation
import MapCluster

/// Reads points from CSV (RFC 4180: a header row, comma-separated fields, double quotes around fields
/// that hold commas, quotes or line breaks, a quote inside written twice).
///
///     let points = try CSVPointReader().read(contentsOf: URL(fileURLWithPath: "cities.csv"))
///
/// The id, latitude and longitude columns are found by their usual names (case-insensitively) unless named: `id`;
/// `lat`, `latitude`, `y`; `lon`, `lng`, `long`, `longitude`, `x`. Without an id column a point's id is its record
/// number (1 for the first point). Every other column is kept as a property.
///
/// Reading is all or nothing: the first bad record stops it with a ``PointFileError`` that names the file, the line and
/// the field, and nothing is returned.
public struct CSVPointReader: Sendable {
    /// The id column's name; `nil` finds it by its usual name, if there is one.
    public var idColumn: String?
    /// The latitude column's name; `nil` finds it by its usual names.
    public var latitudeColumn: String?
    /// The longitude column's name; `nil` finds it by its usual names.
    public var longitudeColumn: String?
    /// Told, now and then while reading, the fraction of the input read so far (0 to 1).
    public var progress: (@Sendable (Double) -> Void)?

    static let idNames = ["id"]
    static let latitudeNames = ["lat", "latitude", "y"]
    static let longitudeNames = ["lon", "lng", "long", "longitude", "x"]

    /// A reader that finds or is told the id, latitude and longitude columns.
    public init(idColumn: String? = nil, latitudeColumn: String? = nil, longitudeColumn: String? = nil) {
        self.idColumn = idColumn
        self.latitudeColumn = latitudeColumn
        self.longitudeColumn = longitudeColumn
    }

    /// Reads a CSV file.
    public func read(contentsOf url: URL) throws(PointFileError) -> PointSet {
        try read(PointFileBytes.contents(of: url), file: PointFileBytes.name(of: url))
    }

    /// Reads CSV text; `file` names it in errors.
    public func read(_ text: String, file: String) throws(PointFileError) -> PointSet {
        try read(Data(text.utf8), file: file)
    }

    /// Reads CSV bytes (UTF-8, with or without a byte order mark); `file` names them in errors.
    public func read(_ data: Data, file: String) throws(PointFileError) -> PointSet {
        try PointFileBytes.parse(data) { bytes throws(PointFileError) in try read(bytes, file: file) }
    }

    private func read(_ bytes: UnsafeBufferPointer<UInt8>, file: String) throws(PointFileError) -> PointSet {
        var parser = CSVParser(bytes: bytes, file: file)
        guard let header = try parser.nextRecord() else {
            throw PointFileError(file: file, line: 1, message: "is empty: a header row is needed")
        }
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces) }
        let latitude = try column(latitudeColumn, defaults: Self.latitudeNames, role: "latitude", in: names, file: file)
        let longitude = try column(
            longitudeColumn, defaults: Self.longitudeNames, role: "longitude", in: names, file: file)
        let id =
            idColumn == nil
            ? names.firstIndex { Self.idNames.contains($0.lowercased()) }
            : try column(idColumn, defaults: [], role: "id", in: names, file: file)
        guard latitude != longitude else {
            throw PointFileError(
                file: file, line: header.line, message: "latitude and longitude are both column '\(names[latitude])'")
        }
        let propertyColumns = names.indices.filter { $0 != latitude && $0 != longitude && $0 != id }

        // Sized once from the line count, instead of growing (and rehashing every id) a dozen times.
        let lines = bytes.reduce(into: 0) { count, byte in if byte == 0x0A { count += 1 } }
        var records: [PointRecord] = []
        records.reserveCapacity(lines)
        var lineOfID: [String: Int] = [:]
        lineOfID.reserveCapacity(lines)
        while let record = try parser.nextRecord() {
            if let progress, records.count % 65_536 == 0 { progress(parser.fractionRead) }
            if record.fields.count == 1 && record.fields[0].isEmpty { continue }  // a blank line
            guard record.fields.count == names.count else {
                throw PointFileError(
                    file: file, line: record.line,
                    message: "has \(record.fields.count) fields where the header has \(names.count)")
            }
            func number(_ column: Int) throws(PointFileError) -> Double {
                let text = record.fields[column].trimmingSpacesAndTabs
                guard let value = Double(text), !text.isEmpty else {
                    throw PointFileError(
                        file: file, line: record.line, field: names[column], message: "'\(text)' is not a number")
                }
                return value
            }
            let lat = try number(latitude)
            let lon = try number(longitude)
            let coordinate: Coordinate
            do {
                coordinate = try Coordinate(latitude: lat, longitude: lon)
            } catch {
                let field = if case .invalidLatitude = error { names[latitude] } else { names[longitude] }
                throw PointFileError(file: file, line: record.line, field: field, message: error.description)
            }
            let identity = id.map { record.fields[$0] } ?? ""
            if let id, identity.isEmpty {
                throw PointFileError(file: file, line: record.line, field: names[id], message: "the id is empty")
            }
            if id != nil, let first = lineOfID.updateValue(record.line, forKey: identity) {
                throw PointFileError(
                    file: file, line: record.line, field: id.map { names[$0] },
                    message: "duplicate id '\(identity)' (first on line \(first))")
            }
            records.append(
                PointRecord(
                    id: identity, idKind: id == nil ? .generated : .text, coordinate: coordinate,
                    properties: propertyColumns.map { .string(record.fields[$0]) },
                    origin: PointOrigin(file: file, line: record.line))
            )
        }
        Self.typeNumericColumns(of: &records)
        progress?(1)
        return PointSet(propertyNames: propertyColumns.map { names[$0] }, records: records).namingGeneratedIDs()
    }

    /// Makes every column whose present (non-empty) values all read as finite numbers a column of numbers.
    ///
    /// Its empty fields become `null`, so that a population reaches JSON as `18146`, not `"18146"`. Other columns stay
    /// text.
    ///
    /// A column of codes with leading zeros (postal codes) reads as numbers too, and loses the zeros: keep such values
    /// as strings in a GeoJSON file when the zeros matter.
    static func typeNumericColumns(of records: inout [PointRecord]) {
        guard let columns = records.first?.properties.count else { return }
        for column in 0..<columns {
            var numbers = [Double?](repeating: nil, count: records.count)
            var isNumeric = false
            for (i, record) in records.enumerated() {
                guard case .string(let text) = record.properties[column] else { continue }
                let trimmed = text.trimmingSpacesAndTabs
                if trimmed.isEmpty { continue }
                guard let number = Double(trimmed), number.isFinite else {
                    isNumeric = false
                    break
                }
                numbers[i] = number
                isNumeric = true
            }
            guard isNumeric else { continue }
            for i in records.indices { records[i].properties[column] = numbers[i].map(PropertyValue.number) ?? .null }
        }
    }

    private func column(_ given: String?, defaults: [String], role: String, in names: [String], file: String)
        throws(PointFileError) -> Int
    {
        if let given {
            guard let index = names.firstIndex(of: given) else {
                throw PointFileError(
                    file: file, line: 1,
                    message: "has no \(role) column '\(given)' (columns: \(names.joined(separator: ", ")))")
            }
            return index
        }
        guard let index = names.firstIndex(where: { defaults.contains($0.lowercased()) }) else {
            throw PointFileError(
                file: file, line: 1,
                message:
                    "has no \(role) column (looked for \(defaults.joined(separator: ", ")); columns: \(names.joined(separator: ", ")))"
            )
        }
        return index
    }
}

/// Splits RFC 4180 text into records, tracking the line each starts on.
struct CSVParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let file: String
    var position = 0
    var line = 1

    init(bytes: UnsafeBufferPointer<UInt8>, file: String) {
        self.bytes = bytes
        self.file = file
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// How much of the input is behind the parser, from 0 to 1.
    var fractionRead: Double { bytes.isEmpty ? 1 : Double(position) / Double(bytes.count) }

    struct Record {
        var line: Int
        var fields: [String]
    }

    private static let quote = UInt8(ascii: "\"")
    private static let comma = UInt8(ascii: ",")
    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    /// The next record, or `nil` at the end of the text.
    mutating func nextRecord() throws(PointFileError) -> Record? {
        guard position < bytes.count else { return nil }
        let start = line
        var fields: [String] = []
        var field: [UInt8] = []
        while true {
            if position < bytes.count && bytes[position] == Self.quote && field.isEmpty {
                position += 1
                var closed = false
                while position < bytes.count {
                    let byte = bytes[position]
                    position += 1
                    if byte == Self.quote {
                        if position < bytes.count && bytes[position] == Self.quote {
                            field.append(Self.quote)
                            position += 1
                        } else {
                            closed = true
                            break
                        }
                    } else {
                        if byte == Self.newline { line += 1 }
                        field.append(byte)
                    }
                }
                guard closed else {
                    throw PointFileError(file: file, line: start, message: "has a quoted field that is never closed")
                }
                if position < bytes.count, ![Self.comma, Self.newline, Self.carriageReturn].contains(bytes[position]) {
                    throw PointFileError(
                        file: file, line: line,
                        message: "has text after a closing quote (a quote inside a field is written twice)")
                }
            }
            guard position < bytes.count else {
                fields.append(String(decoding: field, as: UTF8.self))
                return Record(line: start, fields: fields)
            }
            let byte = bytes[position]
            position += 1
            switch byte {
            case Self.comma:
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
            case Self.newline, Self.carriageReturn:
                if byte == Self.carriageReturn && position < bytes.count && bytes[position] == Self.newline {
                    position += 1
                }
                line += 1
                fields.append(String(decoding: field, as: UTF8.self))
                return Record(line: start, fields: fields)
            default:
                field.append(byte)
            }
        }
    }
}

extension String {
    /// The text without the spaces and tabs around it; on the UTF-8 view, since Foundation's trimming bridges
    /// through NSString and cost a third of reading a large file.
    var trimmingSpacesAndTabs: Substring {
        let utf8 = self.utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        while start < end && isBlank(utf8[start]) { start = utf8.index(after: start) }
        while end > start && isBlank(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        return self[start..<end]
    }
}
