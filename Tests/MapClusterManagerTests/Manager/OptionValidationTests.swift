import MapClusterTestSupport
import Testing

@testable import MapCluster
@testable import MapClusterManager

/// Every option refused by name when it can't be used, and no value of any option able to crash a query.
struct OptionValidationTests {
    /// One bad value of one option: how to set it, and the name the error must give.
    struct BadOption: CustomStringConvertible, Sendable {
        var name: String
        var value: String
        var set: @Sendable (inout ClusterManagerOptions<Int>) -> Void

        var description: String { "\(name) = \(value)" }
    }

    static let doubles: [(String, Double)] = [
        ("0.0", 0), ("-1.0", -1), ("nan", .nan), ("inf", .infinity), ("-inf", -.infinity),
    ]

    static let badOptions: [BadOption] = {
        var table: [BadOption] = []
        func add(
            _ name: String, _ values: [(String, Double)],
            _ set: @escaping @Sendable (inout ClusterManagerOptions<Int>, Double) -> Void
        ) {
            for (text, value) in values { table.append(BadOption(name: name, value: text) { set(&$0, value) }) }
        }
        let notPositive = doubles
        let belowOnePoint = doubles + [("0.5", 0.5)]
        let negativeOrNotFinite = doubles.filter { $0.1 != 0 }
        add("cellSize", belowOnePoint) { $0.clustering.cellSize = $1 }
        add("cellSizeForZoom(0)", belowOnePoint) { options, value in options.clustering.cellSizeForZoom = { _ in value }
        }
        add("marginFactor", negativeOrNotFinite + [("10.5", 10.5)]) { $0.clustering.marginFactor = $1 }
        add("maxZoomLevelForClustering", [("nan", .nan)]) { $0.clustering.maxZoomLevelForClustering = $1 }
        add("overlap.markerSize.width", notPositive) {
            $0.overlap = .merge(markerSize: ViewSize(width: $1, height: 40))
        }
        add("overlap.markerSize.height", notPositive) {
            $0.overlap = .separate(markerSize: ViewSize(width: 40, height: $1))
        }
        add("overlap.diameters.single", notPositive) {
            $0.overlap = .mergeCircles(MarkerDiameters(single: $1, cluster: 30, perDecade: 6))
        }
        add("overlap.diameters.cluster", notPositive) {
            $0.overlap = .mergeCircles(MarkerDiameters(single: 12, cluster: $1, perDecade: 6))
        }
        add("overlap.diameters.perDecade", negativeOrNotFinite) {
            $0.overlap = .mergeCircles(MarkerDiameters(single: 12, cluster: 30, perDecade: $1))
        }
        add("overlap.diameters.gap", negativeOrNotFinite) {
            $0.overlap = .mergeCircles(MarkerDiameters(single: 12, cluster: 30, perDecade: 6, gap: $1))
        }
        add("sameLocation.radius", notPositive) { $0.sameLocation = SameLocationFanOut(radius: $1) }
        add("sameLocation.startZoom", [("nan", .nan)]) {
            $0.sameLocation = SameLocationFanOut(radius: 20, startZoom: $1)
        }
        table.append(BadOption(name: "minCountForClustering", value: "-1") { $0.clustering.minCountForClustering = -1 })
        table.append(
            BadOption(name: "minUniqueLocationsForClustering", value: "-5") {
                $0.clustering.minUniqueLocationsForClustering = -5
            })
        table.append(
            BadOption(name: "sameLocation.maximumCount", value: "1") {
                $0.sameLocation = SameLocationFanOut(radius: 20, maximumCount: 1)
            })
        return table
    }()

    /// Elements spread out, piled on one coordinate, and across the antimeridian: every pass has work to do.
    static let elements: [(Int, Coordinate)] = {
        let coordinates =
            DataShape.clustered.coordinates(count: 400, seed: 15) + DataShape.oneLocation.coordinates(count: 5, seed: 1)
            + DataShape.antimeridian.coordinates(count: 100, seed: 2)
        return Array(coordinates.enumerated())
    }()

