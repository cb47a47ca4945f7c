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
    /// Makes a reader.
    public init() {}

    /// Reads a GeoJSON file.
    public func read(contentsOf url: URL) throws(PointFileError) -> PointSet {
        let name = url.isFileURL ? url.path : url.absoluteString
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw PointFileError(file: name, message: "cannot be read (\(error.localizedDescription))")
        }
        return try read(data, file: name)
    }

    /// Reads GeoJSON bytes; `file` names them in errors.
    public func read(_ data: Data, file: String) throws(PointFileError) -> PointSet {
        let document: PropertyValue
        do {
            document = try JSONDecoder().decode(PropertyValue.self, from: data)
        } catch {
            throw PointFileError(file: file, message: "is not valid JSON (\(Self.reason(error)))")
        }
        guard case .object(let top) = document, top["type"] == .string("FeatureCollection") else {
            throw PointFileError(file: file, field: "type", message: "is not a GeoJSON FeatureCollection")
        }
        guard case .array(let features) = top["features"] else {
            throw PointFileError(file: file, field: "features", message: "is missing or not an array")
        }

        var names: [String] = []
        var positionOfName: [String: Int] = [:]
        var pending: [(id: String, coordinate: Coordinate, properties: [String: PropertyValue])] = []
        pending.reserveCapacity(features.count)
        var featureOfID: [String: Int] = [:]
        var skipped: [PointFileError] = []
        for (index, feature) in features.enumerated() {
            func failure(_ field: String?, _ message: String) -> PointFileError {
                PointFileError(file: file, feature: index, field: field, message: message)
            }
            guard case .object(let members) = feature, members["type"] == .string("Feature") else {
                throw failure("type", "is not a Feature")
            }
            guard case .object(let geometry) = members["geometry"] else {
                throw failure("geometry", "is missing or null: a Point is needed")
            }
            guard case .string(let type) = geometry["type"] else {
                throw failure("geometry.type", "is missing")
            }
            guard type == "Point" else {
                skipped.append(failure("geometry.type", "is a \(type), not a Point: not clustered"))
                continue
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
            switch members["id"] ?? properties["id"] {
            case .string(let text): id = text
            case .number(let number): id = PropertyValue.number(number).description
            case nil, .null: id = String(index + 1)
            default: throw failure("id", "is neither a string nor a number")
            }
            if let first = featureOfID.updateValue(index, forKey: id) {
                throw failure("id", "duplicate id '\(id)' (first in features[\(first)])")
            }
            for name in properties.keys.sorted() where positionOfName[name] == nil {
                positionOfName[name] = names.count
                names.append(name)
            }
            pending.append((id, coordinate, properties))
        }
        let records = pending.map { point in
            var values = [PropertyValue](repeating: .null, count: names.count)
            for (name, value) in point.properties {
                if let position = positionOfName[name] { values[position] = value }
            }
            return PointRecord(id: point.id, coordinate: point.coordinate, properties: values)
        }
        var set = PointSet(propertyNames: names, records: records)
        set.skipped = skipped
        return set
    }

    /// What a decoding error says, without Swift's type names.
    private static func reason(_ error: any Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else { return "\(error)" }
        if let underlying = context.underlyingError as NSError?,
            let detail = underlying.userInfo[NSDebugDescriptionErrorKey] as? String
        {
            return detail
        }
        return context.debugDescription
    }
}
