import Dispatch
@_spi(MapClusterServer) import MapCluster

/// Markers merged where they would overlap, laid out over a partition of the world that depends on the grid level and
/// the markers' sizes alone: every viewport, tile and id sees the same merged markers at a zoom, whatever area it asks for.
///
/// At each grid level the world is cut into blocks of 2^*k* × 2^*k* cells, at least ``minimumBlockSide`` points and four
/// of the largest markers a side. Markers merge only with markers of their own block, at the scale of the level's smallest zoom: no two markers
/// of a block overlap anywhere in the level, and the layout holds still while the map zooms within it. A marker is
/// drawn inside its block, at least half its size from each edge another block lies beyond (a marker nearer is drawn
/// that far in): markers of two blocks never overlap either, and each block is laid out alone.
///
/// A marker's expansion zoom is the first zoom above the level it shows at where its points show as more than one
/// marker of this layout, found by laying out the blocks that hold them, level by level. Blocks are laid out once and
/// kept, for the index and options this layout was made for.
final class MergeLayout<Element: Hashable & Sendable>: @unchecked Sendable {
    typealias Item = MarkerLayout<Element>.Item

    /// The clustering whose clusters merge.
    let clustering: Clustering<Element>
    /// How they merge: `.merge` or `.mergeCircles`.
    let resolution: OverlapResolution

    /// The least side of a block, in points at its level's smallest zoom: four of the largest markers the server draws.
    static var minimumBlockSide: Double { 256 }

    /// The least side of a block for these markers: four of the largest, the one of every element, and no less than
    /// ``minimumBlockSide``.
    private var blockSide: Double {
        let largest = resolution.extent(ofCount: max(clustering.index.count, 1))
        return max(Self.minimumBlockSide, 4 * max(largest.width, largest.height))
    }
    /// The most markers kept, in blocks or as expansion zooms; past it, that store starts again.
    ///
    /// An empty block counts as one.
    static var capacity: Int { 262_144 }

    private struct BlockKey: Hashable {
        let level: Int
        let block: GridCell
    }

    // Guarded by `queue`.
    private var blocks: [BlockKey: [Item]] = [:]
    /// The markers (and empty blocks) `blocks` holds.
    private var keptItems = 0
    private var selections: [Set<String>: MergeLayout] = [:]
    /// The expansion zooms found, by marker: each depends on the marker alone, and every view and route asks again.
    private var expansions: [ClusterMarker<Element>.ID: Double?] = [:]
    /// The layout of the version before and the keys changed since: a block it laid out that holds none of them is
    /// laid out alike in this one.
    private var earlier: (layout: MergeLayout, changed: DirtyKeys)?
    private let queue = DispatchQueue(label: "MapCluster.MergeLayout")

    /// The layout of `clustering` with `resolution`, if it merges (and its sizes pass validation); `nil` otherwise.
    convenience init?(_ clustering: Clustering<Element>, resolution: OverlapResolution?) {
        switch resolution {
        case .merge, .mergeCircles:
            guard let resolution, (try? resolution.validate()) != nil else { return nil }
            self.init(clustering, merging: resolution)
        case .separate, nil:
            return nil
        }
    }

    /// The layout of `clustering` with a merging resolution that passed validation.
    private init(_ clustering: Clustering<Element>, merging resolution: OverlapResolution) {
        self.clustering = clustering
        self.resolution = resolution
    }

    /// The layout of a later version of the index, with the same options, where the elements of `changed` moved: it
    /// takes over the blocks laid out here that hold none of them, as a live map's next update asks for them.
    func next(_ clustering: Clustering<Element>, changed: DirtyKeys) -> MergeLayout {
        let next = MergeLayout(clustering, merging: resolution)
        if case .keys = changed { next.earlier = (self, changed) }
        // One version back, not a chain of every one.
        queue.sync { earlier = nil }
        return next
    }

    /// The layout of the same index showing only these categories, kept with this one.
    func selecting(categories: Set<String>?, _ clustering: Clustering<Element>) -> MergeLayout {
        guard let categories else { return self }
        return queue.sync {
            if let kept = selections[categories] { return kept }
            let made = MergeLayout(clustering, merging: resolution)
            selections[categories] = made
            return made
        }
    }

    private var options: ClusterOptions<Element> { clustering.options }

    // MARK: - Levels and blocks

