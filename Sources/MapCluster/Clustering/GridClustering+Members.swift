extension GridClustering {
    /// Calls `body` with each member of a cluster, in the index's order, after skipping the first `skip` of them,
    /// until `body` returns false: the one walk that paging, counting and bounds share.
    ///
    /// - Complexity: O(log *n* + `skip` + *k*) for *k* members visited; without a ``ClusterOptions/shouldCluster``
    ///   predicate, a cluster of several locations skips in O(log *n*).
    func forEachMember(of cluster: Cluster<Element>, skip: Int = 0, _ body: (Entry) -> Bool) {
        switch cluster.id {
        case .element(let member):
            guard skip == 0, let slot = index.slots.find(member, in: index.store).slot else { return }
            _ = tree.entry(key: index.store[Int(slot)].key) { $0.slot == slot }.map(body)
        case .location(let location):
            forEachEntry(at: location, filter: cluster.filter, skip: skip, body)
        case .cell(let tight):
            if options.shouldCluster == nil {
                tree.forEachEntry(in: tight.keyRange, skip: skip, body)
            } else {
                forEachEntry(in: tight.keyRange, skip: skip, where: { admits($0, .clusterable) }, body)
            }
        }
    }

    /// Calls `body` with each element on `location` that `filter` takes, after skipping `skip`, until it returns
    /// false.
    func forEachEntry(at location: Coordinate, filter: MemberFilter, skip: Int = 0, _ body: (Entry) -> Bool) {
        let key = GridPosition(location).key
        forEachEntry(in: key...key, skip: skip, where: { $0.coordinate == location && admits($0, filter) }, body)
    }

    /// Calls `body` with each entry in `range` that `takes` accepts, after skipping `skip` of those, until it returns
    /// false.
    private func forEachEntry(
        in range: ClosedRange<UInt64>, skip: Int, where takes: (Entry) -> Bool, _ body: (Entry) -> Bool
    ) {
        var toSkip = skip
        tree.forEachEntry(in: range) { entry in
            guard takes(entry) else { return true }
            guard toSkip == 0 else {
                toSkip -= 1
                return true
            }
            return body(entry)
        }
    }

    /// How many elements on `location` `filter` takes.
    func count(at location: Coordinate, filter: MemberFilter) -> Int {
        var count = 0
        forEachEntry(at: location, filter: filter) { _ in
            count += 1
            return true
        }
        return count
    }

    /// The first element on `location` that `filter` takes.
    func firstMember(at location: Coordinate, filter: MemberFilter) -> Entry? {
        var first: Entry?
        forEachEntry(at: location, filter: filter) { entry in
            first = entry
            return false
        }
        return first
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

    /// The exact bounds of a cluster's members, from the tree (the fold's summaries may have larger ones).
    func bounds(of cluster: Cluster<Element>) -> MapRect {
        var summary: Summary?
        if case .cell(let tight) = cluster.id, options.shouldCluster == nil {
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
        switch cluster.id {
        case .element(let member):
            return member == element
        case .location(let location):
            return location == coordinate && admits(element, cluster.filter)
        case .cell(let tight):
            return tight.keyRange.contains(GridPosition(coordinate).key) && admits(element, .clusterable)
        }
    }

    /// Whether `filter` takes an element.
    func admits(_ element: Element, _ filter: MemberFilter) -> Bool {
        guard filter != .all, let shouldCluster = options.shouldCluster else { return filter != .optedOut }
        return shouldCluster(element) == (filter == .clusterable)
    }
}
