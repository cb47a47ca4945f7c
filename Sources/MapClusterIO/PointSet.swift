public import MapCluster

/// Points read from a file: each with an id, a coordinate, and the file's other columns as properties.
public struct PointSet: Sendable {
    /// The names of the property columns, in file order.
    public var propertyNames: [String]
    /// The points, in file order.
    public var records: [PointRecord]

    /// Makes a point set.
    public init(propertyNames: [String], records: [PointRecord]) {
        self.propertyNames = propertyNames
        self.records = records
    }

    /// A property of a record by column name, or `nil` if there is no such column.
    public func property(_ name: String, of record: PointRecord) -> String? {
        propertyNames.firstIndex(of: name).map { record.properties[$0] }
    }
}

/// One point of a ``PointSet``.
public struct PointRecord: Sendable, Hashable {
    /// The point's identity, unique in its file.
    public var id: String
    /// Where it is.
    public var coordinate: Coordinate
    /// The values of the other columns, in the order of ``PointSet/propertyNames``.
    public var properties: [String]

    /// Makes a record.
    public init(id: String, coordinate: Coordinate, properties: [String]) {
        self.id = id
        self.coordinate = coordinate
        self.properties = properties
    }
}

/// Why a file of points could not be read: what is wrong and where (file, line, field).
public struct PointFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as the reader was given it.
    public var file: String
    /// The 1-based line the problem is on (where its record starts), when it is on one.
    public var line: Int?
    /// The column the problem is in, when it is in one.
    public var field: String?
    /// What is wrong.
    public var message: String

    /// Makes an error.
    public init(file: String, line: Int? = nil, field: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.field = field
        self.message = message
    }

    /// Where and what, as in `cities.csv:17 (field lat): 'abc' is not a number`.
    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let field { place += " (field \(field))" }
        return "\(place): \(message)"
    }
}
