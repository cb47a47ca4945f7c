#!/usr/bin/env python3
"""The deployment files of deploy/ run as they are, against a real `mapcluster serve`.

    deploy_check.py cdn BINARY [--nginx /usr/sbin/nginx]
    deploy_check.py unit BINARY

`cdn`: deploy/nginx/mapcluster.conf in a real nginx on loopback (only its listen port, upstream port and cache folder
changed), in front of a live server (`--writable`, a memory store, `--cache-control "public, max-age=2"`). A tile asked
twice is served from nginx's cache the second time. After an edit, once the cached copy expires, nginx revalidates it
with If-None-Match: the edited tile comes back new (byte for byte the server's), and a tile the edit didn't touch comes
back 304 from the server and stays cached. /tiles.json through the proxy names the proxy's address.
`unit`: deploy/systemd/mapcluster.service run as systemd runs it: `systemd-analyze verify` (when there is one) on it
with the binary's path, then its ExecStart with its Environment= variables, in its WorkingDirectory and state
directory (temporary ones), with its credential; an edit with the token; KillSignal; it exits 0 within TimeoutStopSec;
started again, the edit is still there.
Prints one JSON line of figures; exits non-zero with a message on the first failure.
"""
import argparse
import http.client
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TOKEN = "deploy-check-token-0123456789"


