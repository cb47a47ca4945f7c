import Foundation
import HTTPTypes
package import MapClusterTiles

/// What a server of a tile archive answers: its tiles and their TileJSON, without points.
package struct ArchiveService: Sendable {
    /// The archive read.
    package let archive: any TileArchive

    /// A service of `archive`'s tiles.
    package init(archive: any TileArchive) {
        self.archive = archive
    }

    /// The archive's tile at `address`, as stored; no content where it has none.
    ///
    /// An archive's tiles are clustered once, with every category: a `categories` parameter is a 400.
    package func tile(_ address: TileAddress, categories: [String]?) throws(RequestError) -> TileAnswer {
        guard categories == nil else {
            throw RequestError(.badRequest, "categories: the tiles come from an archive, clustered with all of them")
        }
        do {
            return TileAnswer(bytes: try archive.tile(address))
        } catch {
            throw RequestError(.internalServerError, "tile \(address): \(error)")
        }
    }

    /// TileJSON 3.0 for the archive's tiles at `baseURL` (the server's scheme, host and port).
    package func tileJSON(baseURL: String) -> TileJSONAnswer {
        let metadata = archive.metadata
        return TileJSONAnswer(
            tiles: ["\(baseURL)/tiles/{z}/{x}/{y}.mvt"], minZoom: metadata.minimumZoom,
            maxZoom: metadata.maximumZoom, bounds: metadata.bounds ?? [-180, -85.0511, 180, 85.0511],
            layers: metadata.layers, name: metadata.name)
    }
}

extension TileAddress {
    /// The tile a request's path names: `z`, `x` and `y` with its `.mvt`, each a whole number within the zoom's
    /// range.
    ///
    /// - Throws: A 400 ``RequestError`` that names the part at fault.
    init(z: String, x: String, y: String) throws(RequestError) {
        guard y.hasSuffix(".mvt") else {
            throw RequestError(.badRequest, "tile '\(z)/\(x)/\(y)': the path ends in .mvt (/tiles/{z}/{x}/{y}.mvt)")
        }
        let zoom = try RequestValue.integer(z, name: "z", default: 0, range: 0...TileAddress.maximumZoom)
        let last = (1 << zoom) - 1
        let column = try RequestValue.integer(x, name: "x", default: 0, range: 0...last)
        let row = try RequestValue.integer(String(y.dropLast(4)), name: "y", default: 0, range: 0...last)
        guard let address = TileAddress(z: zoom, x: column, y: row) else {
            throw RequestError(.badRequest, "tile \(z)/\(x)/\(y) is not a tile")
        }
        self = address
    }
}
