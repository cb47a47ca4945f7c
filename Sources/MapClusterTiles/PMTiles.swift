public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The parts of the PMTiles v3 format both the writer and the reader need: tile ids, the header and directories.
///
/// An archive is a 127-byte header, a root directory within the first 16,384 bytes, JSON metadata, leaf directories
/// and the tiles. A directory lists entries (tile id, offset, length, run length) sorted by tile id, which numbers
/// tiles zoom by zoom, each zoom along a Hilbert curve, so that tiles near each other on the map are near each other
/// in the file.
enum PMTiles {
    /// The header's size in bytes.
    static let headerSize = 127
    /// The header and the root directory lie within this many first bytes, so one request reads both.
    static let rootSpace = 16_384
    /// What the header's compression bytes say.
    enum Compression: UInt8 {
        case unknown = 0
        case none = 1
        case gzip = 2
        case brotli = 3
        case zstd = 4
    }
    /// The header's tile type of Mapbox Vector Tiles.
    static let vectorTileType: UInt8 = 1

    /// A directory entry: `runLength` tiles from `tileID` on, all with the bytes at `offset`; a run length of 0
    /// points to a leaf directory instead.
    struct Entry: Equatable {
        var tileID: UInt64
        var offset: UInt64
        var length: UInt32
        var runLength: UInt32
    }

    /// The tile id of `address`: the tiles of all lower zooms, then the position along the zoom's Hilbert curve.
    static func tileID(_ address: TileAddress) -> UInt64 {
        let z = UInt64(address.z)
        // 1 + 4 + … + 4^(z-1): the tiles of the zooms above.
        let base: UInt64 = ((1 << (2 * z)) - 1) / 3
        var (x, y) = (UInt64(address.x), UInt64(address.y))
        var distance: UInt64 = 0
        var side = (UInt64(1) << z) >> 1
        while side > 0 {
            let rx: UInt64 = x & side > 0 ? 1 : 0
            let ry: UInt64 = y & side > 0 ? 1 : 0
            distance += side * side * ((3 * rx) ^ ry)
            // Turn the quadrant so the curve's next level runs the same way.
            if ry == 0 {
                if rx == 1 {
                    x = side &- 1 &- x
                    y = side &- 1 &- y
                }
                swap(&x, &y)
            }
            side >>= 1
        }
        return base + distance
    }

    /// The header's bytes.
    struct Header: Equatable {
        var rootOffset: UInt64 = 0
        var rootLength: UInt64 = 0
        var metadataOffset: UInt64 = 0
        var metadataLength: UInt64 = 0
        var leavesOffset: UInt64 = 0
        var leavesLength: UInt64 = 0
        var tilesOffset: UInt64 = 0
        var tilesLength: UInt64 = 0
        var addressedTiles: UInt64 = 0
        var tileEntries: UInt64 = 0
        var tileContents: UInt64 = 0
        var clustered = true
        var internalCompression = Compression.gzip
        var tileCompression = Compression.gzip
        var tileType = vectorTileType
        var minimumZoom: UInt8 = 0
        var maximumZoom: UInt8 = 0
        /// West, south, east, north in degrees.
        var bounds: [Double] = [-180, -85.051_128_78, 180, 85.051_128_78]
        var centerZoom: UInt8 = 0
        var center: (longitude: Double, latitude: Double) = (0, 0)

        static func == (a: Header, b: Header) -> Bool { a.bytes == b.bytes }

        var bytes: Data {
            var data = Data("PMTiles".utf8)
            data.append(3)
            for value in [
                rootOffset, rootLength, metadataOffset, metadataLength, leavesOffset, leavesLength, tilesOffset,
                tilesLength, addressedTiles, tileEntries, tileContents,
            ] {
                data.appendLittleEndian(value)
            }
            data.append(contentsOf: [
                clustered ? 1 : 0, internalCompression.rawValue, tileCompression.rawValue, tileType, minimumZoom,
                maximumZoom,
            ])
            for degrees in bounds { data.appendLittleEndian(UInt32(bitPattern: Self.e7(degrees))) }
            data.append(centerZoom)
            data.appendLittleEndian(UInt32(bitPattern: Self.e7(center.longitude)))
            data.appendLittleEndian(UInt32(bitPattern: Self.e7(center.latitude)))
            return data
        }

