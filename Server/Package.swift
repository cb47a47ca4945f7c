// swift-tools-version: 6.3
import PackageDescription

// The application: the `mapcluster` tool (serve, tiles, cluster, render, bench), its HTTP server and web pages, vector
// tiles and archives, live data and its durable stores, the fuzz targets' code and the bundled sample data. It builds
// on the library of the package above (the engine, the manager and the file readers) and on the server packages that
// the library itself never needs.
//
// Serve the sample:  swift run --package-path Server mapcluster serve

// A path dependency is known by its folder's name, which a clone chooses.
let library = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "main"

func engine(_ name: String) -> Target.Dependency { .product(name: name, package: library) }

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "MapClusterServer",
    // Hummingbird 2 needs macOS 14.
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "mapcluster", targets: ["mapcluster"]),
        // The live index, for the thread-sanitized package (Tests/ThreadSanitizer).
        .library(name: "MapClusterLive", targets: ["MapClusterLive"]),
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
        // The library: the engine, the manager and the file readers.
        .package(path: ".."),
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
        // The bundled sample: the world's cities of 15,000 people or more, and the world outline of the pages and the
        // SVG renderer.
        .target(
            name: "MapClusterSampleData",
            resources: [.copy("Resources/world-cities-15000.csv"), .copy("Resources/world-110m.geojson")],
            swiftSettings: strictSettings),
        // Live points: the index that edits change while readers query it, the writer that commits edits to a store
        // before applying them, and the store's protocol (with one in memory). No dependency beyond the library, so
        // the thread-sanitized suite builds it.
        .target(
            name: "MapClusterLive",
            dependencies: [engine("MapCluster"), engine("MapClusterManager"), engine("MapClusterIO")],
            swiftSettings: strictSettings),
        // Durable stores of live points: SQLite through GRDB (one server), PostgreSQL through postgres-nio (several;
        // with the PostgreSQL trait).
        .target(
            name: "MapClusterStore",
            dependencies: [
                "MapClusterLive", engine("MapCluster"), engine("MapClusterIO"),
                .product(name: "GRDB", package: "GRDB.swift"),
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
                engine("MapCluster"), engine("MapClusterIO"), engine("MapClusterManager"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "CompressNIO", package: "compress-nio"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["vector_tile.proto"],
            swiftSettings: strictSettings
        ),
        // The HTTP API (cluster ids in URLs, JSON answers), vector tiles and the web pages: the tool's server.
        .target(
            name: "MapClusterServer",
            dependencies: [
                engine("MapCluster"),
                engine("MapClusterIO"),
                engine("MapClusterManager"),
                "MapClusterSampleData",
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
        // The command-line tool: serve, tiles, cluster, render (SVG), bench.
        .executableTarget(
            name: "mapcluster",
            dependencies: [
                engine("MapCluster"),
                engine("MapClusterIO"),
                engine("MapClusterManager"),
                "MapClusterSampleData",
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
            dependencies: [
                engine("MapCluster"), engine("MapClusterIO"), engine("MapClusterManager"), "MapClusterTiles",
            ],
            swiftSettings: strictSettings),
        // The library's seeded test data (Tests/MapClusterTestSupport links the library's folder).
        .target(
            name: "MapClusterTestSupport", dependencies: [engine("MapCluster")], path: "Tests/MapClusterTestSupport",
            swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterLiveTests",
            dependencies: [
                engine("MapCluster"), engine("MapClusterManager"), engine("MapClusterIO"), "MapClusterLive",
                "MapClusterTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "MapClusterServerTests",
            dependencies: [
                engine("MapCluster"),
                engine("MapClusterIO"),
                engine("MapClusterManager"),
                "MapClusterSampleData",
                "MapClusterServer",
                "MapClusterTiles",
                "MapClusterLive",
                "MapClusterStore",
                "MapClusterTestSupport",
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
            dependencies: [
                "mapcluster", engine("MapCluster"), engine("MapClusterIO"), "MapClusterSampleData",
                "MapClusterFuzzing", "MapClusterTestSupport",
            ],
            swiftSettings: strictSettings),
    ]
)
