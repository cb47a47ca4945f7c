extension GridClustering {
    /// How far past the boundary ``revealingZoom(of:at:)`` answers.
    static var revealMargin: Double { 1e-6 }

    /// The smallest zoom at which an element of the index stands alone, or in a cluster of its coordinate only
    /// (plus ``revealMargin``).
    ///
    /// Found by bisection over the grid levels: a cell's members only thin out as the level grows.
    func revealingZoom(of element: Element, at coordinate: Coordinate) -> Double {
        func zoom(ofLevel level: Int) -> Double { max(options.zoom(forLevel: level), 0) }
        func standsAlone(atLevel level: Int) -> Bool {
            let holder = cluster(holding: element, at: coordinate, zoom: zoom(ofLevel: level))
            return holder.map { !$0.isCluster || $0.isSameLocation } ?? true
        }
        var low = 0
        var high = GridCell.maxLevel
        while low < high {
            let middle = (low + high) / 2
            if standsAlone(atLevel: middle) { high = middle } else { low = middle + 1 }
        }
        let limit = options.deepestClusteringZoom
        let zoom = limit.isFinite ? min(zoom(ofLevel: low), max(limit, 0)) : zoom(ofLevel: low)
        // Just past the boundary, so that a viewport made for this zoom (which rounds) is on the right side of it.
        return zoom + Self.revealMargin
    }
}
