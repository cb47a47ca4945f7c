#!/usr/bin/env bash
# The MapKit adapter meets a compiler on Linux, against a mirror of the Apple API it uses (Tests/AppleSDKMirror: each
# declaration as Apple documents it, with its page's URL):
#   0. checks that every public declaration of the mirror names its Apple documentation page (check-urls.py);
#   1. builds the mirror package: the engine, the manager and IO, the mirror's iOS modules, the adapter's own files
#      against them (without Objective-C interoperability, which needs a runtime Linux lacks), and the behaviour tests;
#   2. typechecks, with Objective-C interoperability on, in Swift 6 language mode (complete concurrency checking) and
#      with warnings as errors, every file of Sources/MapClusterMapKit unchanged, then the example apps and every
#      Swift block of the README's iOS quick start, the MapKit guide and the migration guide (scripts/doc-swift-blocks.py),
#      each block an app target of its own, against that adapter: once for iOS (canImport(UIKit)) and once for macOS
#      (canImport(AppKit)) where the block doesn't import UIKit;
#   3. runs the behaviour tests, which drive MKMapViewAdapter through the mirror's MKMapView (which makes views
#      lazily, hides colliding views below .required, and records what a test asks about), names each test that
#      ran, and fails if fewer than 24 of them drive the adapter;
#   4. checks that every .swift file under Sources/MapClusterMapKit and Examples/ was compiled;
#   5. checks, from every compile's index, that no use of a declaration above the package's floors (iOS 15, macOS 12, …)
#      goes unguarded (scripts/check-availability.py), and that mutated copies of a library and an adapter file fail it.
#   The iOS compile of the adapter also writes its symbol graph, for scripts/docs.sh.
# Each compile names its files. Needs the Swift toolchain and python3; .ci/run runs it, and a failure fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."

mirror=Tests/AppleSDKMirror
scratch=${MAPCLUSTER_MIRROR_SCRATCH:-.build-mirror}
work=$scratch/typecheck
rm -rf "$work"
mkdir -p "$work/engine"

# Which example app builds for which platform: a folder of Examples/ not listed here fails the check below.
declare -A example_platforms=([UIKitExample]="ios" [SwiftUIExample]="ios macos")

echo "== every declaration of the mirror with its documentation URL"
python3 "$mirror/check-urls.py"

echo "== the mirror package: the engine, the mirror's iOS modules, the adapter against them, its behaviour tests"
# With the compiler's index of every file (read by scripts/check-availability.py at the end).
swift build --build-tests --package-path "$mirror" --scratch-path "$scratch" --enable-index-store
bin=$(swift build --package-path "$mirror" --scratch-path "$scratch" --show-bin-path)
# The engine's modules, alone: the package's own mirror modules (built without Objective-C) must not be found.
for module in MapCluster MapClusterManager MapClusterIO; do cp "$bin/Modules/$module.swiftmodule" "$work/engine/"; done

# What the files of the adapter and of a user's app are compiled with, beside the mirror.
common=(-swift-version 6 -Xfrontend -enable-objc-interop -warnings-as-errors -parse-as-library -wmo
    -I "$mirror/Sources/CoreLocation/include" -I "$work/engine")
adapter_features=(-enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault
    -enable-upcoming-feature MemberImportVisibility)

compiled=()
# Typechecks files, bodies and all, into a module's interface, naming each file. (Code generation with Objective-C
# interoperability needs the Objective-C runtime's standard library; the package build of step 1 generates the
# adapter's code, with the compiler's flow analyses and warnings as errors, for iOS.)
compile() {
    local platform=$1 module=$2
    shift 2
    local dir=$work/$platform
    echo "-- $platform: $module"
    printf '   %s\n' "$@"
    local files=() flags=()
    for argument in "$@"; do
        if [[ $argument == *.swift ]]; then files+=("$argument"); else flags+=("$argument"); fi
    done
    swiftc "${common[@]}" -I "$dir" -module-name "$module" -package-name AppleSDKMirror \
        -emit-module -emit-module-path "$dir/$module.swiftmodule" "$@"
    # Each file's index (what it references, where) for scripts/check-availability.py: a compile of several files
    # into a module alone writes no index, so each file is indexed with the others beside it.
    local index_flags=() skip=0
    for flag in "${flags[@]}"; do
        if [ "$skip" = 1 ]; then skip=0; continue; fi
        case $flag in
        -emit-symbol-graph) ;;
        -emit-symbol-graph-dir) skip=1 ;;
        *) index_flags+=("$flag") ;;
        esac
    done
    mkdir -p "$dir/index-units"
    for file in "${files[@]}"; do
        swiftc "${common[@]}" -I "$dir" -module-name "$module" -package-name AppleSDKMirror "${index_flags[@]}" \
            -index-file -index-file-path "$file" -index-store-path "$work/index" \
            -o "$dir/index-units/$module-$(basename "$file").indexData" "${files[@]}"
    done
}

# The documentation's Swift blocks, each a file of its own: "SOURCE:LINE FILE PLATFORMS" per block.
mkdir -p "$work/blocks"
mapfile -t doc_blocks < <(python3 scripts/doc-swift-blocks.py "$work/blocks")
printf '%s\n' "${doc_blocks[@]}" >"$work/blocks.txt"

