import MapCluster

/// The keys of the elements changed since a snapshot: what tells a kept marker with new members from an unchanged one.
enum DirtyKeys: Sendable {
    /// These keys, sorted.
    case keys([UInt64])
    /// Too many to list, or a change of options: every marker may have changed.
    case all

    /// Whether a changed element lies in `range`.
    func intersects(_ range: ClosedRange<UInt64>) -> Bool {
        switch self {
        case .all:
            return true
        case .keys(let keys):
            // The first key not below the range's start.
            var low = 0
            var high = keys.count
            while low < high {
                let middle = (low + high) / 2
                if keys[middle] < range.lowerBound { low = middle + 1 } else { high = middle }
            }
            return low < keys.count && keys[low] <= range.upperBound
        }
    }
}

/// One update's work, from a snapshot of the elements to the new snapshot and its changes: everything
/// ``ClusterManager/update(for:)`` computes off the caller's thread.
struct UpdateJob<Element: Hashable & Sendable>: Sendable {
    typealias Marker = ClusterMarker<Element>

    var viewport: Viewport
    /// The elements, clustered with the options' ``ClusterManagerOptions/clustering``, which the caller validated.
    var clustering: Clustering<Element>
    var dataVersion: Int
    var options: ClusterManagerOptions<Element>
    var optionsVersion: Int
    var previous: ClusterSnapshot<Element>
    var dirty: DirtyKeys

    /// The update, or `nil` if `stop` answered true on the way: it is asked every few grid cells and between steps.
    func run(stop: () -> Bool) -> ClusterUpdate<Element>? {
        let zoom = viewport.zoom
        let region = CellRegion(viewport, options: clustering.options)
        // Passes whose options fail validation are skipped (a manager refuses them; a stateless caller may not check).
        let overlap = options.overlap.flatMap { (try? $0.validate()) == nil ? nil : $0 }
        // The layout of the elements and options before goes on: whole for the same elements, for the blocks the
        // changes left alone otherwise.
        let merging: MergeLayout<Element>?
        if let earlier = previous.merging, previous.optionsVersion == optionsVersion {
            merging = previous.dataVersion == dataVersion ? earlier : earlier.next(clustering, changed: dirty)
        } else {
            merging = MergeLayout(clustering, resolution: overlap)
        }

        // Markers of several locations that stay in their grid cell keep their id and place.
        let reuses =
            options.reusesMarkers && previous.gridLevel == region.level
            && previous.optionsVersion == optionsVersion
        var anchors: [GridCell: ClusterSnapshot<Element>.Anchor] = [:]
        func anchored(_ cluster: Cluster<Element>) -> ClusterSnapshot<Element>.Anchor {
            var anchor = ClusterSnapshot<Element>.Anchor(id: cluster.id, coordinate: cluster.coordinate)
            if case .cell = cluster.id.unfiltered {
                if reuses, let previous = previous.anchors[cluster.cell] { anchor = previous }
                anchors[cluster.cell] = anchor
            }
            return anchor
        }

        var items: [MarkerLayout<Element>.Item]
        if let merging, clustering.options.clusters(atZoom: zoom) {
            // The merged layout is the world's, the same for every viewport: it merges by the clusters' own places,
            // and a marker left whole keeps its anchor, unless the layout drew it inside its block.
            items = merging.items(in: region, rect: viewport.rect).map { item in
                var shown = item
                if !item.isMerged {
                    let anchor = anchored(item.cluster)
                    let moved = item.coordinate != item.cluster.coordinate
                    shown = .init(
                        id: anchor.id, cluster: item.cluster, coordinate: moved ? item.coordinate : anchor.coordinate)
                } else {
                    _ = anchored(item.cluster)
                    for part in item.mergedClusters { _ = anchored(part) }
                }
                shown.layoutExpansionZoom = item.layoutExpansionZoom
                return shown
            }
            guard !stop() else { return nil }
        } else {
            guard let clusters = clustering.clusters(in: region, zoom: zoom, stop: stop), !stop() else {
                return nil
            }
            items = clusters.map { cluster in
                let anchor = anchored(cluster)
                return MarkerLayout<Element>.Item(id: anchor.id, cluster: cluster, coordinate: anchor.coordinate)
            }
        }

        var layout = MarkerLayout<Element>(items, viewport: viewport, clustering: clustering)
        if case .separate(let size) = overlap { layout.separate(markerSize: size) }
        if let fanOut = options.sameLocation, (try? fanOut.validate()) != nil {
            layout.fanOut(fanOut, clusteringIsOn: clustering.options.clusters(atZoom: zoom))
        }
        items = layout.items
        guard !stop() else { return nil }

        var markers = items.map {
            Marker(
                id: $0.id, cluster: $0.cluster, mergedClusters: $0.mergedClusters, coordinate: $0.coordinate,
                layoutExpansionZoom: $0.layoutExpansionZoom)
        }
        if let fixPositions = options.fixPositions {
            let fixed = fixPositions(markers, viewport)
            precondition(
                fixed.count == markers.count,
                "ClusterManagerOptions.fixPositions returned \(fixed.count) positions for \(markers.count) markers")
            markers = zip(markers, fixed).map { $0.moved(to: $1) }
        }
        let (kept, changes) = diff(markers, region: region)
        var snapshot = ClusterSnapshot(
            viewport: viewport, markers: kept, region: region, clustering: clustering, layout: options,
            gridLevel: region.level,
            dataVersion: dataVersion, optionsVersion: optionsVersion, anchors: anchors)
        snapshot.merging = merging
        return ClusterUpdate(snapshot: snapshot, changes: changes)
    }

