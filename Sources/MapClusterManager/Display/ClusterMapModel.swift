public import MapCluster
public import Observation

/// The markers of a map as observable state, for SwiftUI's `Map`: feed it the camera, draw its ``markers``.
///
///     @State private var model = ClusterMapModel<Place.ID>()
///
///     Map {
///         ForEach(model.markers) { marker in
///             Annotation(model.title(of: marker) ?? "", coordinate: marker.coordinate.clLocationCoordinate) { … }
///         }
///     }
///     .onMapCameraChange(frequency: .onEnd) { context in
///         if let viewport = Viewport(context, size: mapSize) { model.cameraDidChange(to: viewport) }
///     }
///
/// (`mapSize` is the map's size from a `GeometryReader`; `MapClusterMapKit` has `Viewport(_:size:)` and
/// `cameraDidChange(_:size:)` for MapKit's types.) A camera change made while an update computes
/// supersedes it: ``markers`` always ends as the clusters of the last camera.
///
/// It is observable through the Observation framework, which needs iOS 17 or macOS 14; on earlier systems a UIKit or
/// AppKit map view drives ``MapMarkerController`` instead.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor
@Observable
public final class ClusterMapModel<Element: Hashable & Sendable> {
    /// The markers of the last camera, for `ForEach`.
    public private(set) var markers: [ClusterMarker<Element>] = []
    /// The grid cells of the last camera, for a debug overlay.
    public private(set) var gridCells: [GridCell] = []
    /// The manager: the elements and options.
    @ObservationIgnored public let manager: ClusterManager<Element>
    @ObservationIgnored private var viewport: Viewport?
    /// The snapshot the markers are of: what their titles are asked of.
    @ObservationIgnored private var snapshot: ClusterSnapshot<Element>?

    /// A model with no elements and the default options.
    public init() {
        manager = ClusterManager()
    }

    /// A model with no elements.
    ///
    /// - Throws: `OptionError` naming the first option that fails ``ClusterManagerOptions/validate()``.
    public init(options: ClusterManagerOptions<Element>) throws(OptionError) {
        manager = try ClusterManager(options: options)
    }

    /// Call when the map's camera settles: clusters the new viewport.
    public func cameraDidChange(to viewport: Viewport) {
        Task { await update(for: viewport) }
    }

    /// Clusters a viewport and publishes its markers, unless a newer camera overtook it.
    public func update(for viewport: Viewport) async {
        self.viewport = viewport
        guard let update = try? await manager.update(for: viewport) else { return }
        snapshot = update.snapshot
        markers = update.snapshot.markers
        gridCells = update.snapshot.gridCells
    }

    /// A marker's title, from the options of the update that made it (``ClusterSnapshot/title(of:)``).
    public func title(of marker: ClusterMarker<Element>) -> String? {
        snapshot?.title(of: marker) ?? ClusterManagerOptions<Element>().title(for: marker)
    }

    /// A marker's subtitle, from the options of the update that made it (``ClusterSnapshot/subtitle(of:)``).
    public func subtitle(of marker: ClusterMarker<Element>) -> String? {
        snapshot?.subtitle(of: marker) ?? ClusterManagerOptions<Element>().subtitle(for: marker)
    }

    /// Where a tap on a marker takes the camera: centred on the marker's members, at the zoom at which they no longer
    /// show as this one marker (``ClusterSnapshot/expansionZoom(of:)``), in the last camera's size and heading.
    ///
    /// - Returns: `nil` for a marker whose members never split (they share a coordinate), for a marker of an older
    ///   camera's snapshot, or before the first camera.
    public func viewport(expanding marker: ClusterMarker<Element>) -> Viewport? {
        guard let viewport, let snapshot, let zoom = try? snapshot.expansionZoom(of: marker),
            let bounds = try? snapshot.bounds(of: marker)
        else { return nil }
        return Viewport(center: bounds.center.coordinate, zoom: zoom, size: viewport.size, heading: viewport.heading)
    }

    /// Adds elements (or moves those already there) and re-clusters the last camera.
    public func add(_ placements: [Placement<Element>]) async throws(BatchError<Element>) {
        try await manager.add(placements)
        await reload()
    }

    /// Removes elements and re-clusters the last camera.
    public func remove(_ elements: [Element]) async {
        await manager.remove(elements)
        await reload()
    }

    /// Replaces every element and re-clusters the last camera.
    public func replaceAll(with placements: [Placement<Element>]) async throws(BatchError<Element>) {
        try await manager.replaceAll(with: placements)
        await reload()
    }

    private func reload() async {
        if let viewport { await update(for: viewport) }
    }
}
