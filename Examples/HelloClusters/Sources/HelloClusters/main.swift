import MapCluster

// Points: any Hashable id, with a coordinate the engine has checked. Here a grid of 10,000 places around Paris.
var places: [(Int, Coordinate)] = []
for row in 0..<100 {
    for column in 0..<100 {
        let coordinate = try Coordinate(latitude: 48.3 + Double(row) * 0.01, longitude: 1.8 + Double(column) * 0.01)
        places.append((row * 100 + column, coordinate))
    }
}
var index = ClusterIndex(places)

// What a 1024 × 768 map centred on Paris at zoom 8 draws: one marker per cluster or lone place.
let clustering = Clustering(index)
let paris = try Coordinate(latitude: 48.8566, longitude: 2.3522)
let viewport = Viewport(center: paris, zoom: 8, size: ViewSize(width: 1024, height: 768))
let clusters = clustering.clusters(in: viewport)
print("\(index.count) places, \(clusters.count) markers at zoom 8")
for cluster in clusters.sorted(by: { $0.count > $1.count }).prefix(3) {
    // Where a click should zoom to: the zoom at which the cluster splits (nil for places on one spot).
    let splits = try clustering.expansionZoom(of: cluster).map { "splits at zoom \(($0 * 10).rounded() / 10)" }
    print("\(cluster.count) places around \(cluster.coordinate), \(splits ?? "never splits")")
}

// The index changes in O(log n): a place moves away from the others, and the clusters follow.
index.move(0, to: try Coordinate(latitude: 47.9, longitude: 3.6))
print(Clustering(index).clusters(in: viewport).count, "markers once place 0 has moved away")
