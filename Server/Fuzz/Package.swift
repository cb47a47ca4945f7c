// swift-tools-version: 6.3
import PackageDescription

// The libFuzzer executables, fuzz-csv, fuzz-geojson, fuzz-edit, fuzz-query, fuzz-pmtiles, fuzz-mbtiles and
// fuzz-tile: a package of their own beside the library's, so that the library's manifest stays one shape. Each runs one
// of MapClusterFuzzing's targets on an input; built by scripts/fuzz.sh with the fuzzer's coverage and the address
// sanitizer, which need nothing the server does beyond the tiles' readers and encoder.

// A path dependency is known by its folder's name, which a clone chooses.
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "main"

let package = Package(
    name: "MapClusterFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "..")],
    targets: ["csv", "geojson", "edit", "query", "pmtiles", "mbtiles", "tile"].map { (name: String) -> Target in
        .executableTarget(
            name: "fuzz-" + name, dependencies: [.product(name: "MapClusterFuzzing", package: root)], path: name,
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                // libFuzzer brings main; the entry is LLVMFuzzerTestOneInput.
                .unsafeFlags(["-parse-as-library"]),
            ])
    }
)
