import Foundation
@_spi(MapClusterServer) import MapCluster
import MapClusterIO
import MapClusterManager
import MapClusterServer
import MapClusterTestSupport
import MapClusterTiles
import Testing

@testable import MapClusterLive

/// The GeoJSON change stream as a client replays it: over thousands of random edits at several zooms, every marker that
/// changed is sent, none that didn't, and the replayed view is always what `/api/clusters` answers.
struct ChangeStreamTests {
    /// A client's view: each marker's feature by id, as canonical JSON text.
    struct Replay {
        var features: [String: String] = [:]
        /// Updates whose feature was what the client held already.
        var needless = 0
        var updates = 0

        init(collection text: String) throws {
            try reset(collection: text)
        }

        mutating func reset(collection text: String) throws {
            let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            features = [:]
            for feature in try #require(json?["features"] as? [[String: Any]]) { try hold(feature) }
        }

        static func key(_ id: Any?) -> String { id.map { "\($0)" } ?? "" }

        static func canonical(_ feature: [String: Any]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: feature, options: [.sortedKeys]), as: UTF8.self)
        }

        mutating func hold(_ feature: [String: Any]) throws {
            features[Self.key(feature["id"])] = try Self.canonical(feature)
        }

        /// Applies a `changes` event's data.
        mutating func apply(changes text: String) throws {
            let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            for removal in json["removals"] as? [[String: Any]] ?? [] {
                let key = Self.key(removal["id"])
                try #require(features.removeValue(forKey: key) != nil, "a removal of \(key), which the client hasn't")
            }
            for insertion in json["insertions"] as? [[String: Any]] ?? [] {
                try hold(try #require(insertion["feature"] as? [String: Any]))
            }
            for feature in json["updates"] as? [[String: Any]] ?? [] {
                let key = Self.key(feature["id"])
                let text = try Self.canonical(feature)
                try #require(features[key] != nil, "an update of \(key), which the client hasn't")
                if features[key] == text { needless += 1 }
                updates += 1
                features[key] = text
            }
        }
    }

    /// Random points around the Alps, with a kind and a speed.
    static func start(count: Int, random: inout SplitMix64) throws -> PointSet {
        let records = try (0..<count).map { n in
            PointRecord(
                id: "p\(n)",
                coordinate: try Coordinate(
                    latitude: Double.random(in: 44...50, using: &random),
                    longitude: Double.random(in: 4...14, using: &random)),
                properties: [
                    .string(["bus", "tram", "ferry"][Int.random(in: 0..<3, using: &random)]),
                    .number(Double(Int.random(in: 0...120, using: &random))),
                ])
        }
        return PointSet(propertyNames: ["kind", "speed"], records: records)
    }

    @Test func tenThousandRandomEditsAtFourZoomsSendEveryChangeAndNoNeedlessOne() throws {
        var random = SplitMix64(seed: 38)
        let aggregation = PointAggregation(category: "kind", reductions: [.init("speed", .sum)])
        let start = try Self.start(count: 3_000, random: &random)
        // Edits go to the index as a writer applies them once committed: no store, whose commits the live tests check.
        let live = try LiveIndex(points: start, sequence: 0, aggregation: aggregation)
        let state = live.current
        let base = ClusterService(
            points: state.points, index: state.index, buildTime: .zero, aggregation: aggregation)
        let views = try [
            ("3,43,15,51", 4.0), ("6,45,10,48", 6.5), ("7,45.5,8.5,46.5", 8.0), ("7.4,45.8,7.8,46.1", 10.0),
        ].map { bbox, zoom in (rect: try MapRect(boundingBox: bbox), zoom: zoom) }
        var options = base.markers.options
        options.reusesMarkers = false
        var streams = views.map { view in
            ChangeStream(
                viewport: Viewport(rect: view.rect, size: ViewSize(showing: view.rect, atZoom: view.zoom)),
                options: options, clustering: base.markers.clustering, state: state, zoomConvention: .leaflet)
        }
        var replays = try views.map { try Replay(collection: base.featureCollection(in: $0.rect, zoom: $0.zoom)) }
        var next = 3_000
        var alive = Set((0..<3_000).map { "p\($0)" })
        var events = 0
        for edit in 0..<10_000 {
            let choice = Int.random(in: 0..<100, using: &random)
            var puts: [PointRecord] = []
            var deletes: [PointKey] = []
            let existing = alive.randomElement(using: &random) ?? "p0"
            let current = live.point(PointKey(id: existing, isNumber: false))
            switch choice {
            case 0..<40:
                // A move of a few metres: mostly inside its cell.
                if let (record, _) = current {
                    var moved = record
                    moved.coordinate = try Coordinate(
                        latitude: record.coordinate.latitude + Double.random(in: -1e-4...1e-4, using: &random),
                        longitude: record.coordinate.longitude + Double.random(in: -1e-4...1e-4, using: &random))
                    puts.append(moved)
                }
            case 40..<60:
                // A move across cells, with a new speed.
                if let (record, _) = current {
                    var moved = record
                    moved.coordinate = try Coordinate(
                        latitude: Double.random(in: 44...50, using: &random),
                        longitude: Double.random(in: 4...14, using: &random))
                    moved.properties[1] = .number(Double(Int.random(in: 0...120, using: &random)))
                    puts.append(moved)
                }
            case 60..<70:
                // The same point sent again: nothing changes.
                if let (record, _) = current { puts.append(record) }
            case 70..<85:
                let id = "p\(next)"
                next += 1
                alive.insert(id)
                puts.append(
                    PointRecord(
                        id: id,
                        coordinate: try Coordinate(
                            latitude: Double.random(in: 44...50, using: &random),
                            longitude: Double.random(in: 4...14, using: &random)),
                        properties: [.string("bus"), .number(50)]))
            default:
                alive.remove(existing)
                deletes.append(PointKey(id: existing, isNumber: false))
            }
            var pointEdit = PointEdit(puts: PointSet(propertyNames: ["kind", "speed"], records: puts))
            pointEdit.deletes = deletes
            live.apply([(pointEdit, Int64(edit + 1))])
            let state = live.current
            for position in streams.indices {
                let keys = live.changedKeys(after: streams[position].follower.version, through: state.version)
                guard let event = streams[position].event(for: state, changedKeys: keys) else { continue }
                events += 1
                let service = {
                    ClusterService(
                        points: state.points, index: state.index, buildTime: .zero, aggregation: aggregation)
                }
                if event.hasPrefix("event: changes\ndata: ") {
                    try replays[position].apply(
                        changes: String(event.dropFirst("event: changes\ndata: ".count).dropLast(2)))
                } else {
                    try replays[position].reset(
                        collection: service().featureCollection(in: views[position].rect, zoom: views[position].zoom))
                }
                // Every 1,000 edits, the replayed view is the one /api/clusters answers now.
                if edit % 1_000 == 0 {
                    let fresh = try Replay(
                        collection: service().featureCollection(in: views[position].rect, zoom: views[position].zoom))
                    #expect(replays[position].features == fresh.features, "view \(position) after edit \(edit)")
                }
            }
        }
        let final = live.current
        let service = ClusterService(
            points: final.points, index: final.index, buildTime: .zero, aggregation: aggregation)
        for (position, view) in views.enumerated() {
            let fresh = try Replay(collection: service.featureCollection(in: view.rect, zoom: view.zoom))
            #expect(replays[position].features == fresh.features, "view \(position) at the end")
            #expect(replays[position].needless == 0, "view \(position): \(replays[position].needless) needless updates")
        }
        #expect(events > 1_000)
        #expect(replays.map(\.updates).reduce(0, +) > 100)
    }
}

