public import MapCluster

/// Points read from a file: each with an id, a coordinate, and the file's other columns as properties.
public struct PointSet: Sendable {
    /// The names of the property columns, in file order.
    public var propertyNames: [String]
    /// The points, in file order.
    public var records: RecordTable
    /// What was left out of the file and why, such as GeoJSON features that are not Points.
    public var skipped: [PointFileError] = []

    /// Makes a point set.
    public init(propertyNames: [String], records: [PointRecord]) {
        self.init(propertyNames: propertyNames, records: RecordTable(records))
    }

    /// Makes a point set of a table of records.
    public init(propertyNames: [String], records: RecordTable) {
        self.propertyNames = propertyNames
        self.records = records
    }

    /// A property of a record by column name, or `nil` if there is no such column.
    public func property(_ name: String, of record: PointRecord) -> PropertyValue? {
        propertyNames.firstIndex(of: name).map { record.property(at: $0) }
    }

    /// An index of the records, each element its record's position in ``records``: what ``ClusterGeoJSON`` writes
    /// clusters of.
    public func indexByRecord() -> ClusterIndex<Int> {
        ClusterIndex(records.enumerated().map { ($0.offset, $0.element.coordinate) })
    }

    /// A record's properties by name, leaving out those it doesn't have (`null`).
    public func properties(of record: PointRecord) -> [String: PropertyValue] {
        var properties: [String: PropertyValue] = [:]
        for (name, value) in zip(propertyNames, record.properties) where value != .null { properties[name] = value }
        return properties
    }

    /// The points of several sets in one, their property names united; ids must be unique across them all.
    ///
    /// - Parameters:
    ///   - sets: The sets, in order.
    ///   - files: The name of each set's file, for errors.
    /// - Returns: One set with every point, in order.
    /// - Throws: ``PointFileError`` naming the second occurrence of an id.
    public static func merging(_ sets: [PointSet], files: [String]) throws(PointFileError) -> PointSet {
        guard sets.count > 1 else { return sets.first ?? PointSet(propertyNames: [], records: []) }
        var names: [String] = []
        for set in sets { for name in set.propertyNames where !names.contains(name) { names.append(name) } }
        var fileOfID: [String: String] = [:]
        var records: [PointRecord] = []
        for (set, file) in zip(sets, files) {
            let positions = set.propertyNames.map { name in names.firstIndex(of: name) ?? 0 }
            for record in set.records {
                if record.idKind != .generated, let first = fileOfID.updateValue(file, forKey: record.uniqueKey) {
                    throw PointFileError(
                        file: file, field: "id", message: "duplicate id '\(record.id)' (first in \(first))")
                }
                var properties = [PropertyValue](repeating: .null, count: names.count)
                for (position, value) in zip(positions, record.properties) { properties[position] = value }
                records.append(
                    PointRecord(
                        id: record.id, idKind: record.idKind, coordinate: record.coordinate, properties: properties,
                        origin: record.origin))
            }
        }
        return PointSet(propertyNames: names, records: records).namingGeneratedIDs()
    }

    /// The set with ids given to the points that had none (``PointIDKind/generated``): the point's position, behind as
    /// many `#`s as it takes for no id of the files' own to start the same way (none when no point has its own id),
    /// so that none can clash.
    package func namingGeneratedIDs() -> PointSet {
        guard records.contains(where: { $0.idKind == .generated }) else { return self }
        // No id of the files' own: the positions alone can't clash.
        let longestRun = records.lazy.filter { $0.idKind != .generated }.map { $0.id.prefix { $0 == "#" }.count }
            .max()
        let prefix = longestRun.map { String(repeating: "#", count: $0 + 1) } ?? ""
        var named = self
        for position in named.records.indices where named.records[position].idKind == .generated {
            named.records[position].id = prefix + String(position + 1)
        }
        return named
    }
}

/// One point of a ``PointSet``.
public struct PointRecord: Sendable, Hashable {
    /// The point's identity, unique in its set; a number's as JSON writes it (`12`, `1.5`).
    public var id: String
    /// Whether the id was a number in the file (a GeoJSON `"id": 12`), and is written back as one, or was made up
    /// for a point that had none.
    public var idKind: PointIDKind
    /// Where it is.
    public var coordinate: Coordinate
    /// The values of the other columns, in the order of ``PointSet/propertyNames``.
    public var properties: [PropertyValue]
    /// Where in its file it was read, for errors about its values.
    public var origin: PointOrigin

    /// Makes a record.
    public init(
        id: String, idKind: PointIDKind = .text, coordinate: Coordinate, properties: [PropertyValue],
        origin: PointOrigin = PointOrigin()
    ) {
        self.id = id
        self.idKind = idKind
        self.coordinate = coordinate
        self.properties = properties
        self.origin = origin
    }
}

extension PointRecord {
    /// The value of the property column at `position`: `null` past the record's last value (a live server's records
    /// keep the columns there were when they were written, and columns are only ever added).
    public func property(at position: Int) -> PropertyValue {
        position < properties.count ? properties[position] : .null
    }

    /// The id with its kind, for telling ids apart: the number 12 and the text "12" are two ids.
    @_spi(MapClusterServer) public var uniqueKey: String { (idKind == .number ? "n" : "t") + id }
}

/// What a point's id is.
public enum PointIDKind: Sendable, Hashable {
    /// Text from the file.
    case text
    /// A number from the file.
    case number
    /// Made up for a point without one: its position in the set, one-based, behind `#` (`#12`) and as many more `#`s
    /// as it takes to differ from every id of the files' own; the position alone when no point has an id of its own.
    case generated
}

/// Where a point was read: its file, and its line (CSV) or feature (GeoJSON).
public struct PointOrigin: Sendable, Hashable {
    /// The file, as the reader was given it; empty for a point that came from no file.
    public var file: String
    /// The 1-based line its record starts on.
    public var line: Int?
    /// Its 0-based index among the GeoJSON features.
    public var feature: Int?

    /// An origin.
    public init(file: String = "", line: Int? = nil, feature: Int? = nil) {
        self.file = file
        self.line = line
        self.feature = feature
    }

    /// An error about a field of the point.
    public func error(field: String, _ message: String) -> PointFileError {
        PointFileError(file: file, line: line, feature: feature, field: field, message: message)
    }
}

/// Why a file of points could not be read: what is wrong and where (file, line or feature, field).
public struct PointFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as the reader was given it.
    public var file: String
    /// The 1-based line the problem is on (where its record starts), when it is on one.
    public var line: Int?
    /// The 0-based index of the GeoJSON feature the problem is in, when it is in one.
    public var feature: Int?
    /// The column or member the problem is in, when it is in one.
    public var field: String?
    /// What is wrong.
    public var message: String

    /// Makes an error.
    public init(file: String, line: Int? = nil, feature: Int? = nil, field: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.feature = feature
        self.field = field
        self.message = message
    }

    /// Where and what, as in `cities.csv:17 (field lat): 'abc' is not a number` or
    /// `places.geojson features[3] (field geometry.coordinates): latitude 91.0 is outside -90...90`.
    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let feature { place += " features[\(feature)]" }
        if let field { place += " (field \(field))" }
        return "\(place): \(message)"
    }
}
