public import MapCluster

/// What a ``MapMarkerController`` needs from a map view: the visible area, and a place to show markers.
///
/// `MapClusterMapKit` makes `MKMapView` one; a test double makes the controller's behaviour testable anywhere. Every
/// call comes on the main actor.
@MainActor
public protocol ClusterMapView: AnyObject {
    /// The kind of element the map shows.
    associatedtype Element: Hashable & Sendable

    /// What the map shows now, or `nil` while it has no size.
    var visibleViewport: Viewport? { get }

    /// Shows a transition: markers to add (each from where it starts), to remove (each to where it ends), and to
    /// refresh, with the timing of their animations.
    func apply(_ transition: MarkerTransition<Element>)

    /// Moves the map to show a viewport.
    func show(_ viewport: Viewport, animated: Bool)

    /// Selects a marker (showing its callout, for instance).
    func select(_ marker: ClusterMarker<Element>)

    /// Draws the grid cells of the last update as an overlay, or removes the overlay when `cells` is empty.
    func showDebugGrid(_ cells: [GridCell])
}

/// One update's changes as a map view animates them: what moves from where to where, and what fades.
public struct MarkerTransition<Element: Hashable & Sendable>: Sendable {
    /// A marker that appears: added at `start`, then moved to its place while it fades in.
    public struct Appearance: Sendable {
        /// The new marker.
        public let marker: ClusterMarker<Element>
        /// Where it is added: the position of the marker it splits out of, or its own.
        public let start: Coordinate
    }

    /// A marker that goes: moved to `end` while it fades out, then removed.
    public struct Disappearance: Sendable {
        /// The marker of the previous update.
        public let marker: ClusterMarker<Element>
        /// Where it goes: the position of the marker it merges into, or its own.
        public let end: Coordinate
    }

    /// Markers to add, in the order of the update.
    public let appearances: [Appearance]
    /// Markers to remove, in the order of the previous update.
    public let disappearances: [Disappearance]
    /// Markers that stay with new members or a new place: refresh their views, and move them (animated) if their
    /// position changed.
    public let updates: [ClusterChanges<Element>.Update]
    /// How long fades and moves take, in seconds; 0 when the map should not animate.
    public let duration: Double
    /// The grid cells of the update, when the debug grid is on.
    public let gridCells: [GridCell]
    /// The snapshot the new markers come from: ask it for their members, bounds and children.
    public let snapshot: ClusterSnapshot<Element>

    /// Whether there is nothing to show.
    public var isEmpty: Bool { appearances.isEmpty && disappearances.isEmpty && updates.isEmpty }

    /// The transition for an update: its changes, from its snapshot.
    public init(_ update: ClusterUpdate<Element>, duration: Double, gridCells: [GridCell] = []) {
        let changes = update.changes
        snapshot = update.snapshot
        appearances = changes.insertions.map {
            Appearance(marker: $0.marker, start: $0.splitFrom ?? $0.marker.coordinate)
        }
        disappearances = changes.removals.map {
            Disappearance(marker: $0.marker, end: $0.mergesInto ?? $0.marker.coordinate)
        }
        updates = changes.updates
        self.duration = duration
        self.gridCells = gridCells
    }
}
