#!/usr/bin/env bash
# An app's package whose only dependency is this repository, by path, asking for the library products an iOS app
# adds: it must resolve no other package, and build with `import MapClusterMapKit` alone giving it the engine's and the
# manager's types. Also checks the root manifest's tools version and floors. .ci/run runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

tools=$(head -1 Package.swift | sed -n 's#^// swift-tools-version: *\([0-9.]*\)$#\1#p')
if [ -z "$tools" ] || [ "$(printf '%s\n6.0\n' "$tools" | sort -V | tail -1)" != "6.0" ]; then
    echo "the library's swift-tools-version is '$tools': Xcode 16 needs 6.0 or lower" >&2
    exit 1
fi
if ! grep -q '\.iOS(\.v1[3-5])' Package.swift; then
    echo "the library's manifest must declare iOS 15 or lower" >&2
    exit 1
fi

app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
mkdir -p "$app/Sources/App"
cat >"$app/Package.swift" <<MANIFEST
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "App",
    platforms: [.iOS(.v15), .macOS(.v12)],
    dependencies: [.package(path: "$root")],
    targets: [
        .executableTarget(
            name: "App",
            dependencies: [
                .product(name: "MapCluster", package: "$(basename "$root")"),
                .product(name: "MapClusterManager", package: "$(basename "$root")"),
                .product(name: "MapClusterMapKit", package: "$(basename "$root")"),
            ])
    ]
)
MANIFEST
# What an app writes: one import, and the engine's, the manager's and the options' types through it.
cat >"$app/Sources/App/main.swift" <<'SWIFT'
import MapClusterMapKit

var options = ClusterManagerOptions<Int>()
options.clustering.cellSize = 64
let index = ClusterIndex((0..<1_000).map { ($0, try! Coordinate(latitude: Double($0 % 80), longitude: Double($0 % 170))) })
let viewport = Viewport(rect: .world, size: ViewSize(showing: .world, atZoom: 2))
let clustering = try! Clustering(index, options: options.clustering)
print(clustering.clusters(in: viewport).reduce(0) { $0 + $1.count })
SWIFT

swift package --package-path "$app" resolve
checkouts=$(find "$app/.build/checkouts" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
if [ "$checkouts" != 0 ]; then
    echo "the app's package checked out $checkouts other packages:" >&2
    ls "$app/.build/checkouts" >&2
    exit 1
fi
count=$(swift run --package-path "$app" App)
if [ "$count" != 1000 ]; then
    echo "the app counted $count points in the world's clusters, not 1000" >&2
    exit 1
fi
echo "an app with this repository as its only dependency resolves no other package, and clusters through one import"
