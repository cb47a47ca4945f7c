import ArgumentParser
import Foundation
import MapCluster
import MapClusterIO
import MapClusterSampleData

/// The point files a subcommand reads, how to find their columns, and the loading itself.
struct PointInput: ParsableArguments {
    @Argument(
        help: """
            CSV files (a header row; id, lat/latitude/y and lon/lng/long/longitude/x columns) or GeoJSON \
            FeatureCollections of Points (.geojson, .json). Default: the bundled world cities.
            """)
    var files: [String] = []

    @Option(name: .customLong("id-column"), help: "The CSV column of the ids (default: 'id' if there is one).")
    var idColumn: String?

    @Option(name: .customLong("lat-column"), help: "The CSV column of the latitudes.")
    var latitudeColumn: String?

    @Option(name: .customLong("lon-column"), help: "The CSV column of the longitudes.")
    var longitudeColumn: String?

    @Option(help: "A numeric column of weights (not negative; a point without one weighs 1).")
    var weight: String?

    @Option(
        name: .customLong("category"),
        help: ArgumentHelp(
            """
            A column of categories, whose values clusters count. Repeatable: the first (at most 64 values) is the one \
            the API's categories= and the legend select by, and clusters carry it as 'categories' (GeoJSON) and \
            category_VALUE (tiles); each further one (at most 256 values) as COLUMN_VALUE in both.
            """, valueName: "column"))
    var categories: [String] = []

    @Option(
        name: .customLong("reduce"),
        help: ArgumentHelp(
            """
            A numeric column and what clusters carry of it: sum, min, max or mean, under NAME (default: \
            COLUMN_OPERATION), as MapLibre's clusterProperties name theirs. Repeatable.
            """,
            valueName: "[name=]column:operation"))
    var reductions: [String] = []

    /// The aggregation the options ask for: for the bundled sample without any, its continents and the sum of its
    /// populations, so that the first map a user sees shows them.
    func aggregation() throws -> PointAggregation {
        let reductions = try reductions.map { text in
            guard let reduction = PointAggregation.ColumnReduction(text: text) else {
                throw ValidationError(
                    "--reduce '\(text)' is not [NAME=]COLUMN:OPERATION, the operation one of "
                        + PointAggregation.Operation.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return reduction
        }
        let asked = PointAggregation(weight: weight, categories: categories, reductions: reductions)
        guard files.isEmpty && asked.isEmpty else { return asked }
        return PointAggregation(category: "continent", reductions: [.init("population", .sum)])
    }

    /// The index of `points` by record, with the aggregation the options ask for; bad values are a validation error
    /// that names the file, line and field.
    func index(of points: PointSet) throws -> ClusterIndex<Int> {
        do {
            return try points.indexByRecord(aggregating: try aggregation())
        } catch let error as PointFileError {
            throw InputError("\(error)")
        }
    }

    /// The files' URLs, or the bundled sample's.
    var urls: [URL] {
        files.isEmpty ? [SampleData.worldCitiesURL] : files.map { URL(fileURLWithPath: $0) }
    }

    /// Reads every file into one set, all or nothing.
    ///
    /// Shows progress on a terminal when it takes more than a moment, and reports what was skipped (GeoJSON features
    /// that are not Points) on standard error.
    func load() throws -> PointSet {
        var csv = CSVPointReader(idColumn: idColumn, latitudeColumn: latitudeColumn, longitudeColumn: longitudeColumn)
        let progress = ProgressLine(label: "reading")
        csv.progress = { fraction in progress.show(fraction) }
        let points: PointSet
        do {
            points = try PointFileReader(csv: csv).read(contentsOf: urls)
        } catch {
            progress.finish()
            throw InputError("\(error)")
        }
        progress.finish()
        for skipped in points.skipped.prefix(10) { printError("skipped: \(skipped)") }
        if points.skipped.count > 10 {
            printError("skipped: \(points.skipped.count - 10) more features that are not Points")
        }
        guard !points.records.isEmpty else {
            throw InputError(
                "\(files.joined(separator: ", ")): no points to cluster"
                    + (points.skipped.isEmpty ? "" : " (\(points.skipped.count) features skipped)"))
        }
        return points
    }
}

/// Input that can't be used: a file that can't be read, a bad value, nothing to cluster.
///
/// One line on standard error and exit status 1, without the usage text that a mistyped option gets.
struct InputError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// A progress line on standard error, shown only on a terminal and only once the work has taken a second.
final class ProgressLine: @unchecked Sendable {
    private let label: String
    private let start = ContinuousClock.now
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let lock = NSLock()
    private var shown = false

    init(label: String) {
        self.label = label
    }

    func show(_ fraction: Double, detail: String? = nil) {
        guard isTerminal, ContinuousClock.now - start > .seconds(1) else { return }
        lock.withLock {
            shown = true
            let line = "\r\(label) \(Int(fraction * 100))%" + (detail.map { " (\($0))" } ?? "")
            FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8))
        }
    }

    func finish() {
        lock.withLock {
            if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        }
    }
}

/// A line on standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
