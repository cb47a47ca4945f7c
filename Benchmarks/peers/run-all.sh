#!/usr/bin/env bash
# MapCluster, supercluster and pysupercluster on the same seeded points, interleaved: for each round and data set, one
# fresh process of each, one after another, so that a ratio compares runs made under the same load. Each process
# appends its JSON line (with the round and the load around it) to OUT/MODE.jsonl (MODE-aggregates.jsonl with
# --aggregates); the tables of summarize.py close the output.
#
#   Benchmarks/peers/run-all.sh [--rounds 3] [--runs 5] [--configs "--n 100000 --dist uniform|…"] [--csv FILE.csv]
#                               [--aggregates] [--out DIR] [--mode NAME] [--single-core] [--no-wait]
#                               [--supercluster DIR]
#
# --aggregates: every point carries a category of 8 and a value; MapCluster sums and counts them per cluster through
#   its aggregate schema, supercluster through map/reduce (as MapLibre's clusterProperties); pysupercluster has no
#   map/reduce and sits out.
# --supercluster DIR: a folder that holds supercluster/ and node_modules/kdbush/ (unmodified) instead of `npm ci` here;
#   where the npm registry can't be reached, the run falls back to vendor/ (supercluster 8.0.1 and kdbush 4.1.0, as
#   published, with their ISC licences).
# --single-core pins every process to CPU 0; without --no-wait, the run waits (up to 25 minutes) for the 1-minute load
#   average to fall below 0.8.
#
# Needs the Swift toolchain, node and python3. It builds the Swift harness (swift/, against this repository) in release
# mode, installs supercluster with npm ci (unless --supercluster; vendor/ where npm can't) and pysupercluster 0.7.7 with numpy into a venv, all
# under $PEERS_WORK (default /tmp/mapcluster-peers-bench), and reuses them on later runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${PEERS_WORK:-${TMPDIR:-/tmp}/mapcluster-peers-bench}
rounds=3
runs=5
configs=("--n 100000 --dist uniform" "--n 100000 --dist clustered" "--n 1000000 --dist uniform"
    "--n 1000000 --dist clustered")
csv=""
aggregates=()
out=$work/results
mode=allcores
pin=()
wait_for_quiet=1
supercluster=""
usage() { sed -n '2,12p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --configs) IFS='|' read -r -a configs <<<"$2"; shift 2 ;;
    --csv) csv=$2; shift 2 ;;
    --aggregates) aggregates=(--aggregates); shift ;;
    --out) out=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --single-core) pin=(taskset -c 0); mode=singlecore; shift ;;
    --no-wait) wait_for_quiet=0; shift ;;
    --supercluster) supercluster=$(cd "$2" && pwd); shift 2 ;;
    -h | --help) usage ;;
    *) echo "run-all.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
for number in "$rounds" "$runs"; do
    [[ "$number" =~ ^[1-9][0-9]*$ ]] || { echo "run-all.sh: --rounds and --runs take a positive number, not '$number'" >&2; exit 2; }
done
if [ -n "$csv" ]; then
    [ -f "$csv" ] || { echo "run-all.sh: no CSV file at $csv" >&2; exit 2; }
    configs+=("--dist cities --csv $(cd "$(dirname "$csv")" && pwd)/$(basename "$csv")")
fi
mkdir -p "$out" "$work"
results=$out/$mode${aggregates:+-aggregates}.jsonl

echo "building the Swift harness against $(cd "$here/../.." && pwd)" >&2
swift build -c release --package-path "$here/swift" --scratch-path "$work/swift" >&2
swift_harness=("$work/swift/release/mapcluster-peers")

if [ -z "$supercluster" ]; then
    if [ ! -d "$work/node/node_modules/supercluster" ]; then
        echo "installing supercluster 8.0.1 and kdbush 4.1.0 (npm ci)" >&2
        mkdir -p "$work/node" && cp "$here/package.json" "$here/package-lock.json" "$work/node/"
        if ! (cd "$work/node" && npm ci --no-audit --no-fund --fetch-retries 1 --fetch-timeout 15000 --fetch-retry-maxtimeout 15000 >&2); then
            # The same versions, unmodified, with their licences: what a machine without the registry runs.
            echo "run-all.sh: npm ci failed; using the copies of supercluster 8.0.1 and kdbush 4.1.0 in $here/vendor" >&2
            rm -rf "$work/node"
        fi
    fi
    supercluster=$work/node
    [ -d "$work/node/node_modules/supercluster" ] || supercluster=$here/vendor
fi
node_harness=(node --expose-gc --max-old-space-size=8192 "$here/supercluster-bench.mjs" --supercluster "$supercluster")

if ! "$work/pyenv/bin/python" -c "import numpy, pysupercluster" 2>/dev/null; then
    echo "installing pysupercluster 0.7.7 and numpy into $work/pyenv" >&2
    python3 -m venv "$work/pyenv"
    "$work/pyenv/bin/pip" install -q --disable-pip-version-check numpy setuptools wheel >&2
    "$work/pyenv/bin/pip" install -q --disable-pip-version-check --no-use-pep517 --no-build-isolation \
        pysupercluster==0.7.7 >&2
fi
python_harness=("$work/pyenv/bin/python" "$here/pysupercluster-bench.py")

load() { cut -d' ' -f1 /proc/loadavg; }
if [ "$wait_for_quiet" = 1 ]; then
    for attempt in $(seq 50); do
        awk -v load="$(load)" 'BEGIN { exit !(load < 0.8) }' && break
        echo "$(date +%T) load $(load), waiting for it to fall below 0.8 ($attempt/50)" >&2
        sleep 30
    done
fi

# One process: its JSON line, with the mode, round and the load before and after it, appended to the results.
measure() {
    local round=$1 config=$2
    shift 2
    local before line
    before=$(load)
    # shellcheck disable=SC2086 # a configuration is several arguments
    line=$("${pin[@]}" "$@" $config "${aggregates[@]}" --runs "$runs" --json | tail -1)
    python3 - "$line" "$mode" "$round" "$before" "$(load)" >>"$results" <<'PY'
import json, sys
line, mode, round_, before, after = sys.argv[1:]
record = json.loads(line)
record.update(mode=mode, round=int(round_), load1Before=float(before), load1After=float(after))
print(json.dumps(record))
PY
    echo "$(date +%T) round $round, $config: $(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["impl"])' "$line") (load $before -> $(load))" >&2
}

for round in $(seq "$rounds"); do
    for config in "${configs[@]}"; do
        measure "$round" "$config" "${swift_harness[@]}"
        measure "$round" "$config" "${node_harness[@]}"
        [ ${#aggregates[@]} -gt 0 ] || measure "$round" "$config" "${python_harness[@]}"
    done
done
echo "results: $results" >&2
python3 "$here/summarize.py" "$results"
