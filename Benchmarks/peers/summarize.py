#!/usr/bin/env python3
"""The tables of a peer run: for each data set, each implementation's build and query times and memory, and the
ratios of supercluster's and pysupercluster's to MapCluster's (above 1: MapCluster is faster).

    python3 summarize.py RESULTS.jsonl

A cell is the median of every sample of every process of that implementation (each warm build, each query batch), with
the least and the most in brackets; "first build" is the median of the processes' first builds; memory is the median of
the processes' peak RSS after their first build, and of the index's own growth of the heap. With --aggregates
(pysupercluster absent) the title gives each side's check totals, which must agree.
"""
import json
import statistics
import sys
from collections import defaultdict

ORDER = ["mapcluster", "supercluster-js", "pysupercluster"]
TITLE = {"mapcluster": "MapCluster", "supercluster-js": "supercluster JS", "pysupercluster": "pysupercluster"}
SHORT = {"supercluster-js": "SC", "pysupercluster": "py"}


def number(x):
    for limit, form in ((100, "%.0f"), (10, "%.1f"), (1, "%.2f")):
        if x >= limit:
            return form % x
    return "%.3f" % x


def spread(samples, scale=1.0):
    return "%s (%s–%s)" % tuple(number(x * scale) for x in (statistics.median(samples), min(samples), max(samples)))


def main(path):
    by_set = defaultdict(lambda: defaultdict(list))
    loads = []
    with open(path) as f:
        for line in f:
            if line.strip():
                record = json.loads(line)
                by_set[(record["dist"], record["n"])][record["impl"]].append(record)
                loads += [record.get("load1Before", 0), record.get("load1After", 0)]
    if loads:
        print("load average (1 min) around the processes: median %.2f, least %.2f, most %.2f"
              % (statistics.median(loads), min(loads), max(loads)))
    rank = {"uniform": 0, "clustered": 1}
    for (dist, n), runs in sorted(by_set.items(), key=lambda item: (item[0][1], rank.get(item[0][0], 2))):
        impls = [impl for impl in ORDER if runs.get(impl)]
        if "mapcluster" not in impls or len(impls) < 2:
            continue
        others = impls[1:]
        fingerprints = sorted({r["fingerprint"] for impl in impls for r in runs[impl]})
        title = "%s, N = %s (fingerprint %s)" % (dist, format(n, ","), "/".join(fingerprints))
        if runs["mapcluster"][0].get("aggregates"):
            title += ", aggregates (one sum, 8 category counts); check totals " + "; ".join(
                "%s %s" % (TITLE[impl], json.dumps(runs[impl][0].get("check"))) for impl in impls)
        print("\n### %s\n" % title)
        print("| |" + "".join(" %s |" % TITLE[i] for i in impls) + "".join(" %s/MC |" % SHORT[i] for i in others))
        print("|---|" + "---|" * (len(impls) + len(others)))

        def row(label, medians, cells):
            ratios = "".join(" %s |" % ("%.0f" % r if r >= 10 else "%.2f" % r)
                             for r in (medians[i] / medians["mapcluster"] for i in others))
            print("| %s |%s%s" % (label, "".join(" %s |" % cells[i] for i in impls), ratios))

        builds = {i: [s for r in runs[i] for s in r["load"]["samples"]] for i in impls}
        row("build ms", {i: statistics.median(builds[i]) for i in impls}, {i: spread(builds[i]) for i in impls})
        first = {i: statistics.median(r["load"]["cold"] for r in runs[i]) for i in impls}
        row("first build in process, ms", first, {i: number(first[i]) for i in impls})
        for q, query in enumerate(runs["mapcluster"][0]["queries"]):
            samples = {i: [s for r in runs[i] for s in r["queries"][q]["ms"]["samples"]] for i in impls}
            cells = {i: "%s [%d/%d]" % (spread(samples[i], 1000), runs[i][0]["queries"][q]["count"],
                                        runs[i][0]["queries"][q]["clusters"]) for i in impls}
            row("%s µs/query (returned/clusters)" % query["name"], {i: statistics.median(samples[i]) for i in impls},
                cells)
        peak = {i: statistics.median(r["mem"]["peakAfterFirstBuildMB"] for r in runs[i]) for i in impls}
        own = {i: statistics.median(r["mem"]["heapIndexMB"] for r in runs[i]) for i in impls}
        row("peak RSS MB (index's own MB)", peak, {i: "%.0f (%.0f)" % (peak[i], own[i]) for i in impls})


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
