package import Hummingbird
package import MapCluster
import MapClusterIO
package import MapClusterLive
package import MapClusterManager
import NIOConcurrencyHelpers
package import NIOCore

/// A live server's change streams: the changes of a viewport as Server-Sent Events, and their end when the server
/// stops.
extension LiveService {
    /// The changes of a viewport as Server-Sent Events.
    ///
    /// First `ready` with the version the stream starts at, then after each edit that changes the viewport's markers `changes` (see `MarkerGeoJSON.changes(_:updates:version:previous:)`),
    /// and `resync` when the stream fell behind (a slow client, or edits too large to list): the client then fetches
    /// the clusters again. A comment line every 15 seconds keeps an idle stream open.
    ///
    /// When the server stops (``stop(grace:)``), each stream gets a last event, `end`, and is closed.
    package func changes(_ query: ViewQuery, channel: any Channel) throws(RequestError) -> Response {
        guard !streams.withLockedValue({ $0.stopping }) else { throw Self.stopping }
        let service = current
        let (rect, zoom, categories) = try service.view(query)
        let selected = service.markers.selecting(categories: categories)
        var options = selected.options
        // The markers of /api/clusters, which a client starts from: each at its own cluster's position.
        options.reusesMarkers = false
        let clustering = selected.clustering
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: zoom))
        let convention = service.options.zoomConvention
        return eventStream(channel: channel) { [options] state in
            ChangeStream(
                viewport: viewport, options: options, clustering: clustering, state: state, zoomConvention: convention)
        }
    }

    /// Which vector tiles each edit changed, as Server-Sent Events (``TileChangeStream``).
    ///
    /// First `ready` with the version the stream starts at, then `tiles` with the version and the `z/x/y` of every
    /// tile of the zooms and area asked for whose content changed, and `resync` when they can't be listed (the client
    /// then fetches every tile again). Like ``changes(_:channel:)``, it keeps an idle stream open and ends with `end`
    /// when the server stops.
    package func tileChanges(_ query: TileChangesQuery, channel: any Channel) throws(RequestError) -> Response {
        guard !streams.withLockedValue({ $0.stopping }) else { throw Self.stopping }
        let base = current
        return eventStream(channel: channel) { state in
            TileChangeStream(zooms: query.zooms, area: query.rect, base: base, state: state)
        }
    }

    /// A stream of events, one for each new version of the points that `start`'s stream has one for.
    private func eventStream<Stream: VersionStream>(
        channel: any Channel, start: @escaping @Sendable (LiveIndex.State) -> Stream
    ) -> Response {
        let live = self.live
        let body = ResponseBody { [self] writer in
            guard let connection = open(channel) else {
                try await writer.write(ByteBuffer(string: Self.endEvent(version: live.current.version)))
                try await writer.finish(nil)
                return
            }
            defer { close(connection) }
            let (subscription, versions) = live.subscribe()
            defer { live.unsubscribe(subscription) }
            var stream = start(live.current)
            try await writer.write(ByteBuffer(string: "event: ready\ndata: {\"version\":\(stream.version)}\n\n"))
            for await _ in versions {
                // A stopping server ends its streams now, whatever versions they have yet to tell.
                if streams.withLockedValue({ $0.stopping }) { break }
                let state = live.current
                guard state.version != stream.version else {
                    try await writer.write(ByteBuffer(string: ": still here\n\n"))
                    continue
                }
                let keys = live.changedKeys(after: stream.version, through: state.version)
                if let event = stream.event(for: state, changedKeys: keys) {
                    try await writer.write(ByteBuffer(string: event))
                }
            }
            // The versions end when the server stops.
            try await writer.write(ByteBuffer(string: Self.endEvent(version: live.current.version)))
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: body)
    }

    static let stopping = RequestError(
        .serviceUnavailable, "the server is stopping: ask again in a moment, or ask another server")

    /// The last event of a change stream: the server stops, and the client is to ask again (a browser's EventSource
    /// does, when the stream closes).
    static func endEvent(version: Int) -> String {
        "event: end\ndata: {\"version\":\(version),\"reason\":\"the server is stopping\"}\n\n"
    }

    /// Numbers a change stream's connection; `nil` once the server is stopping.
    private func open(_ channel: any Channel) -> Int? {
        streams.withLockedValue { streams in
            guard !streams.stopping else { return nil }
            streams.next += 1
            streams.open[streams.next] = channel
            return streams.next
        }
    }

    private func close(_ stream: Int) {
        streams.withLockedValue { _ = $0.open.removeValue(forKey: stream) }
    }

    /// Ends the change streams, as the server stops.
    ///
    /// Each stream gets its last event (`end`) and is closed; new ones are refused (503). A stream still open after
    /// `grace`, whose client doesn't read what it is sent, has its connection closed. Edits are not stopped here: the writer's `LiveWriter.stop()` commits or refuses them.
    ///
    /// - Complexity: Returns once every stream has ended, within about `grace`.
    package func stop(grace: Duration = .seconds(3)) async {
        streams.withLockedValue { $0.stopping = true }
        live.finishSubscriptions()
        let deadline = ContinuousClock.now + grace
        while streams.withLockedValue({ $0.open.count }) > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let stuck = streams.withLockedValue { Array($0.open.values) }
        for channel in stuck { channel.close(promise: nil) }
        while streams.withLockedValue({ $0.open.count }) > 0 && ContinuousClock.now < deadline + grace {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// A stream of events that follows the points from version to version.
package protocol VersionStream {
    /// The version the client was last told.
    var version: Int { get }
    /// The event that tells the client what `state` changed; `nil` when nothing it follows did.
    mutating func event(for state: LiveIndex.State, changedKeys keys: [UInt64]?) -> String?
}

/// What one change stream sends: the markers of its viewport followed from version to version, each version's changes
/// as an event.
package struct ChangeStream: VersionStream {
    /// The markers of the viewport, as the client was last told them.
    package private(set) var follower: ClusterFollower<Int>
    /// The clustering of the stream (its categories selected), to be bound to each version's index.
    package let clustering: Clustering<Int>
    package let zoomConvention: ZoomConvention
    /// The writer of the version the client was last told: the points of its removals, and its features.
    private var previous: MarkerGeoJSON

    package var version: Int { follower.version }

    /// The stream of `viewport`'s markers, from `state` on.
    package init(
        viewport: Viewport, options: ClusterManagerOptions<Int>, clustering: Clustering<Int>, state: LiveIndex.State,
        zoomConvention: ZoomConvention
    ) {
        follower = ClusterFollower(viewport: viewport, options: options, index: state.index, version: state.version)
        self.clustering = clustering
        self.zoomConvention = zoomConvention
        previous = MarkerGeoJSON(
            points: state.points, clustering: clustering.of(state.index), zoomConvention: zoomConvention)
    }

    /// The event that tells the client how `state` changed its markers: `changes`, `resync` (the changes were too many
    /// to list, or the stream lags too far), or `nil` when no marker changed.
    ///
    /// A marker kept with the same place, count and properties is not sent as changed, even where an edit touched it.
    package mutating func event(for state: LiveIndex.State, changedKeys keys: [UInt64]?) -> String? {
        let current = MarkerGeoJSON(
            points: state.points, clustering: clustering.of(state.index), zoomConvention: zoomConvention)
        defer { previous = current }
        let before = follower.snapshot
        if let keys, state.version - follower.version <= LiveService.maximumLag {
            let update = follower.update(index: state.index, version: state.version, changedKeys: keys)
            let changes = update.changes
            let updates = changes.updates.filter { change in
                previous.feature(of: change.old, in: before) != current.feature(of: change.new, in: update.snapshot)
            }
            let count = changes.insertions.count + changes.removals.count + updates.count
            if count == 0 { return nil }
            if count <= LiveService.maximumChanges {
                return "event: changes\ndata: "
                    + current.changes(update, updates: updates, version: state.version, previous: previous) + "\n\n"
            }
        }
        follower = ClusterFollower(
            viewport: follower.viewport, options: follower.options, index: state.index, version: state.version)
        return "event: resync\ndata: {\"version\":\(state.version)}\n\n"
    }
}
