@_spi(MapClusterServer) public import MapCluster

/// The controller a map view drives: it owns the elements and their index, takes changes in batches, and answers each
/// viewport with the markers to show and the changes from the last answer.
///
///     let manager = ClusterManager<Place.ID>()
///     try await manager.add(places.map { Placement($0.id, latitude: $0.latitude, longitude: $0.longitude) })
///     let update = try await manager.update(for: viewport)
///     for insertion in update.changes.insertions { mapView.add(insertion.marker, from: insertion.splitFrom) }
///     for removal in update.changes.removals { mapView.remove(removal.marker, to: removal.mergesInto) }
///     for change in update.changes.updates { mapView.refresh(change.new) }
///
/// Batches are atomic: a batch applies whole or, with an error naming the bad element, not at all. Updates compute
/// off the caller's thread on a snapshot of the elements, so batches and updates may come from any task at any time.
/// The latest update wins: one requested while another computes stops the other, whose caller gets
/// ``ClusterUpdateError/superseded``; the manager's ``snapshot`` always comes from the last update requested.
///
/// Several managers may serve one map, each with its own elements and options: nothing is shared between them.
public actor ClusterManager<Element: Hashable & Sendable> {
    /// How it clusters, places and names markers; changed with ``setOptions(_:)``.
    public private(set) var options: ClusterManagerOptions<Element>
    /// The markers of the last update, and the elements they were made from.
    public private(set) var snapshot: ClusterSnapshot<Element>
    /// The elements, as the last batch left them.
    public private(set) var index: ClusterIndex<Element>

    /// The version of `index`, raised by every batch that changes it.
    private var dataVersion = 0
    private var optionsVersion = 0
    /// For each change of the elements not yet in `snapshot`: its version and the keys it touched (`nil`: too many).
    private var changeLog: [(version: Int, keys: [UInt64]?)] = []
    /// The number of the latest update requested.
    private var latestRequest = 0
    /// The computation of the latest update, cancelled when a newer one arrives.
    private var running: Task<ClusterUpdate<Element>?, Never>?
    /// Where an update's clustering runs: the cooperative pool (`nil`), or an executor of the caller's.
    ///
    /// A test that holds the clustering on purpose gives one with threads of its own, so that the pool is never held.
    /// Task executors came with iOS 18 and macOS 15, above the package's floors: a stored property can't be newer than
    /// its type, so the executor is kept as a `Sendable` and read back where the system has them.
    @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    var workExecutor: (any TaskExecutor)? {
        get { storedWorkExecutor as? any TaskExecutor }
        set { storedWorkExecutor = newValue }
    }
    private var storedWorkExecutor: (any Sendable)?

    /// The streams of ``events(bufferSize:)``, by subscription.
    private var subscribers: [Int: AsyncStream<ClusterManagerEvent<Element>>.Continuation] = [:]
    private var nextSubscription = 0

    /// Batches larger than this mark every marker as possibly changed, instead of listing the keys they touch.
    static var largestListedChange: Int { 65_536 }

    /// A manager with no elements and the default options.
    public init() {
        self.init(checked: ClusterManagerOptions())
    }

    /// A manager with no elements.
    ///
    /// - Throws: `OptionError` naming the first option that fails
    ///   ``ClusterManagerOptions/validate()``.
    public init(options: ClusterManagerOptions<Element>) throws(OptionError) {
        try options.validate()
        self.init(checked: options)
    }

    private init(checked options: ClusterManagerOptions<Element>) {
        self.options = options
        index = ClusterIndex()
        snapshot = .empty(Clustering(ClusterIndex()))
    }

    /// How many elements it manages.
    public var count: Int { index.count }

    /// Replaces the options; the next update applies them.
    ///
    /// - Throws: `OptionError` naming the first option that fails ``ClusterManagerOptions/validate()``;
    ///   the manager then keeps its options.
    public func setOptions(_ options: ClusterManagerOptions<Element>) throws(OptionError) {
        try options.validate()
        self.options = options
        optionsVersion += 1
    }

    // MARK: - Batches

    /// Adds elements, or moves those already managed to their new coordinates.
    ///
    /// - Throws: ``BatchError/invalidCoordinate(element:position:reason:)`` for the first placement whose coordinate
    ///   is invalid; the batch is then not applied.
    /// - Complexity: O(*m* log *n*) for *m* placements among *n* elements.
    public func add(_ placements: [Placement<Element>]) throws(BatchError<Element>) {
        let located = try Self.validate(placements)
        var keys: [UInt64]?
        if located.count <= Self.largestListedChange {
            // Where each element arrives, and where it leaves for those already managed.
            keys = located.map { $0.1.gridKey }
            for (element, _) in located {
                if let old = index.coordinate(of: element) { keys?.append(old.gridKey) }
            }
        }
        record(touching: keys)
        index.insert(contentsOf: located)
    }

    /// Moves managed elements to new coordinates.
    ///
    /// - Throws: ``BatchError/unknownElement(_:position:)`` for the first element that isn't managed, or
    ///   ``BatchError/invalidCoordinate(element:position:reason:)`` for the first invalid coordinate; the batch is then
    ///   not applied.
    public func move(_ placements: [Placement<Element>]) throws(BatchError<Element>) {
        let located = try Self.validate(placements)
        var keys: [UInt64] = []
        for (position, (element, coordinate)) in located.enumerated() {
            guard let old = index.coordinate(of: element) else {
                throw .unknownElement(element, position: position)
            }
            if located.count <= Self.largestListedChange {
                keys += [old.gridKey, coordinate.gridKey]
            }
        }
        record(touching: located.count <= Self.largestListedChange ? keys : nil)
        index.insert(contentsOf: located)
    }

    /// Removes elements; those not managed are passed over.
    ///
    /// - Returns: How many were removed.
    @discardableResult
    public func remove(_ elements: [Element]) -> Int {
        var keys: [UInt64] = []
        if elements.count <= Self.largestListedChange {
            for element in elements {
                if let coordinate = index.coordinate(of: element) { keys.append(coordinate.gridKey) }
            }
            guard !keys.isEmpty else { return 0 }
        }
        record(touching: elements.count <= Self.largestListedChange ? keys : nil)
        return index.remove(contentsOf: elements)
    }

    /// Replaces every element with these.
    ///
    /// - Throws: ``BatchError/invalidCoordinate(element:position:reason:)`` for the first invalid coordinate; the
    ///   elements are then left as they were.
    public func replaceAll(with placements: [Placement<Element>]) throws(BatchError<Element>) {
        let located = try Self.validate(placements)
        record(touching: nil)
        index = ClusterIndex(located)
    }

    /// Removes every element.
    public func removeAll() {
        guard !index.isEmpty else { return }
        record(touching: nil)
        index = ClusterIndex()
    }

    private static func validate(_ placements: [Placement<Element>]) throws(BatchError<Element>) -> [(
        Element, Coordinate
    )] {
        var located: [(Element, Coordinate)] = []
        located.reserveCapacity(placements.count)
        for (position, placement) in placements.enumerated() {
            do {
                located.append(
                    (placement.element, try Coordinate(latitude: placement.latitude, longitude: placement.longitude)))
            } catch {
                throw .invalidCoordinate(element: placement.element, position: position, reason: error)
            }
        }
        return located
    }

    /// Notes a change of the elements, with the keys it touched, or `nil` if they are too many to list.
    private func record(touching keys: [UInt64]?) {
        dataVersion += 1
        if keys == nil || changeLog.count >= 1_000 {
            // Everything may have changed (which supersedes every list before), or the log grows without updates
            // to consume it.
            changeLog = [(dataVersion, nil)]
        } else {
            changeLog.append((dataVersion, keys))
        }
    }

    /// The keys changed since a version of the elements.
    private func dirtyKeys(since version: Int) -> DirtyKeys {
        var keys: [UInt64] = []
        for change in changeLog where change.version > version {
            guard let changed = change.keys else { return .all }
            keys += changed
        }
        return .keys(keys.sorted())
    }

    // MARK: - Updates

    /// Clusters the elements for a viewport, off the caller's thread.
    ///
    /// - Returns: The new snapshot, which becomes ``snapshot``, and the changes from the previous one.
    /// - Throws: ``ClusterUpdateError/superseded`` if another update was requested before this one finished (its
    ///   work stops early), ``ClusterUpdateError/cancelled`` if the calling task was cancelled; ``snapshot`` is then
    ///   unchanged.
    ///
    /// An empty viewport (`Viewport.isEmpty`: a view with no size yet) does no work and sends no event:
    /// the answer is ``snapshot`` with no changes, and an update already running goes on.
    public func update(for viewport: Viewport) async throws(ClusterUpdateError) -> ClusterUpdate<Element> {
        guard !viewport.isEmpty else { return ClusterUpdate(snapshot: snapshot, changes: ClusterChanges()) }
        running?.cancel()
        latestRequest += 1
        let request = latestRequest
        send(.willUpdate(viewport))
        let job = UpdateJob(
            viewport: viewport, clustering: Clustering(validated: index, options: options.clustering),
            dataVersion: dataVersion, options: options,
            optionsVersion: optionsVersion, previous: snapshot, dirty: dirtyKeys(since: snapshot.dataVersion))
        let task: Task<ClusterUpdate<Element>?, Never>
        if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *), let workExecutor {
            task = Task.detached(executorPreference: workExecutor, priority: Task.currentPriority) {
                job.run { Task.isCancelled }
            }
        } else {
            task = Task.detached(priority: Task.currentPriority) { job.run { Task.isCancelled } }
        }
        running = task
        let result = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        guard request == latestRequest else {
            send(.didNotUpdate(viewport, .superseded))
            throw .superseded
        }
        running = nil
        guard let result else {
            send(.didNotUpdate(viewport, .cancelled))
            throw .cancelled
        }
        snapshot = result.snapshot
        changeLog.removeAll { $0.version <= result.snapshot.dataVersion }
        send(.didUpdate(result))
        return result
    }

    // MARK: - Events

    /// The manager's events from now on: each update that starts, ends, or is dropped.
    ///
    ///     for await event in await manager.events() {
    ///         if case .didUpdate(let update) = event { print(update.changes.insertions.count, "markers added") }
    ///     }
    ///
    /// Each call gives a stream of its own, and every stream gets every event, in order: ``ClusterManagerEvent/willUpdate(_:)``
    /// and then one ``ClusterManagerEvent/didUpdate(_:)`` or ``ClusterManagerEvent/didNotUpdate(_:_:)`` for each update
    /// requested (an empty viewport's excepted: it sends none). A stream keeps the newest `bufferSize` events its
    /// reader hasn't taken, dropping older ones; it ends when its task is cancelled, it is dropped, or the manager
    /// goes.
    public func events(bufferSize: Int = 64) -> AsyncStream<ClusterManagerEvent<Element>> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ClusterManagerEvent<Element>.self, bufferingPolicy: .bufferingNewest(max(bufferSize, 1)))
        let subscription = nextSubscription
        nextSubscription += 1
        subscribers[subscription] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(subscription) }
        }
        return stream
    }

    deinit {
        // The readers' loops end with the manager.
        for continuation in subscribers.values { continuation.finish() }
    }

    private func unsubscribe(_ subscription: Int) {
        subscribers[subscription] = nil
    }

    private func send(_ event: ClusterManagerEvent<Element>) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    /// Updates the last viewport again, after changes of the elements or the options; an empty update before the
    /// first viewport.
    public func reload() async throws(ClusterUpdateError) -> ClusterUpdate<Element> {
        guard let viewport = snapshot.viewport else {
            return ClusterUpdate(snapshot: snapshot, changes: ClusterChanges())
        }
        return try await update(for: viewport)
    }

    // MARK: - Finding elements

    /// The marker of the last update that shows an element, or `nil` if it has none.
    public func marker(holding element: Element) -> ClusterMarker<Element>? {
        snapshot.marker(holding: element)
    }

    /// Where to take the map to see an element on its own: the smallest zoom at which it stands alone (or, if
    /// others share its coordinate, at which it is in a cluster of that coordinate only), and a viewport of `size`
    /// centered on it there.
    ///
    /// - Returns: `nil` if the element isn't managed.
    public func reveal(_ element: Element, in size: ViewSize) -> Reveal? {
        guard let coordinate = index.coordinate(of: element),
            let zoom = Clustering(validated: index, options: options.clustering).revealingZoom(of: element)
        else { return nil }
        return Reveal(zoom: zoom, viewport: Viewport(center: coordinate, zoom: zoom, size: size))
    }
}