/// The stream of tile changes against the tiles themselves: over random edits at several zooms, it names every tile
/// whose bytes changed, and no other.
struct TileChangeStreamTests {
    @Test(arguments: [true, false])
    func randomEditsNameExactlyTheTilesThatChanged(merging: Bool) throws {
        var random = SplitMix64(seed: merging ? 381 : 382)
        let aggregation = PointAggregation(category: "kind", reductions: [.init("speed", .sum)])
        let start = try ChangeStreamTests.start(count: 1_500, random: &random)
        let live = try LiveIndex(points: start, sequence: 0, aggregation: aggregation)
        var options = MarkerOptions()
        options.merges = merging
        let base = ClusterService(
            points: live.current.points, index: live.current.index, buildTime: .zero, aggregation: aggregation,
            options: options)
        let area = try MapRect(boundingBox: "6,44,12,48")
        let zooms = [4, 6, 8]
        var stream = TileChangeStream(zooms: zooms, area: area, base: base, state: live.current)
        // Every tile of the area at those zooms, and its bytes now.
        let addresses = zooms.flatMap { zoom in
            (0..<(1 << zoom)).flatMap { y in
                (0..<(1 << zoom)).compactMap { x in
                    TileAddress(z: zoom, x: x, y: y).flatMap { stream.intersects($0) ? $0 : nil }
                }
            }
        }
        #expect(addresses.count > 20)
        func bytes() -> [TileAddress: Data?] {
            let state = live.current
            let tiles = ClusterService(
                points: state.points, index: state.index, buildTime: .zero, aggregation: aggregation, options: options
            ).tiles
            return Dictionary(uniqueKeysWithValues: addresses.map { ($0, tiles.tile($0)) })
        }
        var before = bytes()
        var named = 0
        for edit in 0..<120 {
            let id = "p\(Int.random(in: 0..<1_500, using: &random))"
            let key = PointKey(id: id, isNumber: false)
            // Moves inside a cell and across cells, adds and removes.
            switch edit % 5 {
            case 3:
                let added = PointRecord(
                    id: "new\(edit)",
                    coordinate: try Coordinate(
                        latitude: Double.random(in: 44...50, using: &random),
                        longitude: Double.random(in: 4...14, using: &random)),
                    properties: [.string("tram"), .number(7)])
                live.apply([
                    (PointEdit(puts: PointSet(propertyNames: ["kind", "speed"], records: [added])), Int64(edit + 1))
                ])
            case 4:
                guard live.point(key) != nil else { continue }
                live.apply([(PointEdit(deletes: [key]), Int64(edit + 1))])
            default:
                guard let (record, _) = live.point(key) else { continue }
                var moved = record
                let far = edit % 5 == 0
                moved.coordinate = try Coordinate(
                    latitude: far
                        ? Double.random(in: 44...50, using: &random)
                        : record.coordinate.latitude + Double.random(in: -0.01...0.01, using: &random),
                    longitude: far
                        ? Double.random(in: 4...14, using: &random)
                        : record.coordinate.longitude + Double.random(in: -0.01...0.01, using: &random))
                live.apply([
                    (PointEdit(puts: PointSet(propertyNames: ["kind", "speed"], records: [moved])), Int64(edit + 1))
                ])
            }
            let state = live.current
            let keys = live.changedKeys(after: stream.version, through: state.version)
            let event = stream.event(for: state, changedKeys: keys)
            let after = bytes()
            let changed = Set(addresses.filter { before[$0] != after[$0] }.map(\.description))
            var told: Set<String> = []
            if let event {
                let prefix = "event: tiles\ndata: "
                try #require(event.hasPrefix(prefix), "\(event)")
                let json = try JSONSerialization.jsonObject(with: Data(event.dropFirst(prefix.count).utf8))
                told = Set(try #require((json as? [String: Any])?["tiles"] as? [String]))
            }
            #expect(
                told == changed, "edit \(edit): named \(told.subtracting(changed)), missed \(changed.subtracting(told))"
            )
            named += told.count
            before = after
        }
        #expect(named > 50)
    }
}