    /// The zoom a level's merge is laid out at: its smallest.
    func layoutZoom(ofLevel level: Int) -> Double {
        let zoom = options.zoom(forLevel: level)
        if zoom.isFinite { return zoom }
        // Level 0 reaches down to every zoom: one below level 1's first.
        let next = options.zoom(forLevel: 1)
        return next.isFinite ? next - 1 : 0
    }

    /// The level of the blocks a level's markers merge within.
    func blockLevel(ofLevel level: Int) -> Int {
        let cellSide =
            MapSize.worldWidth * WebMercator.pointsPerMapUnit(atZoom: layoutZoom(ofLevel: level))
            / Double(UInt64(1) << level)
        let shift = mathLog2(blockSide / cellSide).rounded(.up)
        guard shift.isFinite, shift > 0 else { return level }
        return max(0, level - Int(shift))
    }

    /// The markers of one block at a level, merged; laid out once.
    func items(ofBlock block: GridCell, level: Int) -> [Item] {
        if let kept = kept(block, level: level) { return kept }
        let clusters =
            clustering.clusters(
                in: CellRegion(block, atLevel: level), zoom: layoutZoom(ofLevel: level), stop: { false })
            ?? []
        return layOut(clusters, of: block, level: level)
    }

    /// A block's markers as laid out before, in this version or (where no changed element lies in it) the last one.
    private func kept(_ block: GridCell, level: Int) -> [Item]? {
        let key = BlockKey(level: level, block: block)
        let (kept, earlier) = queue.sync { (blocks[key], self.earlier) }
        if let kept { return kept }
        guard let earlier, !earlier.changed.intersects(block.keyRange),
            let unchanged = earlier.layout.queue.sync(execute: { earlier.layout.blocks[key] })
        else { return nil }
        store(unchanged, at: key)
        return unchanged
    }

    /// Merges a block's clusters, and keeps the markers.
    private func layOut(_ clusters: [Cluster<Element>], of block: GridCell, level: Int) -> [Item] {
        let zoom = layoutZoom(ofLevel: level)
        var layout = MarkerLayout<Element>(
            clusters.map { .init(id: $0.id, cluster: $0, coordinate: $0.coordinate) },
            scale: WebMercator.pointsPerMapUnit(atZoom: zoom), zoom: zoom, clustering: clustering)
        layout.merge(resolution, within: block.rect)
        store(layout.items, at: BlockKey(level: level, block: block))
        return layout.items
    }

    private func store(_ items: [Item], at key: BlockKey) {
        queue.sync {
            if keptItems >= Self.capacity {
                blocks.removeAll(keepingCapacity: true)
                keptItems = 0
            }
            blocks[key] = items
            keptItems += max(items.count, 1)
        }
    }

    /// The areas at a region's level of the blocks its cells lie in: one for its columns, one more for those west of
    /// the antimeridian when it crosses it.
    private func blockAreas(of region: CellRegion) -> [CellRegion] {
        let shift = region.level - blockLevel(ofLevel: region.level)
        let last = UInt32(truncatingIfNeeded: (UInt64(1) << shift) - 1)
        func widened(_ range: ClosedRange<UInt32>) -> ClosedRange<UInt32> {
            ((range.lowerBound >> shift) << shift)...((range.upperBound >> shift) << shift | last)
        }
        return [region.columns, region.wrappedColumns].compactMap { $0 }.map {
            CellRegion(level: region.level, rows: widened(region.rows), columns: widened($0))
        }
    }

    /// The markers a viewport shows: those of the blocks its region touches that hold a cluster of the region or stand
    /// inside `rect`.
    ///
    /// The clusters of those blocks come from one query of the area they cover, and only blocks that hold some are
    /// laid out (or taken as kept): most blocks of a wide region, a row of tiles, are empty.
    func items(in region: CellRegion, rect: MapRect) -> [Item] {
        let level = region.level
        let blockLevel = blockLevel(ofLevel: level)
        var blocks: [GridCell] = []
        var clusters: [GridCell: [Cluster<Element>]] = [:]
        for area in blockAreas(of: region) {
            var own: [GridCell: [Cluster<Element>]] = [:]
            for cluster in clustering.clusters(in: area, zoom: layoutZoom(ofLevel: level), stop: { false }) ?? [] {
                own[cluster.cell.ancestor(atLevel: blockLevel), default: []].append(cluster)
            }
            // Two areas that meet around the world share blocks: each once.
            for (block, blockClusters) in own where clusters[block] == nil {
                clusters[block] = blockClusters
                blocks.append(block)
            }
        }
        return blocks.sorted { ($0.y, $0.x) < ($1.y, $1.x) }.flatMap { block in
            let items = kept(block, level: level) ?? layOut(clusters[block] ?? [], of: block, level: level)
            return items.filter { item in
                Self.contains(rect, item.point)
                    || region.contains(item.cluster.cell) || item.mergedClusters.contains { region.contains($0.cell) }
            }
        }
    }