/// An element and where it is, for a ``ClusterManager`` batch.
///
/// Its coordinate is checked when the batch is applied.
public struct Placement<Element: Hashable & Sendable>: Sendable {
    /// The element.
    public var element: Element
    /// Its latitude, in degrees.
    public var latitude: Double
    /// Its longitude, in degrees.
    public var longitude: Double

    /// An element at a latitude and longitude, in degrees.
    public init(_ element: Element, latitude: Double, longitude: Double) {
        self.element = element
        self.latitude = latitude
        self.longitude = longitude
    }

    /// An element at a coordinate.
    public init(_ element: Element, at coordinate: Coordinate) {
        self.init(element, latitude: coordinate.latitude, longitude: coordinate.longitude)
    }
}

/// Why a ``ClusterManager`` batch was not applied.
///
/// Nothing of the batch was.
public enum BatchError<Element: Hashable & Sendable>: Error, CustomStringConvertible {
    /// The placement at `position` in the batch has an invalid coordinate.
    case invalidCoordinate(element: Element, position: Int, reason: CoordinateError)
    /// The element at `position` in the batch is not managed, so it can't be moved.
    case unknownElement(Element, position: Int)

    /// What went wrong and where, as in `batch item 2 (element "b"): latitude 91.0 is outside -90...90`.
    public var description: String {
        switch self {
        case .invalidCoordinate(let element, let position, let reason):
            "batch item \(position) (element \(String(reflecting: element))): \(reason); the batch was not applied"
        case .unknownElement(let element, let position):
            "batch item \(position) (element \(String(reflecting: element))): not managed, so it can't be moved; "
                + "the batch was not applied"
        }
    }
}

