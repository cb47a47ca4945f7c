import ArgumentParser
import Foundation
@_spi(MapClusterServer) import MapCluster
import MapClusterIO
import MapClusterServer

/// `mapcluster cluster`: the clusters of point files (the bundled sample without any) at one zoom.
struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Print the clusters of CSV or GeoJSON point files at a zoom level.",
        discussion: """
            Without FILES, clusters the bundled sample data set: the 34,006 cities of 15,000 or more \
            people (contains data from GeoNames, geonames.org, CC BY 4.0).

            Examples:
              mapcluster cluster --zoom 5 --bbox 5,45,20,55    # central Europe
              mapcluster cluster places.csv --zoom 3 --format geojson
              mapcluster cluster places.csv --zoom 3 --reduce population:sum --json
            """)

    @OptionGroup var input: PointInput

    @Option(
        parsing: .unconditional,
        help: "The zoom level, 0...24, in --zoom-convention's zooms (Leaflet's: the world is 256 × 2^zoom points wide)."
    )
    var zoom: Double

    @Option(
        parsing: .unconditional,
        help: "The area as west,south,east,north in degrees (east < west crosses the antimeridian). Default: the world."
    )
    var bbox: String?

    @OptionGroup(title: "Clustering") var clustering: ClusteringInput

    @Option(
        parsing: .unconditional,
        help: "The margin clustered around the bbox, as a fraction of its width and height on each side.")
    var marginFactor: Double = 0

    @Option(
        help: """
            What to print: table; json (the clusters, as rows); geojson (a FeatureCollection with the ids and \
            properties the server's API gives, markers that would overlap merged).
            """)
    var format: Format = .table

    @Flag(help: "Print JSON instead of a table (--format json).")
    var json = false

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, geojson
    }

    func validate() throws {
        guard (0...24).contains(zoom) else { throw ValidationError("--zoom must be within 0...24, not \(zoom)") }
        guard marginFactor >= 0 && marginFactor.isFinite else {
            throw ValidationError("--margin-factor must not be negative")
        }
        _ = try area()
    }

    /// The area to cluster, on the plane.
    func area() throws -> MapRect {
        try Self.area(bbox)
    }

    /// A line for standard error when the bbox crosses the antimeridian, which a box with west and east swapped by
    /// mistake does too: what it covers, and the box that would cover the other way.
    static func antimeridianNote(_ bbox: String?, _ rect: MapRect) -> String? {
        guard let bbox, rect.crossesAntimeridian else { return nil }
        let parts = bbox.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let span = rect.longitudeSpan.formatted(.number.precision(.fractionLength(0...6)))
        return
            "note: --bbox \(bbox) has its east edge (\(parts[2])) west of its west edge (\(parts[0])), so it crosses "
            + "the antimeridian and spans \(span)° of longitude; for the other way round, give "
            + "--bbox \([parts[2], parts[1], parts[0], parts[3]].joined(separator: ","))"
    }

    /// The area a `--bbox` option gives, on the plane: the world without one.
    static func area(_ bbox: String?) throws -> MapRect {
        guard let bbox else { return .world }
        do {
            return try MapRect(boundingBox: bbox)
        } catch .invalidCoordinate(let error) {
            throw ValidationError("--bbox: \(error)")
        } catch {
            throw ValidationError("--bbox \(error)")
        }
    }

    func run() throws {
        let rect = try area()
        if let note = Self.antimeridianNote(bbox, rect) { FileHandle.standardError.write(Data((note + "\n").utf8)) }
        let points = try input.load()
        var markerOptions = try clustering.options()
        markerOptions.clustering.marginFactor = marginFactor
        let options = markerOptions.clustering
        let zoom = markerOptions.zoomConvention.engineZoom(zoom)
        if format == .geojson {
            let service: ClusterService
            do {
                service = try ClusterService(
                    points: points, aggregation: try input.aggregation(), options: markerOptions)
            } catch let error as PointFileError {
                throw InputError("\(error)")
            }
            print(service.featureCollection(in: rect, zoom: zoom))
            return
        }
        let index = try input.index(of: points)
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: zoom))
        let clustering = try Clustering(index, options: options)
        let (clusters, aggregates) = clustering.clustersWithAggregates(in: viewport)
        let weighted = index.schema?.isWeighted == true
        let rows = clusters.enumerated().map { position, cluster in
            // A single element is its record: its id and name need no member lookup.
            var row = ClusterRow(
                cluster, expansionZoom: clustering.expansionZoom(ofOwn: cluster),
                aggregates: aggregates?[position], weighted: weighted)
            if case .element(let record) = cluster.id {
                row.id = points.records[record].id
                row.name = points.property("name", of: points.records[record])?.description
            }
            return row
        }
        let level = options.gridLevel(forZoom: zoom)
        if json || format == .json {
            let report = ClusterReport(
                zoom: zoom, gridLevel: level, points: index.count,
                crossesAntimeridian: rect.crossesAntimeridian, clusters: rows)
            print(try jsonLine(report))
        } else {
            print(ClusterRow.table(rows, zoom: zoom, level: level, points: index.count))
        }
    }
}

