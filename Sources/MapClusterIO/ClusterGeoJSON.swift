public import MapCluster

/// Clusters written as GeoJSON, in the shape supercluster and MapLibre produce, so that existing web map code can draw
/// them.
///
/// Each cluster is a Point feature. A cluster of several elements has the properties `cluster: true`, `cluster_id`,
/// `point_count`, `point_count_abbreviated` and `expansion_zoom`; a single element is its own feature: its id and
/// properties as read. `cluster_id` is a string (see ``ClusterIdentifier``): cells deep in the grid don't fit in the
/// 53 bits a JavaScript number holds exactly.
public struct ClusterGeoJSON: Sendable {
    /// The points the clusters' elements (indices into ``PointSet/records``) refer to.
    public let points: PointSet

    /// A writer for clusters of `points`' records.
    public init(points: PointSet) {
        self.points = points
    }

    /// A FeatureCollection of clusters, as JSON text.
    public func featureCollection(_ clusters: [Cluster<Int>]) -> String {
        var json = JSONText()
        json.raw(#"{"type":"FeatureCollection","features":["#)
        for (offset, cluster) in clusters.enumerated() {
            if offset > 0 { json.raw(",") }
            feature(cluster, into: &json)
        }
        json.raw("]}")
        return json.text
    }

    /// A FeatureCollection of single points: records by index, as JSON text.
    public func featureCollection(records: [Int]) -> String {
        var json = JSONText()
        json.raw(#"{"type":"FeatureCollection","features":["#)
        for (offset, record) in records.enumerated() {
            if offset > 0 { json.raw(",") }
            pointFeature(record, at: points.records[record].coordinate, into: &json)
        }
        json.raw("]}")
        return json.text
    }

    func feature(_ cluster: Cluster<Int>, into json: inout JSONText) {
        if case .element(let record) = cluster.id {
            pointFeature(record, at: cluster.coordinate, into: &json)
            return
        }
        let id = ClusterIdentifier.string(for: cluster.id) ?? cluster.id.description
        json.raw(#"{"type":"Feature","id":"#)
        json.string(id)
        json.raw(",")
        geometry(cluster.coordinate, into: &json)
        json.raw(#","properties":{"cluster":true,"cluster_id":"#)
        json.string(id)
        json.raw(#","point_count":"#)
        json.raw(String(cluster.count))
        json.raw(#","point_count_abbreviated":"#)
        let abbreviated = Self.abbreviated(cluster.count)
        if let number = Int(abbreviated) { json.raw(String(number)) } else { json.string(abbreviated) }
        if let zoom = cluster.expansionZoom {
            json.raw(#","expansion_zoom":"#)
            json.number(zoom)
        }
        json.raw("}}")
    }

    private func pointFeature(_ record: Int, at coordinate: Coordinate, into json: inout JSONText) {
        let point = points.records[record]
        json.raw(#"{"type":"Feature","id":"#)
        json.string(point.id)
        json.raw(",")
        geometry(coordinate, into: &json)
        json.raw(#","properties":"#)
        json.value(.object(points.properties(of: point)))
        json.raw("}")
    }

    private func geometry(_ coordinate: Coordinate, into json: inout JSONText) {
        json.raw(#""geometry":{"type":"Point","coordinates":["#)
        json.number(coordinate.longitude)
        json.raw(",")
        json.number(coordinate.latitude)
        json.raw("]}")
    }

    /// A count as supercluster abbreviates it: `950`, `1.2k`, `12k`.
    public static func abbreviated(_ count: Int) -> String {
        if count >= 10_000 { return "\((Double(count) / 1_000).rounded(.toNearestOrAwayFromZero).shortestText)k" }
        if count >= 1_000 { return "\(((Double(count) / 100).rounded(.toNearestOrAwayFromZero) / 10).shortestText)k" }
        return String(count)
    }
}

/// The text form of the cluster ids the server and its GeoJSON use, and back.
///
/// A cell is `c` and its level, x and y (`c12.2200.1343`); a location is `l` and its latitude and longitude
/// (`l48.8566_2.3522`). Both are safe in a URL path.
public enum ClusterIdentifier {
    /// The text of an id; `nil` for ids that have none (single elements, merged clusters).
    public static func string<Element>(for id: ClusterID<Element>) -> String? {
        switch id {
        case .cell(let cell): "c\(cell.level).\(cell.x).\(cell.y)"
        case .location(let coordinate): "l\(coordinate.latitude)_\(coordinate.longitude)"
        case .element, .merged: nil
        }
    }

    /// The id a text stands for, or `nil` if it isn't one.
    public static func id<Element>(from text: String) -> ClusterID<Element>? {
        guard let kind = text.first else { return nil }
        let body = text.dropFirst()
        switch kind {
        case "c":
            let parts = body.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let level = Int(parts[0]), (0...GridCell.maxLevel).contains(level),
                let x = UInt32(parts[1]), let y = UInt32(parts[2]),
                level == GridCell.maxLevel || (x >> level == 0 && y >> level == 0)
            else { return nil }
            return .cell(GridCell(level: level, x: x, y: y))
        case "l":
            let parts = body.split(separator: "_", omittingEmptySubsequences: false)
            guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
                let coordinate = try? Coordinate(latitude: latitude, longitude: longitude)
            else { return nil }
            return .location(coordinate)
        default:
            return nil
        }
    }
}

/// JSON text built by appending, with strings escaped as RFC 8259 asks.
package struct JSONText {
    package var text = ""

    package init() {}

    package mutating func raw(_ fragment: String) { text += fragment }

    package mutating func number(_ value: Double) {
        text += value.isFinite ? value.shortestText : "null"
    }

    package mutating func string(_ value: String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    package mutating func value(_ value: PropertyValue) {
        switch value {
        case .string(let string): self.string(string)
        case .number(let number): self.number(number)
        case .bool(let bool): raw(bool ? "true" : "false")
        case .null: raw("null")
        case .array(let values):
            raw("[")
            for (offset, element) in values.enumerated() {
                if offset > 0 { raw(",") }
                self.value(element)
            }
            raw("]")
        case .object(let members):
            raw("{")
            for (offset, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if offset > 0 { raw(",") }
                string(member.key)
                raw(":")
                self.value(member.value)
            }
            raw("}")
        }
    }
}
