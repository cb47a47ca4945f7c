@_spi(MapClusterServer) import MapCluster

/// The screen-space passes over an update's clusters: overlap merging or separation, and fanning out elements on one
/// coordinate.
///
/// Positions are kept on the plane, in map units; sizes come in points and are converted with the viewport's scale.
/// The plane wraps around the antimeridian: markers on either side of it are neighbours.
struct MarkerLayout<Element: Hashable & Sendable> {
    /// A marker being laid out.
    struct Item {
        var id: ClusterMarker<Element>.ID
        /// What it stands for; for a merged item, the first of its clusters.
        var cluster: Cluster<Element>
        /// The id `cluster` shows under: its own, or the one of a marker it reuses.
        var clusterID: ClusterID<Element>
        /// For a merged item, the clusters merged into it after the first, in order; empty for any other.
        var mergedClusters: [Cluster<Element>] = []
        /// The ids `mergedClusters` showed under.
        var mergedIDs: [ClusterID<Element>] = []
        /// Where it is drawn.
        private(set) var coordinate: Coordinate
        /// Where it is drawn, on the plane.
        private(set) var point: MapPoint
        /// How many elements it stands for, its merged parts' included.
        var count: Int
        /// The zoom at which its points first show apart in a merged layout (see ``MergeLayout``); `nil` where the
        /// clustering's own expansion zoom holds.
        var layoutExpansionZoom: Double??

        /// The marker of a cluster, shown under `id` (its own, or the one of a marker it reuses).
        init(id: ClusterID<Element>, cluster: Cluster<Element>, coordinate: Coordinate) {
            self.id = .cluster(id)
            self.cluster = cluster
            clusterID = id
            self.coordinate = coordinate
            point = coordinate.mapPoint
            count = cluster.count
        }

        var isMerged: Bool { !mergedClusters.isEmpty }

        /// Draws it elsewhere; x is wrapped onto the world.
        mutating func move(to point: MapPoint) {
            self.point = MapPoint(x: MapSize.wrappedX(point.x), y: point.y)
            coordinate = point.coordinate
        }

        /// Draws it elsewhere on the plane, by an offset.
        mutating func move(dx: Double, dy: Double) {
            move(to: MapPoint(x: point.x + dx, y: point.y + dy))
        }
    }

    var items: [Item]
    /// Points per map unit.
    let scale: Double
    let zoom: Double
    /// The clustering that made the clusters, for their expansion zooms and members.
    let clustering: Clustering<Element>

    static var worldWidth: Double { MapSize.worldWidth }

    init(_ items: [Item], viewport: Viewport, clustering: Clustering<Element>) {
        self.init(items, scale: viewport.pointsPerMapUnit, zoom: viewport.zoom, clustering: clustering)
    }

    /// Items laid out at a zoom, `scale` points to a map unit.
    init(_ items: [Item], scale: Double, zoom: Double, clustering: Clustering<Element>) {
        self.items = items
        self.scale = scale
        self.zoom = zoom
        self.clustering = clustering
    }

    // MARK: - Neighbours

    /// Buckets of items by position, each at least one marker wide and high, wrapping across the antimeridian.
    private struct Buckets {
        let columns: Int
        let width: Double
        let height: Double
        var items: [Int: [Int]] = [:]

        init(markerWidth: Double, markerHeight: Double) {
            columns = max(1, Int((MarkerLayout.worldWidth / markerWidth).rounded(.down)))
            width = MarkerLayout.worldWidth / Double(columns)
            height = markerHeight
        }

        func cell(of point: MapPoint) -> (column: Int, row: Int) {
            let column = min(Int(MapSize.wrappedX(point.x) / width), columns - 1)
            return (column, Int((point.y / height).rounded(.down)))
        }

        mutating func insert(_ item: Int, at point: MapPoint) {
            let (column, row) = cell(of: point)
            items[row &* columns &+ column, default: []].append(item)
        }

