// swift-tools-version: 6.0
import PackageDescription

// MapCluster's side of the peer benchmark (../run-all.sh): the library of this repository, by path, timed on the same
// seeded points and bounding boxes as supercluster and pysupercluster.

// A path dependency is known by its folder's name, which a clone chooses.
let library = Context.packageDirectory.split(separator: "/").dropLast(3).last.map(String.init) ?? "main"

let package = Package(
    name: "MapClusterPeers",
    platforms: [.macOS(.v12)],
    dependencies: [.package(path: "../../..")],
    targets: [
        .executableTarget(
            name: "mapcluster-peers",
            dependencies: [.product(name: "MapCluster", package: library), "HeapInUse"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]),
        // The C heap's bytes in use (glibc's mallinfo2), which Swift's Glibc module doesn't export.
        .target(name: "HeapInUse"),
    ]
)
