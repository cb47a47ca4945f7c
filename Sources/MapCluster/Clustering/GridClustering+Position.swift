extension GridClustering {
    /// Where ``ClusterOptions/position`` places a cluster of several locations, made at its center of mass.
    func position(of cluster: Cluster<Element>) -> Coordinate {
        switch options.position {
        case .centerOfMass:
            return cluster.coordinate
        case .cellCenter:
            return cluster.cell.rect.center.coordinate
        case .firstMember:
            var first: Coordinate?
            forEachMember(of: cluster) { entry in
                first = entry.coordinate
                return false
            }
            return first ?? cluster.coordinate
        case .nearestToCellCenter:
            guard case .cell(let tight) = cluster.id else { return cluster.coordinate }
            let nearest = tree.nearestEntry(in: tight.keyRange, to: cluster.cell.rect.center) {
                admits($0, .clusterable)
            }
            return nearest?.coordinate ?? cluster.coordinate
        case .custom(let place):
            return place(cluster)
        }
    }
}