/// One printed cluster.
struct ClusterRow: Encodable {
    var id: String
    var kind: String
    /// The element's `name` column, for a single element of a file that has one.
    var name: String?
    var latitude: Double
    var longitude: Double
    var count: Int
    var expansionZoom: Double?
    /// What the cluster's members add up to, with an aggregation; `weighted` says whether `weight` is printed.
    var aggregates: ClusterAggregates?
    var weighted: Bool

    /// The row of a cluster; a single element's row takes its record's id and name afterwards.
    init(_ cluster: Cluster<Int>, expansionZoom: Double?, aggregates: ClusterAggregates?, weighted: Bool) {
        switch cluster.id.unfiltered {
        case .cell(let cell): (id, kind) = ("cell \(cell)", "cluster")
        case .location(let coordinate): (id, kind) = ("location \(coordinate)", "location")
        case .element(let element): (id, kind) = (String(element), "single")
        case .filteredCell, .filteredLocation: preconditionFailure("an unfiltered id is never filtered")
        }
        latitude = cluster.coordinate.latitude
        longitude = cluster.coordinate.longitude
        count = cluster.count
        self.expansionZoom = expansionZoom
        self.aggregates = aggregates
        self.weighted = weighted
    }

    /// A JSON key, fixed or a reduction's name.
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.init(stringValue) }
        init?(intValue: Int) { nil }
    }

    /// The fixed fields, then the aggregates as the GeoJSON writer names them: each reduction (`population_sum`),
    /// `weight`, and `categories` with the count of each category that has members.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id, forKey: Key("id"))
        try container.encode(kind, forKey: Key("kind"))
        try container.encodeIfPresent(name, forKey: Key("name"))
        try container.encode(latitude, forKey: Key("latitude"))
        try container.encode(longitude, forKey: Key("longitude"))
        try container.encode(count, forKey: Key("count"))
        try container.encodeIfPresent(expansionZoom, forKey: Key("expansion_zoom"))
        guard let aggregates else { return }
        for name in aggregates.reductionNames { try container.encode(aggregates.number(name), forKey: Key(name)) }
        if weighted { try container.encode(aggregates.weight, forKey: Key("weight")) }
        if !aggregates.categories.isEmpty {
            let counts = zip(aggregates.categories, aggregates.categoryCounts).filter { $0.1 > 0 }
            try container.encode(Dictionary(uniqueKeysWithValues: counts), forKey: Key("categories"))
        }
    }

    static func table(_ rows: [ClusterRow], zoom: Double, level: Int, points: Int) -> String {
        let total = rows.map(\.count).reduce(0, +)
        var lines = [
            "zoom \(zoom), grid level \(level): \(rows.count) clusters and singles holding \(total) of \(points) points",
            "",
            [
                pad("id", 20), pad("kind", 9), pad("latitude", 10, right: true), pad("longitude", 11, right: true),
                pad("count", 7, right: true), "  name",
            ].joined(separator: " "),
        ]
        for row in rows {
            lines.append(
                [
                    pad(row.id, 20), pad(row.kind, 9), pad(format(row.latitude), 10, right: true),
                    pad(format(row.longitude), 11, right: true), pad(String(row.count), 7, right: true),
                    "  " + (row.name ?? ""),
                ].joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }

    private static func format(_ degrees: Double) -> String { String(format: "%.5f", degrees) }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let room = max(width - text.count, 0)
        let spaces = String(repeating: " ", count: room)
        return right ? spaces + text : text + spaces
    }
}

struct ClusterReport: Encodable {
    var zoom: Double
    var gridLevel: Int
    var points: Int
    /// Whether the bbox runs across the antimeridian (its east edge given west of its west edge).
    var crossesAntimeridian: Bool
    var clusters: [ClusterRow]

    enum CodingKeys: String, CodingKey {
        case zoom, points, clusters
        case gridLevel = "grid_level"
        case crossesAntimeridian = "crosses_antimeridian"
    }

}
