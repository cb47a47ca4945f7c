public import MapCluster

/// The markers of one viewport, followed across versions of an index that changes elsewhere (a live server's), with
/// the changes from one version to the next as ``ClusterManager`` gives them: insertions with the position they split
/// from, removals with the position they merge into, and markers kept with new members.
///
///     var follower = ClusterFollower(viewport: viewport, options: options, index: live.index, version: live.version)
///     let update = follower.update(index: next.index, version: next.version, changedKeys: keys)
public struct ClusterFollower<Element: Hashable & Sendable>: Sendable {
    /// The viewport followed.
    public let viewport: Viewport
    /// How it clusters and lays out markers.
    public let options: ClusterManagerOptions<Element>
    /// The markers of the last version.
    public private(set) var snapshot: ClusterSnapshot<Element>

    /// Starts following `viewport` at a version of an index: its markers, without changes.
    public init(viewport: Viewport, options: ClusterManagerOptions<Element>, index: ClusterIndex<Element>, version: Int)
    {
        self.viewport = viewport
        self.options = options
        // Made once: each version's clustering is this one, of that version's index.
        snapshot = .empty(Clustering(validated: index, options: options.clustering), layout: options)
        _ = update(index: index, version: version, changedKeys: nil)
    }

    /// The version of the index the markers show.
    public var version: Int { snapshot.dataVersion }

    /// The markers of a later version of the index and the changes from the last ones.
    ///
    /// - Parameters:
    ///   - index: The index as it is now.
    ///   - version: Its version, above the last one's.
    ///   - changedKeys: The grid keys (`Coordinate`'s position on the grid) of every element added, moved
    ///     or removed since the last version, where it was and where it is; `nil` when not known, which makes every
    ///     kept marker an update.
    /// - Returns: The new markers, and the changes from the last ones.
    public mutating func update(index: ClusterIndex<Element>, version: Int, changedKeys: [UInt64]?)
        -> ClusterUpdate<Element>
    {
        let job = UpdateJob(
            viewport: viewport, clustering: snapshot.clustering.of(index), dataVersion: version, options: options,
            optionsVersion: 0,
            previous: snapshot, dirty: changedKeys.map { .keys($0.sorted()) } ?? .all)
        guard let update = job.run(stop: { false }) else {
            preconditionFailure("an update that is never stopped finishes")
        }
        snapshot = update.snapshot
        return update
    }
}
