import Foundation
@_spi(MapClusterServer) public import MapCluster
@_spi(MapClusterServer) public import MapClusterIO
import MapClusterManager

/// A live server's points and their index, changed by edits while any number of readers query them.
///
/// Readers take ``current``, a ``State`` that never changes: the points and index of one version, which stay whole
/// while the next edits are applied to copies (the index and the records share their storage with the copies, page by
/// page, so a version costs what its edits touch). Edits are applied by one writer at a time (``LiveWriter``),
/// after the store has committed them; a reader sees an edit whole or not at all.
///
/// Subscribers (``subscribe()``) are told of each new version, and can ask which grid keys changed since the
/// version they last saw, to update their markers as a `ClusterManager` does.
public final class LiveIndex: @unchecked Sendable {
    /// One version of the points.
    public struct State: Sendable {
        /// Raised by each group of edits applied.
        public let version: Int
        /// The store's sequence number of the last edit applied.
        public let sequence: Int64
        /// The points, by slot: the index's elements are positions in `PointSet.records`.
        ///
        /// A slot of a
        /// deleted point keeps its old record until it is reused; only the index says which slots are live.
        public let points: PointSet
        /// The index of the points, with the aggregates ``LiveIndex/aggregation`` asks for.
        public let index: ClusterIndex<Int>
    }

    /// What a group of edits did.
    public struct Applied: Sendable {
        /// The version it made.
        public var version: Int
        /// For each edit: how many points it added, moved (or gave new properties), and deleted.
        public var counts: [(inserted: Int, moved: Int, deleted: Int)]
    }

    /// What clusters add up.
    public let aggregation: PointAggregation
    /// The aggregates' schema (categories, reductions) of the current version; `nil` when nothing is aggregated.
    ///
    /// Its categories grow when an edit brings one not seen before (the index is rebuilt then, keeping the others'
    /// places), up to `AggregateSchema.maximumCategoryCount`.
    public var schema: AggregateSchema? { current.index.schema }
    /// The values seen of each column of categories after the first, which edits may add to up to
    /// `PointAggregation.maximumCountedValues`; guarded by `lock`.
    private var countedValues: [String: Set<String>] = [:]

    /// Guards `state`, `slots`, `log` and `subscribers`.
    ///
    /// The writer reads `state` and `slots` without it (it is the
    /// only one that changes them) and takes it to publish.
    fileprivate let lock = NSLock()
    private var state: State
    /// The slot of each point.
    private var slots: [PointKey: Int]
    /// Slots of deleted points, to reuse (the writer's only).
    private var freeSlots: [Int] = []
    /// For the last versions: the grid keys their edits touched (`nil`: too many to list).
    private var log: [(version: Int, keys: [UInt64]?)] = []
    fileprivate var subscribers: [Int: AsyncStream<Int>.Continuation] = [:]
    /// Whether ``finishSubscriptions()`` was called: no subscription lasts from then on.
    fileprivate var subscriptionsFinished = false
    private var nextSubscriber = 0

    /// How many versions of changed keys are kept for subscribers that lag.
    public static let loggedVersions = 256
    /// Edits of more points than this mark everything as changed.
    static let largestListedChange = 65_536

    /// The points of a store (`sequence` its last batch), indexed with the aggregates `aggregation` asks for.
    ///
    /// - Throws: `PointFileError` for a value the aggregation can't take.
    public init(points: PointSet, sequence: Int64, aggregation: PointAggregation) throws(PointFileError) {
        let index = try points.indexByRecord(aggregating: aggregation)
        self.aggregation = aggregation
        state = State(version: 0, sequence: sequence, points: points, index: index)
        slots = Self.slots(of: points)
        countedValues = Self.countedValues(of: points, aggregation: aggregation)
    }

    /// The values of each column of categories after the first among `points`.
    private static func countedValues(of points: PointSet, aggregation: PointAggregation) -> [String: Set<String>] {
        var values: [String: Set<String>] = [:]
        for column in aggregation.countedCategories {
            guard let position = points.propertyNames.firstIndex(of: column) else { continue }
            values[column] = Set(points.records.lazy.compactMap { ValueCounts.name(of: $0.property(at: position)) })
        }
        return values
    }

