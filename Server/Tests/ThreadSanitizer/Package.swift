// swift-tools-version: 6.3
import PackageDescription

// The tests that run on several threads, built with the thread sanitizer by .ci/run: the engine's, the manager's and
// the live index's suites (their folders, linked here) over the library's engine, manager, IO and live targets,
// without the server's dependencies, which a sanitized build of the library's own package would compile again.

// Path dependencies are known by their folders' names, which a clone chooses: the library's (three folders up) and the
// application's (two up, Server).
let folders = Context.packageDirectory.split(separator: "/").map(String.init)
let root = folders.dropLast(3).last ?? "main"
let application = folders.dropLast(2).last ?? "Server"

func library(_ name: String) -> Target.Dependency { .product(name: name, package: root) }

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "MapClusterThreadSanitizer",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "../../.."), .package(path: "../..")],
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
                library("MapCluster"), library("MapClusterManager"), library("MapClusterIO"),
                .product(name: "MapClusterLive", package: application), "MapClusterTestSupport",
            ],
            path: "LiveTests", swiftSettings: settings),
    ]
)
