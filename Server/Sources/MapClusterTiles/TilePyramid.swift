import Dispatch
public import Foundation
@_spi(MapClusterServer) import MapCluster
import MapClusterIO

/// Every non-empty tile of a range of zooms, made once and written to a PMTiles or MBTiles archive: a pyramid that
/// object storage, a CDN or any number of servers serve without a clustering server behind them.
///
/// Its tiles are the live tiles of ``ClusterTiles``, feature for feature. They are made a row of tiles at a time, on
/// every core: the clusters of a row and its buffer come from one query of the index, and each goes to the tiles
/// whose extent or buffer holds it.
public struct TilePyramid: Sendable {
    /// The tiles' clusters.
    public let tiles: ClusterTiles
    /// The zooms written.
    public let zooms: ClosedRange<Int>
    /// What the archive is called, in its metadata.
    public var name = "clusters"

    /// The pyramid of `tiles` in `zooms` (within 0...``TileAddress/maximumZoom``).
    public init(tiles: ClusterTiles, zooms: ClosedRange<Int>) {
        precondition(
            zooms.lowerBound >= 0 && zooms.upperBound <= TileAddress.maximumZoom,
            "tile zooms lie within 0...\(TileAddress.maximumZoom)")
        self.tiles = tiles
        self.zooms = zooms
    }

    /// How far the work has gone: in which zoom, and how many of its rows of tiles are done.
    public struct Progress: Sendable {
        /// The zoom being made.
        public var zoom: Int
        /// Its rows done.
        public var rowsDone: Int
        /// Its rows.
        public var rows: Int
        /// Tiles made so far, in every zoom.
        public var tiles: Int
    }

    /// What was written.
    public struct Summary: Sendable, Equatable {
        /// Non-empty tiles written, by zoom.
        public var tilesByZoom: [Int: Int] = [:]
        /// The archive's size in bytes.
        public var bytes: Int = 0
        /// Non-empty tiles written in all.
        public var tileCount: Int { tilesByZoom.values.reduce(0, +) }
    }

    /// The archive's metadata: zooms, the points' bounds, the layer and its fields.
    public var metadata: TileArchiveMetadata {
        let records = tiles.points.records
        var bounds: [Double]?
        if !records.isEmpty {
            var box = [180.0, 90.0, -180.0, -90.0]
            for record in records {
                box[0] = min(box[0], record.coordinate.longitude)
                box[1] = min(box[1], record.coordinate.latitude)
                box[2] = max(box[2], record.coordinate.longitude)
                box[3] = max(box[3], record.coordinate.latitude)
            }
            bounds = box
        }
        return TileArchiveMetadata(
            minimumZoom: zooms.lowerBound, maximumZoom: zooms.upperBound, bounds: bounds, name: name,
            description: "\(records.count) points clustered by MapCluster",
            layers: [
                .init(
                    id: ClusterTiles.layerName, fields: tiles.fields, minzoom: zooms.lowerBound,
                    maxzoom: zooms.upperBound)
            ])
    }

    /// Writes the pyramid to `url` in `format`, all or nothing: the archive is made beside it under
    /// ``partialURL(for:)`` and renamed to `url` only when complete, replacing what was there.
    ///
    /// `progress` is called from several threads as rows of tiles are done.
    ///
    /// - Throws: ``TileArchiveError`` if the file can't be written; nothing is left under either name then.
    @discardableResult
    public func write(
        to url: URL, format: TileArchiveFormat, progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) throws(TileArchiveError) -> Summary {
        let partial = Self.partialURL(for: url)
        try? FileManager.default.removeItem(at: partial)
        var summary = Summary()
        do throws(TileArchiveError) {
            let writer = BackgroundWriter(
                try {
                    () throws(TileArchiveError) -> any TileArchiveWriter in
                    switch format {
                    case .pmtiles: try PMTilesWriter(url: partial)
                    case .mbtiles: try MBTilesWriter(url: partial)
                    }
                }())
            var made = 0
            for zoom in zooms {
                let before = made
                let zoomTiles = self.unorderedTiles(zoom) { rowsDone, rows, tilesInZoom in
                    progress(Progress(zoom: zoom, rowsDone: rowsDone, rows: rows, tiles: before + tilesInZoom))
                }
                // Written while the next zoom is made.
                try writer.write(zoomTiles)
                made += zoomTiles.count
                summary.tilesByZoom[zoom] = zoomTiles.count
            }
            try writer.finish(metadata: metadata)
            guard rename(partial.path, url.path) == 0 else {
                throw TileArchiveError.io("\(url.path): cannot be written (\(String(cString: strerror(errno))))")
            }
        } catch {
            try? FileManager.default.removeItem(at: partial)
            throw error
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
        summary.bytes = size ?? 0
        return summary
    }

    /// Where ``write(to:format:progress:)`` makes the archive for `url` until it is complete: a hidden file beside it,
    /// named with this process's id.
    public static func partialURL(for url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).partial")
    }

    /// The non-empty tiles of `zoom`, gzip-compressed, in PMTiles order (along the zoom's Hilbert curve).
    ///
    /// `rowDone` is called with the rows done, the rows, and the tiles made so far.
    public func zoomTiles(
        _ zoom: Int, rowDone: @Sendable (_ done: Int, _ rows: Int, _ tiles: Int) -> Void = { _, _, _ in }
    ) -> [(TileAddress, Data)] {
        unorderedTiles(zoom, rowDone: rowDone).sorted { $0.0 < $1.0 }.map { ($0.1, $0.2) }
    }

