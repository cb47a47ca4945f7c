import Foundation
import MapCluster
import MapClusterIO
import MapClusterTestSupport
import Testing

/// The GeoJSON written for a small fixed input, compared byte for byte with files reviewed once, as supercluster's
/// tests compare with their fixtures: any change to clustering, ids, positions, number formatting or property order
/// shows here.
///
/// To review a deliberate change, run with `MAPCLUSTER_UPDATE_GOLDEN=1`: the files are rewritten (and the test fails,
/// so that a run that rewrites is never taken for a pass); read the diff before committing it.
struct GoldenTests {
    static let fixtures = Bundle.module.url(forResource: "Fixtures", withExtension: nil)

    /// The source folder's copy of the fixtures, which an update rewrites.
    static let sourceFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// 49 cities of the bundled sample (every 700th row), with their name, population and country.
    static func input() throws -> PointSet {
        let folder = try #require(fixtures)
        return try CSVPointReader().read(contentsOf: folder.appendingPathComponent("golden-cities.csv"))
    }

    @Test(arguments: [0.0, 2, 4.5, 7])
    func theWorldAtAZoomIsWrittenAsBefore(zoom: Double) throws {
        let points = try Self.input()
        let index = points.indexByRecord()
        var options = ClusterOptions<Int>()
        options.marginFactor = 0
        let rect = MapRect.world
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: zoom))
        let clustering = index.clustering(options)
        let writer = ClusterGeoJSON(points: points, clustering: clustering)
        let written = try writer.featureCollection(clustering.clusters(in: viewport)) + "\n"

        let name = "golden-world-z\(zoom.formatted(.number.precision(.fractionLength(0...1)))).geojson"
        if ProcessInfo.processInfo.environment["MAPCLUSTER_UPDATE_GOLDEN"] == "1" {
            try written.write(to: Self.sourceFixtures.appendingPathComponent(name), atomically: true, encoding: .utf8)
            Issue.record("rewrote \(name): review the diff, then run again without MAPCLUSTER_UPDATE_GOLDEN")
            return
        }
        let folder = try #require(Self.fixtures)
        let expected = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        #expect(written == expected, "\(name) differs: run with MAPCLUSTER_UPDATE_GOLDEN=1 and review the diff")
    }
}
