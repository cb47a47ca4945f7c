public import Foundation
import GRDB

/// Writes an MBTiles 1.3 archive: an SQLite database with a `metadata` table of names and values and a `tiles` table
/// of gzip-compressed vector tiles, whose rows count from the south (TMS), as the specification has them.
final class MBTilesWriter: TileArchiveWriter {
    private let url: URL
    private let database: DatabaseQueue
    private var pending: [(TileAddress, Data)] = []

    /// A writer of a new archive at `url`, which must not exist.
    init(url: URL) throws(TileArchiveError) {
        self.url = url
        do {
            database = try DatabaseQueue(path: url.path)
            try database.writeWithoutTransaction { db in
                // The file is written to one side and renamed when complete: a journal would only slow it down.
                try db.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
                try db.execute(
                    sql: """
                        CREATE TABLE metadata (name TEXT NOT NULL, value TEXT NOT NULL);
                        CREATE TABLE tiles (
                            zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL,
                            tile_data BLOB NOT NULL);
                        """)
            }
        } catch {
            throw .io("\(url.path): cannot be created as an SQLite database (\(error))")
        }
    }

    func add(_ address: TileAddress, bytes: Data) throws(TileArchiveError) {
        pending.append((address, bytes))
        if pending.count >= 10_000 { try flush() }
    }

    func finish(metadata: TileArchiveMetadata) throws(TileArchiveError) {
        try flush()
        let center = metadata.center
        var rows: [(String, String)] = [
            ("name", metadata.name), ("description", metadata.description), ("format", "pbf"), ("type", "overlay"),
            ("version", "1.3"), ("minzoom", String(metadata.minimumZoom)), ("maxzoom", String(metadata.maximumZoom)),
            ("center", "\(center.longitude),\(center.latitude),\(center.zoom)"), ("generator", "mapcluster"),
            ("json", String(decoding: metadata.json, as: UTF8.self)),
        ]
        if let bounds = metadata.bounds {
            let box = TileArchiveMetadata.westToEast(bounds)
            rows.append(("bounds", box.map { String($0) }.joined(separator: ",")))
        }
        do {
            try database.write { db in
                for (name, value) in rows {
                    try db.execute(sql: "INSERT INTO metadata (name, value) VALUES (?, ?)", arguments: [name, value])
                }
                try db.execute(sql: "CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
            }
            try database.close()
        } catch {
            throw .io("\(url.path): \(error)")
        }
    }

    private func flush() throws(TileArchiveError) {
        let tiles = pending
        pending.removeAll(keepingCapacity: true)
        do {
            try database.write { db in
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)")
                for (address, bytes) in tiles {
                    try insert.execute(arguments: [address.z, address.x, MBTilesReader.row(of: address), bytes])
                }
            }
        } catch {
            throw .io("\(url.path): \(error)")
        }
    }
}

/// Reads the tiles of an MBTiles archive of vector tiles.
public final class MBTilesReader: TileArchive {
    private let database: DatabaseQueue
    /// What the archive says of its tiles.
    public let metadata: TileArchiveMetadata

    /// Opens the archive at `url`, read-only.
    ///
    /// - Throws: ``TileArchiveError`` if it can't be opened or has no `tiles` table of vector tiles.
    public init(url: URL) throws(TileArchiveError) {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            database = try DatabaseQueue(path: url.path, configuration: configuration)
            metadata = try database.read { db in
                var values: [String: String] = [:]
                // Each column cast to what is read from it: a hostile file's values may be of any type, and GRDB
                // traps on a value it can't convert.
                for row in try Row.fetchAll(db, sql: "SELECT CAST(name AS TEXT), CAST(value AS TEXT) FROM metadata") {
                    if let name: String = row[0], let value: String = row[1] { values[name] = value }
                }
                if let format = values["format"], format != "pbf" {
                    throw TileArchiveError.unsupported("\(url.path): tiles of format \(format), not vector tiles (pbf)")
                }
                let zooms = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT CAST(min(zoom_level) AS INTEGER) AS low, CAST(max(zoom_level) AS INTEGER) AS high FROM tiles"
                )
                let low = values["minzoom"].flatMap(Int.init) ?? zooms?["low"] ?? 0
                let high = values["maxzoom"].flatMap(Int.init) ?? zooms?["high"] ?? 0
                let bounds = values["bounds"].map { $0.split(separator: ",").compactMap { Double($0) } }
                return TileArchiveMetadata(
                    minimumZoom: low, maximumZoom: high, bounds: bounds?.count == 4 ? bounds : nil,
                    name: values["name"] ?? url.deletingPathExtension().lastPathComponent,
                    description: values["description"] ?? "",
                    layers: TileArchiveMetadata.layers(fromJSON: Data((values["json"] ?? "{}").utf8)))
            }
        } catch let error as TileArchiveError {
            throw error
        } catch {
            throw .unsupported("\(url.path): not an MBTiles archive (\(error))")
        }
    }

    /// The stored bytes of the tile at `address`, or `nil` if the archive has none there.
    public func tile(_ address: TileAddress) throws(TileArchiveError) -> Data? {
        do {
            return try database.read { db in
                try Data.fetchOne(
                    db,
                    sql:
                        "SELECT CAST(tile_data AS BLOB) FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                    arguments: [address.z, address.x, Self.row(of: address)])
            }
        } catch {
            throw .io("tile \(address): \(error)")
        }
    }

    /// The MBTiles row of a tile: rows count from the south.
    static func row(of address: TileAddress) -> Int { (1 << address.z) - 1 - address.y }
}
