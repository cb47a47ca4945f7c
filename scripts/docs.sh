#!/usr/bin/env bash
# Builds every DocC catalog of both packages with the toolchain's own `docc`, from the symbol graphs of their builds
# (swift symbolgraph-extract), so that neither package depends on a documentation plugin. A warning fails it: a missing
# symbol, a broken link, an article no landing page reaches, and (checked after docc, which would curate it silently) a
# public type, protocol or top-level function left out of its module's Topics.
#   - the library's modules: their public declarations, from its debug build;
#   - the application's: its `package` declarations (no app imports them; they are the server's parts), with the
#     PostgreSQL trait, so that the PostgreSQL store is documented too (the trait's first build compiles postgres-nio's
#     BoringSSLs, about two minutes);
#   - MapClusterMapKit, which builds empty off Apple's platforms: the symbol graph of its iOS compile against the Apple
#     SDK mirror (scripts/check-mapkit.sh, run first when that graph is missing or older than the adapter's files).
# Then it checks itself: three broken copies of one catalog (a link to nothing, a type left out of Topics, an article
# no page lists) must each fail it.
# Usage: scripts/docs.sh [OUTDIR]   (default .build-docs; each module's archive in OUTDIR/MODULE.doccarchive, which
# `docc preview` or any static file server shows). Needs the Swift toolchain and python3; .ci/run runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-.build-docs}
graphs=$out/symbolgraphs
rm -rf "$out"
mkdir -p "$graphs"

# Extracts the symbol graphs of a package's modules that have a catalog from its debug build (built first if it isn't):
# the modules the build compiled, its C modules' maps and headers, as `swift package dump-symbol-graph` would find
# them, without the plugins and their tools that it compiles each time. Usage: extract PACKAGE ACCESS OUTDIR [TRAITS].
extract() {
    local package=$1 access=$2 into=$3 traits=${4:-}
    local build=(swift build --package-path "$package")
    [ -n "$traits" ] && build+=(--traits "$traits")
    "${build[@]}" >/dev/null
    local bin
    bin=$("${build[@]}" --show-bin-path)
    local search=(-I "$bin/Modules") checkouts=$package/.build/checkouts
    while IFS= read -r map; do search+=(-Xcc "-fmodule-map-file=$map"); done < <(find "$bin" -maxdepth 2 -name module.modulemap)
    if [ -d "$checkouts" ]; then
        # The dependencies' system-library module maps, and their C targets' headers.
        while IFS= read -r map; do search+=(-Xcc "-fmodule-map-file=$map"); done < <(
            find "$checkouts" -name module.modulemap -not -path '*/include/*')
        while IFS= read -r include; do search+=(-Xcc "-I$include"); done < <(
            find "$checkouts" -type d -name include -path '*/Sources/*')
    fi
    mkdir -p "$into"
    local target
    target=$(swift -print-target-info | python3 -c "import json, sys; print(json.load(sys.stdin)['target']['triple'])")
    for catalog in "$package"/Sources/*/Documentation.docc; do
        local module
        module=$(basename "$(dirname "$catalog")")
        [ "$module" = MapClusterMapKit ] && continue
        swift symbolgraph-extract -module-name "$module" -target "$target" "${search[@]}" \
            -minimum-access-level "$access" -output-dir "$into"
    done
}

echo "== symbol graphs: the library"
library_graphs=$out/extracted/library
extract . public "$library_graphs"
echo "== symbol graphs: the application (its package declarations), with the PostgreSQL trait"
server_graphs=$out/extracted/server
extract Server package "$server_graphs" PostgreSQL
mapkit_graphs=${MAPCLUSTER_MIRROR_SCRATCH:-.build-mirror}/typecheck/symbolgraph
if [ ! -f "$mapkit_graphs/MapClusterMapKit.symbols.json" ] \
    || [ -n "$(find Sources/MapClusterMapKit -newer "$mapkit_graphs/MapClusterMapKit.symbols.json" -name '*.swift')" ]; then
    echo "== symbol graph: the MapKit adapter, against the Apple SDK mirror"
    scripts/check-mapkit.sh >/dev/null
fi

# Builds a catalog with docc, warnings as errors, then checks that every type is in a Topics section.
convert() {
    local catalog=$1 module=$2 archive=$3
    docc convert "$catalog" --additional-symbol-graph-dir "$graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.mapcluster.$module" \
        --output-dir "$archive" --transform-for-static-hosting --warnings-as-errors &&
        python3 scripts/docs-curation.py "$archive"
}

status=0
for catalog in Sources/*/Documentation.docc Server/Sources/*/Documentation.docc; do
    module=$(basename "$(dirname "$catalog")")
    case $module in
        MapClusterMapKit) from=$mapkit_graphs ;;
        *) if [[ $catalog == Server/* ]]; then from=$server_graphs; else from=$library_graphs; fi ;;
    esac
    # The module's own graph, and those of its extensions to other modules' types.
    mkdir -p "$graphs/$module"
    cp "$from/$module.symbols.json" "$graphs/$module/"
    for extension in "$from/$module@"*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$graphs/$module/"
    done
    if [ "$module" = MapClusterMapKit ]; then
        # The adapter re-exports the engine and the manager, whose declarations its compile's graph holds as its own
        # (without a source location): its pages keep the adapter's own files' declarations, and the others are
        # documented by their modules.
        python3 - "$graphs/$module/$module.symbols.json" <<'PYTHON'
import json, sys
path = sys.argv[1]
graph = json.load(open(path))
own = {s["identifier"]["precise"] for s in graph["symbols"]
       if "/Sources/MapClusterMapKit/" in s.get("location", {}).get("uri", "")}
graph["symbols"] = [s for s in graph["symbols"] if s["identifier"]["precise"] in own]
graph["relationships"] = [r for r in graph["relationships"] if r["source"] in own]
json.dump(graph, open(path, "w"))
PYTHON
    fi
    echo "== $module ($catalog)"
    convert "$catalog" "$module" "$out/$module.doccarchive" || status=1
done
if [ "$status" != 0 ]; then
    echo "the documentation has warnings (above)" >&2
    exit 1
fi
echo "every catalog built with no warning: $out"

# The check itself must fail where a catalog is wrong: MapClusterIO's, copied and broken three ways.
echo "== the check, on three broken copies of MapClusterIO's catalog"
link() { printf '\nSee ``PointFileReaderr``.\n' >>"$1/MapClusterIO.md"; }
topics() { grep -v '^- ``ValueCounts``$' "$1/MapClusterIO.md" >"$1/edited" && mv "$1/edited" "$1/MapClusterIO.md"; }
orphan() { printf '# Orphan\n\nAn article that no Topics section lists.\n' >"$1/Orphan.md"; }
declare -A broken_by=([link]="a symbol link to nothing" [topics]="a type left out of Topics" [orphan]="an article no page lists")
for edit in link topics orphan; do
    copy=$out/broken/$edit/Documentation.docc
    mkdir -p "$(dirname "$copy")"
    cp -r Sources/MapClusterIO/Documentation.docc "$copy"
    "$edit" "$copy"
    if convert "$copy" MapClusterIO "$out/broken/$edit.doccarchive" >"$out/broken/$edit.log" 2>&1; then
        echo "docs.sh let ${broken_by[$edit]} through: $out/broken/$edit.log" >&2
        exit 1
    fi
    echo "   ${broken_by[$edit]} fails it: $(grep -m1 -E '^(error|warning)' "$out/broken/$edit.log")"
done