    /// The slot of each point of a set: its position.
    private static func slots(of points: PointSet) -> [PointKey: Int] {
        var slots: [PointKey: Int] = [:]
        slots.reserveCapacity(points.records.count)
        for (slot, record) in points.records.enumerated() { slots[PointKey(record)] = slot }
        return slots
    }

    /// Notes the keys a new version's edits touched (`nil`: too many to list).
    ///
    /// The oldest beyond ``loggedVersions`` are forgotten. Called under the lock.
    private func record(_ version: Int, touching keys: [UInt64]?) {
        log.append((version, keys))
        if log.count > Self.loggedVersions { log.removeFirst(log.count - Self.loggedVersions) }
    }

    /// The version readers answer from now.
    public var current: State { lock.withLock { state } }

    /// The number of points.
    public var count: Int { current.index.count }

    /// A point by its key, with the names of its properties; `nil` if there is none.
    public func point(_ key: PointKey) -> (record: PointRecord, propertyNames: [String])? {
        lock.lock()
        let slot = slots[key]
        let points = state.points
        lock.unlock()
        guard let slot else { return nil }
        return (points.records[slot], points.propertyNames)
    }

    /// Checks an edit's points against the aggregation (a reduced value that is not a number, a negative weight, a
    /// category too many), as the index would take them.
    ///
    /// A category not seen before is taken, while its column has fewer than its limit: the first column's is
    /// `AggregateSchema.maximumCategoryCount`, each further one's
    /// `PointAggregation.maximumCountedValues`.
    ///
    /// - Throws: `PointFileError` naming the feature and field.
    public func check(_ edit: PointEdit) throws(PointFileError) {
        guard var schema else { return }
        let names = edit.puts.propertyNames
        var seen = lock.withLock { countedValues }
        for record in edit.puts.records {
            if let name = aggregation.newCategory(of: record, propertyNames: names, schema: schema) {
                let column = aggregation.category ?? ""
                guard schema.categories.count < AggregateSchema.maximumCategoryCount,
                    let grown = try? schema.adding(category: name)
                else {
                    throw record.origin.error(
                        field: column,
                        "'\(name)' would be a category too many: '\(column)' has \(schema.categories.count) already, "
                            + "the most a column of categories may have (\(AggregateSchema.maximumCategoryCount))")
                }
                schema = grown
            }
            for column in aggregation.countedCategories {
                guard let position = names.firstIndex(of: column),
                    let name = ValueCounts.name(of: record.property(at: position)),
                    seen[column, default: []].insert(name).inserted
                else { continue }
                guard seen[column, default: []].count <= PointAggregation.maximumCountedValues else {
                    throw record.origin.error(
                        field: column,
                        "'\(name)' would be a category too many: '\(column)' has "
                            + "\(PointAggregation.maximumCountedValues) values already, the most a column of "
                            + "categories after the first may have")
                }
            }
            _ = try aggregation.values(of: record, propertyNames: names, schema: schema)
        }
    }

    // MARK: - Writing

