#!/usr/bin/env bash
# Runs one libFuzzer target for a number of seconds: scripts/fuzz.sh csv|geojson|edit|query|pmtiles|mbtiles|tile SECONDS
# (scripts/fuzz.sh build builds them all, and runs none.)
#
# Builds the fuzz executables once (the package in Fuzz/: the readers, the engine and the tiles alone, with the fuzzer's
# coverage and the address sanitizer, in .build-fuzz), starts from the committed seeds in Fuzz/corpus/TARGET plus what earlier
# runs here found (.build-fuzz/corpus/TARGET), and stops at the first crash. A crash's input is written to
# Fuzz/regressions/TARGET/; commit it once fixed, and the tests replay it (FuzzRegressionTests). The last line is
# the run's figures: executions, executions per second and the corpus's size.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:?"which target: csv, geojson, edit, query, pmtiles, mbtiles or tile (or build)"}
# The sanitizers go to swiftc as one flag: given as two (--sanitize fuzzer --sanitize address), the second replaced
# the first when compiling, and nothing was instrumented for coverage. --sanitize fuzzer is there for the link, so that
# libFuzzer's main is the executable's. The linker warns of every sanitizer symbol it can't export, thousands of lines
# that say nothing: left out.
build() {
    swift build --package-path Fuzz --scratch-path .build-fuzz --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address "$@" 2>&1 |
        sed '/Cannot export local symbol/d' >&2
}
# An archive needs room for a few tiles and its directories or SQLite pages.
max_len=16384
case "$target" in
csv | geojson | edit | query | tile) ;;
pmtiles | mbtiles) max_len=65536 ;;
build)
    build
    exit 0
    ;;
*)
    echo "scripts/fuzz.sh: no target '$target' (csv, geojson, edit, query, pmtiles, mbtiles, tile, build)" >&2
    exit 2
    ;;
esac
seconds=${2:?"for how many seconds"}

build --product "fuzz-$target"
work=.build-fuzz/corpus/$target
mkdir -p "$work" "Fuzz/regressions/$target"
log=.build-fuzz/fuzz-$target.log
status=0
".build-fuzz/debug/fuzz-$target" "$work" "Fuzz/corpus/$target" -max_total_time="$seconds" -max_len="$max_len" \
    -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="Fuzz/regressions/$target/" \
    >"$log" 2>&1 || status=$?
if [ "$status" != 0 ]; then
    tail -60 "$log" >&2
    echo "fuzz-$target: a crash after $(grep -c . "$log") log lines; its input is in Fuzz/regressions/$target/" >&2
    exit "$status"
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
echo "fuzz-$target: $runs executions in $seconds s ($rate/s), no crash; corpus $(ls "$work" | wc -l) inputs"
