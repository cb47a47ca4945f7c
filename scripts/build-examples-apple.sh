#!/usr/bin/env bash
# On a Mac with Xcode (the macOS job of .github/workflows/ci.yml): compiles the example apps and every Swift block of
# the README's iOS quick start, the MapKit guide and the migration guide (scripts/doc-swift-blocks.py), in Swift 6 language
# mode, against Apple's own SDKs and the package's modules: all for the iOS simulator, the SwiftUI example for macOS
# too. scripts/check-mapkit.sh does the same on Linux against the SDK mirror, on every CI run; this is the check
# against the real SDKs.
set -euo pipefail
cd "$(dirname "$0")/.."

work=.build/examples-apple
derived=$work/DerivedData
mkdir -p "$work"
mkdir -p "$work/blocks"
mapfile -t doc_blocks < <(python3 scripts/doc-swift-blocks.py "$work/blocks")

typecheck() {
    local platform=$1 target=$2 modules=$3
    shift 3
    echo "-- $platform: $*"
    xcrun --sdk "$platform" swiftc -typecheck -swift-version 6 -parse-as-library -target "$target" \
        -sdk "$(xcrun --sdk "$platform" --show-sdk-path)" -I "$modules" -F "$modules" "$@"
}

echo "== the iOS simulator: the library products, then the apps and the quick start against them"
for scheme in MapClusterIO MapClusterMapKit; do
    xcodebuild build -scheme "$scheme" -destination "generic/platform=iOS Simulator" -derivedDataPath "$derived" \
        -skipPackagePluginValidation CODE_SIGNING_ALLOWED=NO | tail -3
done
products=$derived/Build/Products/Debug-iphonesimulator
simulator=arm64-apple-ios17.0-simulator
typecheck iphonesimulator "$simulator" "$products" Examples/UIKitExample/*.swift
typecheck iphonesimulator "$simulator" "$products" Examples/SwiftUIExample/*.swift
for block in "${doc_blocks[@]}"; do
    read -r source file _ <<<"$block"
    echo "   (the Swift block at $source)"
    typecheck iphonesimulator "$simulator" "$products" "$work/blocks/$file"
done

echo "== macOS: the SwiftUI example against the package's macOS build"
swift build --target MapClusterMapKit
swift build --target MapClusterIO
typecheck macosx "$(uname -m)-apple-macos14.0" "$(swift build --show-bin-path)/Modules" Examples/SwiftUIExample/*.swift
