// swift-tools-version: 6.0
// The README's quick start for the Swift library on Linux (or macOS): an executable that depends on MapCluster alone.
// An app of its own names the repository's URL instead of the path: .package(url: "…/MapCluster.git", branch: "main").
import PackageDescription

let package = Package(
    name: "HelloClusters",
    dependencies: [.package(name: "MapCluster", path: "../..")],
    targets: [
        .executableTarget(name: "HelloClusters", dependencies: [.product(name: "MapCluster", package: "MapCluster")])
    ]
)
