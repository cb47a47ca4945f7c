import Foundation
import MapCluster
import MapClusterIO
import Testing

struct CSVPointReaderTests {
    @Test func findsColumnsByTheirUsualNamesAndKeepsQuotedFields() throws {
        let text = "Name,Latitude,LNG\n\"Paris, France\",48.85,2.35\n\"Say \"\"hi\"\"\",1,2\r\n\"two\nlines\",3,4\n"
        let points = try CSVPointReader().read(text, file: "t.csv")
        #expect(points.records.map(\.id) == ["1", "2", "3"])
        #expect(points.records.map { $0.properties[0] } == ["Paris, France", "Say \"hi\"", "two\nlines"])
        #expect(points.records[2].coordinate == (try Coordinate(latitude: 3, longitude: 4)))
    }

    @Test func namedColumnsOverrideTheUsualNames() throws {
        let points = try CSVPointReader(idColumn: "code", latitudeColumn: "north", longitudeColumn: "east")
            .read("code,north,east\nA,1,2\n", file: "t.csv")
        #expect(points.records.first?.id == "A")
        #expect(points.propertyNames.isEmpty)
    }

    @Test(arguments: [
        ("", "t.csv:1: is empty: a header row is needed"),
        (
            "id,lat\n1,2\n",
            "t.csv:1: has no longitude column (looked for lon, lng, long, longitude, x; columns: id, lat)"
        ),
        ("id,lat,lon\n1,2,3\n2,x,3\n", "t.csv:3 (field lat): 'x' is not a number"),
        ("id,lat,lon\n1,2,3\n2,,3\n", "t.csv:3 (field lat): '' is not a number"),
        ("id,lat,lon\n1,91,3\n", "t.csv:2 (field lat): latitude 91.0 is outside -90...90"),
        ("id,lat,lon\n1,1,-180.5\n", "t.csv:2 (field lon): longitude -180.5 is outside -180...180"),
        ("id,lat,lon\n1,nan,3\n", "t.csv:2 (field lat): latitude nan is not a finite number"),
        ("id,lat,lon\n1,2,3\n1,4,5\n", "t.csv:3 (field id): duplicate id '1' (first on line 2)"),
        ("id,lat,lon\n1,2\n", "t.csv:2: has 2 fields where the header has 3"),
        ("id,lat,lon\n\"1,2,3\n", "t.csv:2: has a quoted field that is never closed"),
        (
            "id,lat,lon\n\"1\"x,2,3\n",
            "t.csv:2: has text after a closing quote (a quote inside a field is written twice)"
        ),
        ("id,lat,lon\n,2,3\n", "t.csv:2 (field id): the id is empty"),
    ])
    func badInputStopsWithWhatAndWhere(text: String, message: String) {
        #expect {
            _ = try CSVPointReader().read(text, file: "t.csv")
        } throws: { error in
            (error as? PointFileError)?.description == message
        }
    }

    @Test func aMissingFileIsNamed() {
        #expect {
            _ = try CSVPointReader().read(contentsOf: URL(fileURLWithPath: "/nonexistent/points.csv"))
        } throws: { error in
            (error as? PointFileError).map {
                $0.file == "/nonexistent/points.csv" && $0.description.contains("cannot be read")
            } == true
        }
    }

    @Test func blankLinesAndAByteOrderMarkAreSkipped() throws {
        let points = try CSVPointReader().read(
            Data([0xEF, 0xBB, 0xBF]) + Data("id,lat,lon\n\n1,2,3\n\n".utf8), file: "t.csv")
        #expect(points.records.map(\.id) == ["1"])
    }
}

/// Progress, as `mapcluster` shows it on a terminal.
struct CSVProgressTests {
    final class Fractions: @unchecked Sendable {
        var values: [Double] = []
    }

    @Test func progressRisesToOneAsTheFileIsRead() throws {
        let rows = (0..<200_000).map { "\($0),\(Double($0 % 170) - 85),\(Double($0 % 360) - 180)" }
        let text = "id,lat,lon\n" + rows.joined(separator: "\n") + "\n"
        let fractions = Fractions()
        var reader = CSVPointReader()
        reader.progress = { fractions.values.append($0) }
        let points = try reader.read(text, file: "big.csv")
        #expect(points.records.count == 200_000)
        #expect(fractions.values.count >= 3)
        #expect(fractions.values == fractions.values.sorted())
        #expect(fractions.values.last == 1)
    }
}
