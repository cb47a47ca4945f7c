#!/usr/bin/env python3
"""Draws the side-by-side ratios of Benchmarks/peers as an SVG chart: for each data set and each query (and the
build), how many times faster MapCluster is than supercluster and pysupercluster with plain clusters, and than
supercluster's map/reduce with aggregates, on a log scale with a line at 1x (left of it, MapCluster is slower).

    scripts/peers-chart.py PLAIN.jsonl AGGREGATES.jsonl -o Sources/MapCluster/Documentation.docc/Resources/peers.svg

PLAIN.jsonl and AGGREGATES.jsonl are what `run-all.sh` and `run-all.sh --aggregates` write (in
/tmp/mapcluster-peers/results/ by default). Medians pool every sample of every process, as summarize-peers.py does.
Standard library only.
"""

import argparse
import json
import math
import statistics
from collections import defaultdict
from html import escape

SERIES = [
    ("plain", "supercluster-js", "plain, vs supercluster", "#2b6cb0"),
    ("plain", "pysupercluster", "plain, vs pysupercluster", "#90cdf4"),
    ("aggregates", "supercluster-js", "aggregated, vs supercluster map/reduce", "#dd6b20"),
]


def load(path):
    """Per (implementation, distribution, n): the medians of the build and of each query, by name."""
    samples = defaultdict(lambda: defaultdict(list))
    if path:
        with open(path) as lines:
            for line in lines:
                if not line.strip():
                    continue
                run = json.loads(line)
                key = (run["impl"], run["dist"], run["n"])
                samples[key]["build"] += run["load"]["samples"]
                for query in run["queries"]:
                    samples[key][query["name"]] += query["ms"]["samples"]
    return {key: {name: statistics.median(values) for name, values in by_name.items()}
            for key, by_name in samples.items()}


def ratios(medians):
    """Per (distribution, n): per row name, the ratio each peer's median is of MapCluster's."""
    result = defaultdict(dict)
    for (impl, dist, n), by_name in medians.items():
        ours = medians.get(("mapcluster", dist, n))
        if impl == "mapcluster" or not ours:
            continue
        for name, value in by_name.items():
            if name in ours and ours[name] > 0:
                result[(dist, n)].setdefault(name, {})[impl] = value / ours[name]
    return result


def draw(plain, aggregated):
    sets = sorted(set(plain) | set(aggregated), key=lambda key: (key[1], key[0] != "uniform"))
    rows = []  # (label, [(series index, ratio)]) or a heading
    for dist, n in sets:
        rows.append(("heading", f"{format(n, ',')} {dist} points"))
        names = list(dict.fromkeys(list(plain.get((dist, n), {})) + list(aggregated.get((dist, n), {}))))
        for name in names:
            bars = []
            for index, (mode, peer, _, _) in enumerate(SERIES):
                table = plain if mode == "plain" else aggregated
                value = table.get((dist, n), {}).get(name, {}).get(peer)
                if value:
                    bars.append((index, value))
            if bars:
                rows.append((name, bars))
    low, high = 0.05, 500.0
    left, width, bar, gap = 170, 560, 9, 8
    def x(value):
        value = min(max(value, low), high)
        return left + (math.log10(value) - math.log10(low)) / (math.log10(high) - math.log10(low)) * width
    out = []
    y = 76
    for label, content in rows:
        if label == "heading":
            y += 10
            out.append(f'<text x="10" y="{y + 12}" font-weight="bold">{escape(content)}</text>')
            y += 22
            continue
        top = y
        out.append(f'<text x="{left - 8}" y="{top + len(content) * bar / 2 + 4}" text-anchor="end">{escape(label)}</text>')
        for index, value in content:
            color = SERIES[index][3]
            start, end = x(1), x(value)
            out.append(
                f'<rect x="{min(start, end):.1f}" y="{y}" width="{abs(end - start):.1f}" height="{bar - 1}" '
                f'fill="{color}"><title>{escape(SERIES[index][2])}: {value:.2f}x</title></rect>')
            text = f"{value:.2f}x" if value < 10 else f"{value:.0f}x"
            anchor, tx = ("start", max(start, end) + 4)
            out.append(f'<text x="{tx:.1f}" y="{y + bar - 1}" font-size="9" text-anchor="{anchor}">{text}</text>')
            y += bar
        y += gap
    height = y + 30
    grid = []
    for value in [0.1, 0.3, 1, 3, 10, 30, 100, 300]:
        grid.append(
            f'<line x1="{x(value):.1f}" y1="60" x2="{x(value):.1f}" y2="{height - 25}" '
            f'stroke="{"#000" if value == 1 else "#ddd"}" stroke-width="{1.5 if value == 1 else 1}"/>')
        grid.append(f'<text x="{x(value):.1f}" y="{height - 10}" text-anchor="middle">{value:g}x</text>')
    legend = []
    for index, (_, _, name, color) in enumerate(SERIES):
        legend.append(f'<rect x="{10 + index * 250}" y="44" width="12" height="12" fill="{color}"/>')
        legend.append(f'<text x="{28 + index * 250}" y="54">{escape(name)}</text>')
    title = "How many times faster MapCluster is than its peers, per query"
    subtitle = "The peers' median time over MapCluster's, log scale: right of the 1x line MapCluster is faster."
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" height="{height}" '
        f'font-family="sans-serif" font-size="11">\n'
        f'<rect width="100%" height="100%" fill="#fff"/>\n'
        f'<text x="10" y="18" font-size="13" font-weight="bold">{escape(title)}</text>\n'
        f'<text x="10" y="34" fill="#444">{escape(subtitle)}</text>\n'
        + "\n".join(grid + legend + out) + "\n</svg>\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plain", help="the JSON lines of run-all.sh")
    parser.add_argument("aggregates", nargs="?", help="the JSON lines of run-all.sh --aggregates")
    parser.add_argument("-o", "--output", default="-", help="where to write the SVG (default: standard output)")
    arguments = parser.parse_args()
    svg = draw(ratios(load(arguments.plain)), ratios(load(arguments.aggregates)))
    if arguments.output == "-":
        print(svg, end="")
    else:
        with open(arguments.output, "w") as out:
            out.write(svg)


if __name__ == "__main__":
    main()
