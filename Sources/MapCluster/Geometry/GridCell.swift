/// One cell of the world-aligned grid: at `level` *k* the world is divided into 2^*k* × 2^*k* square
/// cells, numbered from the north-west corner.
///
/// A cell at level *k* is exactly four cells at *k* + 1.
///
/// Cells never move when the map pans, including across the antimeridian, so a cell is a stable identity for the
/// cluster drawn in it.
public struct GridCell: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The deepest level: cells of one unit of the index's 32-bit position grid (1/16 of a plane unit,
    /// about 9 mm at the equator).
    public static let maxLevel = 32

    /// The subdivision: 2^level cells across the world.
    public let level: Int
    /// Its Morton code at its level: the prefix of its keys, the column's bits at even positions and the row's at odd
    /// ones.
    ///
    /// Stored rather than the column and row: the clustering pass makes cells from codes, and asks them for their
    /// keys, a few times for each cell of a view; the column and row are read far less often (a cell's text, its
    /// rectangle).
    let code: UInt64

    /// The column, 0 at the antimeridian, growing east.
    public var x: UInt32 { MortonKey.compact(code) }
    /// The row, 0 at the plane's north edge, growing south.
    public var y: UInt32 { MortonKey.compact(code >> 1) }

    /// Makes a cell; `x` and `y` must be below 2^`level`.
    public init(level: Int, x: UInt32, y: UInt32) {
        precondition((0...GridCell.maxLevel).contains(level), "a grid level is in 0...32")
        precondition(level == 32 || (x >> level == 0 && y >> level == 0), "cell (\(x), \(y)) is outside level \(level)")
        self.init(level: level, code: MortonKey.interleave(x: x, y: y))
    }

    /// The cell at `level` that contains a point of the world.
    public init(containing point: MapPoint, level: Int) {
        let q = GridPosition(point)
        self.init(level: level, x: q.x.shifted(toLevel: level), y: q.y.shifted(toLevel: level))
    }

    /// The cell at `level` that holds a grid key (``Coordinate/gridKey``): where a live index's changes are.
    @_spi(MapClusterServer) public init(holdingKey key: UInt64, level: Int) {
        precondition((0...GridCell.maxLevel).contains(level), "a grid level is in 0...32")
        self.init(level: level, code: MortonKey.cellCode(key, level: level))
    }

    /// The cell whose Morton code (the prefix of its keys) at `level` is `code`.
    ///
    /// A code at a level is a valid cell by construction, so this is not checked again: the clustering pass makes one
    /// cell a cluster with it.
    init(level: Int, code: UInt64) {
        assert((0...GridCell.maxLevel).contains(level) && (level == 32 || code >> (2 * level) == 0))
        self.level = level
        self.code = code
    }

    /// The smallest cell holding both keys, and so every key between them.
    static func smallest(holding first: UInt64, _ last: UInt64) -> GridCell {
        let level = min((first ^ last).leadingZeroBitCount / 2, maxLevel)
        return GridCell(level: level, code: MortonKey.cellCode(first, level: level))
    }

    /// The cell's area on the plane.
    public var rect: MapRect {
        let side = MapSize.worldWidth / Double(UInt64(1) << level)
        return MapRect(
            origin: MapPoint(x: Double(x) * side, y: Double(y) * side), size: MapSize(width: side, height: side))
    }

    /// The cell one level up that contains this one, or `nil` at level 0.
    public var parent: GridCell? {
        level == 0 ? nil : GridCell(level: level - 1, code: code >> 2)
    }

    /// The four cells one level down, in Z order (north-west, north-east, south-west, south-east).
    public var children: [GridCell] {
        precondition(level < GridCell.maxLevel, "cells at level 32 have no children")
        return (0..<4).map { GridCell(level: level + 1, code: code << 2 | UInt64($0)) }
    }

    /// The cell's ancestor (or itself) at a level no deeper than its own.
    public func ancestor(atLevel ancestorLevel: Int) -> GridCell {
        precondition(ancestorLevel <= level && ancestorLevel >= 0, "an ancestor is at a level no deeper than the cell")
        return GridCell(level: ancestorLevel, code: code >> UInt64(2 * (level - ancestorLevel)))
    }

    /// The range of Morton keys of the positions inside the cell: every aligned cell is one range.
    package var keyRange: ClosedRange<UInt64> {
        // Swift's shifts by 64 give 0: level 0 spans every key, level 32 one.
        let low = code << (64 - 2 * level)
        return low...(low | (UInt64.max >> (2 * level)))
    }

    /// Orders cells by level, then along the Z-order curve within a level.
    public static func < (lhs: GridCell, rhs: GridCell) -> Bool {
        (lhs.level, lhs.keyRange.lowerBound) < (rhs.level, rhs.keyRange.lowerBound)
    }

    /// The level, column and row, as in `12/2200/1343` (the order of a web map tile path).
    public var description: String { "\(level)/\(x)/\(y)" }
}

