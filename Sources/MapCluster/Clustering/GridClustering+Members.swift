extension GridClustering {
    /// Calls `body` with each member of a cluster, in the index's order, after skipping the first `skip` of them,
    /// until `body` returns false: the one walk that paging, counting and bounds share.
    ///
    /// - Complexity: O(log *n* + `skip` + *k*) for *k* members visited; without a ``ClusterOptions/shouldCluster``
    ///   predicate, a cluster of several locations skips in O(log *n*).
    func forEachMember(of cluster: Cluster<Element>, skip: Int = 0, _ body: (Entry) -> Bool) {
        switch cluster.id.unfiltered {
        case .element(let member):
            guard skip == 0, let slot = index.slots.find(member, in: index.store).slot else { return }
            _ = tree.entry(key: index.store[Int(slot)].key) { $0.slot == slot }.map(body)
        case .location(let location):
            pass.forEachEntry(at: location, filter: cluster.filter, skip: skip, body)
        case .cell(let tight):
            if options.shouldCluster == nil && options.categories == nil {
                tree.forEachEntry(in: tight.keyRange, skip: skip, body)
            } else {
                pass.forEachEntry(in: tight.keyRange, taking: .clusterable, skip: skip, body)
            }
        case .filteredCell, .filteredLocation:
            preconditionFailure("an unfiltered id is never filtered")
        }
    }

    /// A page of a cluster's members with their coordinates, in the index's order.
    func members(of cluster: Cluster<Element>, offset: Int, limit: Int) -> [(element: Element, coordinate: Coordinate)]
    {
        precondition(offset >= 0 && limit >= 0, "offset and limit are not negative")
        var page: [(element: Element, coordinate: Coordinate)] = []
        guard limit > 0 else { return page }
        forEachMember(of: cluster, skip: offset) { entry in
            page.append((element(of: entry), entry.coordinate))
            return page.count < limit
        }
        return page
    }

    /// The exact bounds of a cluster's members, from the tree.
    func bounds(of cluster: Cluster<Element>) -> MapRect {
        var summary: Summary?
        if case .cell(let tight) = cluster.id.unfiltered, options.shouldCluster == nil {
            if let categories {
                // The selected categories' bounds, from the nodes.
                let point = GridPosition(cluster.coordinate)
                return pass.categoryBounds(in: tight.keyRange, categories) ?? point.rect(through: point)
            }
            summary = tree.summary(in: tight.keyRange)
        } else {
            forEachMember(of: cluster) { entry in
                summary.add(entry)
                return true
            }
        }
        let point = GridPosition(cluster.coordinate)
        return summary?.bounds ?? point.rect(through: point)
    }

    /// Whether `cluster` holds an element of the index, found at `coordinate`.
    func holds(_ cluster: Cluster<Element>, _ element: Element, at coordinate: Coordinate) -> Bool {
        switch cluster.id.unfiltered {
        case .element(let member):
            return member == element
        case .location(let location):
            return location == coordinate && admits(element, cluster.filter) && isSelected(element)
        case .cell(let tight):
            return tight.keyRange.contains(GridPosition(coordinate).key) && admits(element, .clusterable)
                && isSelected(element)
        case .filteredCell, .filteredLocation:
            preconditionFailure("an unfiltered id is never filtered")
        }
    }

    /// Whether `filter` takes an element.
    func admits(_ element: Element, _ filter: MemberFilter) -> Bool {
        guard filter != .all, let shouldCluster = options.shouldCluster else { return filter != .optedOut }
        return shouldCluster(element) == (filter == .clusterable)
    }
}
