@_spi(MapClusterServer) import MapCluster

/// Markers merged where they overlap or touch on screen, by the footprint an ``OverlapResolution`` gives them, until
/// none do: kingpin's two-phase clustering, over positions and counts alone.
///
/// A merged marker stands at the mean of its parts' positions weighted by count. Markers are taken in order, so the
/// result is the same for the same input. A merge of fewer elements than `minimumCount` stands apart again, as its
/// parts: a merge is a cluster too.
///
/// With `bounds`, every marker is drawn inside them, as far from each edge that has a neighbour (not the world's) as
/// ``OverlapResolution/inset(ofCount:)`` says: markers merged alike in the next bounds never overlap these.
struct MarkerMerge {
    /// One marker: the inputs it holds (a run of ``parts``, its first input first), where it stands, and its count.
    struct Marker {
        var parts: Range<Int>
        var point: MapPoint
        var count: Int
    }

    /// The markers, in the order of their first inputs.
    private(set) var markers: [Marker] = []
    /// The inputs the markers hold, by their positions in the input, marker after marker.
    private(set) var parts: [Int] = []

    /// The most groups paired without a table of buckets.
    static var fewGroups: Int { 48 }

    /// Merges markers at `points` (on the plane) of `counts` elements, drawn `scale` points to a map unit.
    ///
    /// Up to `directly` groups are paired without a table of buckets, with the same result.
    init(
        points: [MapPoint], counts: [Int], scale: Double, resolution: OverlapResolution, within bounds: MapRect?,
        minimumCount: Int, pairingDirectlyUpTo directly: Int = fewGroups
    ) {
        let place = Placement(scale: scale, resolution: resolution, bounds: bounds)
        // One marker merges with nothing (most blocks of a deep zoom hold one).
        guard points.count > 1 else {
            parts = Array(points.indices)
            markers = points.indices.map {
                Marker(parts: $0..<$0 + 1, point: place(points[$0], count: counts[$0]), count: counts[$0])
            }
            return
        }
        var groups = Groups(points: points.indices.map { place(points[$0], count: counts[$0]) }, counts: counts)
        // Merges `second` into `first` if they overlap (a hair of tolerance, so that markers meant to touch do,
        // whatever the rounding of their positions).
        func merge(_ first: Int, _ second: Int) -> Bool {
            let (dx, dy) = groups.points[first].screenDelta(to: groups.points[second], scale: scale)
            let apart = resolution.separatingScale(dx: dx, dy: dy, counts: groups.counts[first], groups.counts[second])
            guard apart >= 1 - 1e-9 else { return false }
            let share = Double(groups.counts[second]) / Double(groups.counts[first] + groups.counts[second])
            let from = groups.points[first]
            let mean = MapPoint(x: MapSize.wrappedX(from.x + dx / scale * share), y: from.y + dy / scale * share)
            groups.join(first, second)
            groups.points[first] = place(mean, count: groups.counts[first])
            return true
        }
        var merged = true
        var neighbours: [Int] = []
        while merged {
            merged = false
            // Buckets as large as the largest marker (which a merge may have grown), so that every overlap is found
            // among a bucket's neighbours.
            let extent = resolution.extent(ofCount: groups.largestCount)
            let (width, height) = (extent.width / scale, extent.height / scale)
            // Each group meets the later groups of the 3 × 3 buckets around its own, in order. A few groups (a block
            // of a view holds a handful) are paired directly, by their buckets, with no table of buckets to build.
            guard groups.points.count > directly else {
                let geometry = MarkerBuckets(markerWidth: width, markerHeight: height)
                let cells = groups.points.indices.map {
                    groups.alive[$0] ? geometry.cell(of: groups.points[$0]) : (0, 0)
                }
                for first in groups.points.indices where groups.alive[first] {
                    for second in first + 1..<groups.points.count
                    where groups.alive[second] && geometry.meet(cells[first], cells[second]) {
                        if merge(first, second) { merged = true }
                    }
                }
                continue
            }
            let buckets = SortedBuckets(groups, markerWidth: width, markerHeight: height)
            for first in groups.points.indices where groups.alive[first] {
                buckets.neighbours(of: groups.points[first], into: &neighbours)
                for second in neighbours where second > first && groups.alive[second] {
                    if merge(first, second) { merged = true }
                }
            }
        }
        for head in groups.points.indices where groups.alive[head] {
            let start = parts.count
            groups.appendParts(from: head, to: &parts)
            if parts.count - start > 1 && groups.counts[head] < minimumCount {
                // Too few to be a cluster: its inputs stand alone, where they stood.
                for offset in start..<parts.count {
                    let part = parts[offset]
                    markers.append(
                        Marker(
                            parts: offset..<offset + 1, point: place(points[part], count: counts[part]),
                            count: counts[part]))
                }
                continue
            }
            markers.append(Marker(parts: start..<parts.count, point: groups.points[head], count: groups.counts[head]))
        }
    }

    /// Markers at `points` of `counts` elements, none merged.
    init(unmerged points: [MapPoint], counts: [Int]) {
        parts = Array(points.indices)
        markers = points.indices.map { Marker(parts: $0..<$0 + 1, point: points[$0], count: counts[$0]) }
    }