for platform in ios macos; do
    echo "== typecheck for $platform, with Objective-C interoperability, Swift 6"
    mkdir -p "$work/$platform"
    ui=UIKit
    [ "$platform" = macos ] && ui=AppKit
    compile "$platform" ObjectiveC "$mirror/Sources/ObjectiveC/"*.swift
    compile "$platform" CoreGraphics "$mirror/Sources/CoreGraphics/"*.swift
    compile "$platform" QuartzCore "$mirror/Sources/QuartzCore/"*.swift
    compile "$platform" "$ui" "$mirror/Sources/$ui/"*.swift
    compile "$platform" MapKit "$mirror/Sources/MapKit/"*.swift
    compile "$platform" SwiftUI "$mirror/Sources/SwiftUI/"*.swift

    mapfile -t adapter < <(find Sources/MapClusterMapKit -name '*.swift' | sort)
    # The adapter's symbol graph (iOS's) is what scripts/docs.sh builds its DocC catalog from.
    symbols=()
    [ "$platform" = ios ] && mkdir -p "$work/symbolgraph" && symbols=(-emit-symbol-graph -emit-symbol-graph-dir "$work/symbolgraph")
    compile "$platform" MapClusterMapKit "${adapter_features[@]}" "${symbols[@]}" "${adapter[@]}"
    compiled+=("${adapter[@]}")
    # What MapKit needs of the adapter beyond its types: the properties it observes are Objective-C's.
    compile "$platform" AdapterChecks "$mirror/Checks/"*.swift

    examples=()
    for app in "${!example_platforms[@]}"; do
        [[ " ${example_platforms[$app]} " == *" $platform "* ]] || continue
        mapfile -t -O "${#examples[@]}" examples < <(find "Examples/$app" -name '*.swift' | sort)
    done
    compile "$platform" Examples "${examples[@]}"
    compiled+=("${examples[@]}")
    # Each block an app target of its own, as a migrating app's code would be.
    for block in "${doc_blocks[@]}"; do
        read -r source file platforms <<<"$block"
        [[ " $platforms " == *" $platform "* ]] || continue
        echo "   (the Swift block at $source)"
        compile "$platform" "${file%.swift}" "$work/blocks/$file"
    done
done

echo "== the adapter's behaviour through the mirror"
swift test --skip-build --package-path "$mirror" --scratch-path "$scratch" 2>&1 | tee "$work/behaviour.log"
echo "== the behaviour tests that ran"
# Swift Testing's line for each test that passed: "✔ Test name() passed after …".
mapfile -t passed < <(sed -n 's/^.*✔ Test \([A-Za-z0-9_]*()\) passed.*$/\1/p' "$work/behaviour.log" | sort)
printf '   %s\n' "${passed[@]}"
mapfile -t mirror_only < <(grep -ho '@Test func [A-Za-z0-9_]*' "$mirror/Tests/AdapterBehaviourTests/MirrorBehaviourTests.swift" |
    sed 's/@Test func //; s/$/()/' | sort)
adapter_tests=$(comm -23 <(printf '%s\n' "${passed[@]}") <(printf '%s\n' "${mirror_only[@]}") | wc -l)
echo "${#passed[@]} tests passed, $adapter_tests of them driving the adapter"
if [ "$adapter_tests" -lt 24 ]; then
    echo "fewer than 24 behaviour tests of the adapter ran" >&2
    exit 1
fi
echo "== the documentation's Swift blocks, each compiled"
printf '   %s\n' "${doc_blocks[@]}"

echo "== every file compiled"
# Examples/HelloClusters is a package of its own, for Linux: scripts/check-readme.py runs it.
mapfile -t expected < <(find Sources/MapClusterMapKit Examples -name '*.swift' -not -path 'Examples/HelloClusters/*' | sort)
mapfile -t seen < <(printf '%s\n' "${compiled[@]}" | sort -u)
missing=$(comm -23 <(printf '%s\n' "${expected[@]}") <(printf '%s\n' "${seen[@]}"))
if [ -n "$missing" ]; then
    echo "not compiled (an example folder must be listed in example_platforms):" >&2
    echo "$missing" >&2
    exit 1
fi
echo "${#expected[@]} files, each compiled for at least one platform:"
printf '   %s\n' "${expected[@]}"

echo "== availability at the package's floors (scripts/check-availability.py): every use above them guarded"
# The index of every compile above: the library's (the package build), the adapter's, the examples' and the blocks'.
store=$(find "$scratch" -path '*/debug/index/store' -type d | head -1)
platform_args=()
for app in "${!example_platforms[@]}"; do
    platform_args+=(--platforms "Examples/$app=${example_platforms[$app]// /,}")
done
python3 scripts/check-availability.py --store "$work/index" --store "$store" --blocks "$work/blocks.txt" \
    "${platform_args[@]}"
echo "== the availability check, on mutated copies of a library file and an adapter file"
python3 scripts/check-availability.py --self-test --store "$work/index" --modules "$work/engine" \
    --mirror-modules "$work/ios"