    /// Whether a point lies in a rectangle, which may run past the world's east edge.
    private static func contains(_ rect: MapRect, _ point: MapPoint) -> Bool {
        rect.contains(point) || rect.contains(MapPoint(x: point.x + MapSize.worldWidth, y: point.y))
            || rect.contains(MapPoint(x: point.x - MapSize.worldWidth, y: point.y))
    }

    // MARK: - Expansion

    /// Which points a cluster stands for, to tell which clusters of a deeper level hold some of them: a cell's (its
    /// tight cell's points), or one element's.
    private enum Footprint {
        case cell(GridCell)
        case element(Element, GridCell)

        var cell: GridCell {
            switch self {
            case .cell(let cell), .element(_, let cell): cell
            }
        }

        /// Whether the two stand for some points in common.
        func overlaps(_ other: Footprint) -> Bool {
            if case .element(let a, _) = self, case .element(let b, _) = other { return a == b }
            let (a, b) = (cell, other.cell)
            return a.level <= b.level ? b.ancestor(atLevel: a.level) == a : a.ancestor(atLevel: b.level) == b
        }
    }

    private func footprint(of cluster: Cluster<Element>) -> Footprint {
        switch cluster.id.unfiltered {
        case .cell(let tight): .cell(tight)
        case .location(let coordinate):
            .cell(GridCell(containing: coordinate.mapPoint, level: options.locationLevel ?? GridCell.maxLevel))
        case .element(let element):
            .element(element, GridCell(containing: cluster.coordinate.mapPoint, level: GridCell.maxLevel))
        case .filteredCell, .filteredLocation:
            preconditionFailure("an unfiltered id is never filtered")
        }
    }

    /// The deepest level any zoom reaches while elements cluster.
    private var lastLevel: Int {
        let deepest = options.firstZoomPastClustering.isFinite ? options.firstZoomPastClustering.nextDown : 64
        return options.gridLevel(forZoom: deepest)
    }

    /// The next level a zoom reaches after `level` while elements cluster; `nil` past the last.
    private func level(after level: Int) -> Int? {
        guard level < lastLevel else { return nil }
        return options.gridLevel(forZoom: options.zoom(forLevel: level + 1))
    }

    /// Whether the points of `footprints` show as more than one marker at a level.
    private func splits(_ footprints: [Footprint], atLevel level: Int) -> Bool {
        guard let block = block(holding: footprints, atLevel: level) else { return true }
        var holding = 0
        for item in items(ofBlock: block, level: level) {
            let holds = ([item.cluster] + item.mergedClusters).contains { cluster in
                let own = footprint(of: cluster)
                return footprints.contains { $0.overlaps(own) }
            }
            if holds { holding += 1 }
            if holding > 1 { return true }
        }
        // None holds them only if the index lost them: nothing shows them as one.
        return holding == 0
    }

    /// The block that holds all the points of `footprints` at a level; `nil` if they lie in more than one.
    private func block(holding footprints: [Footprint], atLevel level: Int) -> GridCell? {
        let blockLevel = blockLevel(ofLevel: level)
        var block: GridCell?
        for footprint in footprints {
            // A tight cell above the block level holds points in two of its children, so in two blocks.
            guard footprint.cell.level >= blockLevel else { return nil }
            let own = footprint.cell.ancestor(atLevel: blockLevel)
            if block == nil { block = own } else if block != own { return nil }
        }
        return block
    }

    /// The zoom at which the points of `parts` first show as more than one marker after `level`; `nil` if they never
    /// do (one place, or a clustering that never stops).
    private func expansionZoom(of parts: [Cluster<Element>], after level: Int) -> Double? {
        let footprints = parts.map(footprint(of:))
        var current = level
        while let next = self.level(after: current) {
            if splits(footprints, atLevel: next) { return options.zoom(forLevel: next) }
            current = next
        }
        let past = options.firstZoomPastClustering
        let canSplit = parts.count > 1 || clustering.expansionZoom(ofOwn: parts[0]) != nil
        return past.isFinite && canSplit ? past : nil
    }

