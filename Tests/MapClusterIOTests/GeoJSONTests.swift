import Foundation
import MapCluster
@_spi(MapClusterServer) import MapClusterIO
import MapClusterTestSupport
import Testing

struct GeoJSONTests {
    static let collection = """
        {"type":"FeatureCollection","features":[
          {"type":"Feature","id":"paris","geometry":{"type":"Point","coordinates":[2.35,48.85]},
           "properties":{"name":"Paris","population":2148000,"capital":true,"tags":["a","b"]}},
          {"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[4.83,45.76,170]},
           "properties":{"name":"Lyon"}},
          {"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":null},
          {"type":"Feature","geometry":{"type":"Point","coordinates":[1.44,43.6]},"properties":null}
        ]}
        """

    @Test func aFeatureWithoutAPlaceIsReportedAndSkippedLikeOtherNonPoints() throws {
        let text =
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null},"#
            + #"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[2,3]}}]}"#
        let points = try GeoJSONPointReader().read(Data(text.utf8), file: "f.geojson")
        #expect(points.records.map(\.id) == ["1"])
        #expect(points.skipped.map(\.description) == ["f.geojson features[0] (field geometry): is null: not clustered"])
    }

    @Test func aGeneratedIdNeverClashesWithAnIdOfTheFile() throws {
        // Features 1 and 3 have no id; the others' ids look like the ids they would have been given.
        let text =
            #"{"type":"FeatureCollection","features":["#
            + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,1]}},"#
            + ##"{"type":"Feature","id":"#3","geometry":{"type":"Point","coordinates":[2,2]}},"##
            + #"{"type":"Feature","geometry":{"type":"Point","coordinates":[3,3]}},"#
            + #"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[4,4]}},"#
            + #"{"type":"Feature","id":"1","geometry":{"type":"Point","coordinates":[5,5]}}]}"#
        let points = try GeoJSONPointReader().read(Data(text.utf8), file: "f.geojson")
        #expect(points.records.map(\.id) == ["##1", "#3", "##3", "1", "1"])
        // The number 1 and the text "1" are two ids, written back as what they were.
        #expect(points.records.map(\.idKind) == [.generated, .text, .generated, .number, .text])
        #expect(Set(points.records.map(\.uniqueKey)).count == 5)
    }

    @Test func readsPointFeaturesAndReportsTheOthers() throws {
        let points = try GeoJSONPointReader().read(Data(Self.collection.utf8), file: "f.geojson")
        #expect(points.records.map(\.id) == ["paris", "7", "#3"])
        #expect(points.records.map(\.idKind) == [.text, .number, .generated])
        #expect(points.records[1].coordinate == (try Coordinate(latitude: 45.76, longitude: 4.83)))
        #expect(points.propertyNames == ["capital", "name", "population", "tags"])
        #expect(points.property("population", of: points.records[0]) == 2_148_000)
        #expect(points.property("capital", of: points.records[0]) == true)
        #expect(points.property("tags", of: points.records[0]) == .array(["a", "b"]))
        #expect(points.property("population", of: points.records[1]) == .null)
        #expect(
            points.skipped.map(\.description)
                == ["f.geojson features[2] (field geometry.type): is a LineString, not a Point: not clustered"])
    }

    @Test(arguments: [
        ("{", "f.geojson:1: is not valid JSON (expected a string)"),
        ("{\"type\":\"FeatureCollection\",\n\"features\":[],}", "f.geojson:2: is not valid JSON (expected a string)"),
        ("{\"type\":\"FeatureCollection\",\"features\":[]} x", "f.geojson:1: is not valid JSON (unexpected text after"),
        ("[]", "f.geojson:1: is not valid JSON (the document is not a JSON object)"),
        (#"{"type":"Feature"}"#, "f.geojson (field type): is not a GeoJSON FeatureCollection"),
        (#"{"type":"FeatureCollection"}"#, "f.geojson (field features): is missing or not an array"),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Point"}]}"#,
            "f.geojson features[0] (field type): is not a Feature"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature"}]}"#,
            "f.geojson features[0] (field geometry): is missing: a Point is needed"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":["x",1]}}]}"#,
            "f.geojson features[0] (field geometry.coordinates): is not a position [longitude, latitude]"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,91]}}]}"#,
            "f.geojson features[0] (field geometry.coordinates): latitude 91.0 is outside -90...90"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,1]}},{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[2,2]}}]}"#,
            "f.geojson features[1] (field id): duplicate id 'a' (first in features[0])"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":true,"geometry":{"type":"Point","coordinates":[1,1]}}]}"#,
            "f.geojson features[0] (field id): is neither a string nor a number"
        ),
    ])
    func badInputStopsWithWhatAndWhere(text: String, message: String) {
        #expect {
            _ = try GeoJSONPointReader().read(Data(text.utf8), file: "f.geojson")
        } throws: { error in
            (error as? PointFileError)?.description.hasPrefix(message) == true
        }
    }

    @Test func clustersAreWrittenInSuperclustersShapeAndReadBack() throws {
        let points = try GeoJSONPointReader().read(Data(Self.collection.utf8), file: "f.geojson")
        let index = points.indexByRecord()
        let world = Viewport(rect: .world, size: ViewSize(width: 256, height: 256))
        let clustering = index.clustering()
        let writer = ClusterGeoJSON(points: points, clustering: clustering)
        let clustered = try writer.featureCollection(clustering.clusters(in: world))
        let near = Viewport(
            center: try Coordinate(latitude: 46, longitude: 2), zoom: 9, size: ViewSize(width: 20_000, height: 20_000))
        let unclustered = try writer.featureCollection(clustering.clusters(in: near))

        let object = try #require(try JSONSerialization.jsonObject(with: Data(clustered.utf8)) as? [String: Any])
        let features = try #require(object["features"] as? [[String: Any]])
        let cluster = try #require(features.first)
        let properties = try #require(cluster["properties"] as? [String: Any])
        #expect(object["type"] as? String == "FeatureCollection")
        #expect(properties["cluster"] as? Bool == true)
        #expect(properties["point_count"] as? Int == 3)
        #expect(properties["point_count_abbreviated"] as? Int == 3)
        let id = try #require(properties["cluster_id"] as? String)
        let parsed = ClusterIDText(id)?.parts
        #expect(parsed == clustering.clusters(in: world).first.map { [$0.id] })

        // Singles come back as the features they were: id, position and typed properties.
        let again = try GeoJSONPointReader().read(Data(unclustered.utf8), file: "out.geojson")
        #expect(Set(again.records.map(\.id)) == Set(points.records.map(\.id)))
        for record in again.records {
            let original = try #require(points.records.first { $0.id == record.id })
            #expect(record.coordinate == original.coordinate)
            #expect(again.properties(of: record) == points.properties(of: original))
        }
    }

    @Test func countsAreAbbreviatedAsSuperclusterDoes() {
        #expect(ClusterGeoJSON.abbreviated(999) == "999")
        #expect(ClusterGeoJSON.abbreviated(1_000) == "1k")
        #expect(ClusterGeoJSON.abbreviated(1_250) == "1.3k")
        #expect(ClusterGeoJSON.abbreviated(9_960) == "10k")
        #expect(ClusterGeoJSON.abbreviated(12_499) == "12k")
        #expect(ClusterGeoJSON.abbreviated(123_456) == "123k")
    }

    @Test func filesOfBothKindsMergeAndIdsMustBeUniqueAcrossThem() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapcluster-io-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let csv = folder.appendingPathComponent("a.csv")
        let geojson = folder.appendingPathComponent("b.geojson")
        try Data("id,lat,lon,name\nx,1,2,one\n".utf8).write(to: csv)
        try Data(Self.collection.utf8).write(to: geojson)
        let merged = try PointFileReader().read(contentsOf: [csv, geojson])
        // The point without an id is given one that can't be another's.
        #expect(merged.records.map(\.id) == ["x", "paris", "7", "#4"])
        #expect(merged.propertyNames == ["name", "capital", "population", "tags"])
        #expect(merged.property("name", of: merged.records[1]) == "Paris")
        #expect(merged.skipped.count == 1)

        try Data("id,lat,lon\nparis,1,2\n".utf8).write(to: csv)
        #expect {
            _ = try PointFileReader().read(contentsOf: [csv, geojson])
        } throws: { error in
            "\(error)" == "\(geojson.path) (field id): duplicate id 'paris' (first in \(csv.path))"
        }
    }
}

/// Progress while a large FeatureCollection streams in.
struct GeoJSONProgressTests {
    @Test func progressRisesToOneAsFeaturesStreamIn() throws {
        let features = (0..<140_000).map {
            #"{"type":"Feature","id":\#($0),"geometry":{"type":"Point","coordinates":[\#(Double($0 % 360) - 180),\#(Double($0 % 170) - 85)]}}"#
        }
        let text = #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
        let fractions = CSVProgressTests.Fractions()
        var reader = GeoJSONPointReader()
        reader.progress = { fractions.values.append($0) }
        let points = try reader.read(Data(text.utf8), file: "big.geojson")
        #expect(points.records.count == 140_000)
        #expect(fractions.values.count == 3)
        #expect(fractions.values == fractions.values.sorted())
        #expect(fractions.values.last == 1)
    }
}
