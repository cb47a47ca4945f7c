public import MapCluster
public import MapClusterManager

/// Clusters written as GeoJSON, in the shape supercluster and MapLibre produce, so that existing web map code can draw
/// them.
///
/// Each cluster is a Point feature. A cluster of several elements has the properties `cluster: true`, `cluster_id`,
/// `point_count`, `point_count_abbreviated` and `expansion_zoom` (and, from an index with aggregates, each reduction by
/// its name, `weight` and `categories`); a single element is its own feature: its id and properties as read. `cluster_id` is a string (see ``MapCluster/ClusterID/text``): cells deep in the grid don't fit in the
/// 53 bits a JavaScript number holds exactly.
public struct ClusterGeoJSON: Sendable {
    /// The points the clusters' elements (indices into ``PointSet/records``) refer to.
    public let points: PointSet
    /// Their index, and the options its clusters are made with: what a cluster's expansion zoom is asked of.
    public let index: ClusterIndex<Int>
    /// The options the clusters are made with.
    public let options: ClusterOptions<Int>

    /// A writer for clusters of `points`' records, indexed by record in `index` and clustered with `options`.
    public init(points: PointSet, index: ClusterIndex<Int>, options: ClusterOptions<Int>) {
        self.points = points
        self.index = index
        self.options = options
    }

