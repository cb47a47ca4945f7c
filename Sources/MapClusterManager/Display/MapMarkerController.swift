public import MapCluster

/// Keeps a map view's markers in step with a ``ClusterManager``: the logic of a map adapter, whatever the map.
///
///     let controller = MapMarkerController(view: mapView)      // mapView: some ClusterMapView
///     try await controller.add(places.map { Placement($0, latitude: $0.latitude, longitude: $0.longitude) })
///     // and in the map's region-did-change callback:
///     controller.regionDidChange()
///
/// Each refresh asks the manager for the visible viewport's update and hands the view one ``MarkerTransition``: the
/// manager's latest-wins rule means a refresh overtaken by a newer one shows nothing, so the view always ends on the
/// last region it reported.
@MainActor
public final class MapMarkerController<View: ClusterMapView> {
    /// The kind of element the view shows.
    public typealias Element = View.Element

    /// The manager: the elements, options and snapshots.
    public let manager: ClusterManager<Element>
    /// How long fades and split and merge moves take, in seconds; 0 turns animation off.
    ///
    /// Default 0.2.
    public var animationDuration = 0.2
    /// Whether the view shows the grid of each update, for debugging.
    ///
    /// Default `false`.
    public var showsDebugGrid = false {
        didSet { if !showsDebugGrid { view?.showDebugGrid([]) } }
    }

    /// Told before each refresh's update and after the view has applied it; held weakly.
    ///
    /// UIKit's delegate pattern: the manager's ``ClusterManager/events(bufferSize:)`` says the same as an
    /// `AsyncSequence`.
    public weak var delegate: (any MapMarkerControllerDelegate<Element>)?

    /// The markers the view shows now.
    public private(set) var markers: [ClusterMarker<Element>] = []
    /// How many refreshes reached the view, for tests and diagnostics.
    public private(set) var appliedTransitions = 0

    private weak var view: View?
    /// The refresh started by the last ``regionDidChange()``.
    var refreshTask: Task<Void, Never>?

    /// A controller for a view, with a manager of its own and the default options.
    public init(view: View) {
        self.view = view
        manager = ClusterManager()
    }

    /// A controller for a view, with a manager of its own.
    ///
    /// - Throws: `OptionError` naming the first option that fails ``ClusterManagerOptions/validate()``.
    public init(view: View, options: ClusterManagerOptions<Element>) throws(OptionError) {
        self.view = view
        manager = try ClusterManager(options: options)
    }

    // MARK: - Elements

    /// Adds elements (or moves those already there), then refreshes the view.
    public func add(_ placements: [Placement<Element>]) async throws(BatchError<Element>) {
        try await manager.add(placements)
        await refresh()
    }

    /// Removes elements, then refreshes the view.
    public func remove(_ elements: [Element]) async {
        await manager.remove(elements)
        await refresh()
    }

    /// Moves elements, then refreshes the view.
    public func move(_ placements: [Placement<Element>]) async throws(BatchError<Element>) {
        try await manager.move(placements)
        await refresh()
    }

    /// Replaces every element, then refreshes the view.
    public func replaceAll(with placements: [Placement<Element>]) async throws(BatchError<Element>) {
        try await manager.replaceAll(with: placements)
        await refresh()
    }

    /// Changes the manager's options, then refreshes the view.
    ///
    /// - Throws: `OptionError` naming the first option that fails ``ClusterManagerOptions/validate()``;
    ///   nothing then changes.
    public func setOptions(_ options: ClusterManagerOptions<Element>) async throws(OptionError) {
        try await manager.setOptions(options)
        await refresh()
    }

    // MARK: - Refreshing

    /// Call when the map's visible region changed (`mapView(_:regionDidChangeAnimated:)`): starts a refresh, which
    /// supersedes any still running.
    public func regionDidChange() {
        refreshTask = Task { await refresh() }
    }

    /// Clusters the visible viewport and shows the changes; does nothing (and tells the delegate nothing) if the view
    /// has no size, or if a newer refresh overtook this one.
    public func refresh() async {
        guard let viewport = view?.visibleViewport, !viewport.isEmpty else { return }
        await refresh(for: viewport)
    }

    /// Refreshes the view now, animated or not, and returns once the view shows the update: ClusterMap's and
    /// Cluster's `reload(mapView:completion:)`, and kingpin's refresh that says per call whether to animate.
    ///
    /// A region change while it runs overtakes it: it then returns once the view shows that newer refresh. A view with
    /// no size gets no refresh, and it returns at once.
    public func reload(animated: Bool = true) async {
        guard let viewport = view?.visibleViewport, !viewport.isEmpty else { return }
        await refresh(for: viewport, duration: animated ? animationDuration : 0)
        await newestRefresh()
    }

