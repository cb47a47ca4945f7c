import ArgumentParser
import Foundation
import MapCluster
import MapClusterIO

/// `mapcluster cluster`: the clusters of point files (the bundled sample without any) at one zoom.
struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Print the clusters of CSV or GeoJSON point files at a zoom level.",
        discussion: """
            Without FILES, clusters the bundled sample data set: the 34,006 cities of 15,000 or more \
            people (contains data from GeoNames, geonames.org, CC BY 4.0).
            """)

    @OptionGroup var input: PointInput

    @Option(help: "The zoom level, 0...24 (the world is 256 × 2^zoom points wide).")
    var zoom: Double

    @Option(
        help: "The area as west,south,east,north in degrees (east < west crosses the antimeridian). Default: the world."
    )
    var bbox: String?

    @Option(help: "The requested grid cell size in points.")
    var cellSize: Double = 60

    @Option(help: "The margin clustered around the bbox, as a fraction of its width and height on each side.")
    var marginFactor: Double = 0

    @Option(help: "The fewest elements a cell needs to be clustered.")
    var minCount: Int = 2

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard (0...24).contains(zoom) else { throw ValidationError("--zoom must be within 0...24, not \(zoom)") }
        guard cellSize > 0 && cellSize.isFinite else {
            throw ValidationError("--cell-size must be a positive number of points")
        }
        guard marginFactor >= 0 && marginFactor.isFinite else {
            throw ValidationError("--margin-factor must not be negative")
        }
        guard minCount >= 0 else { throw ValidationError("--min-count must not be negative") }
        _ = try area()
    }

    /// The area to cluster, on the plane.
    func area() throws -> MapRect {
        try Self.area(bbox)
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
        let points = try input.load()
        let index = ClusterIndex(points.records.map { ($0.id, $0.coordinate) })
        var options = ClusterOptions<String>()
        options.cellSize = cellSize
        options.marginFactor = marginFactor
        options.minCountForClustering = minCount
        let rect = try area()
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: zoom))
        let clusters = index.clusters(in: viewport, options: options)
        let names = Dictionary(
            points.records.map { ($0.id, points.property("name", of: $0)?.description) },
            uniquingKeysWith: { first, _ in first })
        let rows = clusters.map { cluster in
            // A single element's id is the element: its name needs no member lookup.
            let expansionZoom = index.expansionZoom(of: cluster, options: options)
            guard case .element(let id) = cluster.id else {
                return ClusterRow(cluster, name: nil, expansionZoom: expansionZoom)
            }
            return ClusterRow(cluster, name: names[id] ?? nil, expansionZoom: expansionZoom)
        }
        let level = options.gridLevel(forZoom: zoom)
        if json {
            let report = ClusterReport(zoom: zoom, gridLevel: level, points: index.count, clusters: rows)
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

    init(_ cluster: Cluster<String>, name: String?, expansionZoom: Double?) {
        self.name = name
        switch cluster.id.unfiltered {
        case .cell(let cell): (id, kind) = ("cell \(cell)", "cluster")
        case .location(let coordinate): (id, kind) = ("location \(coordinate)", "location")
        case .element(let element): (id, kind) = (element, "single")
        case .filtered: preconditionFailure("an unfiltered id is never filtered")
        }
        latitude = cluster.coordinate.latitude
        longitude = cluster.coordinate.longitude
        count = cluster.count
        self.expansionZoom = expansionZoom
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, name, latitude, longitude, count
        case expansionZoom = "expansion_zoom"
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
    var clusters: [ClusterRow]

    enum CodingKeys: String, CodingKey {
        case zoom, points, clusters
        case gridLevel = "grid_level"
    }

}
