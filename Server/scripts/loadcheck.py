#!/usr/bin/env python3
"""A bounded load check of `mapcluster serve` on loopback.

Writes 1,000,000 seeded random points to a temporary CSV file, starts the server on them, and sends 10,000
`/api/clusters` requests for random viewports (1280 x 800 points, zoom 0 to 12) from 32 concurrent keep-alive
clients. Prints requests per second and latency percentiles, and fails on any error, any non-200 answer, or a run
longer than the time bound. Standard library only.

    scripts/loadcheck.py .build/release/mapcluster [--points N] [--requests N] [--clients N] [--json]

With --aggregates it asks what the default page asks of a map with aggregates (each point has one of 7 continents and
a population; clusters count the continents and sum the populations, as the bundled sample's do) and compares that
with plain clusters of the same points: two servers, the same requests sent to each in alternating rounds, so that
both rates come from one run. It prints both rates and their ratio, and with --min-ratio fails below it.

    scripts/loadcheck.py .build/release/mapcluster --aggregates [--rounds 6] [--min-ratio 0.8]

With --merge it compares, the same way, a server that merges markers that would overlap (`--merge on`, the default)
with one that doesn't (`--merge off`), on the same plain points: the ratio is the merging server's rate over the other's.

    scripts/loadcheck.py .build/release/mapcluster --merge [--rounds 6] [--min-ratio 0.67]
"""

import argparse
import asyncio
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time


CONTINENTS = ["AF", "AN", "AS", "EU", "NA", "OC", "SA"]

# What the server takes to cluster with the default page's aggregates.
AGGREGATES = ["--category", "continent", "--reduce", "population:sum"]


def write_points(path, count, seed, aggregates=False):
    rng = random.Random(seed)
    with open(path, "w") as out:
        out.write("id,lat,lon,continent,population\n" if aggregates else "id,lat,lon\n")
        for i in range(count):
            # Uniform on the sphere between +-85 degrees of latitude.
            lat = math.degrees(math.asin(rng.uniform(-0.9961, 0.9961)))
            line = f"{i},{lat:.6f},{rng.uniform(-180, 180):.6f}"
            if aggregates:
                line += f",{CONTINENTS[rng.randrange(len(CONTINENTS))]},{rng.randint(1_000, 5_000_000)}"
            out.write(line + "\n")


def bbox_for(lat, lon, zoom, width=1280, height=800):
    """The bbox of a viewport of width x height points centered on (lat, lon) at zoom, as the page asks for it."""
    world = 256 * 2**zoom
    x = (lon + 180) / 360 * world
    s = math.sin(math.radians(lat))
    y = (0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)) * world

    def lon_of(px):
        return px / world * 360 - 180

    def lat_of(py):
        n = math.pi * (1 - 2 * min(max(py, 0), world) / world)
        return math.degrees(math.atan(math.sinh(n)))

    west, east = lon_of(x - width / 2), lon_of(x + width / 2)
    if east - west >= 360:
        west, east = -180, 180
    else:
        west = (west + 180) % 360 - 180
        east = (east + 180) % 360 - 180
    return f"{west:.6f},{lat_of(y + height / 2):.6f},{east:.6f},{lat_of(y - height / 2):.6f}"


async def keep_alive_get(reader, writer, host, path):
    """One GET on a kept-alive connection: the answer's status and body."""
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    match = re.search(rb"(?i)content-length:\s*(\d+)", head)
    body = await reader.readexactly(int(match.group(1))) if match else b""
    return status, body


async def client(host, port, paths, latencies, failures):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for path in paths:
            start = time.perf_counter()
            status, body = await keep_alive_get(reader, writer, host, path)
            latencies.append(time.perf_counter() - start)
            if status != 200 or not body.startswith(b'{"type":"FeatureCollection"'):
                failures.append(f"{path}: {status} {body[:120]!r}")
    finally:
        writer.close()


def request_paths(requests, seed):
    rng = random.Random(seed)
    paths = []
    for _ in range(requests):
        zoom = rng.randint(0, 12)
        lat = math.degrees(math.asin(rng.uniform(-0.95, 0.95)))
        paths.append(f"/api/clusters?bbox={bbox_for(lat, rng.uniform(-180, 180), zoom)}&zoom={zoom}")
    return paths


async def load(host, port, requests, clients, seed, paths=None):
    paths = paths or request_paths(requests, seed)
    shares = [paths[i::clients] for i in range(clients)]
    latencies, failures = [], []
    start = time.perf_counter()
    await asyncio.gather(*(client(host, port, share, latencies, failures) for share in shares))
    return time.perf_counter() - start, latencies, failures