    /// The changes from the previous snapshot's markers to `markers`, and the markers of the new snapshot: `markers`
    /// and, when invisible markers stay, those of the previous snapshot outside `region`.
    private func diff(_ markers: [Marker], region: CellRegion) -> ([Marker], ClusterChanges<Element>) {
        let old = previous.markers
        guard !old.isEmpty else {
            // A first update, or a stateless one: everything is new, split from nothing.
            var changes = ClusterChanges<Element>()
            changes.insertions = markers.map { .init(marker: $0, splitFrom: nil) }
            return (markers, changes)
        }
        var oldPosition: [Marker.ID: Int] = [:]
        oldPosition.reserveCapacity(old.count)
        for (position, marker) in old.enumerated() { oldPosition[marker.id] = position }
        var matched = [Bool](repeating: false, count: old.count)
        let oldRanges = MarkerRanges(old)
        let newRanges = MarkerRanges(markers)
        let dataChanged = previous.dataVersion != dataVersion

        var changes = ClusterChanges<Element>()
        for marker in markers {
            guard let position = oldPosition[marker.id] else {
                let from = oldRanges.marker(holding: marker).map { old[$0].coordinate }
                changes.insertions.append(.init(marker: marker, splitFrom: from))
                continue
            }
            matched[position] = true
            let before = old[position]
            let changed =
                before.count != marker.count || before.coordinate != marker.coordinate
                || (dataChanged && dirtyRanges(of: marker).contains { dirty.intersects($0) })
            if changed { changes.updates.append(.init(old: before, new: marker)) }
        }

        var kept = markers
        for (position, marker) in old.enumerated() where !matched[position] {
            let cell = GridCell(containing: marker.coordinate.mapPoint, level: region.level)
            if !options.removesMarkersOutsideRegion && !region.contains(cell) {
                kept.append(marker)
                continue
            }
            let into = newRanges.marker(holding: marker).map { markers[$0].coordinate }
            changes.removals.append(.init(marker: marker, mergesInto: into))
        }
        return (kept, changes)
    }

    /// Where a changed element would change a marker's members: its grid cell, for a marker that keeps the id of
    /// another cluster; the key ranges of its members otherwise.
    private func dirtyRanges(of marker: Marker) -> [ClosedRange<UInt64>] {
        if !marker.isMerged, case .cell = marker.cluster.id.unfiltered, marker.id != .cluster(marker.cluster.id) {
            return [marker.cluster.cell.keyRange]
        }
        return marker.keyRanges
    }
}

/// The key ranges of a list of markers' members, sorted, for finding the marker whose members hold another's.
struct MarkerRanges<Element: Hashable & Sendable> {
    private var ranges: [(range: ClosedRange<UInt64>, marker: Int)] = []

    init(_ markers: [ClusterMarker<Element>]) {
        for (offset, marker) in markers.enumerated() where marker.isCluster {
            for range in marker.keyRanges { ranges.append((range, offset)) }
        }
        ranges.sort { $0.range.lowerBound < $1.range.lowerBound }
    }

    /// The cluster marker whose members' ranges hold the first range of `marker`'s members.
    func marker(holding marker: ClusterMarker<Element>) -> Int? {
        guard let target = marker.keyRanges.first else { return nil }
        // The last range starting at or before the target; ranges nest only rarely (opted-out elements inside a
        // cluster's range), so a few steps back settle it.
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].range.lowerBound <= target.lowerBound { low = middle + 1 } else { high = middle }
        }
        var candidate = low - 1
        var steps = 0
        while candidate >= 0 && steps < 8 {
            let range = ranges[candidate].range
            if range.lowerBound <= target.lowerBound && range.upperBound >= target.upperBound {
                return ranges[candidate].marker
            }
            candidate -= 1
            steps += 1
        }
        return nil
    }
}
