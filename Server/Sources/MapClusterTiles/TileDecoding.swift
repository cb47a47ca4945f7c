package import Foundation
import SwiftProtobuf

/// A Mapbox Vector Tile read back, feature by feature: what a client's decoder finds in the tiles the server writes.
///
/// The tile fuzz target decodes each tile the encoder wrote and compares it with ``ClusterTiles/features(of:categories:)``;
/// a tile that breaks the format (a tag naming a key or value the layer doesn't have, a geometry that is no one point)
/// is an error here, as it would be in MapLibre.
package struct DecodedTile {
    /// A property's value as the tile stores it.
    package enum Value: Equatable {
        case string(String)
        case number(Double)
        case bool(Bool)
    }

    /// One Point feature.
    package struct Feature {
        package let id: UInt64?
        package let properties: [(String, Value)]
        package let x: Int64
        package let y: Int64
    }

    package let layerName: String
    package let extent: UInt32
    package let version: UInt32
    package let features: [Feature]

    /// Why bytes are not a tile of one layer of Point features.
    package struct Malformed: Error, CustomStringConvertible {
        package let description: String
    }

    /// Reads a tile of one layer of Point features.
    package init(_ bytes: Data) throws {
        let tile = try VectorTile_Tile(serializedBytes: bytes)
        guard tile.layers.count == 1, let layer = tile.layers.first else {
            throw Malformed(description: "\(tile.layers.count) layers, not one")
        }
        layerName = layer.name
        extent = layer.extent
        version = layer.version
        features = try layer.features.map { feature in
            guard feature.type == .point, feature.geometry.count == 3, feature.geometry[0] == (1 | 1 << 3) else {
                throw Malformed(description: "a feature whose geometry is not one point: \(feature.geometry)")
            }
            guard feature.tags.count.isMultiple(of: 2) else { throw Malformed(description: "an odd number of tags") }
            var properties: [(String, Value)] = []
            for pair in stride(from: 0, to: feature.tags.count, by: 2) {
                let key = Int(feature.tags[pair])
                let value = Int(feature.tags[pair + 1])
                guard key < layer.keys.count, value < layer.values.count else {
                    throw Malformed(description: "a tag past the layer's \(layer.keys.count) keys or values")
                }
                properties.append((layer.keys[key], try Self.value(layer.values[value])))
            }
            return Feature(
                id: feature.hasID ? feature.id : nil, properties: properties, x: Self.unzigzag(feature.geometry[1]),
                y: Self.unzigzag(feature.geometry[2]))
        }
    }

    private static func value(_ value: VectorTile_Tile.Value) throws -> Value {
        if value.hasStringValue { return .string(value.stringValue) }
        if value.hasBoolValue { return .bool(value.boolValue) }
        if value.hasUintValue { return .number(Double(value.uintValue)) }
        if value.hasSintValue { return .number(Double(value.sintValue)) }
        if value.hasIntValue { return .number(Double(value.intValue)) }
        if value.hasDoubleValue { return .number(value.doubleValue) }
        if value.hasFloatValue { return .number(Double(value.floatValue)) }
        throw Malformed(description: "a value of no kind")
    }

    private static func unzigzag(_ value: UInt32) -> Int64 {
        Int64(value >> 1) ^ -Int64(value & 1)
    }
}
