// swift-tools-version: 6.3
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "MapCluster",
    // Hummingbird 2 (the server) needs macOS 14; iOS 17 is what the SwiftUI `Map` API needs.
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "MapCluster", targets: ["MapCluster"]),
        .library(name: "MapClusterManager", targets: ["MapClusterManager"]),
        .library(name: "MapClusterIO", targets: ["MapClusterIO"]),
        .library(name: "MapClusterTiles", targets: ["MapClusterTiles"]),
        .library(name: "MapClusterLive", targets: ["MapClusterLive"]),
        .library(name: "MapClusterStore", targets: ["MapClusterStore"]),
        .library(name: "MapClusterMapKit", targets: ["MapClusterMapKit"]),
        .executable(name: "mapcluster", targets: ["mapcluster"]),
        // What the fuzz targets run on an input: for the libFuzzer executables of Fuzz/Package.swift, and the test
        // that replays what they found.
        .library(name: "MapClusterFuzzing", targets: ["MapClusterFuzzing"]),
    ],
    // Optional parts, off by default so that a first build compiles nothing the default server never uses.
    traits: [
        .trait(
            name: "PostgreSQL",
            description: """
                The PostgreSQL point store (`serve --store postgres://…`, `bench --workload live-1M-postgres`), \
                through postgres-nio, whose TLS brings two copies of BoringSSL: about two minutes of a first build.
                """)
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // Without Hummingbird's default traits: swift-configuration (ConfigurationSupport) and FullFoundation's form
        // dates serve nothing here.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        // Hummingbird's own: the server's request deadline is a channel handler.
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.25.0"),
        // Hummingbird's own: how the server stops, its change streams first.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // The server's /metrics: swift-metrics' counters in a Prometheus registry, written in Prometheus' text format.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // The engine: geometry, the aggregate index and grid clustering; clusters as plain values. The standard
        // library and Dispatch only: no actors, no Observation, no Foundation.
        .target(name: "MapCluster", swiftSettings: strictSettings),
        // What a map view drives: the ClusterManager (batches, diffs, latest wins, overlap and fan-out passes,
        // reveal) and the platform-neutral map-view controller and SwiftUI model.
        .target(name: "MapClusterManager", dependencies: ["MapCluster"], swiftSettings: strictSettings),
        // Points and clusters in files, on the engine alone: CSV and GeoJSON readers, the GeoJSON writer of clusters
        // and points, the bundled sample data set.
        .target(
            name: "MapClusterIO",
            dependencies: ["MapCluster"],
            resources: [.copy("Resources/world-cities-15000.csv"), .copy("Resources/world-110m.geojson")],
            swiftSettings: strictSettings
        ),
        // The MapKit and SwiftUI adapter: thin, every file inside #if canImport(MapKit), so empty here on Linux, where
        // scripts/check-mapkit.sh compiles and drives it against the Apple SDK mirror of Tests/AppleSDKMirror. Its
        // decisions live in MapClusterManager's MapMarkerController, where Linux tests reach them.
        .target(
            name: "MapClusterMapKit", dependencies: ["MapCluster", "MapClusterManager"], swiftSettings: strictSettings),
        // Live points: the index that edits change while readers query it, the writer that commits edits to a store
        // before applying them, and the store's protocol (with one in memory). No dependency, so the thread-sanitized
        // suite builds it.
        .target(
            name: "MapClusterLive", dependencies: ["MapCluster", "MapClusterManager", "MapClusterIO"],
            swiftSettings: strictSettings),
        // Durable stores of live points: SQLite through GRDB (one server), PostgreSQL through postgres-nio (several;
        // with the PostgreSQL trait).
        .target(
            name: "MapClusterStore",
            dependencies: [
                "MapClusterLive", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // Clusters as Mapbox Vector Tiles, live or written once to PMTiles and MBTiles archives (and read back). The
        // protobuf code is generated from vector_tile.proto once and committed (scripts/generate-protobuf.sh): builds
        // need the SwiftProtobuf library, never its plugin. MBTiles is SQLite, through GRDB.
        .target(
            name: "MapClusterTiles",
            dependencies: [
                "MapCluster", "MapClusterIO", .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "CompressNIO", package: "compress-nio"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["vector_tile.proto"],
            swiftSettings: strictSettings
        ),
        // The HTTP API (cluster ids in URLs, JSON answers), vector tiles and the web pages: the tool's server, `package`
        // access only, so not a product.
        .target(
            name: "MapClusterServer",
            dependencies: [
                "MapCluster",
                "MapClusterIO",
                "MapClusterManager",
                "MapClusterTiles",
                "MapClusterLive",
                "MapClusterStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            resources: [.copy("Resources/Public"), .copy("Resources/openapi.json")],
            swiftSettings: strictSettings
        ),
        // The command-line tool: serve, cluster, render (SVG), bench.
        .executableTarget(
            name: "mapcluster",
            dependencies: [
                "MapCluster",
                "MapClusterIO",
                "MapClusterManager",
                "MapClusterServer",
                "MapClusterTiles",
                "MapClusterLive",
                "MapClusterStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // What the fuzz targets do with an input (the libFuzzer executables of Fuzz/Package.swift, built by
        // scripts/fuzz.sh), shared with the test that replays the inputs they found.
        .target(
            name: "MapClusterFuzzing",
            dependencies: ["MapCluster", "MapClusterIO", "MapClusterManager", "MapClusterTiles"],
            swiftSettings: strictSettings),
        // Seeded test data shared by the test targets.
        .target(
            name: "MapClusterTestSupport", dependencies: ["MapCluster"], path: "Tests/MapClusterTestSupport",
            swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterTests", dependencies: ["MapCluster", "MapClusterTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterManagerTests", dependencies: ["MapCluster", "MapClusterManager", "MapClusterTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterLiveTests",
            dependencies: ["MapCluster", "MapClusterManager", "MapClusterIO", "MapClusterLive"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterIOTests",
            dependencies: ["MapCluster", "MapClusterIO", "MapClusterFuzzing"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MapClusterServerTests",
            dependencies: [
                "MapCluster",
                "MapClusterIO",
                "MapClusterServer",
                "MapClusterManager",
                "MapClusterTiles",
                "MapClusterLive",
                "MapClusterStore",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                // The router's tests build requests for its responder on a testing channel (RouterClient), not
                // through HummingbirdTesting, whose async-http-client brings swift-nio-ssl's BoringSSL.
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "mapclusterTests",
            dependencies: ["mapcluster", "MapCluster", "MapClusterIO", "MapClusterTestSupport"],
            swiftSettings: strictSettings),
    ]
)
