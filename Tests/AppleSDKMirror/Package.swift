// swift-tools-version: 6.3
import PackageDescription

// MapClusterMapKit, built and driven on Linux against a mirror of the Apple API it uses (scripts/check-mapkit.sh).
//
// Sources/ holds the mirror: Swift modules named CoreGraphics, QuartzCore, UIKit, AppKit, MapKit and SwiftUI, and a C
// module named CoreLocation, each with exactly the declarations that the adapter and the examples use, as Apple
// documents them, and where it matters to what a user sees, behaving as MapKit is documented to (views made lazily
// and reported by didAdd, collisions, region changes; each behaviour cites its page). This package builds the iOS
// side of it, SwiftUI included, without Objective-C interoperability (Linux has no Objective-C runtime), compiles the
// adapter's own files against it (Adapter/ is Sources/MapClusterMapKit, linked), and runs AdapterBehaviourTests,
// which drive MKMapViewAdapter and ClusterMapModel through it. The script also typechecks the adapter, the examples
// and the documentation's Swift blocks, unchanged, with Objective-C interoperability on, for iOS and for macOS.
//
// The adapter's module is MirroredMapKitAdapter here: a package graph can't hold two modules of one name.

// A path dependency is known by its folder's name, which a clone chooses.
let root = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "main"

func library(_ name: String) -> Target.Dependency { .product(name: name, package: root) }

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "AppleSDKMirror",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "../..")],
    targets: [
        .target(name: "CoreLocation"),
        .target(name: "CoreGraphics"),
        .target(name: "QuartzCore", dependencies: ["CoreGraphics"]),
        .target(name: "UIKit", dependencies: ["QuartzCore"]),
        .target(name: "MapKit", dependencies: ["CoreLocation", "UIKit"]),
        .target(name: "SwiftUI", dependencies: ["MapKit"]),
        .target(
            name: "MirroredMapKitAdapter",
            dependencies: [library("MapCluster"), library("MapClusterManager"), "MapKit", "SwiftUI"],
            path: "Adapter", exclude: ["Documentation.docc"],
            // The adapter builds without a warning, here as in the typecheck.
            swiftSettings: settings + [.unsafeFlags(["-warnings-as-errors"])]),
        .testTarget(
            name: "AdapterBehaviourTests",
            dependencies: [
                "MirroredMapKitAdapter", "MapKit", "SwiftUI", library("MapCluster"), library("MapClusterManager"),
                // The examples read their CSV with MapClusterIO: the typecheck copies its module with the engine's.
                library("MapClusterIO"),
            ],
            // Swift Testing's overlay for Apple's Core Graphics would load with the mirror's: not here.
            swiftSettings: settings + [.unsafeFlags(["-Xfrontend", "-disable-cross-import-overlays"])]),
    ]
)
