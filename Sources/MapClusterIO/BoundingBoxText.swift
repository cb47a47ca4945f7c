import Foundation
public import MapCluster

extension MapRect {
    /// The area a bounding box in text gives: `west,south,east,north`, in degrees.
    ///
    /// The order is that of GeoJSON, supercluster and the OGC. East below west crosses the antimeridian.
    ///
    ///     let europe = try MapRect(boundingBox: "-12,34,32,60")
    ///
    /// - Throws: ``BoundingBoxError`` naming the value that is wrong.
    public init(boundingBox text: String) throws(BoundingBoxError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else { throw .valueCount(text: text, count: parts.count) }
        var values: [Double] = []
        for (part, name) in zip(parts, ["west", "south", "east", "north"]) {
            guard let value = Double(part.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                throw .notANumber(name: name, text: String(part))
            }
            values.append(value)
        }
        guard values[1] <= values[3] else { throw .southOfNorth(south: values[1], north: values[3]) }
        do {
            self = try MapRect(west: values[0], south: values[1], east: values[2], north: values[3])
        } catch {
            throw .invalidCoordinate(error)
        }
        guard size.width > 0 && size.height > 0 else { throw .empty }
    }
}

/// Why a bounding box in text is not one; its description names the value, as in `west 'a' is not a number`.
public enum BoundingBoxError: Error, Sendable, CustomStringConvertible {
    /// Not four values.
    case valueCount(text: String, count: Int)
    /// A value that is not a finite number.
    case notANumber(name: String, text: String)
    /// The south edge lies north of the north edge.
    case southOfNorth(south: Double, north: Double)
    /// A latitude or longitude out of range.
    case invalidCoordinate(CoordinateError)
    /// West equals east, or south equals north.
    case empty

    /// What is wrong, without the name of the option or parameter that held the box.
    public var description: String {
        switch self {
        case .valueCount(let text, let count): "'\(text)' has \(count) values, not 4 (west,south,east,north)"
        case .notANumber(let name, let text): "\(name) '\(text)' is not a number"
        case .southOfNorth(let south, let north): "south \(south) is north of its north \(north)"
        case .invalidCoordinate(let error): "\(error)"
        case .empty: "is empty: west must differ from east and south from north"
        }
    }
}
