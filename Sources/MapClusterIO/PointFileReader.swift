public import Foundation

/// Reads points from files of either kind, chosen by extension: `.geojson` and `.json` as GeoJSON, anything else as
/// CSV.
public struct PointFileReader: Sendable {
    /// How CSV files are read: their column names, and progress.
    public var csv = CSVPointReader()

    /// Makes a reader.
    public init(csv: CSVPointReader = CSVPointReader()) {
        self.csv = csv
    }

    /// Whether a file is read as GeoJSON.
    public static func isGeoJSON(_ url: URL) -> Bool {
        ["geojson", "json"].contains(url.pathExtension.lowercased())
    }

    /// Reads one file; GeoJSON reports progress to the CSV reader's ``CSVPointReader/progress`` too.
    public func read(contentsOf url: URL) throws(PointFileError) -> PointSet {
        guard Self.isGeoJSON(url) else { return try csv.read(contentsOf: url) }
        var geoJSON = GeoJSONPointReader()
        geoJSON.progress = csv.progress
        return try geoJSON.read(contentsOf: url)
    }

    /// Reads several files into one set; ids must be unique across them.
    public func read(contentsOf urls: [URL]) throws(PointFileError) -> PointSet {
        var sets: [PointSet] = []
        for url in urls { sets.append(try read(contentsOf: url)) }
        var merged = try PointSet.merging(sets, files: urls.map(PointFileBytes.name(of:)))
        merged.skipped = sets.flatMap(\.skipped)
        return merged
    }
}