    /// Applies edits the store has committed, in order, as one new version.
    ///
    /// Only one caller at a time: the writer.
    @discardableResult
    func apply(_ edits: [(edit: PointEdit, sequence: Int64)]) -> Applied {
        var points = state.points
        var index = state.index
        var changedSlots: [PointKey: Int?] = [:]
        var keys: [UInt64]? = []
        var counts: [(inserted: Int, moved: Int, deleted: Int)] = []
        if edits.reduce(0, { $0 + $1.edit.count }) > Self.largestListedChange { keys = nil }
        // Categories not seen before: the index is rebuilt with them (rarely: each column has few), and every marker
        // may have changed.
        if let grown = grownSchema(for: edits.map(\.edit)) {
            index = rebuilt(index, points: points, schema: grown)
            keys = nil
        }
        let schema = index.schema
        lock.withLock {
            for (edit, _) in edits {
                for column in aggregation.countedCategories {
                    guard let position = edit.puts.propertyNames.firstIndex(of: column) else { continue }
                    for record in edit.puts.records {
                        if let name = ValueCounts.name(of: record.property(at: position)) {
                            countedValues[column, default: []].insert(name)
                        }
                    }
                }
            }
        }

        func slot(of key: PointKey) -> Int? {
            if let changed = changedSlots[key] { return changed }
            return slots[key]
        }

        for (edit, _) in edits {
            var count = (inserted: 0, moved: 0, deleted: 0)
            var removed: [Int] = []
            for key in edit.deletes {
                guard let old = slot(of: key) else { continue }
                if let coordinate = index.coordinate(of: old) { keys?.append(coordinate.gridKey) }
                removed.append(old)
                changedSlots[key] = .some(nil)
                count.deleted += 1
            }
            index.remove(contentsOf: removed)
            freeSlots += removed

            // The edit's property columns among the live ones, which grow as new names come.
            let positions = edit.puts.propertyNames.map { name in
                if let position = points.propertyNames.firstIndex(of: name) { return position }
                points.propertyNames.append(name)
                return points.propertyNames.count - 1
            }
            var placed: [(Int, Coordinate)] = []
            var values: [(Int, Coordinate, ElementValues)] = []
            for record in edit.puts.records {
                let key = PointKey(record)
                var properties = [PropertyValue](repeating: .null, count: points.propertyNames.count)
                for (from, to) in positions.enumerated() { properties[to] = record.property(at: from) }
                let stored = PointRecord(
                    id: record.id, idKind: record.idKind, coordinate: record.coordinate, properties: properties)
                let target: Int
                if let old = slot(of: key) {
                    target = old
                    if let coordinate = index.coordinate(of: old) { keys?.append(coordinate.gridKey) }
                    points.records[old] = stored
                    count.moved += 1
                } else if let free = freeSlots.popLast() {
                    target = free
                    points.records[free] = stored
                    changedSlots[key] = free
                    count.inserted += 1
                } else {
                    target = points.records.count
                    points.records.append(stored)
                    changedSlots[key] = target
                    count.inserted += 1
                }
                keys?.append(record.coordinate.gridKey)
                if let schema {
                    values.append((target, record.coordinate, elementValues(of: stored, in: points, schema: schema)))
                } else {
                    placed.append((target, record.coordinate))
                }
            }
            if schema != nil {
                do {
                    try index.insert(contentsOf: values)
                } catch {
                    // Not reached: every value is checked or neutral.
                    assertionFailure("an edit's aggregate values were refused: \(error)")
                }
            } else {
                index.insert(contentsOf: placed)
            }
            counts.append(count)
        }

        let sequence = edits.last?.sequence ?? state.sequence
        let (version, listeners) = lock.withLock {
            let version = state.version + 1
            state = State(version: version, sequence: sequence, points: points, index: index)
            for (key, slot) in changedSlots { slots[key] = slot }
            record(version, touching: keys)
            return (version, Array(subscribers.values))
        }
        for listener in listeners { listener.yield(version) }
        return Applied(version: version, counts: counts)
    }

    /// The schema with the categories `edits` bring that it doesn't have, in order.
    ///
    /// `nil` when they bring none (or nothing is aggregated). Past the most a schema holds, the others are left out
    /// (their points count in no category): only a batch another server committed can bring them, since
    /// ``check(_:)`` refuses them here.
    private func grownSchema(for edits: [PointEdit]) -> AggregateSchema? {
        guard var schema = state.index.schema else { return nil }
        var grew = false
        for edit in edits {
            for record in edit.puts.records {
                guard
                    let name = aggregation.newCategory(
                        of: record, propertyNames: edit.puts.propertyNames, schema: schema),
                    let grown = try? schema.adding(category: name)
                else { continue }
                schema = grown
                grew = true
            }
        }
        return grew ? schema : nil
    }

