import ArgumentParser
import Foundation
import MapCluster
import MapClusterIO
import MapClusterSampleData

/// `mapcluster render`: a picture of the clusters of point files, as SVG.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Draw the clusters of point files over the world outline, as an SVG picture.",
        discussion: """
            The picture shows the bbox, clustered for the zoom (the grid's cells follow the zoom), stretched to the \
            size. Without FILES, draws the bundled world cities (contains data from GeoNames, geonames.org, CC BY \
            4.0); the outline is Natural Earth's (public domain).

            Examples:
              mapcluster render --zoom 4 --bbox=-12,34,32,60 -o europe.svg
              mapcluster render places.csv --zoom 2 --size 800x600 -o places.svg
            """)

    @OptionGroup var input: PointInput

    @Option(
        parsing: .unconditional,
        help: "The area as west,south,east,north in degrees (east < west crosses the antimeridian). Default: the world."
    )
    var bbox: String?

    @Option(parsing: .unconditional, help: "The zoom level to cluster for, 0...24.")
    var zoom: Double

    @Option(help: "The picture's size in pixels, as WIDTHxHEIGHT.")
    var size = "1024x768"

    @Option(name: .shortAndLong, help: "Where to write the SVG ('-' for standard output).")
    var output: String

    func validate() throws {
        guard (0...24).contains(zoom) else { throw ValidationError("--zoom must be within 0...24, not \(zoom)") }
        _ = try pixels()
        _ = try ClusterCommand.area(bbox)
    }

    func pixels() throws -> (width: Int, height: Int) {
        let parts = size.lowercased().split(separator: "x").map { Int($0) }
        guard parts.count == 2, let width = parts[0], let height = parts[1], (1...16_384).contains(width),
            (1...16_384).contains(height)
        else { throw ValidationError("--size must be WIDTHxHEIGHT in pixels, each 1...16384, not '\(size)'") }
        return (width, height)
    }

    func run() throws {
        let points = try input.load()
        let rect = try ClusterCommand.area(bbox)
        let (width, height) = try pixels()
        let index = try input.index(of: points)
        var options = ClusterOptions<Int>()
        options.marginFactor = 0
        let viewport = Viewport(rect: rect, size: ViewSize(showing: rect, atZoom: zoom))
        let clusters = try Clustering(index, options: options).clusters(in: viewport)
        let outline = try? JSONDecoder().decode(PropertyValue.self, from: Data(contentsOf: SampleData.worldOutlineURL))
        let svg = SVGMap(rect: rect, width: width, height: height).render(clusters, outline: outline)
        if output == "-" {
            print(svg, terminator: "")
        } else {
            do {
                try Data(svg.utf8).write(to: URL(fileURLWithPath: output))
            } catch {
                throw ValidationError("cannot write \(output): \(error.localizedDescription)")
            }
            print("wrote \(output): \(clusters.count) clusters and points, \(width)×\(height)")
        }
    }
}