        /// The header in `bytes`, the first 127 of a file.
        init(_ bytes: Data, path: String) throws(TileArchiveError) {
            guard bytes.count >= headerSize, bytes.starts(with: Data("PMTiles".utf8)) else {
                throw .unsupported("\(path): not a PMTiles archive")
            }
            var reader = ByteReader(bytes)
            reader.skip(7)
            let version = reader.byte()
            guard version == 3 else { throw .unsupported("\(path): PMTiles version \(version); only 3 is read") }
            rootOffset = reader.uint64()
            rootLength = reader.uint64()
            metadataOffset = reader.uint64()
            metadataLength = reader.uint64()
            leavesOffset = reader.uint64()
            leavesLength = reader.uint64()
            tilesOffset = reader.uint64()
            tilesLength = reader.uint64()
            addressedTiles = reader.uint64()
            tileEntries = reader.uint64()
            tileContents = reader.uint64()
            clustered = reader.byte() == 1
            let compressions = (reader.byte(), reader.byte())
            guard let internalCompression = Compression(rawValue: compressions.0),
                [.none, .gzip].contains(internalCompression)
            else {
                throw .unsupported(
                    "\(path): directories compressed with method \(compressions.0); only none and gzip are read")
            }
            guard let tileCompression = Compression(rawValue: compressions.1),
                [.none, .gzip, .unknown].contains(tileCompression)
            else {
                throw .unsupported(
                    "\(path): tiles compressed with method \(compressions.1); only none and gzip are read")
            }
            self.internalCompression = internalCompression
            self.tileCompression = tileCompression
            tileType = reader.byte()
            guard tileType == vectorTileType else {
                throw .unsupported("\(path): tiles of type \(tileType), not vector tiles (1)")
            }
            minimumZoom = reader.byte()
            maximumZoom = reader.byte()
            bounds = (0..<4).map { _ in Double(Int32(bitPattern: reader.uint32())) / 1e7 }
            centerZoom = reader.byte()
            let longitude = Double(Int32(bitPattern: reader.uint32())) / 1e7
            center = (longitude, Double(Int32(bitPattern: reader.uint32())) / 1e7)
        }

        init() {}

        private static func e7(_ degrees: Double) -> Int32 {
            Int32((degrees * 1e7).rounded().clamped(to: Double(Int32.min)...Double(Int32.max)))
        }
    }

    /// A directory's bytes before compression: the count, then each column (tile id deltas, run lengths, lengths,
    /// offsets) as varints; an offset right after the previous entry's bytes is written as 0.
    static func serialize(_ entries: ArraySlice<Entry>) -> Data {
        var data = Data()
        data.appendVarint(UInt64(entries.count))
        var lastID: UInt64 = 0
        for entry in entries {
            data.appendVarint(entry.tileID - lastID)
            lastID = entry.tileID
        }
        for entry in entries { data.appendVarint(UInt64(entry.runLength)) }
        for entry in entries { data.appendVarint(UInt64(entry.length)) }
        var previous: Entry?
        for entry in entries {
            if let previous, entry.offset == previous.offset + UInt64(previous.length) {
                data.appendVarint(0)
            } else {
                data.appendVarint(entry.offset + 1)
            }
            previous = entry
        }
        return data
    }