/// A position on the index's grid: the plane divided into 2^32 × 2^32 units (16 per plane unit).
@usableFromInline
struct GridPosition: Hashable {
    var x: UInt32
    var y: UInt32

    init(x: UInt32, y: UInt32) {
        self.x = x
        self.y = y
    }

    /// Quantizes a point of the world; x is wrapped onto the world, y clamped to it.
    @usableFromInline
    init(_ point: MapPoint) {
        let scale = 16.0
        let width = MapSize.worldWidth
        var px = point.x.truncatingRemainder(dividingBy: width)
        if px < 0 { px += width }
        let limit = Double(UInt32.max)
        x = UInt32(min(max(px * scale, 0), limit))
        y = UInt32(min(max(point.y * scale, 0), limit))
    }

    /// The grid position of a coordinate: the same as quantizing its `mapPoint` (both scale
    /// ``WebMercator/unitPoint(_:)`` by a power of two, which is exact), without the general wrapping
    /// of arbitrary plane points.
    ///
    /// This is the bulk load's inner loop.
    @usableFromInline
    init(_ coordinate: Coordinate) {
        let scale = 4_294_967_296.0  // 2^32 grid units across the world
        let (ux, uy) = WebMercator.unitPoint(coordinate)
        // Converting a non-negative value truncates, which is rounding down: no libm call.
        let limit = scale - 1
        x = UInt32(min(ux * scale, limit))
        y = UInt32(min(uy * scale, limit))
    }

    init(key: UInt64) {
        x = MortonKey.compact(key)
        y = MortonKey.compact(key >> 1)
    }

    @usableFromInline var key: UInt64 { MortonKey.interleave(x: x, y: y) }

    /// The rectangle of the plane from this grid unit to `far` (south-east of it), both included: the bounds of any
    /// positions between them.
    func rect(through far: GridPosition) -> MapRect {
        MapRect(
            minX: Double(x) / 16, minY: Double(y) / 16, maxX: (Double(far.x) + 1) / 16, maxY: (Double(far.y) + 1) / 16)
    }
}

extension UInt32 {
    /// The column or row of the level-`level` cell that holds this 32-bit grid position.
    @inline(__always) func shifted(toLevel level: Int) -> UInt32 {
        level == 0 ? 0 : self >> (32 - level)
    }
}

/// The Z-order (Morton) curve over the 32-bit grid: x bits at even positions, y bits at odd ones.
///
/// Every aligned grid cell is then one contiguous range of keys, the cell's bits being the key's prefix.
enum MortonKey {
    @inline(__always) static func interleave(x: UInt32, y: UInt32) -> UInt64 {
        spread(x) | spread(y) << 1
    }

    @inline(__always) static func spread(_ value: UInt32) -> UInt64 {
        var v = UInt64(value)
        v = (v | v << 16) & 0x0000_FFFF_0000_FFFF
        v = (v | v << 8) & 0x00FF_00FF_00FF_00FF
        v = (v | v << 4) & 0x0F0F_0F0F_0F0F_0F0F
        v = (v | v << 2) & 0x3333_3333_3333_3333
        v = (v | v << 1) & 0x5555_5555_5555_5555
        return v
    }

    @inline(__always) static func compact(_ key: UInt64) -> UInt32 {
        var v = key & 0x5555_5555_5555_5555
        v = (v | v >> 1) & 0x3333_3333_3333_3333
        v = (v | v >> 2) & 0x0F0F_0F0F_0F0F_0F0F
        v = (v | v >> 4) & 0x00FF_00FF_00FF_00FF
        v = (v | v >> 8) & 0x0000_FFFF_0000_FFFF
        v = (v | v >> 16) & 0x0000_0000_FFFF_FFFF
        return UInt32(truncatingIfNeeded: v)
    }

    /// The level-`level` cell prefix of a key.
    @inline(__always) static func cellCode(_ key: UInt64, level: Int) -> UInt64 {
        level == 0 ? 0 : key >> UInt64(64 - 2 * level)
    }
}

extension Coordinate {
    /// The Morton key of the coordinate's position on the index's grid: where the index keeps it.
    @_spi(MapClusterServer) public var gridKey: UInt64 { GridPosition(self).key }
}
