import Foundation

extension PMTiles {
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
}
