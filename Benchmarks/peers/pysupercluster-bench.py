"""pysupercluster (supercluster's C++ port) on the peer benchmark's data: builds of the index and bounding-box
queries, timed in one process, printed as one JSON line (--json) in the shape the Swift and JavaScript harnesses print.

    python pysupercluster-bench.py --n 100000 --dist uniform|clustered [--runs 5] [--qruns 11] [--json]
    python pysupercluster-bench.py --dist cities --csv FILE.csv

Needs pysupercluster 0.7.7 and numpy (run-all.sh installs them into a venv of its own). The points are those of
points.mjs, drawn again here; the fingerprint printed must be the other harnesses'. Index: min_zoom 0, max_zoom 16,
radius 40, extent 512. pysupercluster has no map/reduce: it sits out of --aggregates.
"""
import argparse
import ctypes
import gc
import json
import math
import os
import resource
import time

import numpy
import pysupercluster

WORLD = (-180.0, -85.0, 180.0, 85.0)
VIEWS = {
    5: (-20.1478, 36.517383, 24.8522, 58.761804),
    10: (1.649075, 48.508433, 3.055325, 49.202362),
    15: (2.330227, 48.845756, 2.374173, 48.867441),
}


def mulberry32_numbers(count):
    """The first `count` numbers in [0, 1) of mulberry32 seeded with 42, the generator of all three harnesses, computed
    at once: the generator's state after k steps is seed + k·0x6D2B79F5, and each number depends on its state alone."""
    states = ((42 + numpy.arange(1, count + 1, dtype=numpy.uint64) * 0x6D2B79F5) & 0xFFFFFFFF).astype(numpy.uint32)
    t = (states ^ (states >> 15)) * (states | 1)
    t ^= t + (t ^ (t >> 7)) * (t | 61)
    return (t ^ (t >> 14)).astype(numpy.float64) / 4294967296.0


def generated(count, distribution):
    """An (n, 2) array of lon, lat: uniform over the map, or in 100 blobs (the first a small one at Paris)."""
    if distribution == "uniform":
        numbers = mulberry32_numbers(2 * count).reshape(count, 2)
        return numpy.stack([-180 + 360 * numbers[:, 0], -85 + 170 * numbers[:, 1]], axis=1)
    if distribution != "clustered":
        raise SystemExit("no distribution %r (uniform, clustered, cities)" % distribution)
    numbers = mulberry32_numbers(3 * 99 + 9 * count)
    drawn = numbers[:3 * 99].reshape(99, 3)
    longitudes = numpy.concatenate([[2.3522], -180 + 360 * drawn[:, 0]])
    latitudes = numpy.concatenate([[48.8566], -60 + 130 * drawn[:, 1]])
    spreads = numpy.concatenate([[0.3], 0.5 + 4.5 * drawn[:, 2]])
    per_point = numbers[3 * 99:].reshape(count, 9)
    blob = numpy.floor(100 * per_point[:, 0]).astype(numpy.int64)
    # An approximate normal: the sum of four uniforms, centred and scaled to a variance of one.
    dx = (per_point[:, 1:5].sum(axis=1) - 2) * 1.7320508075688772
    dy = (per_point[:, 5:9].sum(axis=1) - 2) * 1.7320508075688772
    x = longitudes[blob] + spreads[blob] * dx
    x = numpy.where(x > 180, x - 360, x)
    x = numpy.where(x < -180, x + 360, x)
    y = numpy.clip(latitudes[blob] + spreads[blob] * dy, -85, 85)
    return numpy.stack([x, y], axis=1)


def read_csv(path):
    with open(path, encoding="utf-8") as f:
        columns = f.readline().rstrip("\n").split(",")
        lat, lon = columns.index("lat"), columns.index("lon")
        points = []
        for line in f:
            if line.strip():
                fields = line.split(",", max(lat, lon) + 1)
                points.append((float(fields[lon]), float(fields[lat])))
    return numpy.array(points, dtype=numpy.float64).reshape(-1, 2)


