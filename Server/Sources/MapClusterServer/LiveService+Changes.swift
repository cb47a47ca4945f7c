package import Hummingbird
import MapCluster
import MapClusterIO
import MapClusterLive
import MapClusterManager
import NIOConcurrencyHelpers
package import NIOCore

/// A live server's change streams: the changes of a viewport as Server-Sent Events, and their end when the server
/// stops.
extension LiveService {
    /// The changes of a viewport as Server-Sent Events.
    ///
    /// First `ready` with the version the stream starts at, then after each edit that changes the viewport's markers `changes` (see ``MarkerGeoJSON/changes(_:version:previous:)``),
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
        let live = self.live
        let convention = service.options.zoomConvention
        let body = ResponseBody { [options, clustering, self] writer in
            guard let stream = open(channel) else {
                try await writer.write(ByteBuffer(string: Self.endEvent(version: live.current.version)))
                try await writer.finish(nil)
                return
            }
            defer { close(stream) }
            let (subscription, versions) = live.subscribe()
            defer { live.unsubscribe(subscription) }
            var state = live.current
            var follower = ClusterFollower(
                viewport: viewport, options: options, index: state.index, version: state.version)
            var previous = MarkerGeoJSON(
                points: state.points, clustering: clustering.of(state.index), zoomConvention: convention)
            try await writer.write(ByteBuffer(string: "event: ready\ndata: {\"version\":\(state.version)}\n\n"))
            for await _ in versions {
                state = live.current
                guard state.version != follower.version else {
                    try await writer.write(ByteBuffer(string: ": still here\n\n"))
                    continue
                }
                let keys = live.changedKeys(after: follower.version, through: state.version)
                // The writer of this version: its changes' features, and the removals' points of the next event.
                let current = MarkerGeoJSON(
                    points: state.points, clustering: clustering.of(state.index), zoomConvention: convention)
                var event: String?
                if let keys, state.version - follower.version <= Self.maximumLag {
                    let update = follower.update(index: state.index, version: state.version, changedKeys: keys)
                    let changes = update.changes
                    let count = changes.insertions.count + changes.removals.count + changes.updates.count
                    if count > Self.maximumChanges {
                        event = nil
                    } else if count > 0 {
                        event =
                            "event: changes\ndata: "
                            + current.changes(update, version: state.version, previous: previous) + "\n\n"
                    } else {
                        event = ""
                    }
                }
                if event == nil {
                    follower = ClusterFollower(
                        viewport: viewport, options: options, index: state.index, version: state.version)
                    event = "event: resync\ndata: {\"version\":\(state.version)}\n\n"
                }
                previous = current
                if let event, !event.isEmpty { try await writer.write(ByteBuffer(string: event)) }
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
    /// `grace`, whose client doesn't read what it is sent, has its connection closed. Edits are not stopped here: the writer's ``LiveWriter/stop()`` commits or refuses them.
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
