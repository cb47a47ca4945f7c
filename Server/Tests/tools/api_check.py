#!/usr/bin/env python3
"""The server against its OpenAPI document (/openapi.json), attacked by schemathesis: .ci/run runs it.

    api_check.py BINARY

First checks the document with openapi-spec-validator. Then starts two servers on the bundled cities and runs
schemathesis against each, with a fixed seed and 50 examples per operation:
- the read API (every GET) of a read-only server;
- the whole API of a `--writable --store memory` server, with its bearer token.
Every check of schemathesis runs (no 5xx; status codes, content types, headers and bodies as documented; undeclared
methods answered 405; auth enforced) but positive_data_acceptance: the API's valid inputs depend on one another (a
bbox's size in points at a zoom, a tile's row at its zoom, a cluster id's grammar), which a JSON Schema can't say, so
schema-valid requests are rightly refused with a documented 400. /api/changes and /api/tile-changes are left out: a change stream doesn't end
while the server runs. Each server must still answer /healthz at the end. Exits 1 with schemathesis' report on a
failure; prints one JSON line of the counts otherwise. Needs `pip install schemathesis openapi-spec-validator`.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_process import start  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCUMENT = os.path.join(ROOT, "Sources", "MapClusterServer", "Resources", "openapi.json")
TOKEN = "api-check-token-0123456789abcdef"
BIN = os.path.dirname(sys.executable)


def fail(message):
    print("api_check: " + message, file=sys.stderr)
    sys.exit(1)


def schemathesis(port, *options):
    command = [os.path.join(BIN, "schemathesis"), "run", f"http://127.0.0.1:{port}/openapi.json",
               "--max-examples", "50", "--seed", "20261125", "--exclude-path", "/api/changes", "--exclude-path", "/api/tile-changes",
               "--request-timeout", "10", "--checks", "all", "--exclude-checks", "positive_data_acceptance",
               "--no-color", *options]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        print(run.stdout[-12000:], file=sys.stderr)
        fail(f"schemathesis found failures on port {port} ({' '.join(options) or 'every operation'})")
    found = re.search(r"(\d+) generated, (\d+) passed", run.stdout)
    return {"generated": int(found.group(1)), "passed": int(found.group(2))} if found else {}


def alive(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as answer:
        if answer.status != 200:
            fail(f"/healthz answered {answer.status} after the run")


def main():
    if len(sys.argv) != 2:
        fail("usage: api_check.py BINARY")
    validator = subprocess.run([os.path.join(BIN, "openapi-spec-validator"), DOCUMENT], capture_output=True, text=True)
    if validator.returncode != 0:
        fail("the document is not valid OpenAPI: " + validator.stdout + validator.stderr)
    with tempfile.NamedTemporaryFile("w", suffix=".token", delete=False) as token_file:
        token_file.write(TOKEN + "\n")
    servers = []
    try:
        reader, read_port = start(sys.argv[1], name="api_check")
        servers.append(reader)
        writer, write_port = start(
            sys.argv[1], "--writable", "--store", "memory", "--token-file", token_file.name, name="api_check")
        servers.append(writer)
        report = {
            "read": schemathesis(read_port, "--include-method", "GET"),
            "write": schemathesis(write_port, "--header", f"Authorization: Bearer {TOKEN}"),
        }
        alive(read_port)
        alive(write_port)
        print(json.dumps(report))
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
        os.unlink(token_file.name)


if __name__ == "__main__":
    main()
