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

    init(_ items: [Item], viewport: Viewport, clustering: Clustering<Element>) {
        self.items = items
        scale = viewport.pointsPerMapUnit
        zoom = viewport.zoom
        self.clustering = clustering
    }

    // MARK: - Separating

    /// Nudges overlapping markers apart along the axis that needs the smaller move, in up to `rounds` rounds.
    mutating func separate(markerSize: ViewSize, rounds: Int = 64) {
        for _ in 0..<rounds {
            var moved = false
            var buckets = MarkerBuckets(markerWidth: markerSize.width / scale, markerHeight: markerSize.height / scale)
            for (offset, item) in items.enumerated() { buckets.insert(offset, at: item.point) }
            for first in items.indices {
                for second in buckets.neighbours(of: items[first].point).sorted() where second > first {
                    let (dx, dy) = items[first].point.screenDelta(to: items[second].point, scale: scale)
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

/// Buckets of items by position, each at least one marker wide and high, wrapping across the antimeridian.
struct MarkerBuckets {
    let columns: Int
    let width: Double
    let height: Double
    var items: [Int: [Int]] = [:]

    init(markerWidth: Double, markerHeight: Double) {
        columns = max(1, Int((MapSize.worldWidth / markerWidth).rounded(.down)))
        width = MapSize.worldWidth / Double(columns)
        height = markerHeight
    }

    func cell(of point: MapPoint) -> (column: Int, row: Int) {
        let column = min(Int(MapSize.wrappedX(point.x) / width), columns - 1)
        return (column, Int((point.y / height).rounded(.down)))
    }

    /// A bucket's number.
    func key(of cell: (column: Int, row: Int)) -> Int { cell.row &* columns &+ cell.column }

    mutating func insert(_ item: Int, at point: MapPoint) {
        items[key(of: cell(of: point)), default: []].append(item)
    }

    /// The 3 × 3 buckets around a point's, each once: in a world of one or two columns, a column meets itself around
    /// the back.
    func forEachNeighbour(of point: MapPoint, _ body: (_ column: Int, _ row: Int) -> Void) {
        let (column, row) = cell(of: point)
        let west = (column - 1 + columns) % columns
        let east = (column + 1) % columns
        for neighbourRow in (row - 1)...(row + 1) {
            body(column, neighbourRow)
            if west != column { body(west, neighbourRow) }
            if east != column && east != west { body(east, neighbourRow) }
        }
    }

    /// Whether two buckets are among each other's 3 × 3 (``forEachNeighbour(of:_:)``'s), around the back of the world
    /// too.
    func meet(_ a: (column: Int, row: Int), _ b: (column: Int, row: Int)) -> Bool {
        let east = (b.column - a.column + columns) % columns
        return abs(b.row - a.row) <= 1 && (east <= 1 || east == columns - 1)
    }

    /// The items in the 3 × 3 buckets around a point's, each once.
    func neighbours(of point: MapPoint) -> [Int] {
        var result: [Int] = []
        forEachNeighbour(of: point) { column, row in result += items[key(of: (column, row))] ?? [] }
        return result
    }
}

extension MapPoint {
    /// How far another point lies from this one on screen, `scale` points to a map unit: the x distance by the shorter
    /// way around the world.
    func screenDelta(to other: MapPoint, scale: Double) -> (dx: Double, dy: Double) {
        (MapSize.wrappedDeltaX(from: x, to: other.x) * scale, (other.y - y) * scale)
    }
}
