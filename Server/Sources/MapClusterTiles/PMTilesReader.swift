public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the tiles of a PMTiles v3 archive, each with one or two reads at its offset (the root directory is read at
/// opening, leaf directories as they are needed, the most recent kept).
public final class PMTilesReader: TileArchive, @unchecked Sendable {
    // The descriptor is only read with pread, which takes its own offset: safe from several threads. The leaf cache
    // is guarded by `lock`.
    private let descriptor: Int32
    private let path: String
    private let header: PMTiles.Header
    private let root: [PMTiles.Entry]
    private let lock = NSLock()
    private var leaves: [UInt64: [PMTiles.Entry]] = [:]
    /// What the archive says of its tiles.
    public let metadata: TileArchiveMetadata
    /// Whether the archive's tiles are stored gzip-compressed.
    public var tilesAreCompressed: Bool { header.tileCompression == .gzip }
    /// How many leaf directories stay in memory.
    static let cachedLeaves = 256

    /// Opens the archive at `url`.
    ///
    /// - Throws: ``TileArchiveError`` if it can't be read or is not a PMTiles v3 archive of vector tiles.
    public init(url: URL) throws(TileArchiveError) {
        path = url.path
        descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw .io("\(url.path): cannot be opened (\(String(cString: strerror(errno))))") }
        do {
            header = try PMTiles.Header(
                Self.read(descriptor, at: 0, count: UInt64(PMTiles.headerSize), path: path), path: path)
            root = try PMTiles.deserialize(
                Self.directoryBytes(
                    Self.read(descriptor, at: header.rootOffset, count: header.rootLength, path: path),
                    header: header, path: path), path: path)
            let json = try Self.directoryBytes(
                Self.read(descriptor, at: header.metadataOffset, count: header.metadataLength, path: path),
                header: header, path: path)
            let layers = TileArchiveMetadata.layers(fromJSON: json)
            let document = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any]
            metadata = TileArchiveMetadata(
                minimumZoom: Int(header.minimumZoom), maximumZoom: Int(header.maximumZoom), bounds: header.bounds,
                name: document?["name"] as? String ?? url.deletingPathExtension().lastPathComponent,
                description: document?["description"] as? String ?? "", layers: layers)
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// The stored bytes of the tile at `address`, or `nil` if the archive has none there.
    public func tile(_ address: TileAddress) throws(TileArchiveError) -> Data? {
        let id = PMTiles.tileID(address)
        var directory = root
        // The spec allows a root and at most three levels of leaves.
        for _ in 0..<4 {
            guard let entry = PMTiles.entry(for: id, in: directory) else { return nil }
            guard entry.runLength == 0 else {
                return try Self.read(
                    descriptor, at: try Self.offset(header.tilesOffset, entry.offset, path: path),
                    count: UInt64(entry.length), path: path)
            }
            directory = try leaf(at: entry.offset, length: UInt64(entry.length))
        }
        throw .corrupt("\(path): leaf directories nested deeper than the format allows")
    }

    private func leaf(at offset: UInt64, length: UInt64) throws(TileArchiveError) -> [PMTiles.Entry] {
        if let leaf = lock.withLock({ leaves[offset] }) { return leaf }
        let bytes = try Self.read(
            descriptor, at: try Self.offset(header.leavesOffset, offset, path: path), count: length, path: path)
        let leaf = try PMTiles.deserialize(Self.directoryBytes(bytes, header: header, path: path), path: path)
        lock.withLock {
            if leaves.count >= Self.cachedLeaves { leaves.removeAll(keepingCapacity: true) }
            leaves[offset] = leaf
        }
        return leaf
    }

    private static func directoryBytes(
        _ bytes: Data, header: PMTiles.Header, path: String
    ) throws(TileArchiveError) -> Data {
        header.internalCompression == .gzip ? try Gzip.decompress(bytes) : bytes
    }

    /// A section's offset plus an offset in it, or an error for a sum past what a file can hold.
    private static func offset(_ section: UInt64, _ offset: UInt64, path: String) throws(TileArchiveError) -> UInt64 {
        let (sum, overflow) = section.addingReportingOverflow(offset)
        guard !overflow else { throw .corrupt("\(path): an offset of \(offset) past a section at \(section)") }
        return sum
    }

    /// `count` bytes at `offset`, all of them.
    private static func read(_ descriptor: Int32, at offset: UInt64, count wanted: UInt64, path: String)
        throws(TileArchiveError) -> Data
    {
        guard let count = Int(exactly: wanted), count <= 1 << 30, let start = off_t(exactly: offset) else {
            throw .corrupt("\(path): a part of \(wanted) bytes at \(offset) is out of range")
        }
        var data = Data(count: count)
        var done = 0
        while done < count {
            let read = data.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress.map { $0 + done }, count - done, start + off_t(done))
            }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else {
                throw read == 0
                    ? .corrupt("\(path): ends before the \(wanted) bytes at \(offset) its directory points to")
                    : .io("\(path): \(String(cString: strerror(errno)))")
            }
            done += read
        }
        return data
    }
}
