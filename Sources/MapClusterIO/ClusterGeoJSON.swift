@_spi(MapClusterServer) public import MapCluster

/// Clusters written as GeoJSON, in the shape supercluster and MapLibre produce, so that existing web map code can draw
/// them.
///
/// Each cluster is a Point feature. A cluster of several elements has the properties `cluster: true`, `cluster_id`,
/// `point_count`, `point_count_abbreviated` and `expansion_zoom` (and, from an index with aggregates, each reduction by
/// its name, `weight` and `categories`); a single element is its own feature: its id and properties as read.
/// `cluster_id` is a string (see `ClusterIDText`): cells deep in the grid don't fit in the 53 bits a
/// JavaScript number holds exactly.
public struct ClusterGeoJSON: Sendable {
    /// The points the clusters' elements (indices into ``PointSet/records``) refer to.
    public let points: PointSet
    /// The clustering of the points, indexed by record: what the clusters' expansion zooms and aggregates are asked of.
    public let clustering: Clustering<Int>
    /// How many zooms the expansion zooms written are below the clustering's: 0 (the default) for a map whose world
    /// is 256 points wide at zoom 0, as Leaflet's is; 1 for MapLibre's, 512 points wide.
    @_spi(MapClusterServer) public var zoomOffset = 0.0

    /// A writer for the clusters `clustering` makes of `points`' records.
    public init(points: PointSet, clustering: Clustering<Int>) {
        self.points = points
        self.clustering = clustering
    }

    /// A FeatureCollection of clusters, as JSON text.
    /// - Throws: `ClusteringMismatch` for a cluster that a clustering with other options made.
    public func featureCollection(_ clusters: [Cluster<Int>]) throws(ClusteringMismatch) -> String {
        var json = JSONText()
        json.raw(#"{"type":"FeatureCollection","features":["#)
        // It checks every cluster (with a schema or without), so the features may ask for their expansion zooms
        // unchecked.
        let aggregates = try clustering.aggregates(of: clusters)
        let keys = aggregates?.first.map {
            AggregateKeys(of: $0, weighted: clustering.index.schema?.isWeighted == true)
        }
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

    func feature(
        _ cluster: Cluster<Int>, aggregates: ClusterAggregates?, keys: AggregateKeys? = nil, into json: inout JSONText
    ) {
        if case .element(let record) = cluster.id {
            pointFeature(record, at: cluster.coordinate, into: &json)
            return
        }
        clusterFeature(
            id: ClusterIDText.text(of: cluster.id), at: cluster.coordinate, count: cluster.count,
            expansionZoom: clustering.expansionZoom(ofOwn: cluster), aggregates: aggregates, keys: keys,
            into: &json)
    }

    /// A cluster's feature.
    ///
    /// `expansion_zoom` is the whole zoom at which it has split, as supercluster gives it (the
    /// exact one rounded up); `expansion_zoom_exact` is the exact one, for maps that zoom continuously.
    @_spi(MapClusterServer) public func clusterFeature(
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
        if let zoom = expansionZoom.map({ max(0, $0 - zoomOffset) }) {
            json.raw(#","expansion_zoom":"#)
            json.number(zoom.rounded(.up))
            json.raw(#","expansion_zoom_exact":"#)
            json.number(zoom)
        }
        if let aggregates {
            Self.write(
                aggregates,
                keys: keys ?? AggregateKeys(of: aggregates, weighted: clustering.index.schema?.isWeighted == true),
                into: &json)
        }
        json.raw("}}")
    }

    /// A cluster's aggregates as properties: each reduction by its name (`population_sum`; a ``ValueCounts``, each
    /// value's count as `<name>_<value>`), `weight` when the index keeps weights, and `categories`, the count of each
    /// category that has members (`{"EU":31,"AS":4}`).
    ///
    /// `keys` are the properties' names already written as JSON, once for a whole answer.
    private static func write(_ aggregates: ClusterAggregates, keys: AggregateKeys, into json: inout JSONText) {
        for (position, key) in keys.reductions.enumerated() {
            if let counts = aggregates.reduction(at: position) as? ValueCounts {
                for (name, count) in counts.properties(named: aggregates.reductionNames[position]) {
                    json.raw(",")
                    json.string(name)
                    json.raw(":")
                    json.raw(String(count))
                }
                continue
            }
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
    @_spi(MapClusterServer) public struct AggregateKeys {
        let reductions: [String]
        let categories: [String]
        let weighted: Bool

        /// The keys of `aggregates`' reductions and categories; `weighted` adds the weight's.
        @_spi(MapClusterServer) public init(of aggregates: ClusterAggregates, weighted: Bool) {
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

    /// Appends the GeoJSON feature of the point `record` of the points, at `coordinate`.
    @_spi(MapClusterServer) public func pointFeature(
        _ record: Int, at coordinate: Coordinate, into json: inout JSONText
    ) {
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
        json.raw(#""geometry":{"type":"Point","coordinates":"#)
        json.position(coordinate)
        json.raw("}")
    }

    /// A count as supercluster abbreviates it: `950`, `1.2k`, `12k`.
    public static func abbreviated(_ count: Int) -> String {
        if count >= 10_000 { return "\((Double(count) / 1_000).rounded(.toNearestOrAwayFromZero).shortestText)k" }
        if count >= 1_000 { return "\(((Double(count) / 100).rounded(.toNearestOrAwayFromZero) / 10).shortestText)k" }
        return String(count)
    }
}
