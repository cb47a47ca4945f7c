#!/usr/bin/env python3
"""Reads the vector tiles of a running `mapcluster serve` with the PyPI package `mapbox-vector-tile`, a decoder
MapCluster's authors didn't write, and reports what they hold, as JSON: for each zoom, the tiles fetched, the empty
ones (204), and the points that the features inside each tile's extent stand for.

    check_tiles.py URL MAXZOOM       every tile of zooms 0..MAXZOOM

The Swift test (Tests/mapclusterTests/TileReaderTests.swift) checks the report. Needs `pip install mapbox-vector-tile`.
"""

import gzip
import json
import sys
import urllib.request

import mapbox_vector_tile


def fetch(url):
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request) as response:
        body = response.read()
        if response.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        return response.status, response.headers.get("Content-Type"), body


def main():
    base, deepest = sys.argv[1].rstrip("/"), int(sys.argv[2])
    report = []
    for z in range(deepest + 1):
        points, tiles, empty, features, types = 0, 0, 0, 0, set()
        for x in range(2 ** z):
            for y in range(2 ** z):
                status, content_type, body = fetch(f"{base}/tiles/{z}/{x}/{y}.mvt")
                tiles += 1
                if status == 204:
                    empty += 1
                    continue
                types.add(content_type)
                decoded = mapbox_vector_tile.decode(body, default_options={"y_coord_down": True})
                layer = decoded["clusters"]
                extent = layer["extent"]
                for feature in layer["features"]:
                    features += 1
                    x0, y0 = feature["geometry"]["coordinates"]
                    if 0 <= x0 < extent and 0 <= y0 < extent:
                        properties = feature["properties"]
                        points += properties["point_count"] if properties.get("cluster") else 1
        report.append({"z": z, "tiles": tiles, "empty": empty, "features": features, "points": points,
                       "content_types": sorted(types)})
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
