#!/usr/bin/env python3
"""Writes the peers' seeded point sets (Benchmarks/peers: mulberry32, seed 42) as CSV or newline-delimited GeoJSON.

The same formulas as the peers' harnesses, so MapCluster and other tools (tippecanoe) read the very points
supercluster and pysupercluster are measured on:

    python3 scripts/peer_points.py --n 1000000 --dist clustered --format csv > clustered-1M.csv
    python3 scripts/peer_points.py --n 1000000 --dist clustered --format geojsonseq > clustered-1M.geojsonl

Each point gets its index as its id.
"""

import argparse
import sys

SEED = 42


def mulberry32(seed):
    """The mulberry32 generator: floats in [0, 1), the same sequence as the peers' JavaScript."""
    a = seed & 0xFFFFFFFF
    while True:
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = a
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        yield ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296.0


def points(n, dist, seed=SEED):
    """(lon, lat) pairs, bit-identical to the peers' genPoints."""
    rnd = mulberry32(seed)
    if dist == "uniform":
        for _ in range(n):
            a = next(rnd)
            b = next(rnd)
            yield -180 + 360 * a, -85 + 170 * b
        return
    if dist != "clustered":
        raise SystemExit(f"--dist: 'uniform' or 'clustered', not '{dist}'")
    blobs = 100
    lon, lat, spread = [2.3522], [48.8566], [0.3]
    for _ in range(1, blobs):
        lon.append(-180 + 360 * next(rnd))
        lat.append(-60 + 130 * next(rnd))
        spread.append(0.5 + 4.5 * next(rnd))
    s3 = 1.7320508075688772
    for _ in range(n):
        k = int(blobs * next(rnd))
        gx = (next(rnd) + next(rnd) + next(rnd) + next(rnd) - 2) * s3
        gy = (next(rnd) + next(rnd) + next(rnd) + next(rnd) - 2) * s3
        x = lon[k] + spread[k] * gx
        y = lat[k] + spread[k] * gy
        if x > 180:
            x -= 360
        if x < -180:
            x += 360
        yield x, min(max(y, -85), 85)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--dist", default="clustered")
    parser.add_argument("--format", choices=["csv", "geojsonseq"], default="csv")
    args = parser.parse_args()
    out = sys.stdout
    if args.format == "csv":
        out.write("id,lat,lon\n")
    for i, (x, y) in enumerate(points(args.n, args.dist)):
        if args.format == "csv":
            out.write(f"{i},{y!r},{x!r}\n")
        else:
            out.write(f'{{"type":"Feature","id":{i},"geometry":{{"type":"Point","coordinates":[{x!r},{y!r}]}},"properties":{{}}}}\n')


if __name__ == "__main__":
    main()
