#!/usr/bin/env python3
"""A soak of `mapcluster serve` on loopback: many requests of every kind, some malformed, and no leak.

Writes 1,000,000 seeded random points (as scripts/loadcheck.py does), starts the server on them, and sends
1,000,000 requests from 32 keep-alive clients: clusters of random viewports (45%), the leaves (15%), children (15%) and
expansion zoom (5%) of clusters the answers named, vector tiles (15%), and malformed requests (5%: bad numbers, bad
ids, climbing paths, bytes that aren't UTF-8, unknown paths). Afterwards it checks: no 5xx, every well-formed request
a 200 and every malformed one a 4xx, the server still running and stopping cleanly, and its resident memory at the end
within 10% of what it was after the first 10,000 requests. Prints the figures (with the p99 latency); exits 1 if a
check failed. Standard library only.

    scripts/soak.py BINARY [--requests N] [--points N] [--clients N] [--json]
"""

import argparse
import asyncio
import json
import random
import re
import sys
import time

from loadcheck import ServedPoints, bbox_for, keep_alive_get, percentile

MALFORMED = [
    "/api/clusters?bbox=1,2,3&zoom=3",
    "/api/clusters?bbox=1,2,3,4&zoom=1e309",
    "/api/clusters?bbox=a,b,c,d&zoom=2",
    "/api/clusters?bbox=1,95,3,96&zoom=3",
    "/api/clusters?zoom=3",
    "/api/clusters/zzz/children",
    "/api/clusters/c99.1.1/leaves",
    "/api/clusters/c5.15.10/leaves?limit=1e3",
    "/api/clusters/%FF%FE/children",
    "/leaflet/%2e%2e/%2e%2e/etc/passwd",
    "/../../etc/passwd",
    "/api/nothing",
    "/tiles/40/1/1.mvt",
    "/tiles/3/99/1.mvt",
]


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Soak:
    def __init__(self, host, port, requests, clients, pid, seed):
        self.host, self.port, self.pid = host, port, pid
        self.remaining = requests
        self.clients = clients
        self.rng = random.Random(seed)
        self.ids = ["c2.1.1"]
        self.latencies = []
        self.statuses = {}
        self.failures = []
        self.rss_early = None
        self.done = 0

    def next_request(self):
        """The next path, and whether it is well formed."""
        roll = self.rng.random()
        if roll < 0.45:
            zoom = self.rng.randint(0, 14)
            lat = self.rng.uniform(-70, 70)
            return f"/api/clusters?bbox={bbox_for(lat, self.rng.uniform(-180, 180), zoom)}&zoom={zoom}", True
        if roll < 0.80:
            cluster = self.rng.choice(self.ids)
            kind = self.rng.choice(["leaves?limit=20", "children", "leaves?limit=5&offset=3"])
            return f"/api/clusters/{cluster}/{kind}", True
        if roll < 0.85:
            return f"/api/clusters/{self.rng.choice(self.ids)}/expansion-zoom", True
        if roll < 0.95:
            z = self.rng.randint(0, 12)
            return f"/tiles/{z}/{self.rng.randrange(1 << z)}/{self.rng.randrange(1 << z)}.mvt", True
        return self.rng.choice(MALFORMED), False

    async def client(self):
        reader, writer = await asyncio.open_connection(self.host, self.port)
        try:
            while self.remaining > 0:
                self.remaining -= 1
                path, well_formed = self.next_request()
                start = time.perf_counter()
                status, body = await keep_alive_get(reader, writer, self.host, path)
                self.latencies.append(time.perf_counter() - start)
                self.statuses[status] = self.statuses.get(status, 0) + 1
                # An empty tile is a 204.
                ok = (200, 204) if path.startswith("/tiles/") else (200,)
                expected = status in ok if well_formed else 400 <= status < 500
                if not expected:
                    self.failures.append(f"{path}: {status} {body[:120]!r}")
                if status == 200 and path.startswith("/api/clusters?") and len(self.ids) < 5000:
                    self.ids.extend(re.findall(r'"cluster_id":"([^"]+)"', body.decode())[:3])
                self.done += 1
                if self.done == 10_000:
                    self.rss_early = rss_mb(self.pid)
        finally:
            writer.close()

    async def run(self):
        start = time.perf_counter()
        await asyncio.gather(*(self.client() for _ in range(self.clients)))
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", help="the mapcluster executable")
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--json", action="store_true", help="print the report as one JSON line")
    arguments = parser.parse_args()

    with ServedPoints(arguments.binary, arguments.points, stop_timeout=30) as server:
        soak = Soak(server.host, server.port, arguments.requests, arguments.clients, server.process.pid, 13)
        elapsed = asyncio.run(soak.run())
        rss_end = rss_mb(server.process.pid)
        running = server.process.poll() is None
    stopped = server.stopped

    early = soak.rss_early or rss_end
    report = {
        "points": arguments.points, "requests": len(soak.latencies), "clients": arguments.clients,
        "seconds": round(elapsed, 1), "requests_per_second": round(len(soak.latencies) / elapsed, 1),
        "statuses": {str(k): v for k, v in sorted(soak.statuses.items())},
        "server_errors": sum(v for k, v in soak.statuses.items() if k >= 500), "unexpected": len(soak.failures),
        "p50_ms": round(percentile(soak.latencies, 0.50) * 1e3, 2),
        "p99_ms": round(percentile(soak.latencies, 0.99) * 1e3, 2),
        "max_ms": round(max(soak.latencies) * 1e3, 2),
        "rss_after_10k_mb": round(early, 1), "rss_end_mb": round(rss_end, 1),
        "rss_growth": round(rss_end / early - 1, 4), "server_exit": stopped,
    }
    if arguments.json:
        print(json.dumps(report))
    else:
        for name, value in report.items():
            print(f"{name:>20}: {value}")
    for failure in soak.failures[:10]:
        print("unexpected:", failure, file=sys.stderr)
    problems = []
    if report["server_errors"] or soak.failures:
        problems.append("answers that were 5xx or not what the request called for")
    if len(soak.latencies) != arguments.requests:
        problems.append(f"{len(soak.latencies)} of {arguments.requests} requests answered")
    if not running or stopped != 0:
        problems.append(f"the server did not survive and stop cleanly ({stopped})")
    if report["rss_growth"] > 0.10:
        problems.append(f"resident memory grew {report['rss_growth']:.1%} after the first 10,000 requests")
    if problems:
        sys.exit("soak failed: " + "; ".join(problems))


if __name__ == "__main__":
    main()
