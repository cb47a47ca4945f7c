package import Foundation
import HTTPTypes
package import Hummingbird
package import MapCluster
package import MapClusterIO
package import MapClusterLive
import MapClusterManager
package import NIOCore

/// What a live server answers beyond a ``ClusterService``: edits of its points, a point by id, and the changes of a
/// viewport as they happen.
///
/// Reads answer from the current version of the points (``current``), which a writer replaces whole after each
/// committed edit. Writes need the bearer token; reads don't.
package final class LiveService: Sendable {
    /// The writer that commits edits to the store and applies them.
    package let writer: LiveWriter
    /// The points being edited.
    package var live: LiveIndex { writer.live }
    /// The options, and the points the server started with.
    package let base: ClusterService
    /// The token a write must carry (`Authorization: Bearer TOKEN`); `nil` for a server that follows a store
    /// without taking writes.
    let token: String?
    private let cache: LockedValue<(version: Int, service: ClusterService)?>
    private let boundsCache: LockedValue<(version: Int, bounds: [Double]?)?>
    /// The change streams being written, by number, with their connections; and whether the server is stopping.
    private let streams = LockedValue(ChangeStreams())

    private struct ChangeStreams {
        var stopping = false
        var open: [Int: any Channel] = [:]
        var next = 0
    }

    /// The largest edit body taken, in bytes: about 50,000 points with a few properties each.
    package static let maximumEditSize = 8 * 1024 * 1024
    /// How many versions a subscriber may fall behind before it is told to refetch.
    package static let maximumLag = 32
    /// How many changes one event may carry before a subscriber is told to refetch instead.
    package static let maximumChanges = 2_000

    /// A live service of `writer`'s points, clustered and laid out as `base`'s, writable with `token` (`nil`: not
    /// writable, only following the store).
    package init(writer: LiveWriter, base: ClusterService, token: String?) {
        self.writer = writer
        self.base = base
        self.token = token
        cache = LockedValue(nil)
        boundsCache = LockedValue(nil)
    }

    /// The service of the current version of the points.
    package var current: ClusterService {
        let state = live.current
        if let cached = cache.value, cached.version == state.version { return cached.service }
        let service = ClusterService(base, points: state.points, index: state.index)
        cache.value = (state.version, service)
        return service
    }

    /// What the page needs to know, with the box around the points as they are now.
    package func configuration() -> ConfigurationAnswer {
        let state = live.current
        let bounds: [Double]?
        if let cached = boundsCache.value, cached.version == state.version {
            bounds = cached.bounds
        } else {
            let index = state.index
            bounds = ClusterService.boundingBox(of: index.elements.lazy.map(\.coordinate))
            boundsCache.value = (state.version, bounds)
        }
        return current.configuration(bounds: bounds, live: true)
    }

    // MARK: - Writes

    /// Checks a request's bearer token.
    func authorize(_ request: Request) throws(RequestError) {
        guard let token else {
            throw RequestError(
                .forbidden, "this server follows its store without taking edits: start it with --writable to edit")
        }
        guard let header = request.headers[.authorization] else {
            throw RequestError(.unauthorized, "writes need the server's token: Authorization: Bearer TOKEN")
        }
        let prefix = "Bearer "
        guard header.hasPrefix(prefix), Self.equal(String(header.dropFirst(prefix.count)), token) else {
            throw RequestError(.unauthorized, "the token is not this server's")
        }
    }

    /// Compares in time that doesn't depend on where the texts differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    /// Adds or moves the points of a GeoJSON Feature or FeatureCollection, all or none.
    package func put(_ body: Data) async throws(RequestError) -> EditAnswer {
        let points: PointSet
        do {
            points = try GeoJSONPointReader().readEdit(body, source: "request body")
        } catch {
            throw RequestError(.badRequest, "\(error)")
        }
        guard !points.records.isEmpty else { throw RequestError(.badRequest, "request body: no feature to put") }
        return try await write(PointEdit(puts: points))
    }

    /// Deletes a point by its id in a URL: the point with this text id, or else with this number id.
    package func delete(id text: String) async throws(RequestError) -> EditAnswer {
        guard let key = key(of: text) else { throw RequestError(.notFound, "no point has the id '\(text)'") }
        return try await write(PointEdit(deletes: [key]))
    }

    /// Deletes the points of a list of ids (`{"ids":[…]}` or `[…]`, each a string or a number); those there are not
    /// are listed as `missing`.
    package func delete(list body: Data) async throws(RequestError) -> EditAnswer {
        guard let text = String(data: body, encoding: .utf8), let document = PropertyValue(jsonText: text) else {
            throw RequestError(.badRequest, "request body is not valid JSON: a list of ids, as {\"ids\":[…]}")
        }
        let ids: [PropertyValue]
        switch document {
        case .array(let list): ids = list
        case .object(let members):
            guard case .array(let list)? = members["ids"] else {
                throw RequestError(.badRequest, "request body (field ids): is missing or not an array")
            }
            ids = list
        default: throw RequestError(.badRequest, "request body: is not a list of ids, as {\"ids\":[…]}")
        }
        var keys: [PointKey] = []
        var missing: [PointKey] = []
        for (position, id) in ids.enumerated() {
            let key: PointKey
            switch id {
            case .string(let text): key = PointKey(id: text, isNumber: false)
            case .number: key = PointKey(id: id.description, isNumber: true)
            default:
                throw RequestError(.badRequest, "request body ids[\(position)]: is neither a string nor a number")
            }
            if live.point(key) == nil { missing.append(key) } else { keys.append(key) }
        }
        var answer: EditAnswer
        if keys.isEmpty {
            // Nothing to commit.
            let state = live.current
            answer = EditAnswer(
                receipt: WriteReceipt(
                    sequence: state.sequence, version: state.version, inserted: 0, moved: 0, deleted: 0))
        } else {
            answer = try await write(PointEdit(deletes: keys))
        }
        answer.missing = missing.map { $0.isNumber ? .number(Double($0.id) ?? .nan) : .string($0.id) }
        return answer
    }

    /// A point as a GeoJSON Feature.
    package func point(id text: String) throws(RequestError) -> GeoJSONAnswer {
        guard let key = key(of: text), let (record, names) = live.point(key) else {
            throw RequestError(.notFound, "no point has the id '\(text)'")
        }
        let points = PointSet(propertyNames: names, records: [record])
        let writer = ClusterGeoJSON(points: points, index: ClusterIndex(), options: base.layout.clustering)
        return GeoJSONAnswer(text: writer.feature(record: 0))
    }

    /// The key of an id in a URL: the text id if a point has it, else the number id if one has that.
    private func key(of text: String) -> PointKey? {
        let asText = PointKey(id: text, isNumber: false)
        if live.point(asText) != nil { return asText }
        guard let number = Double(text), number.isFinite else { return nil }
        let asNumber = PointKey(id: PropertyValue.number(number).description, isNumber: true)
        return live.point(asNumber) != nil ? asNumber : nil
    }

    private func write(_ edit: PointEdit) async throws(RequestError) -> EditAnswer {
        do {
            let receipt = try await writer.write(edit)
            return EditAnswer(receipt: receipt)
        } catch let error as PointFileError {
            throw RequestError(.badRequest, "\(error)")
        } catch {
            throw RequestError(.serviceUnavailable, "\(error); nothing changed")
        }
    }

    // MARK: - Changes

    /// The changes of a viewport as Server-Sent Events.
    ///
    /// First `ready` with the version the stream starts at, then after each edit that changes the viewport's markers `changes` (see ``MarkerGeoJSON/changes(_:version:previous:)``),
    /// and `resync` when the stream fell behind (a slow client, or edits too large to list): the client then fetches
    /// the clusters again. A comment line every 15 seconds keeps an idle stream open.
    ///
    /// When the server stops (``stop(grace:)``), each stream gets a last event, `end`, and is closed.
    package func changes(
        bbox: String?, zoom: String?, categories: String?, channel: any Channel
    ) throws(RequestError) -> Response {
        guard !streams.value.stopping else { throw Self.stopping }
        let service = current
        let (rect, zoom, categories) = try service.view(bbox: bbox, zoom: zoom, categories: categories)
        var options = service.layout
        options.clustering.categories = categories
        // The markers of /api/clusters, which a client starts from: each at its own cluster's position.
        options.reusesMarkers = false
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: zoom))
        let live = self.live
        let body = ResponseBody { [options, self] writer in
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
            var previous = MarkerGeoJSON(points: state.points, index: state.index, options: options.clustering)
            try await writer.write(ByteBuffer(string: "event: ready\ndata: {\"version\":\(state.version)}\n\n"))
            for await _ in versions {
                state = live.current
                guard state.version != follower.version else {
                    try await writer.write(ByteBuffer(string: ": still here\n\n"))
                    continue
                }
                let keys = live.changedKeys(after: follower.version, through: state.version)
                var event: String?
                if let keys, state.version - follower.version <= Self.maximumLag {
                    let update = follower.update(index: state.index, version: state.version, changedKeys: keys)
                    let changes = update.changes
                    let count = changes.insertions.count + changes.removals.count + changes.updates.count
                    if count > Self.maximumChanges {
                        event = nil
                    } else if count > 0 {
                        let writer = MarkerGeoJSON(
                            points: state.points, index: state.index, options: options.clustering)
                        event =
                            "event: changes\ndata: "
                            + writer.changes(update, version: state.version, previous: previous) + "\n\n"
                    } else {
                        event = ""
                    }
                }
                if event == nil {
                    follower = ClusterFollower(
                        viewport: viewport, options: options, index: state.index, version: state.version)
                    event = "event: resync\ndata: {\"version\":\(state.version)}\n\n"
                }
                previous = MarkerGeoJSON(points: state.points, index: state.index, options: options.clustering)
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
}

extension LiveService {
    static let stopping = RequestError(
        .serviceUnavailable, "the server is stopping: ask again in a moment, or ask another server")

    /// The last event of a change stream: the server stops, and the client is to ask again (a browser's EventSource
    /// does, when the stream closes).
    static func endEvent(version: Int) -> String {
        "event: end\ndata: {\"version\":\(version),\"reason\":\"the server is stopping\"}\n\n"
    }

    /// Numbers a change stream's connection; `nil` once the server is stopping.
    private func open(_ channel: any Channel) -> Int? {
        streams.withValue { streams in
            guard !streams.stopping else { return nil }
            streams.next += 1
            streams.open[streams.next] = channel
            return streams.next
        }
    }

    private func close(_ stream: Int) {
        streams.withValue { _ = $0.open.removeValue(forKey: stream) }
    }

    /// Ends the change streams, as the server stops.
    ///
    /// Each stream gets its last event (`end`) and is closed; new ones are refused (503). A stream still open after
    /// `grace`, whose client doesn't read what it is sent, has its connection closed. Edits are not stopped here: the writer's ``LiveWriter/stop()`` commits or refuses them.
    ///
    /// - Complexity: Returns once every stream has ended, within about `grace`.
    package func stop(grace: Duration = .seconds(3)) async {
        streams.withValue { $0.stopping = true }
        live.finishSubscriptions()
        let deadline = ContinuousClock.now + grace
        while streams.value.open.count > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let stuck = streams.withValue { Array($0.open.values) }
        for channel in stuck { channel.close(promise: nil) }
        while streams.value.open.count > 0 && ContinuousClock.now < deadline + grace {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// What an acknowledged edit did: `{"inserted":…,"moved":…,"deleted":…,"sequence":…,"version":…}`, and the ids of
/// a delete list that were not there.
package struct EditAnswer: ResponseEncodable, Sendable {
    /// Points added.
    package var inserted: Int
    /// Points moved or given new properties.
    package var moved: Int
    /// Points deleted.
    package var deleted: Int
    /// The store's sequence number of the edit.
    package var sequence: Int64
    /// The version of the points that first holds it.
    package var version: Int
    /// Ids of a delete list that no point had.
    package var missing: [PropertyValue]?

    init(receipt: WriteReceipt) {
        inserted = receipt.inserted
        moved = receipt.moved
        deleted = receipt.deleted
        sequence = receipt.sequence
        version = receipt.version
    }
}

/// A value behind a lock.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    /// Reads and changes the value under the lock.
    func withValue<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&stored) }
    }
}