    /// The non-empty tiles of `zoom`, gzip-compressed, with their PMTiles tile ids, in no order.
    func unorderedTiles(
        _ zoom: Int, rowDone: @Sendable (_ done: Int, _ rows: Int, _ tiles: Int) -> Void
    ) -> [(UInt64, TileAddress, Data)] {
        let rows = 1 << zoom
        // Several chunks for each core, so that a core with the crowded rows doesn't leave the others waiting. A chunk
        // is a run of rows, north to south: a row's merged markers come from the rows of blocks its neighbours laid
        // out just before.
        let chunkCount = min(rows, ProcessInfo.processInfo.activeProcessorCount * 16)
        let results = ChunkResults(count: chunkCount)
        DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
            var made: [(UInt64, TileAddress, Data)] = []
            let compressor = Gzip.Compressor()
            for row in rows * chunk / chunkCount..<rows * (chunk + 1) / chunkCount {
                let rowMade = rowTiles(zoom: zoom, row: row, compressor: compressor)
                made += rowMade
                let (done, tiles) = results.rowDone(tiles: rowMade.count)
                rowDone(done, rows, tiles)
            }
            results.set(chunk, made)
        }
        return results.all
    }

    /// The non-empty tiles of one row, with their PMTiles tile ids.
    private func rowTiles(zoom: Int, row: Int, compressor: Gzip.Compressor) -> [(UInt64, TileAddress, Data)] {
        let columns = 1 << zoom
        let side = MapSize.worldWidth / Double(columns)
        // The buffer: the merged layout is the world's, whatever area asks for it.
        let margin = side * ClusterTiles.buffer / Double(ClusterTiles.extent)
        let strip = MapRect(
            minX: 0, minY: max(Double(row) * side - margin, 0), maxX: MapSize.worldWidth.nextDown,
            maxY: min(Double(row + 1) * side + margin, MapSize.worldWidth).nextDown)
        let items = tiles.items(in: strip, tileZoom: zoom)
        guard !items.isEmpty else { return [] }
        // Each feature goes to its own tile and to the neighbours whose buffer holds it (across the antimeridian too),
        // as (column, feature) pairs, then tile by tile.
        var members: [(column: Int, offset: Int)] = []
        members.reserveCapacity(items.count + items.count / 8)
        for (offset, item) in items.enumerated() {
            let point = item.point
            let column = min(max(Int(point.x / side), 0), columns - 1)
            // The column, the one east and the one west; with two columns, those two are the same one.
            for step in 0..<min(columns, 3) {
                let neighbour = (column + (step == 2 ? columns - 1 : step)) % columns
                guard let address = TileAddress(z: zoom, x: neighbour, y: row),
                    ClusterTiles.position(of: point, in: address) != nil
                else { continue }
                members.append((neighbour, offset))
            }
        }
        members.sort { ($0.column, $0.offset) < ($1.column, $1.offset) }
        var made: [(UInt64, TileAddress, Data)] = []
        var start = members.startIndex
        while start < members.endIndex {
            let column = members[start].column
            var end = start + 1
            while end < members.endIndex && members[end].column == column { end += 1 }
            if let address = TileAddress(z: zoom, x: column, y: row),
                let bytes = tiles.encode(members[start..<end].lazy.map { items[$0.offset] }, in: address)
            {
                made.append((PMTiles.tileID(address), address, compressor.compress(bytes)))
            }
            start = end
        }
        return made
    }
}

/// The tiles each chunk of rows made, and the rows done, shared by the threads that make them.
private final class ChunkResults: @unchecked Sendable {
    private let lock = NSLock()
    private var chunks: [[(UInt64, TileAddress, Data)]]
    private var rowsDone = 0
    private var tilesDone = 0

    init(count: Int) {
        chunks = Array(repeating: [], count: count)
    }

    /// Counts a row done that made `tiles` tiles; the rows and tiles done in all.
    func rowDone(tiles: Int) -> (rows: Int, tiles: Int) {
        lock.withLock {
            rowsDone += 1
            tilesDone += tiles
            return (rowsDone, tilesDone)
        }
    }

    func set(_ chunk: Int, _ tiles: [(UInt64, TileAddress, Data)]) {
        lock.withLock { chunks[chunk] = tiles }
    }

    var all: [(UInt64, TileAddress, Data)] { lock.withLock { chunks.flatMap { $0 } } }
}

/// An archive writer on a thread of its own: each zoom's tiles are put in tile id order and written there while the
/// next zoom is made.
private final class BackgroundWriter: @unchecked Sendable {
    // `writer` and `failure` are used on `queue` only.
    private let writer: any TileArchiveWriter
    private let queue = DispatchQueue(label: "mapcluster.tiles.writer")
    private var failure: TileArchiveError?

    init(_ writer: any TileArchiveWriter) {
        self.writer = writer
    }

    /// Queues `tiles` to be written; throws the error of an earlier write, if one failed.
    func write(_ tiles: [(UInt64, TileAddress, Data)]) throws(TileArchiveError) {
        if let failure = queue.sync(execute: { failure }) { throw failure }
        queue.async { [self] in
            guard failure == nil else { return }
            do throws(TileArchiveError) {
                for (_, address, bytes) in tiles.sorted(by: { $0.0 < $1.0 }) { try writer.add(address, bytes: bytes) }
            } catch {
                failure = error
            }
        }
    }

    /// Waits for the queued tiles, then writes what remains and closes the file.
    func finish(metadata: TileArchiveMetadata) throws(TileArchiveError) {
        let result: Result<Void, TileArchiveError> = queue.sync {
            if let failure { return .failure(failure) }
            do throws(TileArchiveError) {
                try writer.finish(metadata: metadata)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }
}
