@_spi(MapClusterServer) import MapCluster

/// Markers merged where they would overlap, laid out over a partition of the world that depends on the grid level and
/// the markers' sizes alone: every viewport, tile and id sees the same merged markers at a zoom, whatever area it asks
/// for.
///
/// At each grid level the world is cut into blocks of 2^*k* × 2^*k* cells, at least ``minimumBlockSide`` points and
/// four of the largest markers a side. Markers merge only with markers of their own block, at the scale of the level's
/// smallest zoom: no two markers of a block overlap anywhere in the level, and the layout holds still while the map
/// zooms within it. A marker is drawn inside its block, at least half its size from each edge another block lies
/// beyond (a marker nearer is drawn that far in): markers of two blocks never overlap either, and each block is laid
/// out alone.
///
/// A marker's expansion zoom is the first zoom above the level it shows at where its points show as more than one
/// marker of this layout, found by laying out the blocks that hold them, level by level. Blocks are laid out once and
/// kept with the expansion zooms found for their markers, the latest ``capacity`` markers' worth, for the index and
/// options this layout was made for.
final class MergeLayout<Element: Hashable & Sendable>: Sendable {
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
    /// The most markers kept, in blocks or as expansion zooms; past it, the half used longest ago goes.
    ///
    /// An empty block counts as one.
    static var capacity: Int { 262_144 }

    struct BlockKey: Hashable {
        let level: Int
        let block: GridCell
    }

    /// A marker of the layout: its block, and its place among the block's markers.
    struct MarkerPlace {
        let block: Block
        let marker: Int
    }

    /// One block laid out: its clusters, and the markers they make, with their expansion zooms once found.
    ///
    /// The expansion zooms are read and written under the layout's lock alone, hence `@unchecked Sendable`.
    final class Block: @unchecked Sendable {
        let clusters: [Cluster<Element>]
        let merge: MarkerMerge
        /// The clusters by the first key of their grid cells (empty: in that order already), and those keys: the
        /// clusters of a cell are one run.
        private let byKey: [Int]
        private let keys: [UInt64]
        /// The marker that holds each cluster (empty: the one at the cluster's place, none merged).
        private let markerOf: [Int]
        /// The expansion zooms found, by marker (empty: none yet; `nil`: not this one yet).
        ///
        /// Each depends on the marker alone, and every view and route asks again.
        private var expansionZooms: [Double??] = []

        /// A block laid out in an earlier version, for a later one: the same markers, their expansion zooms to be found
        /// again (they depend on deeper levels).
        init(carrying earlier: Block) {
            (clusters, merge, byKey, keys, markerOf) =
                (earlier.clusters, earlier.merge, earlier.byKey, earlier.keys, earlier.markerOf)
        }

        /// The expansion zoom found for a marker; `nil` if none was.
        ///
        /// Under the layout's lock only.
        fileprivate func expansionZoom(ofMarker marker: Int) -> Double?? {
            marker < expansionZooms.count ? expansionZooms[marker] : nil
        }

        /// Keeps the expansion zoom found for a marker.
        ///
        /// Under the layout's lock only.
        fileprivate func remember(_ zoom: Double?, ofMarker marker: Int) {
            if expansionZooms.isEmpty { expansionZooms = Array(repeating: nil, count: merge.markers.count) }
            expansionZooms[marker] = .some(zoom)
        }

        init(clusters: [Cluster<Element>], merge: MarkerMerge) {
            self.clusters = clusters
            self.merge = merge
            let firstKeys = clusters.map(\.cell.keyRange.lowerBound)
            if let order = Self.keyOrder(of: firstKeys) {
                byKey = order
                keys = order.map { firstKeys[$0] }
            } else {
                byKey = []
                keys = firstKeys
            }
            if merge.markers.count == clusters.count && merge.parts.indices.elementsEqual(merge.parts) {
                markerOf = []
            } else {
                var markerOf = Array(repeating: 0, count: clusters.count)
                for (offset, marker) in merge.markers.enumerated() {
                    for part in merge.parts[marker.parts] { markerOf[part] = offset }
                }
                self.markerOf = markerOf
            }
        }