def fingerprint(points):
    """Two 32-bit sums over the coordinates' little-endian 32-bit words, in hexadecimal."""
    words = numpy.ascontiguousarray(points, dtype="<f8").view("<u4").ravel()
    plain = int(words.astype(numpy.uint64).sum()) & 0xFFFFFFFF
    indexed = int((words ^ numpy.arange(words.size, dtype=numpy.uint32)).astype(numpy.uint64).sum()) & 0xFFFFFFFF
    return "%08x%08x" % (plain, indexed)


def summary(samples):
    ordered = sorted(samples)
    n = len(ordered)
    return dict(median=(ordered[(n - 1) // 2] + ordered[n // 2]) / 2, min=ordered[0], max=ordered[-1], runs=n,
                samples=list(samples))


def resident_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1048576


class MallocInfo(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def heap_mb():
    """The C heap's bytes in use (glibc's mallinfo2), in MB; 0 without glibc."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallinfo2.restype = MallocInfo
    except (OSError, AttributeError):
        return 0.0
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 1048576


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def now():
    return time.perf_counter() * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100000)
    parser.add_argument("--dist", default="uniform")
    parser.add_argument("--csv")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--qruns", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    started = now()
    points = numpy.ascontiguousarray(read_csv(args.csv) if args.dist == "cities" else generated(args.n, args.dist))
    generation_ms = now() - started

    def build():
        return pysupercluster.SuperCluster(points, min_zoom=0, max_zoom=16, radius=40, extent=512)

    gc.collect()
    resident_before, heap_before = resident_mb(), heap_mb()
    started = now()
    index = build()
    first_build_ms = now() - started
    peak_after_first_build = peak_mb()
    index_mb, heap_index_mb = resident_mb() - resident_before, heap_mb() - heap_before
    builds = []
    for _ in range(args.runs):
        index = None
        gc.collect()
        started = now()
        index = build()
        builds.append(now() - started)

    if args.dist == "cities":
        queries = [("world z2", WORLD, 2), ("europe z5", VIEWS[5], 5)]
    else:
        queries = [("world z%d" % z, WORLD, z) for z in range(4)] + [("view z%d" % z, VIEWS[z], z) for z in (5, 10, 15)]
    answers = []
    for name, (west, south, east, north), zoom in queries:
        def ask():
            return index.getClusters(top_left=(west, north), bottom_right=(east, south), zoom=zoom)

        found = ask()
        clusters = sum(1 for c in found if c["count"] > 1)
        started = now()
        ask()
        calls = max(1, min(100000, math.ceil(20 / max(now() - started, 1e-4))))
        per_call = []
        for _ in range(args.qruns):
            started = now()
            for _ in range(calls):
                ask()
            per_call.append((now() - started) / calls)
        answers.append(dict(name=name, zoom=zoom, bbox=[west, south, east, north], count=len(found), clusters=clusters,
                            points=len(found) - clusters, members=sum(c["count"] for c in found), reps=calls,
                            ms=summary(per_call)))

    result = dict(impl="pysupercluster", n=len(points), dist=args.dist, fingerprint=fingerprint(points),
                  genMs=generation_ms, load=dict(cold=first_build_ms, **summary(builds)), queries=answers,
                  mem=dict(rssBeforeLoadMB=resident_before, indexMB=index_mb, heapIndexMB=heap_index_mb,
                           peakAfterFirstBuildMB=peak_after_first_build, peakRssMB=peak_mb()))
    if args.json:
        print(json.dumps(result))
    else:
        print("## pysupercluster %s N=%d (fingerprint %s)" % (args.dist, len(points), result["fingerprint"]))
        for a in answers:
            print("%s: %d items, %d clusters; median %.4f ms a query" % (a["name"], a["count"], a["clusters"], a["ms"]["median"]))


if __name__ == "__main__":
    main()
