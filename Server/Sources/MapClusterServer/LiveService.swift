package import Foundation
import HTTPTypes
import Hummingbird
import MapCluster
import MapClusterIO
package import MapClusterLive
import MapClusterManager
import NIOConcurrencyHelpers
import NIOCore

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
    private let cache = NIOLockedValueBox<(version: Int, service: ClusterService)?>(nil)
    private let boundsCache = NIOLockedValueBox<(version: Int, bounds: [Double]?)?>(nil)
    /// The change streams being written, by number, with their connections; and whether the server is stopping.
    let streams = NIOLockedValueBox(ChangeStreams())

    struct ChangeStreams {
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
    }

    /// The service of the current version of the points.
    package var current: ClusterService {
        let state = live.current
        if let cached = cache.withLockedValue({ $0 }), cached.version == state.version { return cached.service }
        let service = ClusterService(base, points: state.points, index: state.index, version: state.sequence)
        cache.withLockedValue { $0 = (state.version, service) }
        return service
    }

    /// What the page needs to know, with the box around the points as they are now.
    package func configuration() -> ConfigurationAnswer {
        let state = live.current
        let bounds: [Double]?
        if let cached = boundsCache.withLockedValue({ $0 }), cached.version == state.version {
            bounds = cached.bounds
        } else {
            let index = state.index
            bounds = ClusterService.boundingBox(of: index.elements.lazy.map(\.coordinate))
            boundsCache.withLockedValue { $0 = (state.version, bounds) }
        }
        return current.configuration(bounds: bounds, live: true)
    }

    // MARK: - Writes

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
        var keys: [PointKey] = []
        var missing: [PointKey] = []
        for key in try DeleteList.keys(of: body) {
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
        let writer = ClusterGeoJSON(points: points, clustering: base.markers.clustering.of(ClusterIndex()))
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
}
