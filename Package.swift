// swift-tools-version: 6.0
import PackageDescription

// The library an app adds: the clustering engine, the manager and display model that a map view drives, the readers of
// point files, and the MapKit and SwiftUI adapter. It depends on nothing but the toolchain. The server, tiles, live data,
// stores and the `mapcluster` tool are the application in Server/, a package of its own that depends on this one.

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "MapCluster",
    // The floors of the apps the iOS clustering libraries serve. What needs more says so: the SwiftUI `Map` parts and
    // ClusterMapModel (Observation) carry `@available` for iOS 17 and macOS 14. watchOS has no MKMapView: the engine and
    // the manager build there, the MKMapView adapter doesn't, and the SwiftUI parts do.
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .library(name: "MapCluster", targets: ["MapCluster"]),
        .library(name: "MapClusterManager", targets: ["MapClusterManager"]),
        .library(name: "MapClusterIO", targets: ["MapClusterIO"]),
        .library(name: "MapClusterMapKit", targets: ["MapClusterMapKit"]),
    ],
    targets: [
        // The engine: geometry, the aggregate index and grid clustering; clusters as plain values. The standard
        // library and Dispatch only: no actors, no Observation, no Foundation.
        .target(name: "MapCluster", swiftSettings: strictSettings),
        // What a map view drives: the ClusterManager (batches, diffs, latest wins, overlap and fan-out passes,
        // reveal) and the platform-neutral map-view controller and SwiftUI model.
        .target(name: "MapClusterManager", dependencies: ["MapCluster"], swiftSettings: strictSettings),
        // Points and clusters in files, on the engine and Foundation alone: CSV and GeoJSON readers, the GeoJSON writer
        // of clusters and points. No data ships with it: the sample data is the application's.
        .target(name: "MapClusterIO", dependencies: ["MapCluster"], swiftSettings: strictSettings),
        // The MapKit and SwiftUI adapter: thin, every file inside #if canImport(MapKit), so empty here on Linux, where
        // scripts/check-mapkit.sh compiles and drives it against the Apple SDK mirror of Tests/AppleSDKMirror. Its
        // decisions live in MapClusterManager's MapMarkerController, where Linux tests reach them. It re-exports the
        // engine and the manager: an app that drives a map imports this module alone.
        .target(
            name: "MapClusterMapKit", dependencies: ["MapCluster", "MapClusterManager"], swiftSettings: strictSettings),
        // Seeded test data shared by the test targets (and, linked, by the application's and the sanitized package's).
        .target(
            name: "MapClusterTestSupport", dependencies: ["MapCluster"], path: "Tests/MapClusterTestSupport",
            swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterTests", dependencies: ["MapCluster", "MapClusterTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterManagerTests", dependencies: ["MapCluster", "MapClusterManager", "MapClusterTestSupport"],
            swiftSettings: strictSettings),
        // The MapKit adapter on Apple's MapKit, in an iOS simulator (`xcodebuild test`); empty elsewhere. On Linux the
        // adapter's behaviour is tested against the SDK mirror (Tests/AppleSDKMirror, scripts/check-mapkit.sh).
        .testTarget(
            name: "MapClusterMapKitTests", dependencies: ["MapClusterMapKit"], swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterIOTests", dependencies: ["MapCluster", "MapClusterIO", "MapClusterTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings),
    ]
)
