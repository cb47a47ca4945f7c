#!/usr/bin/env python3
"""What an operator's tools see of `mapcluster serve`, against real sockets: its probes and its metrics.

    operations_check.py BINARY

Starts two servers on the bundled cities (one writable, with the memory store and a token; one with --metrics off)
and checks that:
- /healthz and /readyz answer 200 with their JSON once the server says it serves;
- /metrics parses with prometheus-client's own text parser (prometheus_client.parser), and holds request counts by
  route and status that grow with the requests sent between two scrapes, a latency histogram, the points in the index,
  the live version and subscribers, rejected requests by reason, and a store commit's latency and the edits applied;
- with --metrics off, /metrics is a 404.
Prints one JSON line of what it read; exits 1 with the reason on the first failed check. Needs `pip install
prometheus-client`.
"""

import json
import os
import sys
import tempfile
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

import server_process  # beside this file

TOKEN = "operations-check-token-0123456789"


def fail(message):
    print("operations_check: " + message, file=sys.stderr)
    sys.exit(1)


def start(binary, *options):
    return server_process.start(binary, *options, name="operations_check")


def request(port, path, method="GET", body=None, token=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = "Bearer " + token
    data = json.dumps(body).encode() if body is not None else None
    call = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(call, timeout=30) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


def scrape(port):
    """The metrics, as prometheus-client reads them: {name: [(labels, value)]}, samples by their own names."""
    status, body, headers = request(port, "/metrics")
    if status != 200:
        fail(f"/metrics answered {status}")
    if not headers.get("Content-Type", "").startswith("text/plain"):
        fail(f"/metrics is {headers.get('Content-Type')}, not Prometheus' text format")
    samples = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))
    return samples


def value(samples, name, **labels):
    """The sum of a metric's samples whose labels include `labels` (0 if none)."""
    return sum(v for sample_labels, v in samples.get(name, [])
               if all(sample_labels.get(key) == wanted for key, wanted in labels.items()))


def main():
    if len(sys.argv) != 2:
        fail("usage: operations_check.py BINARY")
    binary = sys.argv[1]
    with tempfile.NamedTemporaryFile("w", suffix=".token", delete=False) as token_file:
        token_file.write(TOKEN + "\n")
    server, port = start(binary, "--writable", "--store", "memory", "--token-file", token_file.name)
    quiet, quiet_port = None, None
    try:
        for path, expected in (("/healthz", "ok"), ("/readyz", "ready")):
            status, body, _ = request(port, path)
            if status != 200 or json.loads(body).get("status") != expected:
                fail(f"{path} answered {status} {body[:200]!r}")

        before = scrape(port)
        stats_before = value(before, "mapcluster_http_requests_total", route="/api/stats", status="200")
        for _ in range(5):
            request(port, "/api/stats")
        status, _, _ = request(port, "/api/clusters?bbox=oops&zoom=3")
        if status != 400:
            fail(f"a bad bbox answered {status}")
        status, _, _ = request(port, "/api/points", "POST", {"type": "Feature", "id": "x"}, token="wrong-token")
        if status != 401:
            fail(f"an edit with a wrong token answered {status}")
        edit = {"type": "FeatureCollection", "features": [
            {"type": "Feature", "id": f"op-{i}", "geometry": {"type": "Point", "coordinates": [2.0 + i, 48.0]},
             "properties": {}} for i in range(3)]}
        status, body, _ = request(port, "/api/points", "POST", edit, token=TOKEN)
        if status != 200:
            fail(f"an edit answered {status} {body[:300]!r}")
        after = scrape(port)

        stats_after = value(after, "mapcluster_http_requests_total", route="/api/stats", status="200")
        if stats_after - stats_before != 5:
            fail(f"/api/stats counted {stats_before} then {stats_after} around 5 requests")
        if value(after, "mapcluster_http_requests_total", route="/api/clusters", status="400") < 1:
            fail("the bad bbox's 400 is not counted by route and status")
        if value(after, "mapcluster_rejected_requests_total", reason="bad_input") < 1:
            fail("the bad bbox is not counted as a rejected request (bad_input)")
        if value(after, "mapcluster_rejected_requests_total", reason="unauthorized") < 1:
            fail("the wrong token is not counted as a rejected request (unauthorized)")
        if value(after, "mapcluster_http_request_duration_seconds_count", route="/api/stats") < 5:
            fail("no latency histogram of /api/stats")
        if not after.get("mapcluster_http_request_duration_seconds_bucket"):
            fail("the latency histogram has no buckets")
        points = value(after, "mapcluster_points")
        if points != 34_006 + 3:
            fail(f"mapcluster_points is {points}, not the 34,006 cities and 3 new points")
        if value(after, "mapcluster_live_version") < 1:
            fail("mapcluster_live_version did not move with the edit")
        if "mapcluster_live_subscribers" not in after:
            fail("no mapcluster_live_subscribers")
        if value(after, "mapcluster_store_commit_duration_seconds_count") < 1:
            fail("the edit's commit is not timed")
        if value(after, "mapcluster_edits_applied_total") != 3:
            fail(f"mapcluster_edits_applied_total is {value(after, 'mapcluster_edits_applied_total')}, not 3")

        quiet, quiet_port = start(binary, "--metrics", "off")
        status, _, _ = request(quiet_port, "/metrics")
        if status != 404:
            fail(f"with --metrics off, /metrics answered {status}")
        print(json.dumps({"stats_counted": stats_after - stats_before, "points": points,
                          "families": len({name for name in after})}))
    finally:
        for process in (server, quiet):
            if process:
                process.terminate()
                process.wait(timeout=30)
        os.unlink(token_file.name)


if __name__ == "__main__":
    main()