    /// Where a marker is drawn: inside the bounds, when there are any (see ``MarkerMerge``).
    private struct Placement {
        let scale: Double
        let resolution: OverlapResolution
        let bounds: MapRect?

        func callAsFunction(_ point: MapPoint, count: Int) -> MapPoint {
            guard let bounds else { return point }
            let inset = resolution.inset(ofCount: count)
            let (dx, dy) = (inset.width / scale, inset.height / scale)
            var point = point
            if bounds.size.width < MapSize.worldWidth {
                // Inside bounds less wide than the world, a point's x is their own, not a copy around the world.
                point.x = min(max(point.x, bounds.origin.x + dx), bounds.origin.x + bounds.size.width - dx)
            }
            if bounds.origin.y > 0 { point.y = max(point.y, bounds.origin.y + dy) }
            if bounds.origin.y + bounds.size.height < MapSize.worldWidth {
                point.y = min(point.y, bounds.origin.y + bounds.size.height - dy)
            }
            return point
        }
    }

    /// The markers being merged, by the position of their first input: where each is drawn, what it counts, and
    /// which inputs it holds, as a chain from the first.
    private struct Groups {
        var points: [MapPoint]
        var counts: [Int]
        /// Whether a group still stands, not merged into one before it.
        var alive: [Bool]
        /// The next input of a chain, or -1 at its end.
        private var next: [Int]
        /// The last input of the chain a group heads.
        private var last: [Int]

        init(points: [MapPoint], counts: [Int]) {
            self.points = points
            self.counts = counts
            alive = Array(repeating: true, count: points.count)
            next = Array(repeating: -1, count: points.count)
            last = Array(points.indices)
        }

        var largestCount: Int {
            var largest = 1
            for group in counts.indices where alive[group] { largest = max(largest, counts[group]) }
            return largest
        }

        /// Adds the group `second` to `first`, its inputs after `first`'s.
        mutating func join(_ first: Int, _ second: Int) {
            next[last[first]] = second
            last[first] = last[second]
            counts[first] += counts[second]
            alive[second] = false
        }

        /// Appends the inputs a group holds, in order.
        func appendParts(from head: Int, to parts: inout [Int]) {
            var part = head
            while part >= 0 {
                parts.append(part)
                part = next[part]
            }
        }
    }

    /// The standing groups by bucket (``MarkerBuckets``), over the rows and columns that hold any: the neighbours of a
    /// point are in the 3 × 3 buckets around its own.
    private struct SortedBuckets {
        let geometry: MarkerBuckets
        /// The first column and row of the table, and its size.
        private let column: Int
        private let row: Int
        private let width: Int
        private let height: Int
        /// Where each bucket's groups start in `members`, in the table's order, and one past the last.
        private var starts: [Int]
        /// The groups, bucket after bucket, each bucket's in order.
        private var members: [Int]

        init(_ groups: Groups, markerWidth: Double, markerHeight: Double) {
            geometry = MarkerBuckets(markerWidth: markerWidth, markerHeight: markerHeight)
            var cells: [(column: Int, row: Int)] = []
            cells.reserveCapacity(groups.points.count)
            var (minColumn, maxColumn, minRow, maxRow) = (Int.max, Int.min, Int.max, Int.min)
            for group in groups.points.indices {
                let cell = groups.alive[group] ? geometry.cell(of: groups.points[group]) : (column: 0, row: 0)
                cells.append(cell)
                guard groups.alive[group] else { continue }
                (minColumn, maxColumn) = (min(minColumn, cell.column), max(maxColumn, cell.column))
                (minRow, maxRow) = (min(minRow, cell.row), max(maxRow, cell.row))
            }
            guard minColumn <= maxColumn else {
                (column, row, width, height, starts, members) = (0, 0, 0, 0, [0], [])
                return
            }
            (column, row) = (minColumn, minRow)
            (width, height) = (maxColumn - minColumn + 1, maxRow - minRow + 1)
            // A counting sort: the groups of each bucket in order, without comparing.
            starts = Array(repeating: 0, count: width * height + 1)
            for group in groups.points.indices where groups.alive[group] {
                starts[(cells[group].row - row) * width + cells[group].column - column + 1] += 1
            }
            for offset in 1..<starts.count { starts[offset] += starts[offset - 1] }
            var next = starts
            members = Array(repeating: 0, count: starts[starts.count - 1])
            for group in groups.points.indices where groups.alive[group] {
                let bucket = (cells[group].row - row) * width + cells[group].column - column
                members[next[bucket]] = group
                next[bucket] += 1
            }
        }

        /// The groups in the 3 × 3 buckets around a point's, each once, in order.
        func neighbours(of point: MapPoint, into result: inout [Int]) {
            result.removeAll(keepingCapacity: true)
            geometry.forEachNeighbour(of: point) { column, row in append(column, row, to: &result) }
            result.sort()
        }

        private func append(_ column: Int, _ row: Int, to result: inout [Int]) {
            let (x, y) = (column - self.column, row - self.row)
            guard x >= 0 && x < width && y >= 0 && y < height else { return }
            let bucket = y * width + x
            result += members[starts[bucket]..<starts[bucket + 1]]
        }
    }
}