class ServedPoints:
    """`mapcluster serve` on `count` seeded random points written to a temporary file, as a context manager: inside,
    `process`, `host` and `port`; on leaving, the server gets SIGTERM and `stopped` is its exit status (or "killed" if
    it didn't stop within `stop_timeout` seconds), and the file is removed."""

    def __init__(self, binary, count, stop_timeout=10, points=None, arguments=()):
        self.binary, self.count, self.stop_timeout = binary, count, stop_timeout
        self.points, self.arguments = points, list(arguments)
        self.stopped = None

    def __enter__(self):
        self.folder = tempfile.TemporaryDirectory()
        points = self.points
        if points is None:
            points = os.path.join(self.folder.name, "points.csv")
            write_points(points, self.count, seed=7)
        self.process = subprocess.Popen(
            [self.binary, "serve", points, "--port", "0"] + self.arguments, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"http://([\d.]+):(\d+)/", line)
        if not match:
            self.__exit__(None, None, None)
            sys.exit(f"the server did not start: {line!r}")
        self.host, self.port = match.group(1), int(match.group(2))
        return self

    def __exit__(self, *_):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.stopped = self.process.wait(timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.stopped = "killed"
        self.folder.cleanup()
        return False


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def compare(arguments, base, other, aggregates=False):
    """Two servers of the same points, `base` and `other` (each a name and the arguments `serve` gets), the same
    requests to each in alternating rounds; the ratio is `other`'s rate over `base`'s."""
    (base_name, base_arguments), (other_name, other_arguments) = base, other
    with tempfile.TemporaryDirectory() as folder:
        points = os.path.join(folder, "points.csv")
        write_points(points, arguments.points, seed=7, aggregates=aggregates)
        with ServedPoints(arguments.binary, arguments.points, points=points, arguments=base_arguments) as first, \
                ServedPoints(arguments.binary, arguments.points, points=points, arguments=other_arguments) as second:
            servers = {base_name: first, other_name: second}
            seconds = {name: 0.0 for name in servers}
            latencies = {name: [] for name in servers}
            failures = []
            per_round = max(1, arguments.requests // arguments.rounds)
            for round_number in range(arguments.rounds):
                paths = request_paths(per_round, seed=11 + round_number)
                # Alternating which goes first, so that neither always meets a warmer or busier machine.
                order = list(servers) if round_number % 2 == 0 else list(reversed(servers))
                for name in order:
                    server = servers[name]
                    elapsed, round_latencies, round_failures = asyncio.run(
                        asyncio.wait_for(
                            load(server.host, server.port, per_round, arguments.clients, 0, paths=paths),
                            arguments.time_bound))
                    seconds[name] += elapsed
                    latencies[name] += round_latencies
                    failures += [f"{name}: {failure}" for failure in round_failures]
    report = {"points": arguments.points, "rounds": arguments.rounds, "clients": arguments.clients}
    for name in servers:
        report[f"{name}_requests"] = len(latencies[name])
        report[f"{name}_requests_per_second"] = round(len(latencies[name]) / seconds[name], 1)
        report[f"{name}_p50_ms"] = round(percentile(latencies[name], 0.50) * 1e3, 2)
        report[f"{name}_p99_ms"] = round(percentile(latencies[name], 0.99) * 1e3, 2)
    report["ratio"] = round(
        report[f"{other_name}_requests_per_second"] / report[f"{base_name}_requests_per_second"], 3)
    report["errors"] = len(failures)
    report["server_exits"] = [first.stopped, second.stopped]
    return report, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", help="the mapcluster executable (a release build)")
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--time-bound", type=float, default=120, help="seconds the requests may take in all")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON line")
    parser.add_argument(
        "--aggregates", action="store_true", help="compare the default page's aggregated requests with plain ones")
    parser.add_argument(
        "--merge", action="store_true", help="compare a server that merges overlapping markers with one that doesn't")
    parser.add_argument("--rounds", type=int, default=6, help="with --aggregates or --merge: alternating rounds")
    parser.add_argument(
        "--min-ratio", type=float, help="with --aggregates or --merge: fail below this ratio of the rates")
    arguments = parser.parse_args()

    if arguments.aggregates or arguments.merge:
        if arguments.aggregates:
            base, other = ("plain", []), ("aggregated", AGGREGATES)
        else:
            base, other = ("unmerged", ["--merge", "off"]), ("merged", ["--merge", "on"])
        report, failures = compare(arguments, base, other, aggregates=arguments.aggregates)
        print(json.dumps(report) if arguments.json else "\n".join(f"{k:>34}: {v}" for k, v in report.items()))
        for failure in failures[:10]:
            print("failed:", failure, file=sys.stderr)
        expected = (arguments.requests // arguments.rounds) * arguments.rounds
        if failures or report[f"{base[0]}_requests"] != expected or report[f"{other[0]}_requests"] != expected \
                or report["server_exits"] != [0, 0]:
            sys.exit(1)
        if arguments.min_ratio is not None and report["ratio"] < arguments.min_ratio:
            sys.exit(
                f"{other[0]} requests ran at {report['ratio']:.2f} of the {base[0]} rate, under {arguments.min_ratio}")
        return

    with ServedPoints(arguments.binary, arguments.points) as server:
        elapsed, latencies, failures = asyncio.run(
            asyncio.wait_for(
                load(server.host, server.port, arguments.requests, arguments.clients, seed=11), arguments.time_bound))
    stopped = server.stopped

    report = {
        "points": arguments.points, "requests": len(latencies), "clients": arguments.clients,
        "errors": len(failures), "seconds": round(elapsed, 2),
        "requests_per_second": round(len(latencies) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 0.50) * 1e3, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1e3, 2),
        "max_ms": round(max(latencies) * 1e3, 2), "server_exit": stopped,
    }
    if arguments.json:
        print(json.dumps(report))
    else:
        for name, value in report.items():
            print(f"{name:>20}: {value}")
    for failure in failures[:10]:
        print("failed:", failure, file=sys.stderr)
    if failures or len(latencies) != arguments.requests or stopped != 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