def fail(message):
    print("FAILED: " + message, file=sys.stderr, flush=True)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def wait_until_ready(port, process, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            fail(f"the server stopped at start with status {process.returncode}")
        try:
            if request(port, "GET", "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    fail(f"the server was not ready within {seconds} s")


def drain(process):
    """Reads a process's pipes to their ends on threads, so that it never blocks on a full one."""
    lines = []
    for pipe in (process.stdout, process.stderr):
        if pipe:
            threading.Thread(target=lambda p=pipe: lines.extend(p), daemon=True).start()
    return lines


def feature(identifier, longitude, latitude):
    return json.dumps({"type": "Feature", "id": identifier, "geometry": {"type": "Point", "coordinates": [longitude, latitude]},
                       "properties": {"name": identifier, "continent": "EU", "population": 1000}})


def site(text, listen, upstream, cache):
    """The site with its three marked lines changed, each found exactly once."""
    for marker, line in (("cache", None), ("server", f"    server 127.0.0.1:{upstream};"), ("listen", f"    listen 127.0.0.1:{listen};")):
        pattern = re.compile(rf"^.*# deploy_check: {marker}$", re.M)
        found = pattern.findall(text)
        if len(found) != 1:
            fail(f"deploy/nginx/mapcluster.conf: {len(found)} lines marked 'deploy_check: {marker}', not 1")
        if marker == "cache":
            if "/var/cache/nginx/mapcluster" not in found[0]:
                fail("deploy/nginx/mapcluster.conf: the cache line names no /var/cache/nginx/mapcluster")
            line = found[0].replace("/var/cache/nginx/mapcluster", cache)
        text = pattern.sub(lambda _: line, text)
    return text


def cdn(arguments):
    nginx = arguments.nginx or shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        fail("no nginx: apt-get install nginx")
    work = tempfile.mkdtemp(prefix="mapcluster-cdn-")
    # nginx's workers run as nobody when it starts as root: they write the cache here.
    os.chmod(work, 0o777)
    server_port, proxy_port = free_port(), free_port()
    with open(os.path.join(ROOT, "deploy", "nginx", "mapcluster.conf")) as f:
        text = site(f.read(), proxy_port, server_port, os.path.join(work, "cache"))
    with open(os.path.join(work, "site.conf"), "w") as f:
        f.write(text)
    temporary = "".join(f"{name}_temp_path {work}/{name};\n    " for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(f"""daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {work}/access.log;
    {temporary}include {work}/site.conf;
}}
""")
    check = subprocess.run([nginx, "-t", "-p", work, "-c", os.path.join(work, "nginx.conf")], capture_output=True, text=True)
    if check.returncode != 0:
        fail("nginx -t refused the site: " + check.stderr[-2000:])
    token_file = os.path.join(work, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    server = subprocess.Popen(
        [arguments.binary, "serve", "--port", str(server_port), "--writable", "--store", "memory", "--token-file", token_file,
         "--cache-control", "public, max-age=2", "--trust-forwarded-headers"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    drain(server)
    proxy = subprocess.Popen([nginx, "-p", work, "-c", os.path.join(work, "nginx.conf")], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    drain(proxy)
    try:
        wait_until_ready(server_port, server)
        wait_until_ready(proxy_port, proxy)
        # Western Europe at tile zoom 5 (Paris is in 5/16/11), and an unrelated tile: Japan, 5/28/12.
        edited, untouched = "/tiles/5/16/11.mvt", "/tiles/5/28/12.mvt"
        statuses = {}
        for path in (edited, untouched):
            first = request(proxy_port, "GET", path)
            second = request(proxy_port, "GET", path)
            if first[0] != 200 or second[0] != 200:
                fail(f"{path}: {first[0]}, {second[0]} through the proxy")
            if first[1].get("x-cache-status") != "MISS" or second[1].get("x-cache-status") != "HIT":
                fail(f"{path}: the second request was not served from the proxy's cache: "
                     f"{first[1].get('x-cache-status')}, then {second[1].get('x-cache-status')}")
            if "etag" not in second[1] or second[1].get("cache-control") != "public, max-age=2":
                fail(f"{path}: the cached answer lacks its ETag or Cache-Control: {second[1]}")
            statuses[path] = second
        # The edit goes through the proxy too, as a client's would.
        status, _, body = request(proxy_port, "POST", "/api/points", feature("deploy-check-paris", 2.35, 48.86),
                                  {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/geo+json"})
        if status != 200:
            fail(f"the edit through the proxy: {status} {body[:300]!r}")
        # Until the copy expires it is served from the cache; then revalidated. nginx counts time in whole seconds, so
        # max-age=2 may last up to 3.
        time.sleep(3.5)
        after = request(proxy_port, "GET", edited)
        direct = request(server_port, "GET", edited, headers={"Accept-Encoding": "identity"})
        if after[1].get("x-cache-status") != "EXPIRED":
            fail(f"{edited} after the edit: {after[1].get('x-cache-status')}, not EXPIRED (fetched anew)")
        if after[2] == statuses[edited][2] or after[2] != direct[2] or after[1].get("etag") != direct[1].get("etag"):
            fail(f"{edited} after the edit: the proxy's tile is not the server's new one")
        again = request(proxy_port, "GET", untouched)
        if again[1].get("x-cache-status") != "REVALIDATED" or again[2] != statuses[untouched][2]:
            fail(f"{untouched} after the edit: {again[1].get('x-cache-status')}, not REVALIDATED (a 304 from the server)")
        tile_json = json.loads(request(proxy_port, "GET", "/tiles.json")[2])
        expected = f"http://127.0.0.1:{proxy_port}/tiles/{{z}}/{{x}}/{{y}}.mvt"
        if tile_json.get("tiles") != [expected]:
            fail(f"/tiles.json through the proxy names {tile_json.get('tiles')}, not {expected}")
        with open(os.path.join(work, "access.log")) as f:
            requests = sum(1 for _ in f)
        print(json.dumps({"cached": 2, "revalidated_304": 1, "refetched": 1, "proxy_requests": requests}), flush=True)
    finally:
        for process in (proxy, server):
            process.send_signal(signal.SIGTERM)
        for process in (proxy, server):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


def unit_fields(text):
    """The unit's [Service] settings, each a list of values in order."""
    fields, section = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]":
            key, _, value = line.partition("=")
            fields.setdefault(key, []).append(value)
    return fields


def unit(arguments):
    path = os.path.join(ROOT, "deploy", "systemd", "mapcluster.service")
    with open(path) as f:
        text = f.read()
    fields = unit_fields(text)
    work = tempfile.mkdtemp(prefix="mapcluster-unit-")
    binary = os.path.abspath(arguments.binary)
    verified = False
    if shutil.which("systemd-analyze"):
        # The unit as installed, with the binary where this one is and its credential where it can be read.
        copy = os.path.join(work, "mapcluster.service")
        with open(copy, "w") as f:
            f.write(text.replace("/usr/local/bin/mapcluster", binary).replace("/etc/mapcluster/token", os.path.join(work, "token")))
        result = subprocess.run(["systemd-analyze", "verify", copy], capture_output=True, text=True)
        problems = [line for line in (result.stdout + result.stderr).splitlines() if "mapcluster.service" in line]
        if problems:
            fail("systemd-analyze verify: " + "\n".join(problems))
        verified = True
    state = os.path.join(work, "state")
    credentials = os.path.join(work, "credentials")
    os.makedirs(state)
    os.makedirs(credentials)
    with open(os.path.join(credentials, "token"), "w") as f:
        f.write(TOKEN + "\n")
    if fields.get("StateDirectory") != ["mapcluster"] or fields.get("WorkingDirectory") != ["/var/lib/mapcluster"]:
        fail("the unit's StateDirectory and WorkingDirectory are not mapcluster and /var/lib/mapcluster")
    if fields.get("KillSignal") != ["SIGTERM"]:
        fail(f"the unit's KillSignal is {fields.get('KillSignal')}, not SIGTERM")
    stop_seconds = float(fields["TimeoutStopSec"][0])
    port = free_port()
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for value in fields.get("Environment", []):
        for assignment in shlex.split(value):
            name, _, setting = assignment.partition("=")
            environment[name] = setting.replace("%d", credentials).replace("/var/lib/mapcluster", state)
    environment["MAPCLUSTER_PORT"] = str(port)
    command = shlex.split(fields["ExecStart"][0])
    if command[0] != "/usr/local/bin/mapcluster" or command[1:] != ["serve"]:
        fail(f"the unit's ExecStart is {command}, not /usr/local/bin/mapcluster serve")
    command[0] = binary
    names = sorted(name for name in environment if name.startswith("MAPCLUSTER_"))

    def start():
        process = subprocess.Popen(command, cwd=state, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        drain(process)
        wait_until_ready(port, process)
        return process

    def stop(process):
        began = time.monotonic()
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=stop_seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            fail(f"the service did not stop within TimeoutStopSec={stop_seconds:g} s of SIGTERM")
        if status != 0:
            fail(f"the service exited with status {status} on SIGTERM")
        return time.monotonic() - began

    try:
        process = start()
        status, headers, _ = request(port, "GET", "/api/clusters?bbox=-180,-85,180,85&zoom=1")
        if status != 200 or headers.get("cache-control") != "public, max-age=5":
            fail(f"the service's clusters: {status}, Cache-Control {headers.get('cache-control')}")
        status, _, body = request(port, "POST", "/api/points", feature("deploy-check-unit", 10.0, 50.0),
                                  {"Authorization": f"Bearer {TOKEN}"})
        if status != 200:
            fail(f"an edit with the unit's token: {status} {body[:300]!r}")
        stopped = stop(process)
        if not os.path.exists(os.path.join(state, "points.sqlite")):
            fail("the store is not in the state directory")
        process = start()
        status, _, body = request(port, "GET", "/api/points/deploy-check-unit")
        if status != 200:
            fail(f"after a restart, the edit is gone: {status} {body[:200]!r}")
        stop(process)
        print(json.dumps({"verified": verified, "variables": names, "stop_seconds": round(stopped, 2)}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("check", choices=["cdn", "unit"])
    parser.add_argument("binary")
    parser.add_argument("--nginx")
    arguments = parser.parse_args()
    {"cdn": cdn, "unit": unit}[arguments.check](arguments)


if __name__ == "__main__":
    main()
