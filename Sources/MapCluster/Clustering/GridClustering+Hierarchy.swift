extension GridClustering {
    /// The clusters of one cell at a zoom.
    private func clusters(ofCell cell: GridCell, zoom: Double, taking filter: MemberFilter) -> [Cluster<Element>] {
        clusters(in: CellRegion(cell), zoom: zoom, taking: filter)
    }

    /// The smallest zoom at which a cluster's members no longer show as one cluster; `nil` if they never split.
    func expansionZoom(of cluster: Cluster<Element>) -> Double? {
        options.expansionZoom(of: cluster.id)
    }

    /// The clusters a cluster splits into at its expansion zoom.
    func children(of cluster: Cluster<Element>) -> [Cluster<Element>] {
        guard let zoom = expansionZoom(of: cluster), case .cell(let tight) = cluster.id.unfiltered else { return [] }
        let level = max(options.gridLevel(forZoom: zoom), cluster.cell.level)
        guard level >= tight.level else {
            return clusters(ofCell: tight.ancestor(atLevel: level), zoom: zoom, taking: .clusterable)
        }
        return clusters(in: CellRegion(tight, atLevel: level), zoom: zoom, taking: .clusterable)
    }

    /// The cluster a cluster merges into when the map zooms out; `nil` if it never merges with others.
    func parent(of cluster: Cluster<Element>) -> Cluster<Element>? {
        var witness: (element: Element, coordinate: Coordinate)?
        forEachMember(of: cluster) { entry in
            witness = (element(of: entry), entry.coordinate)
            return false
        }
        guard let witness else { return nil }
        var zoom = cluster.zoom
        var level = cluster.cell.level
        while level > 0 {
            level -= 1
            zoom = min(zoom, options.zoom(forLevel: level + 1).nextDown)
            let candidates = clusters(ofCell: cluster.cell.ancestor(atLevel: level), zoom: zoom, taking: .all)
            guard let holder = candidates.first(where: { holds($0, witness.element, at: witness.coordinate) }) else {
                return nil
            }
            if holder.id != cluster.id { return holder }
        }
        return nil
    }

    /// The cluster holding an element of the index, found at `coordinate`, at a zoom.
    func cluster(holding element: Element, at coordinate: Coordinate, zoom: Double) -> Cluster<Element>? {
        let cell = GridCell(containing: coordinate.mapPoint, level: options.gridLevel(forZoom: zoom))
        return clusters(ofCell: cell, zoom: zoom, taking: .all).first { holds($0, element, at: coordinate) }
    }

    /// The deepest zoom ``cluster(id:)`` looks at: deeper than any map zooms.
    static var deepestZoom: Double { 30 }

    /// The cluster with an id, as clustering makes it at the deepest zoom that shows it; `nil` if no zoom does.
    func cluster(id: ClusterID<Element>) -> Cluster<Element>? {
        let zoom: Double
        let place: MapPoint
        switch id.unfiltered {
        case .cell(let tight):
            let keys =
                categories.map { pass.categoryTotals(in: tight.keyRange, $0).map { ($0.firstKey, $0.lastKey) } }
                ?? tree.summary(in: tight.keyRange).map { ($0.firstKey, $0.lastKey) }
            // A cell at the location tolerance's level or deeper names the one location it holds, shown as one at
            // every zoom: the deepest shows it. So does a cell of the deepest level: its points (distinct ones less
            // than a centimetre apart among them) share one key, and no grid separates them.
            let isLocation = tight.level >= min(options.locationLevel ?? GridCell.maxLevel, GridCell.maxLevel)
            guard let (firstKey, lastKey) = keys,
                GridCell.smallest(holding: firstKey, lastKey) == tight
            else { return nil }
            let deepest = min(max(options.deepestClusteringZoom, 0), Self.deepestZoom)
            zoom =
                isLocation
                ? Self.deepestZoom : min(max(options.zoom(forLevel: tight.level + 1).nextDown, 0), deepest)
            let first = GridPosition(key: firstKey)
            place = first.rect(through: first).center
        case .location(let coordinate):
            zoom = Self.deepestZoom
            place = coordinate.mapPoint
        case .element(let element):
            guard let coordinate = index.coordinate(of: element) else { return nil }
            zoom = Self.deepestZoom
            place = coordinate.mapPoint
        case .filteredCell, .filteredLocation:
            preconditionFailure("an unfiltered id is never filtered")
        }
        let cell = GridCell(containing: place, level: options.gridLevel(forZoom: zoom))
        return clusters(ofCell: cell, zoom: zoom, taking: .all).first { $0.id == id }
    }
}
