import Foundation

/// Writes a PMTiles v3 archive, tile by tile in tile id order, without holding the tiles in memory.
///
/// The file starts with 16,384 bytes kept for the header and root directory, which are written last; the tiles follow
/// as they come, then the metadata and the leaf directories.
final class PMTilesWriter: TileArchiveWriter {
    private let url: URL
    private let handle: FileHandle
    private var entries: [PMTiles.Entry] = []
    private var lastBytes = Data()
    private var pending = Data()
    private var tilesLength: UInt64 = 0
    private var addressedTiles: UInt64 = 0

    /// A writer of a new archive at `url`, replacing any file there.
    init(url: URL) throws(TileArchiveError) {
        self.url = url
        guard FileManager.default.createFile(atPath: url.path, contents: Data(count: PMTiles.rootSpace)),
            let handle = try? FileHandle(forUpdating: url)
        else { throw .io("\(url.path): cannot be created") }
        self.handle = handle
        do { try handle.seekToEnd() } catch { throw .io("\(url.path): \(error.localizedDescription)") }
    }

    func add(_ address: TileAddress, bytes: Data) throws(TileArchiveError) {
        let id = PMTiles.tileID(address)
        if let last = entries.last {
            precondition(id > last.tileID + UInt64(last.runLength) - 1, "tiles come in tile id order")
            // A tile like the one before it, right after it, extends its run: the oceans of a pyramid often are.
            if id == last.tileID + UInt64(last.runLength), bytes == lastBytes {
                entries[entries.count - 1].runLength += 1
                addressedTiles += 1
                return
            }
        }
        guard let length = UInt32(exactly: bytes.count) else { throw .io("\(url.path): tile \(address) is too large") }
        entries.append(PMTiles.Entry(tileID: id, offset: tilesLength, length: length, runLength: 1))
        lastBytes = bytes
        pending.append(bytes)
        tilesLength += UInt64(bytes.count)
        addressedTiles += 1
        if pending.count >= 4 << 20 { try flush() }
    }

    func finish(metadata: TileArchiveMetadata) throws(TileArchiveError) {
        var header = PMTiles.Header()
        header.tilesOffset = UInt64(PMTiles.rootSpace)
        header.tilesLength = tilesLength
        header.addressedTiles = addressedTiles
        header.tileEntries = UInt64(entries.count)
        header.tileContents = UInt64(entries.count)
        header.minimumZoom = UInt8(metadata.minimumZoom)
        header.maximumZoom = UInt8(metadata.maximumZoom)
        if let bounds = metadata.bounds {
            header.bounds = TileArchiveMetadata.westToEast(bounds)
        }
        let center = metadata.center
        header.center = (center.longitude, center.latitude)
        header.centerZoom = UInt8(center.zoom)

        let metadataBytes = Gzip.compress(metadata.json)
        header.metadataOffset = header.tilesOffset + tilesLength
        header.metadataLength = UInt64(metadataBytes.count)
        pending.append(metadataBytes)

        let (root, leaves) = directories()
        header.rootOffset = UInt64(PMTiles.headerSize)
        header.rootLength = UInt64(root.count)
        header.leavesOffset = header.metadataOffset + header.metadataLength
        header.leavesLength = UInt64(leaves.count)
        pending.append(leaves)
        try flush()
        do {
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: header.bytes + root)
            try handle.synchronize()
            try handle.close()
        } catch {
            throw .io("\(url.path): \(error.localizedDescription)")
        }
    }

    /// The root directory, and the leaf directories it points to if the entries don't fit in the root's space.
    private func directories() -> (root: Data, leaves: Data) {
        let space = PMTiles.rootSpace - PMTiles.headerSize
        let root = Gzip.compress(PMTiles.serialize(entries[...]))
        guard root.count > space else { return (root, Data()) }
        // Leaves of 4,096 entries, twice as many each time the root of their first entries is still too large.
        var leafSize = 4_096
        while true {
            var leaves = Data()
            var rootEntries: [PMTiles.Entry] = []
            for start in stride(from: 0, to: entries.count, by: leafSize) {
                let leaf = Gzip.compress(PMTiles.serialize(entries[start..<min(start + leafSize, entries.count)]))
                rootEntries.append(
                    PMTiles.Entry(
                        tileID: entries[start].tileID, offset: UInt64(leaves.count), length: UInt32(leaf.count),
                        runLength: 0))
                leaves.append(leaf)
            }
            let root = Gzip.compress(PMTiles.serialize(rootEntries[...]))
            if root.count <= space { return (root, leaves) }
            leafSize *= 2
        }
    }

    private func flush() throws(TileArchiveError) {
        do {
            try handle.write(contentsOf: pending)
        } catch {
            throw .io("\(url.path): \(error.localizedDescription)")
        }
        pending.removeAll(keepingCapacity: true)
    }
}
