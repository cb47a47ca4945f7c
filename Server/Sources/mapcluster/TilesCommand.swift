import ArgumentParser
import Dispatch
import Foundation
import MapCluster
import MapClusterIO
import MapClusterManager
import MapClusterServer
import MapClusterTiles

/// `mapcluster tiles`: every non-empty vector tile of a range of zooms, written once to a PMTiles or MBTiles archive.
struct TilesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiles",
        abstract: "Write the clusters of point files as a vector tile pyramid: a PMTiles or MBTiles archive.",
        discussion: """
            The tiles are those `serve` answers at /tiles/{z}/{x}/{y}.mvt with the same options, markers that would \
            overlap merged as the world's layout merges them (alike in every tile, and in /api/clusters): one layer, \
            'clusters', gzip-compressed. Serve the archive with `mapcluster serve --tiles-from FILE`, or put a \
            .pmtiles file on object storage or a CDN and read it with the PMTiles library. The archive is written \
            beside OUTPUT under a hidden name and renamed when complete: an interrupted run leaves nothing under \
            OUTPUT.

            Examples:
              mapcluster tiles places.csv -o places.pmtiles    # zooms 0 to 14
              mapcluster tiles places.csv -o places.mbtiles -z 10 --radius 50
            """)

    @OptionGroup var input: PointInput

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The archive to write: FILE.pmtiles (PMTiles v3) or FILE.mbtiles (MBTiles 1.3).",
            valueName: "file"))
    var output: String

    @Option(
        name: [.customShort("Z"), .customLong("min-tile-zoom")], parsing: .unconditional,
        help: "The shallowest tile zoom written (tippecanoe's -Z).")
    var minTileZoom = 0

    @Option(
        name: [.customShort("z"), .customLong("max-tile-zoom")], parsing: .unconditional,
        help: "The deepest tile zoom written (tippecanoe's -z), at most \(TileAddress.maximumZoom).")
    var maxTileZoom = 14

    @OptionGroup(title: "Clustering") var clustering: ClusteringInput

    @Option(help: "The archive's name, in its metadata (default: the output file's name).")
    var name: String?

    func validate() throws {
        guard TileArchiveFormat(path: output) != nil else {
            throw ValidationError("--output must end in .pmtiles or .mbtiles, not '\(output)'")
        }
        guard (0...TileAddress.maximumZoom).contains(minTileZoom), (0...TileAddress.maximumZoom).contains(maxTileZoom)
        else {
            throw ValidationError("--min-tile-zoom and --max-tile-zoom must be within 0...\(TileAddress.maximumZoom)")
        }
        guard minTileZoom <= maxTileZoom else {
            throw ValidationError("--min-tile-zoom \(minTileZoom) is deeper than --max-tile-zoom \(maxTileZoom)")
        }
    }

    func run() throws {
        let url = URL(fileURLWithPath: output)
        guard let format = TileArchiveFormat(path: output) else { return }
        let directory = url.deletingLastPathComponent().path
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw InputError("\(output): cannot write in \(directory)")
        }
        let points = try input.load()
        let index = try input.index(of: points)
        // A tile's zoom is MapLibre's: so are the options' zooms, unless they say otherwise.
        let options = try clustering.options(conventionByDefault: .maplibre)
        var pyramid = TilePyramid(
            tiles: ClusterTiles(
                points: points, clustering: try Clustering(index, options: options.clustering),
                overlap: options.layout.overlap),
            zooms: minTileZoom...maxTileZoom)
        pyramid.name = name ?? url.deletingPathExtension().lastPathComponent

        // Ctrl-C or a TERM takes the half-written archive with it.
        let cleanup = SignalCleanup(removing: TilePyramid.partialURL(for: url))
        defer { cleanup.cancel() }
        let progress = ProgressLine(label: "writing tiles")
        let zooms = Double(maxTileZoom - minTileZoom + 1)
        let start = ContinuousClock.now
        let summary: TilePyramid.Summary
        do {
            summary = try pyramid.write(to: url, format: format) { step in
                // Each zoom has about as much work as the one before it (until every point is its own feature).
                let done = Double(step.zoom - minTileZoom) + Double(step.rowsDone) / Double(step.rows)
                progress.show(done / zooms, detail: "zoom \(step.zoom), \(step.tiles) tiles")
            }
        } catch {
            progress.finish()
            throw InputError("\(error)")
        }
        progress.finish()
        let elapsed = (ContinuousClock.now - start).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let megabytes = Double(summary.bytes) / 1_000_000
        print(
            "wrote \(summary.tileCount) tiles of zooms \(minTileZoom)–\(maxTileZoom) to \(output) "
                + "(\(String(format: "%.1f", megabytes)) MB) in \(String(format: "%.1f", seconds)) s")
    }
}

/// Removes a file when the process is interrupted (SIGINT) or asked to stop (SIGTERM), then exits as the signal would.
final class SignalCleanup {
    private let sources: [any DispatchSourceSignal]

    init(removing url: URL) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                unlink(url.path)
                FileHandle.standardError.write(Data("\ninterrupted: nothing written to the output\n".utf8))
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
    }
}