    /// The entries of a directory's bytes (after decompression).
    static func deserialize(_ bytes: Data, path: String) throws(TileArchiveError) -> [Entry] {
        var reader = ByteReader(bytes)
        func next() throws(TileArchiveError) -> UInt64 {
            guard let value = reader.varint() else { throw .corrupt("\(path): a directory ends before its entries do") }
            return value
        }
        let count = try next()
        // Each entry takes at least four bytes: a count larger than that is damage, not a reason to allocate.
        guard count <= UInt64(bytes.count) else { throw .corrupt("\(path): a directory claims \(count) entries") }
        var entries = [Entry](repeating: Entry(tileID: 0, offset: 0, length: 0, runLength: 0), count: Int(count))
        var lastID: UInt64 = 0
        for i in entries.indices {
            let (id, overflow) = lastID.addingReportingOverflow(try next())
            guard !overflow else { throw .corrupt("\(path): a directory's tile ids overflow") }
            entries[i].tileID = id
            lastID = id
        }
        for i in entries.indices {
            guard let run = UInt32(exactly: try next()) else { throw .corrupt("\(path): a run length overflows") }
            entries[i].runLength = run
        }
        for i in entries.indices {
            guard let length = UInt32(exactly: try next()) else { throw .corrupt("\(path): a length overflows") }
            entries[i].length = length
        }
        for i in entries.indices {
            let value = try next()
            if value == 0 {
                guard i > 0 else { throw .corrupt("\(path): a directory's first offset is missing") }
                entries[i].offset = entries[i - 1].offset + UInt64(entries[i - 1].length)
            } else {
                entries[i].offset = value - 1
            }
        }
        return entries
    }

    /// The entry that holds `tileID` in `entries` (sorted by tile id): the last one at or before it, if its run
    /// reaches it, or the leaf directory that covers it.
    static func entry(for tileID: UInt64, in entries: [Entry]) -> Entry? {
        var low = 0
        var high = entries.count
        // The first entry after tileID.
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].tileID <= tileID { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let entry = entries[low - 1]
        guard entry.runLength == 0 || tileID - entry.tileID < UInt64(entry.runLength) else { return nil }
        return entry
    }
}

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
            header = try PMTiles.Header(Self.read(descriptor, at: 0, count: PMTiles.headerSize, path: path), path: path)
            root = try PMTiles.deserialize(
                Self.directoryBytes(
                    Self.read(descriptor, at: header.rootOffset, count: Int(header.rootLength), path: path),
                    header: header, path: path), path: path)
            let json = try Self.directoryBytes(
                Self.read(descriptor, at: header.metadataOffset, count: Int(header.metadataLength), path: path),
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
                    descriptor, at: header.tilesOffset + entry.offset, count: Int(entry.length), path: path)
            }
            directory = try leaf(at: entry.offset, length: Int(entry.length))
        }
        throw .corrupt("\(path): leaf directories nested deeper than the format allows")
    }

    private func leaf(at offset: UInt64, length: Int) throws(TileArchiveError) -> [PMTiles.Entry] {
        if let leaf = lock.withLock({ leaves[offset] }) { return leaf }
        let bytes = try Self.read(descriptor, at: header.leavesOffset + offset, count: length, path: path)
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

    /// `count` bytes at `offset`, all of them.
    private static func read(_ descriptor: Int32, at offset: UInt64, count: Int, path: String) throws(TileArchiveError)
        -> Data
    {
        guard count >= 0, count <= 1 << 30, let start = off_t(exactly: offset) else {
            throw .corrupt("\(path): a part of \(count) bytes at \(offset) is out of range")
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
                    ? .corrupt("\(path): ends before the \(count) bytes at \(offset) its directory points to")
                    : .io("\(path): \(String(cString: strerror(errno)))")
            }
            done += read
        }
        return data
    }
}

extension Data {
    fileprivate mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }
}

/// Reads little-endian integers and varints from bytes, front to back.
private struct ByteReader {
    private let bytes: Data
    private var position: Int

    init(_ bytes: Data) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    mutating func skip(_ count: Int) { position += count }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.endIndex ? bytes[position] : 0
    }

    mutating func uint32() -> UInt32 {
        (0..<4).reduce(0) { value, shift in value | UInt32(byte()) << (8 * shift) }
    }

    mutating func uint64() -> UInt64 {
        (0..<8).reduce(0) { value, shift in value | UInt64(byte()) << (8 * shift) }
    }

    /// The next varint, or `nil` if the bytes end inside it or it is longer than 64 bits.
    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            guard position < bytes.endIndex else { return nil }
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
        }
        return nil
    }
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
