import Foundation
@_spi(MapClusterServer) public import MapClusterIO

/// The one writer of a ``LiveIndex``: it commits edits to the store and then applies them, in the store's order, and
/// follows the edits other servers commit to a shared store.
///
/// Edits that arrive while a commit is under way wait and go together in the next transaction (a group commit), so
/// that many small edits cost one commit, not one each; each is still applied whole or not at all, and acknowledged
/// only once it is committed and applied.
public actor LiveWriter {
    /// The points this writer changes.
    public nonisolated let live: LiveIndex
    /// Where edits are committed.
    public nonisolated let store: any PointStore

    private struct Pending {
        var edit: PointEdit
        var continuation: CheckedContinuation<WriteReceipt, any Error>
    }

    private var queue: [Pending] = []
    private var draining = false
    private var catchUpWanted = false
    private var following: [Task<Void, Never>] = []
    private var stopped = false
    /// Whoever waits in ``stop()`` for the edits under way.
    private var waitingForDrain: [CheckedContinuation<Void, Never>] = []
    /// The error of the store's last commit or catch-up, if it failed: the store doesn't answer.
    ///
    /// Nil once one succeeds.
    public private(set) var storeProblem: String?
    /// Whether the points are being loaded again from the store (a catch-up that found batches it no longer keeps).
    public private(set) var reloading = false
    private var commitObserver: (@Sendable (Duration, Int) -> Void)?

    /// Calls `observer` after each commit of edits with how long the store took and how many points the edits
    /// applied with it changed (the server's metrics).
    public func observeCommits(_ observer: @escaping @Sendable (_ duration: Duration, _ changedPoints: Int) -> Void) {
        commitObserver = observer
    }

    /// The most points one transaction commits; edits beyond wait for the next.
    static let largestGroup = 100_000

    /// A writer of `live`'s points into `store`, which holds them already.
    public init(live: LiveIndex, store: any PointStore) {
        self.live = live
        self.store = store
    }

    /// Commits an edit, then applies it.
    ///
    /// - Returns: When the edit is committed and every reader sees it, what it did.
    /// - Throws: `PointFileError` for a value the aggregation can't take (nothing is committed), or
    ///   ``StoreFailure`` when the store did not commit (nothing is applied), ``WriterStopped`` after ``stop()``.
    public func write(_ edit: PointEdit) async throws -> WriteReceipt {
        guard !stopped else { throw WriterStopped() }
        try live.check(edit)
        return try await withCheckedThrowingContinuation { continuation in
            queue.append(Pending(edit: edit, continuation: continuation))
            startDraining()
        }
    }

    /// Follows the commits of other servers to a shared store: on each notice, and once a second in case a notice
    /// was lost (a connection dropped), the batches after the last one applied are applied.
    public func startFollowing(pollEvery interval: Duration = .seconds(1)) {
        let notices = store.commitsByOthers()
        following.append(
            Task { [weak self] in
                for await _ in notices { await self?.requestCatchUp() }
            })
        following.append(
            Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    await self?.requestCatchUp()
                }
            })
    }

    /// Stops following the store, and taking edits.
    ///
    /// Edits given before are committed and acknowledged (or fail as a commit fails) before it returns; edits given
    /// after are refused with ``WriterStopped``. Then the store can be closed.
    public func stop() async {
        stopped = true
        for task in following { task.cancel() }
        following = []
        guard draining else { return }
        await withCheckedContinuation { waitingForDrain.append($0) }
    }

    private func requestCatchUp() {
        catchUpWanted = true
        startDraining()
    }

    private func startDraining() {
        guard !draining else { return }
        draining = true
        Task { await drain() }
    }

    /// Commits and applies what is queued, group by group, until nothing is.
    private func drain() async {
        while true {
            if queue.isEmpty {
                guard catchUpWanted && !stopped else {
                    draining = false
                    for waiting in waitingForDrain { waiting.resume() }
                    waitingForDrain = []
                    return
                }
                catchUpWanted = false
                await catchUp()
                continue
            }
            var group: [Pending] = []
            var points = 0
            while let next = queue.first, group.isEmpty || points + next.edit.count <= Self.largestGroup {
                group.append(queue.removeFirst())
                points += next.edit.count
            }
            let commit: StoreCommit
            let clock = ContinuousClock()
            let start = clock.now
            do {
                commit = try await store.commit(group.map(\.edit.storeBatch), after: live.current.sequence)
                storeProblem = nil
            } catch {
                storeProblem = "\(error)"
                for pending in group { pending.continuation.resume(throwing: StoreFailure(store: store, error: error)) }
                continue
            }
            var edits = commit.earlier.map { (edit: PointEdit($0), sequence: $0.sequence) }
            let own = edits.count
            for (pending, sequence) in zip(group, commit.sequences) { edits.append((pending.edit, sequence)) }
            let applied = live.apply(edits)
            commitObserver?(clock.now - start, applied.counts.reduce(0) { $0 + $1.inserted + $1.moved + $1.deleted })
            for (position, pending) in group.enumerated() {
                let count = applied.counts[own + position]
                pending.continuation.resume(
                    returning: WriteReceipt(
                        sequence: commit.sequences[position], version: applied.version, inserted: count.inserted,
                        moved: count.moved, deleted: count.deleted))
            }
        }
    }

    /// Applies the batches others committed since the last one applied; reloads everything when the store no longer
    /// knows them all.
    private func catchUp() async {
        let sequence = live.current.sequence
        do {
            if let batches = try await store.batches(after: sequence) {
                storeProblem = nil
                guard !batches.isEmpty else { return }
                live.apply(batches.map { (PointEdit($0), $0.sequence) })
            } else {
                // The store no longer knows every batch since: everything again, while which the server isn't ready.
                reloading = true
                defer { reloading = false }
                let contents = try await store.load()
                let batch = PointEdit(StoreBatch(sequence: contents.sequence, puts: contents.points, deletes: []))
                try live.reload(batch.puts, sequence: contents.sequence)
                storeProblem = nil
            }
        } catch {
            // The next notice or poll tries again.
            storeProblem = "\(error)"
        }
    }
}

