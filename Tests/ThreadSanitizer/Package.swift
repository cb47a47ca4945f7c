// swift-tools-version: 6.3
import PackageDescription

// The tests that run on several threads, built with the thread sanitizer by .ci/run: the engine's, the manager's and
// the live index's suites (their folders, linked here) over the library's engine, manager, IO and live targets,
// without the server's dependencies, which a sanitized build of the library's own package would compile again.

// A path dependency is known by its folder's name, which a clone chooses.
let root = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "main"

func library(_ name: String) -> Target.Dependency { .product(name: name, package: root) }

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "MapClusterThreadSanitizer",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "../..")],
    targets: [
        .target(
            name: "MapClusterTestSupport", dependencies: [library("MapCluster")], path: "Support",
            swiftSettings: settings),
        .testTarget(
            name: "SanitizedEngineTests", dependencies: [library("MapCluster"), "MapClusterTestSupport"],
            path: "EngineTests", swiftSettings: settings),
        .testTarget(
            name: "SanitizedManagerTests",
            dependencies: [library("MapCluster"), library("MapClusterManager"), "MapClusterTestSupport"],
            path: "ManagerTests", swiftSettings: settings),
        .testTarget(
            name: "SanitizedLiveTests",
            dependencies: [
                library("MapCluster"), library("MapClusterManager"), library("MapClusterIO"), library("MapClusterLive"),
            ],
            path: "LiveTests", swiftSettings: settings),
    ]
)
