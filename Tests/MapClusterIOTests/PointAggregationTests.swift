import MapCluster
import MapClusterIO
import MapClusterTestSupport
import Testing

/// Typed CSV columns, and the aggregates a file's columns give clusters, with errors that say where.
struct PointAggregationTests {
    static let csv = """
        id,lat,lon,name,population,continent,weight,code
        a,48.85,2.35,Paris,2100000,EU,2,075
        b,48.86,2.36,Paris 2,,EU,1,076
        c,51.5,-0.12,London,8900000,EU,0,
        d,40.7,-74.0,New York,8300000,NA,3,101

        """

    @Test func aColumnWhosePresentValuesAreAllNumbersIsNumbers() throws {
        let points = try CSVPointReader().read(Self.csv, file: "cities.csv")
        let paris = try #require(points.records.first)
        #expect(points.property("population", of: paris) == .number(2_100_000))
        #expect(points.property("population", of: points.records[1]) == .null, "an empty field of a number column")
        #expect(points.property("name", of: paris) == .string("Paris"))
        #expect(points.property("code", of: paris) == .number(75), "digits are a number")
        #expect(points.property("continent", of: paris) == .string("EU"))
        let mixed = try CSVPointReader().read("id,lat,lon,v\na,1,1,12\nb,2,2,x\n", file: "m.csv")
        #expect(mixed.records.map { mixed.property("v", of: $0) } == [.string("12"), .string("x")])
    }

    @Test func clustersCarryTheColumnsAggregates() throws {
        let points = try CSVPointReader().read(Self.csv, file: "cities.csv")
        let aggregation = PointAggregation(
            weight: "weight", category: "continent",
            reductions: [.init("population", .sum), .init("population", .max), .init("population", .mean)])
        let index = try points.indexByRecord(aggregating: aggregation)
        #expect(index.schema?.categories == ["EU", "NA"])
        let world = Viewport(rect: .world, size: ViewSize(width: 256, height: 256))
        var options = ClusterOptions<Int>()
        options.cellSize = 256
        let cluster = try #require(index.clustering(options).clusters(in: world).first)
        let aggregates = try #require(try index.clustering(options).aggregates(of: cluster))
        #expect(cluster.count == 4)
        #expect(aggregates.number("population_sum") == 19_300_000)
        #expect(aggregates.number("population_max") == 8_900_000)
        #expect(aggregates.number("population_mean") == 19_300_000.0 / 3, "of the three present values")
        #expect(aggregates.weight == 6)
        #expect(Array(aggregates.categoryCounts) == [3, 1])
    }

    @Test(arguments: [
        (PointAggregation(weight: "missing"), "cities.csv (field missing): no such column"),
        (PointAggregation(weight: "name"), "cities.csv:2 (field name): weight 'Paris' is not a number"),
        (
            PointAggregation(reductions: [.init("continent", .sum)]),
            "cities.csv:2 (field continent): 'EU' is not a number"
        ),
    ])
    func badColumnsAreErrorsThatSayWhere(aggregation: PointAggregation, message: String) throws {
        let points = try CSVPointReader().read(Self.csv, file: "cities.csv")
        do {
            _ = try points.indexByRecord(aggregating: aggregation)
            Issue.record("no error for \(aggregation)")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error)")
        }
    }

    @Test func aNegativeWeightAndTooManyCategoriesAreErrors() throws {
        let negative = try CSVPointReader().read("id,lat,lon,w\na,1,1,2\nb,2,2,-1\n", file: "w.csv")
        #expect(throws: PointFileError.self) { try negative.indexByRecord(aggregating: PointAggregation(weight: "w")) }
        do {
            _ = try negative.indexByRecord(aggregating: PointAggregation(weight: "w"))
        } catch {
            #expect(error.line == 3 && error.field == "w" && error.message.contains("negative"))
        }
        let rows = (0..<65).map { "p\($0),1,1,kind\($0)" }.joined(separator: "\n")
        let many = try CSVPointReader().read("id,lat,lon,kind\n" + rows + "\n", file: "k.csv")
        do {
            _ = try many.indexByRecord(aggregating: PointAggregation(category: "kind"))
            Issue.record("65 categories were taken")
        } catch {
            #expect(error.line == 66 && error.message.contains("at most 64"), "\(error)")
        }
    }

    /// The GeoJSON of the world at zoom 0 in one 256-point cell: every point in one cluster.
    static func worldGeoJSON(_ points: PointSet, _ aggregation: PointAggregation) throws -> String {
        let index = try points.indexByRecord(aggregating: aggregation)
        var options = ClusterOptions<Int>()
        options.cellSize = 256
        let clustering = index.clustering(options)
        let clusters = clustering.clusters(in: Viewport(rect: .world, size: ViewSize(width: 256, height: 256)))
        return try ClusterGeoJSON(points: points, clustering: clustering).featureCollection(clusters)
    }

    @Test func reductionsTakeTheNamesTheyAreGivenAndFurtherColumnsOfCategoriesAreCounted() throws {
        #expect(PointAggregation.ColumnReduction(text: "people=population:sum")?.name == "people")
        #expect(PointAggregation.ColumnReduction(text: "population:max")?.name == "population_max")
        #expect(PointAggregation.ColumnReduction(text: "people=population:sum")?.description == "people=population:sum")
        for bad in ["=population:sum", "population", "people=population:median", ":sum"] {
            #expect(PointAggregation.ColumnReduction(text: bad) == nil, "\(bad)")
        }
        let points = try CSVPointReader().read(Self.csv, file: "cities.csv")
        let aggregation = PointAggregation(
            categories: ["continent", "name"],
            reductions: [.init("population", .sum, name: "people"), .init("population", .max, name: "largest")])
        let text = try Self.worldGeoJSON(points, aggregation)
        for expected in [
            #""people":19300000"#, #""largest":8900000"#, #""name_Paris":1"#, #""name_Paris 2":1"#,
            #""name_London":1"#, #""name_New York":1"#, #""categories":{"EU":3,"NA":1}"#,
        ] {
            #expect(text.contains(expected), "\(expected) in \(text)")
        }
        // A further column has at most 256 values, and says where the one too many is.
        let rows = (0..<257).map { "p\($0),1,1,a,kind\($0)" }.joined(separator: "\n")
        let many = try CSVPointReader().read("id,lat,lon,first,kind\n" + rows + "\n", file: "k.csv")
        do {
            _ = try many.indexByRecord(aggregating: PointAggregation(categories: ["first", "kind"]))
            Issue.record("257 values were taken")
        } catch {
            #expect(error.line == 258 && error.field == "kind" && error.message.contains("at most 256"), "\(error)")
        }
    }

    @Test func geoJSONClustersWriteTheirAggregates() throws {
        let points = try CSVPointReader().read(Self.csv, file: "cities.csv")
        let aggregation = PointAggregation(
            weight: "weight", category: "continent", reductions: [.init("population", .sum)])
        let text = try Self.worldGeoJSON(points, aggregation)
        #expect(text.contains(#""population_sum":19300000"#), "\(text)")
        #expect(text.contains(#""weight":6"#))
        #expect(text.contains(#""categories":{"EU":3,"NA":1}"#))
    }
}