/// Why a ``ClusterManager/update(for:)`` gave no update.
public enum ClusterUpdateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A newer update was requested before this one finished: its answer is the one to show.
    case superseded
    /// The calling task was cancelled.
    case cancelled

    /// The reason, in words.
    public var description: String {
        switch self {
        case .superseded: "a newer update was requested before this one finished"
        case .cancelled: "the update's task was cancelled"
        }
    }
}

/// What a ``ClusterManager`` tells the readers of its ``ClusterManager/events(bufferSize:)``: Cluster's
/// `willUpdate`/`didUpdate`, and CCHMapClusterController's `willReuseMapClusterAnnotation` and
/// `didAddAnnotations` (the update's ``ClusterChanges/updates`` and ``ClusterChanges/insertions``).
public enum ClusterManagerEvent<Element: Hashable & Sendable>: Sendable {
    /// An update for a viewport has started.
    case willUpdate(Viewport)
    /// An update has ended: its snapshot is now the manager's, and its changes are what a map applies.
    case didUpdate(ClusterUpdate<Element>)
    /// An update for a viewport gave nothing: a newer one overtook it, or its task was cancelled.
    case didNotUpdate(Viewport, ClusterUpdateError)
}

/// Where to take a map to show one element on its own: ``ClusterManager/reveal(_:in:)``.
public struct Reveal: Hashable, Sendable {
    /// The smallest zoom at which the element stands alone, or in a cluster of its coordinate only.
    public let zoom: Double
    /// A viewport centered on the element at ``zoom``.
    public let viewport: Viewport
}
