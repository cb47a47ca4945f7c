// swift-tools-version: 6.3
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "MapCluster",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "MapCluster", targets: ["MapCluster"]),
        .library(name: "MapClusterIO", targets: ["MapClusterIO"]),
        .executable(name: "mapcluster", targets: ["mapcluster"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0")
    ],
    targets: [
        // The core: geometry, the aggregate index and the clustering algorithms. No dependencies.
        .target(name: "MapCluster", swiftSettings: strictSettings),
        // Reading points from files; the bundled sample data set.
        .target(
            name: "MapClusterIO",
            dependencies: ["MapCluster"],
            resources: [.copy("Resources/world-cities-15000.csv")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "mapcluster",
            dependencies: [
                "MapCluster",
                "MapClusterIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "MapClusterTests", dependencies: ["MapCluster"], swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterIOTests",
            dependencies: ["MapCluster", "MapClusterIO"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "mapclusterTests", dependencies: ["mapcluster"], swiftSettings: strictSettings),
    ]
)
