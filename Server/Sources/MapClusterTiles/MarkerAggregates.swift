@_spi(MapClusterServer) package import MapCluster
package import MapClusterManager

extension Clustering<Int> {
    /// The aggregates of markers of this clustering, one for each in order: a marker of one cluster has that cluster's,
    /// a merged marker the sum of its parts'; `nil` where the index keeps none.
    ///
    /// The markers must be this clustering's own (a snapshot's of it): it answers for their clusters unchecked.
    package func aggregates(ofMarkers markers: [ClusterMarker<Int>]) -> [ClusterAggregates?]? {
        var clusters: [Cluster<Int>] = []
        clusters.reserveCapacity(markers.count)
        for marker in markers {
            clusters.append(marker.cluster)
            clusters += marker.mergedClusters
        }
        guard let table = aggregates(ofOwn: clusters) else { return nil }
        var part = 0
        return markers.map { marker in
            let count = 1 + marker.mergedClusters.count
            defer { part += count }
            return count == 1 ? table[part] : ClusterAggregates.combined(Array(table[part..<(part + count)]))
        }
    }
}
