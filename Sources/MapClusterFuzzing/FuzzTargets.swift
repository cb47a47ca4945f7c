public import Foundation
import MapCluster
import MapClusterIO
import MapClusterManager

/// What each fuzz target does with one input: the code the libFuzzer executables (`Fuzz/`, run by `scripts/fuzz.sh`)
/// and the regression test of the inputs they found share.
///
/// An input may be refused with an error; it must never trap, and what is accepted must keep the invariants each
/// target checks (a failed check traps, which the fuzzer reports as a crash).
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A CSV point file: read, then indexed with a category, a weight and a reduction, and clustered.
    case csv
    /// A GeoJSON point file, through the JSON stream reader: read, indexed and clustered.
    case geojson
    /// The body of a live server's edit (`POST /api/points`): a Feature or a FeatureCollection of Points with ids.
    case edit
    /// The API's request values: a `bbox`, a marker id from a URL path (`/api/clusters/{id}/…`), the zoom and
    /// the page numbers, one per line of the input.
    case query

    /// Runs the target on one input.
    public func run(_ data: Data) {
        switch self {
        case .csv: Self.check(try? CSVPointReader().read(data, file: "input.csv"))
        case .geojson: Self.check(try? GeoJSONPointReader().read(data, file: "input.geojson"))
        case .edit: Self.check(try? GeoJSONPointReader().readEdit(data, source: "request body"))
        case .query: Self.query(data)
        }
    }

    /// Indexes and clusters points that were read, with aggregates of their first columns where they have any, and
    /// checks that the world's clusters hold every point once.
    private static func check(_ points: PointSet?) {
        guard let points else { return }
        let index: ClusterIndex<Int>
        let columns = points.propertyNames
        let aggregation = PointAggregation(
            weight: columns.first, category: columns.dropFirst().first,
            reductions: columns.dropFirst(2).first.map { [.init($0, .sum)] } ?? [])
        if let aggregated = try? points.indexByRecord(aggregating: aggregation) {
            index = aggregated
        } else {
            index = points.indexByRecord()
        }
        precondition(index.count == points.records.count, "every record read is indexed")
        for zoom in [0.0, 3, 9] {
            let world = Viewport(rect: .world, size: ViewSize(showing: .world, atZoom: zoom))
            let clusters = index.clusters(in: world)
            let total = clusters.reduce(0) { $0 + $1.count }
            precondition(total == index.count, "the world's clusters hold every point once")
            for cluster in clusters.prefix(8) {
                let children = index.children(of: cluster)
                precondition(
                    children.isEmpty || children.reduce(0) { $0 + $1.count } == cluster.count,
                    "a cluster's children hold its points")
            }
            _ = index.aggregates(of: clusters)
        }
    }

    /// Parses each line as every kind of request value the API takes, and checks that a marker id survives its
    /// round trip through text.
    private static func query(_ data: Data) {
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            let text = String(line)
            if let rect = try? MapRect(boundingBox: text) {
                precondition(rect.size.width > 0 && rect.size.height > 0, "a bbox that parses is not empty")
                _ = ViewSize(showing: rect, atZoom: 3)
            }
            if let id = ClusterIDText(text) {
                precondition(ClusterIDText(id.description) == id, "a cluster id reads back from its text")
            }
            if let decoded = text.removingPercentEncoding { _ = ClusterIDText(decoded) }
            _ = Double(text)
            _ = Int(text)
        }
    }
}