        /// The items in the 3 × 3 buckets around a point's, each once.
        func neighbours(of point: MapPoint) -> [Int] {
            let (column, row) = cell(of: point)
            var seenColumns: [Int] = []
            for offset in -1...1 {
                let next = ((column + offset) % columns + columns) % columns
                if !seenColumns.contains(next) { seenColumns.append(next) }
            }
            var result: [Int] = []
            for neighbourRow in (row - 1)...(row + 1) {
                for next in seenColumns { result += items[neighbourRow &* columns &+ next] ?? [] }
            }
            return result
        }
    }

    /// How far apart two markers are on screen, in points: the x distance by the shorter way around the world.
    private func screenDistance(_ a: MapPoint, _ b: MapPoint) -> (dx: Double, dy: Double) {
        (MapSize.wrappedDeltaX(from: a.x, to: b.x) * scale, (b.y - a.y) * scale)
    }

    // MARK: - Merging

    /// Merges markers that overlap or touch into one, by the footprint `resolution` gives them, until none do.
    ///
    /// A merged marker is placed at the mean of its parts' positions weighted by count. Items are taken in order, so
    /// the result is the same for the same input.
    ///
    /// A merge is a cluster too, so the clustering's limits hold for it: past
    /// `ClusterOptions.maxZoomLevelForClustering` nothing merges, and a merged marker of fewer elements
    /// than `ClusterOptions.minCountForClustering` is taken apart again.
    ///
    /// With `bounds`, every marker is drawn inside them, as far from each edge that has a neighbour (not the world's)
    /// as ``OverlapResolution/inset(ofCount:)`` says: markers laid out alike in the next bounds never overlap these.
    mutating func merge(_ resolution: OverlapResolution, within bounds: MapRect? = nil) {
        guard clustering.options.clusters(atZoom: zoom) else { return }
        if let bounds {
            for offset in items.indices { keep(&items[offset], in: bounds, resolution) }
        }
        let originals = items
        // The positions in `originals` each item holds.
        var parts = items.indices.map { [$0] }
        var merged = true
        while merged {
            merged = false
            // Buckets as large as the largest marker (which a merge may have grown), so that every overlap is found
            // among a bucket's neighbours.
            let largest = items.map(\.count).max() ?? 1
            let extent = resolution.extent(ofCount: largest)
            var buckets = Buckets(markerWidth: extent.width / scale, markerHeight: extent.height / scale)
            for (offset, item) in items.enumerated() { buckets.insert(offset, at: item.point) }
            var alive = [Bool](repeating: true, count: items.count)
            for first in items.indices where alive[first] {
                for second in buckets.neighbours(of: items[first].point).sorted()
                where second > first && alive[second] {
                    let (dx, dy) = screenDistance(items[first].point, items[second].point)
                    let apart = resolution.separatingScale(
                        dx: dx, dy: dy, counts: items[first].count, items[second].count)
                    // A hair of tolerance, so that markers meant to touch do, whatever the rounding of their
                    // positions.
                    guard apart >= 1 - 1e-9 else { continue }
                    items[first] = combine(items[first], items[second], dx: dx, dy: dy)
                    if let bounds { keep(&items[first], in: bounds, resolution) }
                    parts[first] += parts[second]
                    alive[second] = false
                    merged = true
                }
            }
            if merged {
                items = items.indices.filter { alive[$0] }.map { items[$0] }
                parts = parts.indices.filter { alive[$0] }.map { parts[$0] }
            }
        }
        // A merge of fewer elements than a cluster needs stands apart again, as its parts.
        let minimumCount = clustering.options.minCountForClustering
        items = zip(items, parts).flatMap { item, parts in
            item.isMerged && item.count < minimumCount ? parts.map { originals[$0] } : [item]
        }
        for offset in items.indices where items[offset].isMerged {
            items[offset].id = .merged([items[offset].clusterID] + items[offset].mergedIDs)
        }
    }

