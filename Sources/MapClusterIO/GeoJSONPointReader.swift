public import Foundation
import MapCluster

/// Reads points from a GeoJSON FeatureCollection (RFC 7946) of Point features.
///
///     let points = try GeoJSONPointReader().read(contentsOf: URL(fileURLWithPath: "places.geojson"))
///
/// A feature's id is its `id` member (a string or a number), else its `id` property, else its index plus one. Its
/// properties are kept with their JSON types. Features whose geometry is not a Point are not clustered: they are
/// listed in ``PointSet/skipped``, so that a caller can report them.
///
/// Reading is all or nothing: the first bad feature stops it with a ``PointFileError`` that names the file, the feature
/// (`features[3]`) and the member, and nothing is returned.
public struct GeoJSONPointReader: Sendable {
    /// Told, now and then while reading, the fraction of the input read so far (0 to 1).
    public var progress: (@Sendable (Double) -> Void)?

    /// Makes a reader.
    public init() {}

    /// Reads a GeoJSON file.
    public func read(contentsOf url: URL) throws(PointFileError) -> PointSet {
        try read(PointFileBytes.contents(of: url), file: PointFileBytes.name(of: url))
    }

    /// Reads GeoJSON bytes; `file` names them in errors.
    ///
    /// The features are parsed one at a time, so the document never exists in memory as a whole tree.
    public func read(_ data: Data, file: String) throws(PointFileError) -> PointSet {
        try PointFileBytes.parse(data) { bytes throws(PointFileError) in try read(bytes, file: file) }
    }

    /// Reads the points of one edit sent to a live server: a GeoJSON Feature or a FeatureCollection, every feature a
    /// Point with an id (its `id` member, or an `id` property); `source` names the bytes in errors.
    ///
    /// All or nothing, as a file is read, and stricter: a feature that is not a Point, or has no id, is an error
    /// naming it (`features[3]`), not a point skipped or numbered.
    public func readEdit(_ data: Data, source: String) throws(PointFileError) -> PointSet {
        try PointFileBytes.parse(data) { bytes throws(PointFileError) in
            var stream = JSONStream(bytes: bytes)
            let document: PropertyValue
            do throws(JSONStream.Failure) {
                document = try stream.value()
                try stream.end()
            } catch {
                throw PointFileError(file: source, line: error.line, message: "is not valid JSON (\(error.message))")
            }
            var collector = FeatureCollector(file: source)
            guard case .object(let members) = document else {
                throw PointFileError(file: source, message: "is not a GeoJSON Feature or FeatureCollection")
            }
            switch members["type"] {
            case .string("Feature"):
                try collector.add(document, index: 0)
            case .string("FeatureCollection"):
                guard case .array(let features) = members["features"] else {
                    throw PointFileError(file: source, field: "features", message: "is missing or not an array")
                }
                for (index, feature) in features.enumerated() { try collector.add(feature, index: index) }
            default:
                throw PointFileError(
                    file: source, field: "type", message: "is not \"Feature\" or \"FeatureCollection\"")
            }
            if let skipped = collector.skipped.first {
                throw PointFileError(
                    file: skipped.file, feature: skipped.feature, field: skipped.field,
                    message: skipped.message.replacingOccurrences(of: ": not clustered", with: ": a Point is needed"))
            }
            let points = collector.pointSet()
            if let unnamed = points.records.first(where: { $0.idKind == .generated }) {
                throw unnamed.origin.error(field: "id", "is missing: every point sent needs an id")
            }
            return points
        }
    }

    private func read(_ bytes: UnsafeBufferPointer<UInt8>, file: String) throws(PointFileError) -> PointSet {
        var collector = FeatureCollector(file: file)
        var type: PropertyValue?
        var featuresAreAnArray: Bool?
        var stream = JSONStream(bytes: bytes)
        do {
            try stream.members { stream, name throws(JSONStream.Failure) in
                switch name {
                case "type":
                    type = try stream.value()
                case "features":
                    featuresAreAnArray = stream.isAtArray
                    if stream.isAtArray {
                        try stream.elements(progress: progress) { index, feature throws(JSONStream.Failure) in
                            do {
                                try collector.add(feature, index: index)
                            } catch {
                                throw JSONStream.Failure(line: 0, message: "")  // carried in `collector.failure`
                            }
                        }
                    } else {
                        try stream.skip()
                    }
                default:
                    try stream.skip()
                }
            }
        } catch {
            if let failure = collector.failure { throw failure }
            throw PointFileError(file: file, line: error.line, message: "is not valid JSON (\(error.message))")
        }
        guard type == .string("FeatureCollection") else {
            throw PointFileError(file: file, field: "type", message: "is not a GeoJSON FeatureCollection")
        }
        guard featuresAreAnArray == true else {
            throw PointFileError(file: file, field: "features", message: "is missing or not an array")
        }
        progress?(1)
        return collector.pointSet()
    }

}

