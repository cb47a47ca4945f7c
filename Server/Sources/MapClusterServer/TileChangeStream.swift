@_spi(MapClusterServer) package import MapCluster
package import MapClusterLive
package import MapClusterTiles

/// Which vector tiles an edit changed, for the zooms and area a client follows: what `/api/tile-changes` streams, so
/// that a map fetches those tiles again and no other.
///
/// It is computed from the index's change: the grid keys the edits touched (where points were and are) give the tiles
/// that may have changed (each key's tile and its eight neighbours, whose buffers, and merges, reach into it), and of
/// those, the ones whose bytes differ between the two versions are named. No other tile is made.
package struct TileChangeStream: VersionStream {
    /// The zooms followed.
    package let zooms: [Int]
    /// The area followed, on the plane.
    package let area: MapRect
    /// The version the client was last told.
    package private(set) var version: Int
    /// The most tiles one event may name; past it, the client is told to fetch everything again (`resync`).
    package static let maximumTiles = 4_096

    /// The service the tiles of each version are made with (its options, its aggregates).
    private let base: ClusterService
    /// The tiles of the version the client was last told.
    private var previous: ClusterTiles

    /// The stream of the tiles of `zooms` within `area`, from `state` on.
    package init(zooms: [Int], area: MapRect, base: ClusterService, state: LiveIndex.State) {
        self.zooms = zooms
        self.area = area
        self.base = base
        version = state.version
        previous = ClusterService(base, points: state.points, index: state.index).tiles
    }

    /// What `state` changed, as an event: `tiles` with the version and the `z/x/y` of every tile followed whose
    /// content changed, `resync` when the changes can't be listed (too many, or the keys are unknown), or `nil` when
    /// no tile followed changed.
    package mutating func event(for state: LiveIndex.State, changedKeys keys: [UInt64]?) -> String? {
        let current = ClusterService(base, points: state.points, index: state.index).tiles
        defer {
            previous = current
            version = state.version
        }
        guard let keys, let changed = changedTiles(keys: keys, current: current) else {
            return "event: resync\ndata: {\"version\":\(state.version)}\n\n"
        }
        guard !changed.isEmpty else { return nil }
        let names = changed.map { "\"\($0)\"" }.joined(separator: ",")
        return "event: tiles\ndata: {\"version\":\(state.version),\"tiles\":[\(names)]}\n\n"
    }

    /// The tiles followed whose bytes differ between the last version told and `current`, in zoom, row and column
    /// order; `nil` when there are more candidates than ``maximumTiles``.
    func changedTiles(keys: [UInt64], current: ClusterTiles) -> [TileAddress]? {
        var candidates: Set<TileAddress> = []
        for zoom in zooms {
            let columns = 1 << zoom
            var seen: Set<GridCell> = []
            for key in keys {
                let cell = GridCell(holdingKey: key, level: zoom)
                guard seen.insert(cell).inserted else { continue }
                for dy in -1...1 {
                    for dx in -1...1 {
                        // Columns wrap around the antimeridian; rows end at the poles.
                        let x = (Int(cell.x) + dx + columns) % columns
                        guard let address = TileAddress(z: zoom, x: x, y: Int(cell.y) + dy), intersects(address)
                        else { continue }
                        candidates.insert(address)
                    }
                }
                if candidates.count > Self.maximumTiles { return nil }
            }
        }
        return candidates.filter { previous.tile($0) != current.tile($0) }.sorted {
            ($0.z, $0.y, $0.x) < ($1.z, $1.y, $1.x)
        }
    }

    /// Whether a tile lies in the area followed (an area across the antimeridian, whose east edge is past the world's,
    /// included).
    package func intersects(_ address: TileAddress) -> Bool {
        let tile = address.rect
        let width = MapSize.worldWidth
        return [-width, 0, width].contains { shift in
            tile.minX + shift < area.maxX && area.minX < tile.maxX + shift && tile.minY < area.maxY
                && area.minY < tile.maxY
        }
    }
}