    /// Moves a marker inside `bounds`, its inset away from each of their edges that another area lies beyond: east
    /// and west unless they span the world's width, north and south unless they are the world's.
    private func keep(_ item: inout Item, in bounds: MapRect, _ resolution: OverlapResolution) {
        let inset = resolution.inset(ofCount: item.count)
        let (dx, dy) = (inset.width / scale, inset.height / scale)
        var point = item.point
        if bounds.size.width < MapSize.worldWidth {
            // Inside a block less wide than the world, a marker's x is the block's own (not a copy around the world).
            point.x = min(max(point.x, bounds.origin.x + dx), bounds.origin.x + bounds.size.width - dx)
        }
        if bounds.origin.y > 0 { point.y = max(point.y, bounds.origin.y + dy) }
        if bounds.origin.y + bounds.size.height < MapSize.worldWidth {
            point.y = min(point.y, bounds.origin.y + bounds.size.height - dy)
        }
        if point != item.point { item.move(to: point) }
    }

    private func combine(_ a: Item, _ b: Item, dx: Double, dy: Double) -> Item {
        let share = Double(b.count) / Double(a.count + b.count)
        let point = MapPoint(x: a.point.x + dx / scale * share, y: a.point.y + dy / scale * share)
        var result = a
        result.mergedClusters += [b.cluster] + b.mergedClusters
        result.mergedIDs += [b.clusterID] + b.mergedIDs
        result.move(to: point)
        result.count = a.count + b.count
        return result
    }

    // MARK: - Separating

    /// Nudges overlapping markers apart along the axis that needs the smaller move, in up to `rounds` rounds.
    mutating func separate(markerSize: ViewSize, rounds: Int = 64) {
        for _ in 0..<rounds {
            var moved = false
            var buckets = Buckets(markerWidth: markerSize.width / scale, markerHeight: markerSize.height / scale)
            for (offset, item) in items.enumerated() { buckets.insert(offset, at: item.point) }
            for first in items.indices {
                for second in buckets.neighbours(of: items[first].point).sorted() where second > first {
                    let (dx, dy) = screenDistance(items[first].point, items[second].point)
                    let overlapX = markerSize.width - abs(dx)
                    let overlapY = markerSize.height - abs(dy)
                    // Half a point of slack, so that markers pushed to touch are done with.
                    guard overlapX > 0.5 && overlapY > 0.5 else { continue }
                    if overlapX <= overlapY {
                        let push = (overlapX / 2 + 0.5) / scale * (dx < 0 ? -1 : 1)
                        items[first].move(dx: -push, dy: 0)
                        items[second].move(dx: push, dy: 0)
                    } else {
                        let push = (overlapY / 2 + 0.5) / scale * (dy < 0 ? -1 : 1)
                        items[first].move(dx: 0, dy: -push)
                        items[second].move(dx: 0, dy: push)
                    }
                    moved = true
                }
            }
            if !moved { return }
        }
    }

    // MARK: - Fanning out

    /// Replaces each group of elements on one coordinate that `fanOut` takes with its members, on a circle around
    /// the group's position.
    mutating func fanOut(_ fanOut: SameLocationFanOut, clusteringIsOn: Bool) {
        guard !clusteringIsOn || clustering.options.zoomLevel(forZoom: zoom) >= fanOut.startZoom else { return }
        let radius = fanOut.radius / scale
        items = items.flatMap { item -> [Item] in
            let cluster = item.cluster
            guard !item.isMerged, cluster.isCluster, cluster.isSameLocation, cluster.count <= fanOut.maximumCount
            else { return [item] }
            let members = clustering.membersWithCoordinates(ofOwn: cluster)
            return members.enumerated().map { offset, member in
                // Clockwise from the top, evenly spaced.
                let angle = 2 * Double.pi * Double(offset) / Double(members.count) - Double.pi / 2
                let single = Cluster<Element>.single(member.element, at: member.coordinate, in: cluster)
                var fanned = Item(id: single.id, cluster: single, coordinate: item.coordinate)
                switch fanOut.unit {
                case .points:
                    fanned.move(dx: radius * mathCos(angle), dy: radius * mathSin(angle))
                case .metres:
                    let bearing = 360 * Double(offset) / Double(members.count)
                    fanned.move(to: item.coordinate.destination(metres: fanOut.radius, bearing: bearing).mapPoint)
                }
                return fanned
            }
        }
    }
}