    /// `index` built again with `schema`: the live points' slots, coordinates and values.
    private func rebuilt(_ index: ClusterIndex<Int>, points: PointSet, schema: AggregateSchema) -> ClusterIndex<Int> {
        var fresh = ClusterIndex<Int>(schema: schema)
        let live = slots.values.compactMap { slot in
            index.coordinate(of: slot).map {
                (slot, $0, elementValues(of: points.records[slot], in: points, schema: schema))
            }
        }
        do {
            try fresh.insert(contentsOf: live)
        } catch {
            // Not reached: every value is checked or neutral.
            assertionFailure("a rebuild's aggregate values were refused: \(error)")
            return index
        }
        return fresh
    }

    /// Replaces every point with a store's (after a follower fell too far behind to catch up batch by batch).
    func reload(_ points: PointSet, sequence: Int64) throws(PointFileError) {
        let index = try points.indexByRecord(
            aggregating: aggregation, knownCategories: state.index.schema?.categories ?? [])
        let slots = Self.slots(of: points)
        let counted = Self.countedValues(of: points, aggregation: aggregation)
        freeSlots = []
        let (version, listeners) = lock.withLock {
            let version = state.version + 1
            state = State(version: version, sequence: sequence, points: points, index: index)
            self.slots = slots
            countedValues = counted
            record(version, touching: nil)
            return (version, Array(subscribers.values))
        }
        for listener in listeners { listener.yield(version) }
    }

    /// A record's aggregate values; neutral ones (weight 1, no category, no values) for a record the schema refuses,
    /// which only a batch committed by a server with other options can bring.
    private func elementValues(of record: PointRecord, in points: PointSet, schema: AggregateSchema) -> ElementValues {
        if let values = try? aggregation.values(of: record, propertyNames: points.propertyNames, schema: schema) {
            return values
        }
        var neutral = record
        neutral.properties = []
        return (try? aggregation.values(of: neutral, propertyNames: [], schema: schema)) ?? ElementValues()
    }

    // MARK: - Following

    /// The grid keys the edits after `version` up to the current one touched, sorted; `nil` when they are not all
    /// known (too many, or too long ago).
    public func changedKeys(after version: Int, through latest: Int) -> [UInt64]? {
        lock.withLock {
            guard version < latest else { return [] }
            guard let first = log.first, first.version <= version + 1 else { return nil }
            var keys: [UInt64] = []
            for entry in log where entry.version > version && entry.version <= latest {
                guard let touched = entry.keys else { return nil }
                keys += touched
            }
            return keys.sorted()
        }
    }

    /// A stream of the versions made from now on, the newest only when a subscriber is slow to take them; and its
    /// number, to end it with ``unsubscribe(_:)``.
    ///
    /// After ``finishSubscriptions()``, the stream is finished from the start.
    public func subscribe() -> (id: Int, versions: AsyncStream<Int>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let id: Int? = lock.withLock {
            guard !subscriptionsFinished else { return nil }
            nextSubscriber += 1
            subscribers[nextSubscriber] = continuation
            return nextSubscriber
        }
        guard let id else {
            continuation.finish()
            return (0, stream)
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return (id, stream)
    }

    /// Ends a subscription.
    public func unsubscribe(_ id: Int) {
        let continuation = lock.withLock { subscribers.removeValue(forKey: id) }
        continuation?.finish()
    }

    /// Sends every subscriber the current version again (a heartbeat: what keeps idle streams open through proxies).
    public func remind() {
        let (version, listeners) = lock.withLock { (state.version, Array(subscribers.values)) }
        for listener in listeners { listener.yield(version) }
    }

    /// The number of subscribers.
    public var subscriberCount: Int { lock.withLock { subscribers.count } }
}

extension LiveIndex {
    /// Ends every subscription, and every later one as it starts (when the server stops).
    public func finishSubscriptions() {
        let listeners = lock.withLock {
            let all = Array(subscribers.values)
            subscribers = [:]
            subscriptionsFinished = true
            return all
        }
        for listener in listeners { listener.finish() }
    }
}
