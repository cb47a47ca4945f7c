@_spi(MapClusterServer) import MapCluster
@_spi(MapClusterServer) import MapClusterIO
@_spi(MapClusterServer) import MapClusterManager
import MapClusterTiles

/// Markers written as GeoJSON: the layout of a viewport, and the changes of a followed one.
///
/// Clusters and points are written as `ClusterGeoJSON` writes them; a merged marker is a cluster feature
/// of its own.
struct MarkerGeoJSON: Sendable {
    /// The writer of the clusters and points the markers stand for.
    let clusters: ClusterGeoJSON

    /// The zooms the markers' expansion zooms are told in.
    let zoomConvention: ZoomConvention

    init(points: PointSet, clustering: Clustering<Int>, zoomConvention: ZoomConvention) {
        var clusters = ClusterGeoJSON(points: points, clustering: clustering)
        clusters.zoomOffset = zoomConvention.offset
        self.clusters = clusters
        self.zoomConvention = zoomConvention
    }

    /// A FeatureCollection of the markers of a layout (`ClusterSnapshot`), as JSON text: a merged
    /// marker is one cluster feature whose id names its parts (see `ClusterIDText`), whose count and aggregates are
    /// theirs together, and whose expansion zoom is the one at which they stand apart.
    ///
    /// The collection says how its zooms are counted, in `zoom_convention` (`leaflet` or `maplibre`). With
    /// `crossesAntimeridian`, the collection says so in a member of that name, so that a client that swapped its
    /// bbox's west and east by mistake can tell why it got most of the world.
    func featureCollection(_ snapshot: ClusterSnapshot<Int>, crossesAntimeridian: Bool = false) -> String {
        var json = JSONText()
        json.raw(#"{"type":"FeatureCollection","zoom_convention":"#)
        json.string(zoomConvention.rawValue)
        json.raw(",")
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
    ///   - update: What a `ClusterFollower` found.
    ///   - updates: The updates of `update` to send (those that change what a client shows).
    ///   - version: The version of the points it shows.
    ///   - previous: The writer of the version before, whose points the removed markers name.
    /// - Returns: The JSON text.
    func changes(
        _ update: ClusterUpdate<Int>, updates: [ClusterChanges<Int>.Update], version: Int, previous: MarkerGeoJSON
    ) -> String {
        let changes = update.changes
        var json = JSONText()
        json.raw(#"{"version":"#)
        json.raw(String(version))
        json.raw(#","insertions":"#)
        features(of: changes.insertions.map(\.marker), in: update.snapshot, into: &json) { position, json in
            json.raw(#","splitFrom":"#)
            json.position(changes.insertions[position].splitFrom)
        }
        json.raw(#","removals":["#)
        for (offset, removal) in changes.removals.enumerated() {
            if offset > 0 { json.raw(",") }
            json.raw(#"{"id":"#)
            if let record = removal.marker.element {
                let point = previous.clusters.points.records[record]
                if point.idKind == .number { json.raw(point.id) } else { json.string(point.id) }
                json.raw(#","cluster":false"#)
            } else {
                json.string(removal.marker.id.text.description)
                json.raw(#","cluster":true"#)
            }
            json.raw(#","mergesInto":"#)
            json.position(removal.mergesInto)
            json.raw("}")
        }
        json.raw(#"],"updates":"#)
        features(of: updates.map(\.new), in: update.snapshot, into: &json)
        json.raw("}")
        return json.text
    }

    /// One marker of a snapshot as a GeoJSON feature's text: what a client is told of it.
    func feature(of marker: ClusterMarker<Int>, in snapshot: ClusterSnapshot<Int>) -> String {
        var json = JSONText()
        features(of: [marker], in: snapshot, into: &json)
        return json.text
    }

    /// An array of the features of markers of a snapshot; with `wrap` adding members beside each feature (the
    /// feature then goes in a `feature` member of an object of its own).
    private func features(
        of markers: [ClusterMarker<Int>], in snapshot: ClusterSnapshot<Int>, into json: inout JSONText,
        wrap: ((Int, inout JSONText) -> Void)? = nil
    ) {
        // The markers are the snapshot's own: its clustering answers for them unchecked.
        let clustering = snapshot.clustering
        let aggregates = clustering.aggregates(ofMarkers: markers)
        let keys = aggregates?.lazy.compactMap({ $0 }).first.map {
            ClusterGeoJSON.AggregateKeys(of: $0, weighted: clustering.index.schema?.isWeighted == true)
        }
        json.raw("[")
        for (offset, marker) in markers.enumerated() {
            if offset > 0 { json.raw(",") }
            if wrap != nil { json.raw(#"{"feature":"#) }
            let markerAggregates = aggregates?[offset] ?? nil
            if let record = marker.element {
                clusters.pointFeature(record, at: marker.coordinate, into: &json)
            } else {
                clusters.clusterFeature(
                    id: marker.id.text.description, at: marker.coordinate, count: marker.count,
                    expansionZoom: snapshot.expansionZoom(ofOwn: marker),
                    aggregates: markerAggregates, keys: keys, into: &json)
            }
            if let wrap {
                wrap(offset, &json)
                json.raw("}")
            }
        }
        json.raw("]")
    }
}
