/// What of a clustering's options shapes its clusters, carried by each ``Cluster`` it makes: a clustering with other
/// options refuses to answer for the cluster, and says which options differ.
///
/// The category filter is not part of it: a cluster's id carries its own, and the clustering asked about it takes that
/// one. Nor is the margin, which chooses cells but shapes none.
@usableFromInline
struct ClusteringStamp: Hashable, Sendable {
    /// The grid: ``ClusterOptions/zoomLevels`` with ``ClusterOptions/cellSize``, or with the sizes
    /// ``ClusterOptions/cellSizeForZoom`` gives at zooms 0 to 30, folded into 32 bits.
    let grid: UInt32
    let deepestZoom: Float
    let minCount: Int32
    let minUniqueLocations: Int32
    /// The location tolerance's grid level; -1 for exact coordinates.
    let locationLevel: Int8
    let position: UInt8
    /// Whether ``ClusterOptions/shouldCluster`` is set.
    let hasPredicate: Bool

    @usableFromInline
    init<Element>(_ options: ClusterOptions<Element>) {
        // FNV-1a over the grid's defining numbers.
        var hash: UInt32 = 2_166_136_261
        func mix(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) {
                hash = (hash ^ UInt32(truncatingIfNeeded: value >> UInt64(shift))) &* 16_777_619
            }
        }
        mix(options.zoomLevels == .whole ? 1 : 0)
        if options.cellSizeForZoom == nil {
            mix(options.cellSize.bitPattern)
        } else {
            for zoom in 0...30 { mix(options.cellSize(forZoom: Double(zoom)).bitPattern) }
        }
        grid = hash
        deepestZoom = Float(options.deepestClusteringZoom)
        minCount = Int32(clamping: options.minCountForClustering)
        minUniqueLocations = Int32(clamping: options.minUniqueLocationsForClustering)
        locationLevel = Int8(options.locationLevel ?? -1)
        position = options.position.stampTag
        hasPredicate = options.shouldCluster != nil
    }

    /// The options in which `other` (a cluster's) differs from this one (a clustering's), as phrases; empty if none.
    func differences(from other: ClusteringStamp) -> [String] {
        func phrase<Value: Equatable>(_ name: String, _ mine: Value, _ theirs: Value, _ text: (Value) -> String)
            -> String?
        {
            mine == theirs ? nil : "\(name) is \(text(mine)) here, \(text(theirs)) where the cluster was made"
        }
        func level(_ level: Int8) -> String { level < 0 ? ".exact" : ".gridLevel(\(level))" }
        func zoom(_ zoom: Float) -> String { zoom.isFinite ? "\(zoom)" : "unlimited" }
        return [
            grid == other.grid ? nil : "the grid (cellSize, cellSizeForZoom or zoomLevels) differs",
            phrase("the deepest clustering zoom (maxZoomLevelForClustering)", deepestZoom, other.deepestZoom, zoom),
            phrase("minCountForClustering", minCount, other.minCount) { "\($0)" },
            phrase("minUniqueLocationsForClustering", minUniqueLocations, other.minUniqueLocations) { "\($0)" },
            phrase("locationTolerance", locationLevel, other.locationLevel, level),
            phrase("position", position, other.position) { ClusterPosition<Int>.stampName($0) },
            phrase("shouldCluster", hasPredicate, other.hasPredicate) { $0 ? "set" : "nil" },
        ].compactMap { $0 }
    }
}

extension ClusterPosition {
    /// The case, as a cluster's stamp keeps it.
    @usableFromInline var stampTag: UInt8 {
        switch self {
        case .centerOfMass: 0
        case .weightedCenterOfMass: 1
        case .cellCenter: 2
        case .firstMember: 3
        case .firstInZOrder: 4
        case .nearestToCellCenter: 5
        case .custom: 6
        }
    }

    static func stampName(_ tag: UInt8) -> String {
        [
            ".centerOfMass", ".weightedCenterOfMass", ".cellCenter", ".firstMember", ".firstInZOrder",
            ".nearestToCellCenter", ".custom",
        ][Int(tag)]
    }
}

/// A cluster asked of a clustering whose options differ from those of the clustering that made it: its members,
/// bounds, children and expansion zoom on this clustering's grid would not be the ones the map showed, so none are
/// answered.
///
///     let coarse = try Clustering(index, options: options)      // cellSize 128
///     let cluster = coarse.clusters(in: viewport)[0]
///     try Clustering(index).children(of: cluster)                 // throws: the grid differs
public struct ClusteringMismatch: Error, Hashable, Sendable, CustomStringConvertible {
    /// The cluster's id, as text.
    public let cluster: String
    /// Each option that differs, as a phrase: "minCountForClustering is 3 here, 2 where the cluster was made".
    public let differences: [String]

    /// The cluster, and what differs.
    public var description: String {
        "cluster \(cluster) was made by a clustering with other options: \(differences.joined(separator: "; "))"
    }
}