    @Test(arguments: badOptions)
    func aBadOptionIsRefusedByName(_ bad: BadOption) async throws {
        var options = ClusterManagerOptions<Int>()
        bad.set(&options)
        let error = #expect(throws: OptionError.self) { try options.validate() }
        #expect(error?.option == bad.name)
        #expect(error?.value == bad.value)
        #expect(error?.description.hasPrefix("\(bad.name) is \(bad.value): it must be ") == true)
        #expect(throws: OptionError.self) { try ClusterManager(options: options) }

        // A manager keeps the options it has when given bad ones.
        var good = ClusterManagerOptions<Int>()
        good.clustering.cellSize = 80
        let manager = try ClusterManager(options: good)
        await #expect(throws: OptionError.self) { try await manager.setOptions(options) }
        #expect(await manager.options.clustering.cellSize == 80)
    }

    /// A clustering, and a stateless caller's markers, refuse options a manager refuses, with the same error: no
    /// query ever runs with them.
    @Test(arguments: badOptions)
    func badOptionsMakeNoClustering(_ bad: BadOption) throws {
        var options = ClusterManagerOptions<Int>()
        bad.set(&options)
        let index = ClusterIndex(Self.elements)
        if bad.name.hasPrefix("overlap") || bad.name.hasPrefix("sameLocation") {
            // The layout's options: the clustering's own are good.
            #expect(throws: Never.self) { try Clustering(index, options: options.clustering) }
        } else {
            #expect {
                try Clustering(index, options: options.clustering)
            } throws: { error in
                (error as? OptionError)?.option == bad.name
            }
        }
        #expect {
            try MarkerClustering(index, options: options)
        } throws: { error in
            (error as? OptionError)?.option == bad.name
        }
    }

    /// Values that pass validation however large they are: queries clamp them, never trap.
    @Test func hugeValuesAreClampedNotTrapped() async throws {
        var options = ClusterManagerOptions<Int>()
        options.clustering.cellSize = 1e300
        options.clustering.marginFactor = 1
        options.clustering.minCountForClustering = .max
        options.clustering.minUniqueLocationsForClustering = .max
        options.sameLocation = SameLocationFanOut(radius: 1e300, startZoom: 0, maximumCount: .max)
        options.overlap = .mergeCircles(MarkerDiameters(single: 1e300, cluster: 1e300, perDecade: 1e300, gap: 1e300))
        let manager = try ClusterManager(options: options)
        try await manager.add(Self.elements.suffix(150).map { Placement($0.0, at: $0.1) })
        for zoom in [0.0, 5, 22] {
            let viewport = Viewport(center: .checked(12.5, -45.25), zoom: zoom, size: testScreen)
            let update = try await manager.update(for: viewport)
            #expect(!update.snapshot.markers.isEmpty)
            #expect(update.snapshot.markers.allSatisfy { $0.coordinate.latitude.isFinite })
        }
        options.overlap = .separate(markerSize: ViewSize(width: 1e300, height: 1e300))
        try await manager.setOptions(options)
        _ = try await manager.update(for: Viewport(center: .checked(0, 0), zoom: 3, size: testScreen))
    }

    /// The crash the issue reported: an overlap pass with markers of size zero, inside a manager's update.
    @Test func aManagerRefusesMarkersOfSizeZeroInsteadOfCrashingInAnUpdate() async throws {
        var options = ClusterManagerOptions<Int>()
        options.overlap = .merge(markerSize: ViewSize(width: 0, height: 0))
        let error = #expect(throws: OptionError.self) { try ClusterManager(options: options) }
        #expect(error?.description == "overlap.markerSize.width is 0.0: it must be a positive, finite number of points")
    }

    @Test func theDefaultsAndTheSeedsValuesPass() throws {
        var options = ClusterManagerOptions<Int>()
        try options.validate()
        options.clustering.cellSize = 88
        options.clustering.marginFactor = 0
        options.clustering.minCountForClustering = 0
        options.clustering.maxZoomLevelForClustering = -.infinity
        options.overlap = .mergeCircles(MarkerDiameters(single: 12, cluster: 30, perDecade: 0, gap: 0))
        options.sameLocation = SameLocationFanOut(radius: 0.5, startZoom: .infinity, maximumCount: 2)
        try options.validate()
    }
}