/// An edit given to a writer that was stopped: nothing of it is committed.
public struct WriterStopped: Error, CustomStringConvertible {
    /// What a client is told: `the server is stopping`.
    public var description: String { "the server is stopping" }
}

/// What an acknowledged edit did.
public struct WriteReceipt: Sendable, Hashable, Codable {
    /// The store's sequence number of the edit.
    public var sequence: Int64
    /// The version of the points that first holds it.
    public var version: Int
    /// Points added.
    public var inserted: Int
    /// Points that were there already, moved or given new properties.
    public var moved: Int
    /// Points deleted.
    public var deleted: Int

    /// A receipt.
    public init(sequence: Int64, version: Int, inserted: Int, moved: Int, deleted: Int) {
        self.sequence = sequence
        self.version = version
        self.inserted = inserted
        self.moved = moved
        self.deleted = deleted
    }
}

/// The store did not commit an edit: nothing of it was applied.
public struct StoreFailure: Error, CustomStringConvertible {
    /// The store.
    public var store: String
    /// What it said.
    public var error: any Error

    init(store: any PointStore, error: any Error) {
        self.store = store.description
        self.error = error
    }

    /// `the store (SQLite points.sqlite) did not commit: …`.
    public var description: String { "the store (\(store)) did not commit the edit: \(error)" }
}

extension LiveIndex {
    /// The index of a store's points.
    ///
    /// An empty store is first given `seed()`'s points, committed in batches of
    /// 50,000.
    ///
    /// - Returns: The index, and how many points were seeded (`nil` when the store had points).
    /// - Throws: What the store or `seed` throws, or `PointFileError` for a value the aggregation
    ///   can't take.
    public static func open(
        _ store: any PointStore, aggregation: PointAggregation, seed: () throws -> PointSet
    ) async throws -> (index: LiveIndex, seeded: Int?) {
        let contents = try await store.load()
        guard contents.points.isEmpty else {
            let points = PointEdit(StoreBatch(puts: contents.points, deletes: [])).puts
            return (try LiveIndex(points: points, sequence: contents.sequence, aggregation: aggregation), nil)
        }
        let points = try seed()
        // Checked before anything is committed: a value the aggregation refuses leaves the store empty.
        _ = try points.aggregateValuesIfAny(aggregation)
        var sequence = contents.sequence
        let chunk = 50_000
        for start in stride(from: 0, to: points.records.count, by: chunk) {
            let records = points.records[start..<min(start + chunk, points.records.count)]
            let edit = PointEdit(puts: PointSet(propertyNames: points.propertyNames, records: Array(records)))
            sequence = try await store.commit([edit.storeBatch], after: sequence).sequences.last ?? sequence
        }
        return (try LiveIndex(points: points, sequence: sequence, aggregation: aggregation), points.records.count)
    }
}
