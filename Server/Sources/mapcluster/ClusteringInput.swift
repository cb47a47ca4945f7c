import ArgumentParser
import Foundation
import MapCluster
import MapClusterManager
import MapClusterServer

/// How points are clustered and their markers laid out, under the names supercluster's and MapLibre's users know:
/// the options `serve`, `tiles` and `cluster` share.
struct ClusteringInput: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: """
            The grid cell size in points. Default: 128, cells 91 to 181 points wide, a map as calm as \
            Leaflet.markercluster's; with --radius, the cells of that radius.
            """)
    var cellSize: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            """
            supercluster's radius (MapLibre's clusterRadius), in units of a tile --extent wide: the cells are as wide \
            as its circle, 2 × radius / extent of a tile (40 at extent 512: 40 points in Leaflet's zooms, 80 in \
            MapLibre's). Instead of --cell-size.
            """, valueName: "pixels"))
    var radius: Double?

    @Option(parsing: .unconditional, help: "supercluster's extent, the tile width --radius is counted in.")
    var extent: Double = 512

    @Option(
        name: [.customLong("min-points"), .customLong("min-count", withSingleDash: false)],
        parsing: .unconditional,
        help: "The fewest points a cluster holds (supercluster's minPoints, MapLibre's clusterMinPoints).")
    var minPoints = 2

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            """
            The last zoom that clusters (supercluster's maxZoom, MapLibre's clusterMaxZoom), in --zoom-convention's \
            zooms: from the next whole zoom on, every point stands alone. Default: no limit.
            """, valueName: "zoom"))
    var maxZoom: Double?

    @Option(
        help: ArgumentHelp(
            """
            Whether markers that would overlap at --marker-sizes merge into one, in the API's answers and in tiles \
            alike: 'on' or 'off'.
            """, valueName: "on|off"))
    var merge = "on"

    @Option(
        help: ArgumentHelp(
            """
            The markers' diameters in points, as SINGLE,CLUSTER,PER_DECADE,GAP: a point's, a cluster's of 1, what \
            each tenfold of its count adds, and the space kept between markers. The pages draw these sizes.
            """, valueName: "sizes"))
    var markerSizes = "14,26,8,2"

    @Option(
        help: ArgumentHelp(
            """
            How zooms are counted in these options and the API: 'leaflet' (a 256-point world at zoom 0, Leaflet's \
            and OpenLayers') or 'maplibre' (512 points, one zoom less at the same scale). Tiles are addressed by \
            MapLibre's tile zoom either way. Default: leaflet (for `tiles`, maplibre).
            """, valueName: "leaflet|maplibre"))
    var zoomConvention: ZoomConvention?

    func validate() throws {
        if let cellSize { try Self.validate(cellSize: cellSize, option: "--cell-size") }
        if let radius {
            guard cellSize == nil else { throw ValidationError("give --radius or --cell-size, not both") }
            guard radius > 0 && radius.isFinite else {
                throw ValidationError("--radius must be a positive number, not \(radius)")
            }
        }
        guard extent > 0 && extent.isFinite else { throw ValidationError("--extent must be a positive number") }
        guard minPoints >= 1 && minPoints <= 1_000_000 else {
            throw ValidationError("--min-points must be within 1...1000000, not \(minPoints)")
        }
        if let maxZoom, !(0...24).contains(maxZoom) {
            throw ValidationError("--max-zoom must be within 0...24, not \(maxZoom)")
        }
        guard merge == "on" || merge == "off" else {
            throw ValidationError("--merge must be 'on' or 'off', not '\(merge)'")
        }
        _ = try diameters()
    }

    /// Checks a cell size.
    static func validate(cellSize: Double, option: String) throws {
        guard cellSize > 0 && cellSize.isFinite && cellSize <= 4_096 else {
            throw ValidationError("\(option) must be a number of points within 1...4096, not \(cellSize)")
        }
    }

    /// The markers' diameters.
    func diameters() throws -> MarkerDiameters {
        let numbers = markerSizes.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard numbers.count == 4, let single = numbers[0], let cluster = numbers[1], let step = numbers[2],
            let gap = numbers[3]
        else {
            throw ValidationError(
                "--marker-sizes must be four numbers, SINGLE,CLUSTER,PER_DECADE,GAP, not '\(markerSizes)'")
        }
        let diameters = MarkerDiameters(single: single, cluster: cluster, perDecade: step, gap: gap)
        do {
            try OverlapResolution.mergeCircles(diameters).validate()
        } catch {
            throw ValidationError("--marker-sizes: \(error)")
        }
        return diameters
    }

    /// The options these ask for, zooms counted as `convention` says unless `--zoom-convention` says otherwise.
    func options(conventionByDefault convention: ZoomConvention = .leaflet) throws -> MarkerOptions {
        var options = MarkerOptions()
        options.zoomConvention = zoomConvention ?? convention
        if let radius {
            let size = 2 * radius / extent * options.zoomConvention.tileSize
            try Self.validate(cellSize: size, option: "--radius \(radius) at --extent \(extent) makes a cell size that")
            options.clustering.cellSize = size
        } else if let cellSize {
            options.clustering.cellSize = cellSize
        }
        options.clustering.minCountForClustering = minPoints
        if let maxZoom {
            // The whole zoom past it is the first that doesn't cluster, as in supercluster.
            options.clustering.maxZoomLevelForClustering =
                options.zoomConvention.engineZoom(maxZoom.rounded(.down) + 1).nextDown
        }
        options.merges = merge == "on"
        options.diameters = try diameters()
        return options
    }
}

extension ZoomConvention: ExpressibleByArgument {}
