import Foundation
import MapCluster
import MapClusterIO
import MapClusterSampleData
import Testing

/// The application's bundled sample, read as the server and the tool read it.
struct SampleDataTests {
    @Test func readsTheBundledSampleData() throws {
        let points = try CSVPointReader().read(contentsOf: SampleData.worldCitiesURL)
        #expect(points.records.count == 34_006)
        #expect(points.propertyNames == ["name", "population", "country", "continent"])
        let first = try #require(points.records.first)
        #expect(first.id == "362")
        #expect(first.coordinate == (try Coordinate(latitude: 35.75936, longitude: 51.37601)))
        #expect(points.property("name", of: first) == "Shahrak-e Qods")
    }
}