        /// The order that sorts clusters by the first keys of their cells; `nil` if they are in it already, as the
        /// index answers them, mostly.
        static func keyOrder(of firstKeys: [UInt64]) -> [Int]? {
            guard !zip(firstKeys, firstKeys.dropFirst()).allSatisfy({ $0 <= $1 }) else { return nil }
            return firstKeys.indices.sorted { firstKeys[$0] < firstKeys[$1] }
        }

        /// The clusters whose grid cells lie in `cell`, or hold it, with the markers that hold them.
        func forEachCluster(meeting cell: GridCell, _ body: (Cluster<Element>, Int) -> Bool) {
            let level = clusters.first?.cell.level ?? cell.level
            let range = cell.ancestor(atLevel: min(cell.level, level)).keyRange
            var low = 0
            var high = keys.count
            while low < high {
                let middle = (low + high) / 2
                if keys[middle] < range.lowerBound { low = middle + 1 } else { high = middle }
            }
            while low < keys.count && keys[low] <= range.upperBound {
                let cluster = byKey.isEmpty ? low : byKey[low]
                guard body(clusters[cluster], markerOf.isEmpty ? cluster : markerOf[cluster]) else { return }
                low += 1
            }
        }

        /// Whether any cluster a marker holds satisfies `predicate`.
        func holds(_ marker: MarkerMerge.Marker, where predicate: (Cluster<Element>) -> Bool) -> Bool {
            for part in marker.parts where predicate(clusters[merge.parts[part]]) { return true }
            return false
        }

        /// A marker as a view shows it.
        func item(_ marker: MarkerMerge.Marker) -> Item {
            let head = clusters[merge.parts[marker.parts.lowerBound]]
            var item = Item(id: head.id, cluster: head, coordinate: head.coordinate)
            guard marker.parts.count > 1 else {
                // Drawn inside its block, or where it is.
                if marker.point != item.point { item.move(to: marker.point) }
                return item
            }
            let rest = merge.parts[marker.parts.dropFirst()].map { clusters[$0] }
            item.mergedClusters = rest
            item.mergedIDs = rest.map(\.id)
            item.count = marker.count
            item.move(to: marker.point)
            item.id = .merged([head.id] + item.mergedIDs)
            return item
        }

        /// Whether a marker is the merged one of these cluster ids, in order.
        func marker(_ marker: MarkerMerge.Marker, is ids: [ClusterID<Element>]) -> Bool {
            marker.parts.count == ids.count
                && zip(marker.parts, ids).allSatisfy { part, id in clusters[merge.parts[part]].id == id }
        }
    }

    /// A row of blocks that runs around the world, at a grid level.
    private struct RowKey: Hashable {
        let level: Int
        let row: UInt32
    }

    private struct State {
        var blocks = RecentStore<BlockKey, Block>(capacity: MergeLayout.capacity)
        /// The blocks that hold clusters of a row of blocks that runs around the world, west to east.
        var rows = RecentStore<RowKey, [(cell: GridCell, block: Block)]>(capacity: MergeLayout.capacity)
        var selections: [Set<String>: MergeLayout] = [:]
        /// The layout of the version before and the keys changed since: a block it laid out that holds none of them
        /// is laid out alike in this one.
        var earlier: (layout: MergeLayout, changed: DirtyKeys)?

        mutating func store(_ block: Block, at key: BlockKey) {
            blocks.insert(block, for: key, weight: max(block.merge.markers.count, 1))
        }
    }