    /// A marker's expansion zoom: for a cluster, the first zoom after its tight cell's level where its points show
    /// apart; for a merged marker, the first after the highest level it shows at (`shown`, or one above it), which
    /// every caller finds alike, from its parts alone.
    func expansionZoom(of item: Item, shownAt shown: Int) -> Double? {
        remembered(item.id) {
            guard item.isMerged else {
                guard item.count > 1, case .cell(let tight) = item.cluster.id.unfiltered else {
                    return clustering.expansionZoom(ofOwn: item.cluster)
                }
                return expansionZoom(of: [item.cluster], after: max(tight.level, shown))
            }
            let parts = [item.cluster] + item.mergedClusters
            let top = highestShowing(item.id, parts: parts, downTo: shown + 1)?.level ?? shown
            return expansionZoom(of: parts, after: top)
        }
    }

    /// The merged marker an id names, as the layout shows it at the highest level it shows at, with its expansion
    /// zoom; `nil` if no level shows it.
    func merged(id: ClusterMarker<Element>.ID, parts: [Cluster<Element>]) -> (item: Item, expansionZoom: Double?)? {
        guard let (top, item) = highestShowing(id, parts: parts, downTo: 0) else { return nil }
        return (item, remembered(id) { expansionZoom(of: parts, after: top) })
    }

    /// A marker's expansion zoom as found before, or as `find` finds it now.
    private func remembered(_ id: ClusterMarker<Element>.ID, _ find: () -> Double?) -> Double? {
        if let found = queue.sync(execute: { expansions[id] }) { return found }
        let found = find()
        queue.sync {
            if expansions.count >= Self.capacity { expansions.removeAll(keepingCapacity: true) }
            expansions[id] = found
        }
        return found
    }

    /// The highest level from `lowest` up where the merged marker `id` shows, and the marker there; `nil` if none does.
    ///
    /// It looks no deeper than where a part splits, or than where its parts lie too far apart on screen for one merge
    /// to gather them, and stops going up once a part is no longer a cluster of its block.
    private func highestShowing(_ id: ClusterMarker<Element>.ID, parts: [Cluster<Element>], downTo lowest: Int)
        -> (level: Int, item: Item)?
    {
        let footprints = parts.map(footprint(of:))
        var level = min(lastLevel, footprints.map(\.cell.level).min() ?? lastLevel)
        // Each merge joins markers at most one reach apart, and its position lies between them, or an inset from
        // there where it nears its block's edge: parts of one merged marker lie within 2 (n − 1) reaches and 2 n
        // insets of each other.
        let total = parts.reduce(0) { $0 + $1.count }
        let (reach, inset) = (resolution.extent(ofCount: total), resolution.inset(ofCount: total))
        let bound =
            2 * Double(parts.count - 1) * (reach.width * reach.width + reach.height * reach.height).squareRoot()
            + 2 * Double(parts.count) * (inset.width * inset.width + inset.height * inset.height).squareRoot()
        var span = 0.0
        for a in parts {
            for b in parts {
                let dx = MapSize.wrappedDeltaX(from: a.coordinate.mapPoint.x, to: b.coordinate.mapPoint.x)
                let dy = b.coordinate.mapPoint.y - a.coordinate.mapPoint.y
                span = max(span, (dx * dx + dy * dy).squareRoot())
            }
        }
        while level >= lowest && span * WebMercator.pointsPerMapUnit(atZoom: layoutZoom(ofLevel: level)) > bound {
            level -= 1
        }
        let ids = Set(parts.map(\.id))
        while level >= lowest {
            defer { level -= 1 }
            // A level no zoom reaches shows nothing.
            guard options.gridLevel(forZoom: options.zoom(forLevel: level)) == level else { continue }
            guard let block = block(holding: footprints, atLevel: level) else { continue }
            let items = items(ofBlock: block, level: level)
            if let item = items.first(where: { $0.id == id }) { return (level, item) }
            let present = Set(items.flatMap { [$0.cluster.id] + $0.mergedClusters.map(\.id) })
            // Below the level where a part first shows as itself, it never shows again.
            if !ids.isSubset(of: present) { return nil }
        }
        return nil
    }
}