    /// Waits for the refresh the last ``regionDidChange()`` started, and for any that one's wait let start.
    private func newestRefresh() async {
        var awaited: Task<Void, Never>?
        while let newest = refreshTask, newest != awaited {
            awaited = newest
            await newest.value
        }
    }

    private func refresh(for viewport: Viewport, duration: Double? = nil) async {
        let update: ClusterUpdate<Element>
        delegate?.markerController(willUpdateFor: viewport)
        do {
            update = try await manager.update(for: viewport)
        } catch {
            return  // superseded or cancelled: the newer refresh shows its own answer
        }
        guard let view else { return }
        let transition = MarkerTransition(
            update, duration: duration ?? animationDuration,
            gridCells: showsDebugGrid ? update.snapshot.gridCells : [])
        markers = update.snapshot.markers
        if !transition.isEmpty {
            view.apply(transition)
            appliedTransitions += 1
        }
        if showsDebugGrid { view.showDebugGrid(update.snapshot.gridCells) }
        delegate?.markerController(didUpdate: update)
    }

    // MARK: - Finding an element

    /// The marker that shows an element now, or `nil` if none does.
    public func marker(holding element: Element) async -> ClusterMarker<Element>? {
        await manager.marker(holding: element)
    }

    /// Moves the map to the smallest zoom at which an element stands alone (or with only the elements on its
    /// coordinate), centered on it, and selects its marker there.
    ///
    /// - Returns: Where the map went: the zoom and the viewport.
    /// - Throws: ``RevealError/notManaged`` for an element that was never added or has been removed, and
    ///   ``RevealError/noVisibleMap`` while the view is gone or has no size; the map then stays where it is.
    @discardableResult
    public func selectAndReveal(_ element: Element, animated: Bool = true) async throws(RevealError) -> Reveal {
        guard let view, let size = view.visibleViewport?.size else { throw .noVisibleMap }
        guard let reveal = await manager.reveal(element, in: size) else { throw .notManaged }
        await show(reveal.viewport, selecting: element, in: view, animated: animated)
        return reveal
    }

    /// Moves the map to a viewport and selects the marker that shows an element there (the element alone, or the
    /// cluster that holds it): CCHMapClusterController's select-and-zoom to a region of a span in metres.
    ///
    /// - Throws: ``RevealError/notManaged`` for an element that was never added or has been removed, and
    ///   ``RevealError/noVisibleMap`` while the view is gone or has no size; the map then stays where it is.
    public func select(_ element: Element, showing viewport: Viewport, animated: Bool = true) async throws(RevealError)
    {
        guard let view, view.visibleViewport != nil else { throw .noVisibleMap }
        guard await manager.index.contains(element) else { throw .notManaged }
        await show(viewport, selecting: element, in: view, animated: animated)
    }

    /// Moves the view to a viewport, refreshes it there, and selects the marker that shows an element.
    ///
    /// The view reports its new region itself; refreshing for the viewport here makes the selection independent of when
    /// it does. If it reports it while this refresh runs, its refresh supersedes this one: the selection waits for what
    /// the map then shows, so that it never selects a marker of the wider map.
    private func show(_ viewport: Viewport, selecting element: Element, in view: View, animated: Bool) async {
        view.show(viewport, animated: animated)
        await refresh(for: viewport)
        await newestRefresh()
        if let marker = await manager.marker(holding: element) { view.select(marker) }
    }
}

/// What a ``MapMarkerController`` tells its delegate: Cluster's `willUpdate`/`didUpdate`, and
/// CCHMapClusterController's `willReuseMapClusterAnnotation` (the update's ``ClusterChanges/updates``: markers that
/// keep their place with new members) and `didAddAnnotations`.
///
/// Both have empty defaults; every call comes on the main actor. A view with no size gets no refresh and no call.
@MainActor
public protocol MapMarkerControllerDelegate<Element>: AnyObject {
    /// The kind of element the map shows.
    associatedtype Element: Hashable & Sendable

    /// A refresh is about to update the markers for `viewport`.
    func markerController(willUpdateFor viewport: Viewport)

    /// The view has applied an update: its markers are the update's snapshot's.
    ///
    /// Not called for a refresh a newer one overtook: that one's call follows.
    func markerController(didUpdate update: ClusterUpdate<Element>)
}

extension MapMarkerControllerDelegate {
    /// Nothing.
    public func markerController(willUpdateFor viewport: Viewport) {}

    /// Nothing.
    public func markerController(didUpdate update: ClusterUpdate<Element>) {}
}

/// Why ``MapMarkerController/selectAndReveal(_:animated:)`` could not reveal an element.
public enum RevealError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The element was never added, or has been removed.
    case notManaged
    /// The view is gone, or has no size yet: there is no map to move.
    case noVisibleMap

    /// The reason, in words.
    public var description: String {
        switch self {
        case .notManaged: "the element is not managed: it was never added, or has been removed"
        case .noVisibleMap: "the map view is gone or has no size yet"
        }
    }
}