    private let state = Locked(State())

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
        if case .keys = changed { next.state.withLock { $0.earlier = (self, changed) } }
        // One version back, not a chain of every one.
        state.withLock { $0.earlier = nil }
        return next
    }

    /// The layout of the same index showing only these categories, kept with this one.
    func selecting(categories: Set<String>?, _ clustering: Clustering<Element>) -> MergeLayout {
        guard let categories else { return self }
        return state.withLock { state in
            if let kept = state.selections[categories] { return kept }
            let made = MergeLayout(clustering, merging: resolution)
            state.selections[categories] = made
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

    /// One block at a level, laid out once.
    func block(_ block: GridCell, level: Int) -> Block {
        kept([block], level: level)[block] ?? layOut(block, level: level)
    }

    /// Lays out a block not kept, from its own query of the index.
    private func layOut(_ block: GridCell, level: Int) -> Block {
        let clusters =
            clustering.clusters(
                in: CellRegion(block, atLevel: level), zoom: layoutZoom(ofLevel: level), stop: { false })
            ?? []
        return layOut(clusters, of: block, level: level)
    }

    /// Blocks as laid out before, in this version or (where no changed element lies in one) the last one.
    private func kept(_ blocks: [GridCell], level: Int) -> [GridCell: Block] {
        let (found, earlier) = state.withLock { state in
            var found: [GridCell: Block] = [:]
            for block in blocks {
                if let kept = state.blocks.value(for: BlockKey(level: level, block: block)) { found[block] = kept }
            }
            return (found, state.earlier)
        }
        guard let earlier, found.count < blocks.count else { return found }
        let unchanged = blocks.filter { found[$0] == nil && !earlier.changed.intersects($0.keyRange) }
        guard !unchanged.isEmpty else { return found }
        let carried = earlier.layout.kept(unchanged, level: level).mapValues(Block.init(carrying:))
        state.withLock { state in
            for (block, laidOut) in carried { state.store(laidOut, at: BlockKey(level: level, block: block)) }
        }
        return found.merging(carried) { first, _ in first }
    }

    /// Lays out the blocks of a level not kept yet, from one query of the rows and columns they span (unless that
    /// runs around the world).
    private func layOut(_ cells: Set<GridCell>, level: Int) {
        let asked = Array(cells)
        let kept = kept(asked, level: level)
        let absent = asked.filter { kept[$0] == nil }
        guard absent.count > 1, let first = absent.first else {
            for cell in absent { _ = layOut(cell, level: level) }
            return
        }
        var (rows, columns) = (first.y...first.y, first.x...first.x)
        for cell in absent {
            rows = min(rows.lowerBound, cell.y)...max(rows.upperBound, cell.y)
            columns = min(columns.lowerBound, cell.x)...max(columns.upperBound, cell.x)
        }
        // Blocks far apart (or either side of the antimeridian) are asked for one by one.
        guard rows.count * columns.count <= 4 * absent.count else {
            for cell in absent { _ = layOut(cell, level: level) }
            return
        }
        let area = CellRegion(level: level, under: rows, columns, ofLevel: first.level)
        var clusters: [GridCell: [Cluster<Element>]] = [:]
        for cluster in clustering.clusters(in: area, zoom: layoutZoom(ofLevel: level), stop: { false }) ?? [] {
            clusters[cluster.cell.ancestor(atLevel: first.level), default: []].append(cluster)
        }
        for cell in absent { _ = layOut(clusters[cell] ?? [], of: cell, level: level) }
    }

    /// Merges a block's clusters, and keeps the markers.
    private func layOut(_ clusters: [Cluster<Element>], of block: GridCell, level: Int, keep: Bool = true) -> Block {
        let zoom = layoutZoom(ofLevel: level)
        let points = clusters.map(\.coordinate.mapPoint)
        let merge: MarkerMerge
        if options.clusters(atZoom: zoom) {
            merge = MarkerMerge(
                points: points, counts: clusters.map(\.count), scale: WebMercator.pointsPerMapUnit(atZoom: zoom),
                resolution: resolution, within: block.rect, minimumCount: options.minCountForClustering)
        } else {
            // Past the zooms that cluster, nothing merges: a merge is a cluster too.
            merge = MarkerMerge(unmerged: points, counts: clusters.map(\.count))
        }
        let laidOut = Block(clusters: clusters, merge: merge)
        if keep { state.withLock { $0.store(laidOut, at: BlockKey(level: level, block: block)) } }
        return laidOut
    }

    /// The areas at a region's level of the blocks its cells lie in: one for its columns, one more for those west of
    /// the antimeridian when it crosses it.
    private func blockAreas(of region: CellRegion) -> [CellRegion] {
        let blockLevel = blockLevel(ofLevel: region.level)
        let shift = region.level - blockLevel
        func blocks(_ range: ClosedRange<UInt32>) -> ClosedRange<UInt32> {
            (range.lowerBound >> shift)...(range.upperBound >> shift)
        }
        return [region.columns, region.wrappedColumns].compactMap { $0 }.map {
            CellRegion(level: region.level, under: blocks(region.rows), blocks($0), ofLevel: blockLevel)
        }
    }

    /// The markers a viewport shows, with their expansion zooms (``expansionZooms(of:places:shownAt:)``): those of the
    /// blocks its region touches that hold a cluster of the region or stand inside `rect`.
    ///
    /// Blocks laid out before are taken as they are. The clusters of the others come from one query of the area they
    /// cover, and only blocks that hold some are laid out: most blocks of a wide region, a row of tiles, are empty.
    func items(in region: CellRegion, rect: MapRect) -> [Item] {
        let level = region.level
        let blockLevel = blockLevel(ofLevel: level)
        let areas = blockAreas(of: region)
        // The blocks in rows, north to south, and each row west to east.
        var ordered: [(cell: GridCell, block: Block)] = []
        // A view's few blocks are looked up one by one; a wide area's are found from its clusters, row by row where it
        // runs around the world (a row of tiles).
        let listed = Self.blocks(of: areas, atLevel: blockLevel, upTo: 256)
        if listed == nil, areas.count == 1, areas[0].columns.count == 1 << level {
            let shift = level - blockLevel
            for row in areas[0].rows.lowerBound >> shift...areas[0].rows.upperBound >> shift {
                ordered += blocks(inRow: row, level: level)
            }
        } else {
            var blocks = listed.map { kept($0, level: level) } ?? [:]
            if blocks.count < listed?.count ?? .max {
                let zoom = layoutZoom(ofLevel: level)
                var clusters: [GridCell: [Cluster<Element>]] = [:]
                for area in areas {
                    var own: [GridCell: [Cluster<Element>]] = [:]
                    for cluster in clustering.clusters(in: area, zoom: zoom, stop: { false }) ?? [] {
                        own[cluster.cell.ancestor(atLevel: blockLevel), default: []].append(cluster)
                    }
                    // Two areas that meet around the world share blocks: each once.
                    for (block, blockClusters) in own where blocks[block] == nil && clusters[block] == nil {
                        clusters[block] = blockClusters
                    }
                }
                // Listed blocks were looked up already.
                let found = listed == nil ? kept(Array(clusters.keys), level: level) : [:]
                for (block, blockClusters) in clusters {
                    blocks[block] = found[block] ?? layOut(blockClusters, of: block, level: level)
                }
                // A listed block with no cluster is kept empty, so that the next view over it asks the index nothing.
                for block in listed ?? [] where blocks[block] == nil {
                    blocks[block] = layOut([], of: block, level: level)
                }
            }
            ordered = blocks.sorted { ($0.key.y, $0.key.x) < ($1.key.y, $1.key.x) }.map { ($0.key, $0.value) }
        }
        var items: [Item] = []
        var places: [MarkerPlace] = []
        for (_, block) in ordered {
            for (offset, marker) in block.merge.markers.enumerated()
            where Self.contains(rect, marker.point)
                || block.holds(marker, where: { region.contains($0.cell) })
            {
                items.append(block.item(marker))
                places.append(MarkerPlace(block: block, marker: offset))
            }
        }
        let expansionZooms = expansionZooms(of: items, places: places, shownAt: level)
        for offset in items.indices where items[offset].count > 1 {
            items[offset].layoutExpansionZoom = .some(expansionZooms[offset])
        }
        return items
    }

    /// The blocks that hold clusters in a row of blocks that runs around the world, west to east: laid out from one
    /// query of the row, and kept together (not block by block), for the rows of tiles above and below ask for the row
    /// too.
    private func blocks(inRow row: UInt32, level: Int) -> [(cell: GridCell, block: Block)] {
        let key = RowKey(level: level, row: row)
        if let kept = state.withLock({ $0.rows.value(for: key) }) { return kept }
        let blockLevel = blockLevel(ofLevel: level)
        let area = CellRegion(
            level: level, under: row...row, 0...UInt32(truncatingIfNeeded: (UInt64(1) << blockLevel) - 1),
            ofLevel: blockLevel)
        var clusters = clustering.clusters(in: area, zoom: layoutZoom(ofLevel: level), stop: { false }) ?? []
        // A block's cells are one run of keys, and a row's blocks lie west to east in key order: a block's clusters
        // are one run of them, in key order.
        if let order = Block.keyOrder(of: clusters.map(\.cell.keyRange.lowerBound)) {
            clusters = order.map { clusters[$0] }
        }
        var blocks: [(cell: GridCell, block: Block)] = []
        var start = clusters.startIndex
        while start < clusters.endIndex {
            let cell = clusters[start].cell.ancestor(atLevel: blockLevel)
            var end = start + 1
            while end < clusters.endIndex && clusters[end].cell.ancestor(atLevel: blockLevel) == cell { end += 1 }
            blocks.append((cell, layOut(Array(clusters[start..<end]), of: cell, level: level, keep: false)))
            start = end
        }
        let markers = blocks.reduce(0) { $0 + $1.block.merge.markers.count }
        state.withLock { $0.rows.insert(blocks, for: key, weight: max(markers, 1)) }
        return blocks
    }

    /// The blocks at `level` of areas whose columns and rows run whole blocks, each once; `nil` if more than `limit`.
    private static func blocks(of areas: [CellRegion], atLevel level: Int, upTo limit: Int) -> [GridCell]? {
        var blocks: Set<GridCell> = []
        for area in areas {
            let shift = area.level - level
            let (rows, columns) = (
                area.rows.lowerBound >> shift...area.rows.upperBound >> shift,
                area.columns.lowerBound >> shift...area.columns.upperBound >> shift
            )
            guard blocks.count + rows.count * columns.count <= limit else { return nil }
            for y in rows {
                for x in columns { blocks.insert(GridCell(level: level, x: x, y: y)) }
            }
        }
        return Array(blocks)
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
        guard let cell = block(holding: footprints, atLevel: level) else { return true }
        let block = block(cell, level: level)
        var holder: Int?
        var split = false
        for footprint in footprints where !split {
            block.forEachCluster(meeting: footprint.cell) { cluster, marker in
                guard marker != holder, footprint.overlaps(self.footprint(of: cluster)) else { return true }
                split = holder != nil
                holder = marker
                return !split
            }
        }
        if split { return true }
        // None holds them only if the index lost them: nothing shows them as one.
        return holder == nil
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

    /// The expansion zooms of markers a view shows at a level (``items(in:rect:)``), of those of more than one
    /// element (`nil` for the others): for a cluster, the first zoom after its tight cell's level where its points show
    /// apart; for a merged marker, the first after the highest level it shows at (`shown`, or one above it), which
    /// every caller finds alike, from its parts alone.
    ///
    /// Each is found once and kept with its block: it depends on the marker alone, and every view and route asks again.
    private func expansionZooms(of items: [Item], places: [MarkerPlace], shownAt shown: Int) -> [Double?] {
        let known = state.withLock { _ in
            zip(items, places).map { item, place in
                item.count > 1 ? place.block.expansionZoom(ofMarker: place.marker) : .some(nil)
            }
        }
        // The blocks where the unknown clusters' points may first split, laid out together first.
        var next: [Int: Set<GridCell>] = [:]
        for offset in known.indices where known[offset] == nil && !items[offset].isMerged {
            guard case .cell(let tight) = items[offset].cluster.id.unfiltered,
                let level = level(after: max(tight.level, shown))
            else { continue }
            let blockLevel = blockLevel(ofLevel: level)
            if tight.level >= blockLevel { next[level, default: []].insert(tight.ancestor(atLevel: blockLevel)) }
        }
        for (level, blocks) in next { layOut(blocks, level: level) }
        var found: [(place: MarkerPlace, zoom: Double?)] = []
        let zooms = known.indices.map { offset -> Double? in
            if let known = known[offset] { return known }
            let zoom = expansionZoom(finding: items[offset], shownAt: shown)
            found.append((places[offset], zoom))
            return zoom
        }
        if !found.isEmpty {
            state.withLock { _ in for (place, zoom) in found { place.block.remember(zoom, ofMarker: place.marker) } }
        }
        return zooms
    }

    /// The expansion zoom of one cluster's marker, found afresh: as ``expansionZooms(of:places:shownAt:)`` finds it for
    /// any view that shows it.
    func expansionZoom(ofCluster item: Item) -> Double? {
        expansionZoom(finding: item, shownAt: 0)
    }

    private func expansionZoom(finding item: Item, shownAt shown: Int) -> Double? {
        guard item.isMerged else {
            guard item.count > 1, case .cell(let tight) = item.cluster.id.unfiltered else {
                return clustering.expansionZoom(ofOwn: item.cluster)
            }
            return expansionZoom(of: [item.cluster], after: max(tight.level, shown))
        }
        let parts = [item.cluster] + item.mergedClusters
        let top = highestShowing(parts, downTo: shown + 1)?.level ?? shown
        return expansionZoom(of: parts, after: top)
    }

    /// The merged marker of these parts, as the layout shows it at the highest level it shows at, with its expansion
    /// zoom; `nil` if no level shows it.
    func merged(_ parts: [Cluster<Element>]) -> (item: Item, expansionZoom: Double?)? {
        guard let (top, place, item) = highestShowing(parts, downTo: 0) else { return nil }
        if let known = state.withLock({ _ in place.block.expansionZoom(ofMarker: place.marker) }) {
            return (item, known)
        }
        let zoom = expansionZoom(of: parts, after: top)
        state.withLock { _ in place.block.remember(zoom, ofMarker: place.marker) }
        return (item, zoom)
    }

    /// The highest level from `lowest` up where the parts show merged as one marker, and that marker; `nil` if none
    /// does.
    ///
    /// It looks no deeper than where a part splits, or than where its parts lie too far apart on screen for one merge
    /// to gather them, and stops going up once a part is no longer a cluster of its block.
    private func highestShowing(_ parts: [Cluster<Element>], downTo lowest: Int)
        -> (level: Int, place: MarkerPlace, item: Item)?
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
        let ids = parts.map(\.id)
        while level >= lowest {
            defer { level -= 1 }
            // A level no zoom reaches shows nothing.
            guard options.gridLevel(forZoom: options.zoom(forLevel: level)) == level else { continue }
            guard let cell = block(holding: footprints, atLevel: level) else { continue }
            let block = block(cell, level: level)
            if let offset = block.merge.markers.firstIndex(where: { block.marker($0, is: ids) }) {
                return (level, MarkerPlace(block: block, marker: offset), block.item(block.merge.markers[offset]))
            }
            // Below the level where a part first shows as itself, it never shows again.
            let present = Set(block.clusters.map(\.id))
            if !ids.allSatisfy(present.contains) { return nil }
        }
        return nil
    }
}

/// What a layout keeps of what it found, by weight (markers): the latest, and what was asked for again lately.
///
/// Past half its capacity, the values put in since it last turned over become the older half, and the older half
/// before goes; a value asked for from the older half moves into the newer.
struct RecentStore<Key: Hashable, Value> {
    private var newer: [Key: (value: Value, weight: Int)] = [:]
    private var older: [Key: (value: Value, weight: Int)] = [:]
    private var newerWeight = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    mutating func value(for key: Key) -> Value? {
        if let kept = newer[key] { return kept.value }
        guard let kept = older.removeValue(forKey: key) else { return nil }
        insert(kept.value, for: key, weight: kept.weight)
        return kept.value
    }

    mutating func insert(_ value: Value, for key: Key, weight: Int) {
        if newerWeight >= capacity / 2 {
            older = newer
            newer = [:]
            newerWeight = 0
        }
        newer[key] = (value, weight)
        newerWeight += weight
    }
}