    /// A FeatureCollection of clusters, as JSON text.
    public func featureCollection(_ clusters: [Cluster<Int>]) -> String {
        var json = JSONText()
        json.raw(#"{"type":"FeatureCollection","features":["#)
        let aggregates = index.aggregates(of: clusters, options: options)
        let keys = aggregates?.first.map { AggregateKeys(of: $0, weighted: index.schema?.isWeighted == true) }
        for (offset, cluster) in clusters.enumerated() {
            if offset > 0 { json.raw(",") }
            feature(cluster, aggregates: aggregates?[offset], keys: keys, into: &json)
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

    /// One record as a GeoJSON Feature, as JSON text.
    public func feature(record: Int) -> String {
        var json = JSONText()
        pointFeature(record, at: points.records[record].coordinate, into: &json)
        return json.text
    }

    /// A FeatureCollection of the markers of a layout (``MapClusterManager/ClusterSnapshot``), as JSON text: a merged
    /// marker is one cluster feature whose id names its parts (see ``text(of:)``), whose count and aggregates are
    /// theirs together, and whose expansion zoom is the one at which they stand apart.
    ///
    /// With `crossesAntimeridian`, the collection says so in a member of that name, so that a client that swapped its
    /// bbox's west and east by mistake can tell why it got most of the world.
    public func featureCollection(_ snapshot: ClusterSnapshot<Int>, crossesAntimeridian: Bool = false) -> String {
        var json = JSONText()
        json.raw(#"{"type":"FeatureCollection","#)
        if crossesAntimeridian { json.raw(#""crosses_antimeridian":true,"#) }
        json.raw(#""features":"#)
        features(of: snapshot.markers, in: snapshot, into: &json)
        json.raw("}")
        return json.text
    }

    /// The changes of a followed viewport from one version of the points to the next, as JSON text: `version`;
    /// `insertions`, each a marker's `feature` and the `splitFrom` position of the marker it comes out of (`null` for
    /// none); `removals`, each a marker's feature `id`, whether it was a `cluster`, and the `mergesInto` position of
    /// the marker it goes into; and `updates`, the features of markers kept with new members or a new position.
    ///
    /// - Parameters:
    ///   - update: What a ``MapClusterManager/ClusterFollower`` found.
    ///   - version: The version of the points it shows.
    ///   - previous: The writer of the version before, whose points the removed markers name.
    /// - Returns: The JSON text.
    public func changes(_ update: ClusterUpdate<Int>, version: Int, previous: ClusterGeoJSON) -> String {
        let changes = update.changes
        var json = JSONText()
        json.raw(#"{"version":"#)
        json.raw(String(version))
        json.raw(#","insertions":"#)
        features(of: changes.insertions.map(\.marker), in: update.snapshot, into: &json) { position, json in
            json.raw(#","splitFrom":"#)
            Self.position(changes.insertions[position].splitFrom, into: &json)
        }
        json.raw(#","removals":["#)
        for (offset, removal) in changes.removals.enumerated() {
            if offset > 0 { json.raw(",") }
            json.raw(#"{"id":"#)
            if let record = removal.marker.element {
                let point = previous.points.records[record]
                if point.idKind == .number { json.raw(point.id) } else { json.string(point.id) }
                json.raw(#","cluster":false"#)
            } else {
                json.string(Self.text(of: removal.marker.id))
                json.raw(#","cluster":true"#)
            }
            json.raw(#","mergesInto":"#)
            Self.position(removal.mergesInto, into: &json)
            json.raw("}")
        }
        json.raw(#"],"updates":"#)
        features(of: changes.updates.map(\.new), in: update.snapshot, into: &json)
        json.raw("}")
        return json.text
    }

    /// `[longitude,latitude]`, or `null`.
    private static func position(_ coordinate: Coordinate?, into json: inout JSONText) {
        guard let coordinate else { return json.raw("null") }
        json.raw("[")
        json.number(coordinate.longitude)
        json.raw(",")
        json.number(coordinate.latitude)
        json.raw("]")
    }

    /// An array of the features of markers of a snapshot; with `wrap` adding members beside each feature (the
    /// feature then goes in a `feature` member of an object of its own).
    private func features(
        of markers: [ClusterMarker<Int>], in snapshot: ClusterSnapshot<Int>, into json: inout JSONText,
        wrap: ((Int, inout JSONText) -> Void)? = nil
    ) {
        let aggregates = index.aggregates(of: markers.flatMap(\.clusters), options: snapshot.options)
        let keys = aggregates?.first.map { AggregateKeys(of: $0, weighted: index.schema?.isWeighted == true) }
        json.raw("[")
        var part = 0
        for (offset, marker) in markers.enumerated() {
            if offset > 0 { json.raw(",") }
            if wrap != nil { json.raw(#"{"feature":"#) }
            // A marker of one cluster has that cluster's aggregates; one of several, their sum.
            let markerAggregates =
                marker.clusters.count == 1
                ? aggregates?[part]
                : aggregates.flatMap { ClusterAggregates.combined(Array($0[part..<(part + marker.clusters.count)])) }
            part += marker.clusters.count
            if let record = marker.element {
                pointFeature(record, at: marker.coordinate, into: &json)
            } else {
                clusterFeature(
                    id: Self.text(of: marker.id), at: marker.coordinate, count: marker.count,
                    expansionZoom: snapshot.expansionZoom(of: marker),
                    aggregates: markerAggregates, keys: keys, into: &json)
            }
            if let wrap {
                wrap(offset, &json)
                json.raw("}")
            }
        }
        json.raw("]")
    }

    func feature(
        _ cluster: Cluster<Int>, aggregates: ClusterAggregates?, keys: AggregateKeys? = nil, into json: inout JSONText
    ) {
        if case .element(let record) = cluster.id {
            pointFeature(record, at: cluster.coordinate, into: &json)
            return
        }
        clusterFeature(
            id: cluster.id.text ?? cluster.id.description, at: cluster.coordinate, count: cluster.count,
            expansionZoom: index.expansionZoom(of: cluster, options: options), aggregates: aggregates, keys: keys,
            into: &json)
    }

    /// A cluster's feature.
    ///
    /// `expansion_zoom` is the whole zoom at which it has split, as supercluster gives it (the
    /// exact one rounded up); `expansion_zoom_exact` is the exact one, for maps that zoom continuously.
    private func clusterFeature(
        id: String, at coordinate: Coordinate, count: Int, expansionZoom: Double?, aggregates: ClusterAggregates?,
        keys: AggregateKeys?, into json: inout JSONText
    ) {
        json.raw(#"{"type":"Feature","id":"#)
        json.string(id)
        json.raw(",")
        geometry(coordinate, into: &json)
        json.raw(#","properties":{"cluster":true,"cluster_id":"#)
        json.string(id)
        json.raw(#","point_count":"#)
        json.raw(String(count))
        json.raw(#","point_count_abbreviated":"#)
        let abbreviated = Self.abbreviated(count)
        if let number = Int(abbreviated) { json.raw(String(number)) } else { json.string(abbreviated) }
        if let zoom = expansionZoom {
            json.raw(#","expansion_zoom":"#)
            json.number(zoom.rounded(.up))
            json.raw(#","expansion_zoom_exact":"#)
            json.number(zoom)
        }
        if let aggregates {
            Self.write(
                aggregates, keys: keys ?? AggregateKeys(of: aggregates, weighted: index.schema?.isWeighted == true),
                into: &json)
        }
        json.raw("}}")
    }

    /// A cluster's aggregates as properties: each reduction by its name (`population_sum`), `weight` when the index
    /// keeps weights, and `categories`, the count of each category that has members (`{"EU":31,"AS":4}`).
    package static func write(_ aggregates: ClusterAggregates, weighted: Bool, into json: inout JSONText) {
        write(aggregates, keys: AggregateKeys(of: aggregates, weighted: weighted), into: &json)
    }

    /// ``write(_:weighted:into:)`` with the properties' names already written as JSON, once for a whole answer.
    static func write(_ aggregates: ClusterAggregates, keys: AggregateKeys, into json: inout JSONText) {
        for (position, key) in keys.reductions.enumerated() {
            json.raw(key)
            if let number = aggregates.number(at: position) {
                json.number(number)
            } else if aggregates.isNumeric(at: position) {
                json.raw("null")
            } else {
                json.string(String(describing: aggregates.reduction(at: position)))
            }
        }
        if keys.weighted {
            json.raw(#","weight":"#)
            json.number(aggregates.weight)
        }
        if !keys.categories.isEmpty {
            json.raw(#","categories":{"#)
            var first = true
            for (key, count) in zip(keys.categories, aggregates.categoryCounts) where count > 0 {
                if !first { json.raw(",") }
                first = false
                json.raw(key)
                json.raw(String(count))
            }
            json.raw("}")
        }
    }

    /// The names of an answer's aggregate properties, escaped once: `,"population_sum":` for each reduction, and
    /// `"EU":` for each category.
    struct AggregateKeys {
        let reductions: [String]
        let categories: [String]
        let weighted: Bool

        init(of aggregates: ClusterAggregates, weighted: Bool) {
            func key(_ name: String) -> String {
                var json = JSONText()
                json.string(name)
                json.raw(":")
                return json.text
            }
            reductions = aggregates.reductionNames.map { "," + key($0) }
            categories = aggregates.categories.map(key)
            self.weighted = weighted
        }
    }

    private func pointFeature(_ record: Int, at coordinate: Coordinate, into json: inout JSONText) {
        let point = points.records[record]
        json.raw(#"{"type":"Feature","id":"#)
        if point.idKind == .number { json.raw(point.id) } else { json.string(point.id) }
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

    // MARK: - Marker ids

    /// A marker's id as text, for a URL path or a `cluster_id`: a cluster's ``MapCluster/ClusterID/text``; for clusters
    /// merged because their markers overlapped, `m` and their parts' ids joined by `~`, a single record among them as
    /// `p` and its position (`mc9.261.176~p1204`).
    public static func text(of id: ClusterMarker<Int>.ID) -> String {
        switch id {
        case .cluster(let cluster): text(of: cluster)
        case .merged(let parts): "m" + parts.map(text(of:)).joined(separator: "~")
        }
    }

    private static func text(of id: ClusterID<Int>) -> String {
        if case .element(let record) = id { return "p\(record)" }
        return id.text ?? id.description
    }

    /// The marker id a text (``text(of:)``) stands for, or `nil` if it isn't one.
    public static func markerID(text: String) -> ClusterMarker<Int>.ID? {
        guard text.first == "m" else { return clusterID(text: Substring(text)).map { .cluster($0) } }
        let parts = text.dropFirst().split(separator: "~", omittingEmptySubsequences: false).map(clusterID(text:))
        guard parts.count > 1, parts.allSatisfy({ $0 != nil }) else { return nil }
        return .merged(parts.compactMap { $0 })
    }

    private static func clusterID(text: Substring) -> ClusterID<Int>? {
        guard text.first == "p" else { return ClusterID(text: String(text)) }
        return Int(text.dropFirst()).flatMap { $0 >= 0 ? .element($0) : nil }
    }

    /// A count as supercluster abbreviates it: `950`, `1.2k`, `12k`.
    public static func abbreviated(_ count: Int) -> String {
        if count >= 10_000 { return "\((Double(count) / 1_000).rounded(.toNearestOrAwayFromZero).shortestText)k" }
        if count >= 1_000 { return "\(((Double(count) / 100).rounded(.toNearestOrAwayFromZero) / 10).shortestText)k" }
        return String(count)
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
        // Most strings (ids, names, categories) need no escape: appended whole.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            text += value
            text += "\""
            return
        }
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
