import Foundation

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
}