/// The points of a FeatureCollection, gathered feature by feature.
private struct FeatureCollector {
    let file: String
    var names: [String] = []
    var positionOfName: [String: Int] = [:]
    var records: [PointRecord] = []
    var featureOfID: [String: Int] = [:]
    var skipped: [PointFileError] = []
    /// The error that stopped the reading, if a feature did.
    var failure: PointFileError?

    init(file: String) {
        self.file = file
    }

    mutating func add(_ feature: PropertyValue, index: Int) throws(PointFileError) {
        do {
            try take(feature, index: index)
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func take(_ feature: PropertyValue, index: Int) throws(PointFileError) {
        func failure(_ field: String?, _ message: String) -> PointFileError {
            PointFileError(file: file, feature: index, field: field, message: message)
        }
        guard case .object(let members) = feature, members["type"] == .string("Feature") else {
            throw failure("type", "is not a Feature")
        }
        let geometry: [String: PropertyValue]
        switch members["geometry"] {
        case .object(let object): geometry = object
        case .null:
            // A feature without a place (GeoJSON allows it): like a non-point, it is reported and not clustered.
            skipped.append(failure("geometry", "is null: not clustered"))
            return
        default: throw failure("geometry", "is missing: a Point is needed")
        }
        guard case .string(let type) = geometry["type"] else {
            throw failure("geometry.type", "is missing")
        }
        guard type == "Point" else {
            skipped.append(failure("geometry.type", "is a \(type), not a Point: not clustered"))
            return
        }
        guard case .array(let position) = geometry["coordinates"], position.count >= 2,
            case .number(let longitude) = position[0], case .number(let latitude) = position[1]
        else {
            throw failure("geometry.coordinates", "is not a position [longitude, latitude]")
        }
        let coordinate: Coordinate
        do {
            coordinate = try Coordinate(latitude: latitude, longitude: longitude)
        } catch {
            throw failure("geometry.coordinates", error.description)
        }
        var properties: [String: PropertyValue] = [:]
        switch members["properties"] {
        case .object(let object): properties = object
        case .null, nil: break
        default: throw failure("properties", "is not an object")
        }
        let id: String
        let kind: PointIDKind
        switch members["id"] ?? properties["id"] {
        case .string(let text): (id, kind) = (text, .text)
        case .number(let number): (id, kind) = (PropertyValue.number(number).description, .number)
        case nil, .null: (id, kind) = ("", .generated)
        default: throw failure("id", "is neither a string nor a number")
        }
        let record = PointRecord(
            id: id, idKind: kind, coordinate: coordinate, properties: [],
            origin: PointOrigin(file: file, feature: index))
        if kind != .generated, let first = featureOfID.updateValue(index, forKey: record.uniqueKey) {
            throw failure("id", "duplicate id '\(id)' (first in features[\(first)])")
        }
        var values = [PropertyValue](repeating: .null, count: names.count)
        for name in properties.keys.sorted() where positionOfName[name] == nil {
            positionOfName[name] = names.count
            names.append(name)
            values.append(.null)
        }
        for (name, value) in properties { if let position = positionOfName[name] { values[position] = value } }
        records.append(
            PointRecord(
                id: id, idKind: kind, coordinate: coordinate, properties: values, origin: record.origin))
    }

    /// The points, each with a value for every property name.
    func pointSet() -> PointSet {
        let padded = records.map { record in
            guard record.properties.count < names.count else { return record }
            var record = record
            record.properties += [PropertyValue](repeating: .null, count: names.count - record.properties.count)
            return record
        }
        var set = PointSet(propertyNames: names, records: padded).namingGeneratedIDs()
        set.skipped = skipped
        return set
    }
}
