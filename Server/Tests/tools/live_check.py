#!/usr/bin/env python3
"""Checks of a live `mapcluster serve --writable` from outside, with real processes, a real store and SIGKILL.

    live_check.py crash BINARY --store sqlite|postgres [--batches 50000] [--kills 10] [--postgres URL]
    live_check.py two-servers BINARY --postgres URL
    live_check.py changes BINARY
    live_check.py stop BINARY [--rounds 10] [--postgres URL]

`crash`: writers send single-point edits (and a few of two points) while the server is killed with SIGKILL at random
moments and started again; at the end every acknowledged edit is in the store and in the index, with its values, and
every edit not acknowledged is there whole or not at all.
`two-servers`: two servers over one PostgreSQL database; an edit sent to one is seen by the other within a second,
and their clusters agree.
`changes`: /api/changes streams an edit's changes to a subscriber, and a subscriber that doesn't read is told to
resync, while writes go on.
`stop`: SIGTERM to a server with 20 change streams open over the world at zooms 0-5, half of them never read, after
15 edits of 1,000 points (or while they are sent, every other round): it exits with status 0 within 10 s; every stream read gets a last event and is
closed, every stream not read is closed, and every edit is acknowledged or refused (with `--postgres`, over a database
of that server: refused only at the door, as the server stops, never for a store that stopped first).
Prints one JSON line of figures; exits non-zero with a message on the first failure.
"""
import argparse
import atexit
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

TOKEN = "live-check-token-0123456789"


def fail(message):
    print("FAILED: " + message, file=sys.stderr, flush=True)
    sys.exit(1)


class Server:
    """A `mapcluster serve` process: started, waited for, killed."""

    def __init__(self, binary, store, extra=(), token_file=None):
        self.binary, self.store, self.extra, self.token_file = binary, store, list(extra), token_file
        self.process = None
        self.port = None

    def start(self):
        arguments = [self.binary, "serve", "--port", "0", "--store", self.store] + self.extra
        if self.token_file:
            arguments += ["--writable", "--token-file", self.token_file]
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # A check that fails leaves no server behind (holding its database, for one).
        atexit.register(lambda process=self.process: process.poll() is None and process.kill())
        # Both pipes are read to their ends in threads, so that the server never blocks on a full one and a server
        # that hangs at start can't hang this script: it waits for the address line, the exit, or 120 s.
        self.output, self.errors = [], []
        for pipe, lines in ((self.process.stdout, self.output), (self.process.stderr, self.errors)):
            threading.Thread(target=lambda pipe=pipe, lines=lines: lines.extend(pipe), daemon=True).start()
        deadline = time.time() + 120
        while time.time() < deadline:
            for line in list(self.output):
                found = re.search(r"serving the map on http://[^:]+:(\d+)/", line)
                if found:
                    self.port = int(found.group(1))
                    return self
            if self.process.poll() is not None:
                time.sleep(0.2)
                fail("the server stopped at start: " + "".join(self.errors)[-2000:])
            time.sleep(0.02)
        self.process.kill()
        fail("the server did not start within 120 s: " + "".join(self.errors)[-2000:])

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            # The server logs each step of its stop: the last lines say where it waited; its threads' stacks, where gdb
            # is installed, whether one is blocked.
            stacks = ""
            if shutil.which("gdb"):
                stacks = subprocess.run(
                    ["gdb", "-p", str(self.process.pid), "-batch", "-ex", "thread apply all bt 30"],
                    capture_output=True, text=True, timeout=120).stdout
            self.kill()
            fail("the server did not stop within 30 s of SIGTERM; its log ends:\n" + "".join(self.errors[-15:])
                 + ("\nits threads:\n" + stacks[-12000:] if stacks else ""))


def request(port, method, path, body=None, timeout=30, token=TOKEN):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Authorization": "Bearer " + token} if token else {}
    if body is not None:
        headers["Content-Type"] = "application/geo+json"
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def feature(point_id, n):
    """The point of edit n: a place and properties that follow from n, so that any value can be checked."""
    longitude = round((n * 0.0137) % 340 - 170, 6)
    latitude = round((n * 0.0071) % 140 - 70, 6)
    return {"type": "Feature", "id": point_id, "geometry": {"type": "Point", "coordinates": [longitude, latitude]},
            "properties": {"n": n, "check": (n * 7919) % 1000}}


def ids_of(n):
    return ["e%d-a" % n, "e%d-b" % n] if n % 20 == 0 else ["e%d" % n]


# MARK: - Stores

class SQLiteStore:
    def __init__(self, directory):
        self.path = os.path.join(directory, "points.sqlite")
        self.location = self.path

    def points(self):
        db = sqlite3.connect(self.path)
        rows = db.execute("SELECT id, longitude, latitude, properties FROM mapcluster_points "
                          "WHERE id LIKE 'e%'").fetchall()
        db.close()
        return {row[0]: (row[1], row[2], json.loads(row[3])) for row in rows}

    def count(self):
        db = sqlite3.connect(self.path)
        count = db.execute("SELECT count(*) FROM mapcluster_points").fetchone()[0]
        db.close()
        return count


class PostgresStore:
    def __init__(self, url, name):
        parts = urllib.parse.urlsplit(url)
        self.admin = url
        psql(url, "DROP DATABASE IF EXISTS %s" % name)
        psql(url, "CREATE DATABASE %s" % name)
        self.location = urllib.parse.urlunsplit(parts._replace(path="/" + name))

    def points(self):
        out = psql(self.location, "SELECT json_agg(json_build_array(id, longitude, latitude, properties)) "
                                  "FROM mapcluster_points WHERE id LIKE 'e%'")
        rows = json.loads(out) if out.strip() else []
        return {row[0]: (row[1], row[2], row[3]) for row in rows or []}

    def count(self):
        return int(psql(self.location, "SELECT count(*) FROM mapcluster_points"))


def psql(url, command):
    done = subprocess.run(["psql", url, "-At", "-v", "ON_ERROR_STOP=1", "-c", command], capture_output=True,
                          text=True)
    if done.returncode != 0:
        fail("psql: " + done.stderr.strip())
    return done.stdout.strip()


def make_store(kind, directory, postgres, name):
    if kind == "sqlite":
        return SQLiteStore(directory)
    if not postgres:
        fail("--postgres URL is needed for a PostgreSQL store")
    return PostgresStore(postgres, name)


# MARK: - crash

def crash(arguments):
    directory = tempfile.mkdtemp(prefix="mapcluster-crash-")
    store = make_store(arguments.store, directory, arguments.postgres, "mapcluster_crash")
    token_file = os.path.join(directory, "token")
    with open(token_file, "w") as file:
        file.write(TOKEN + "\n")
    server = Server(arguments.binary, store.location, token_file=token_file).start()
    state = {"port": server.port, "up": True}
    lock = threading.Lock()
    up = threading.Event()
    up.set()
    acknowledged, uncertain = set(), set()
    next_edit = [0]
    total = arguments.batches
    started = time.time()

    def writer():
        connection = None
        while True:
            with lock:
                n = next_edit[0]
                if n >= total:
                    return
                next_edit[0] += 1
            features = [feature(point_id, n) for point_id in ids_of(n)]
            body = json.dumps(features[0] if len(features) == 1 else
                              {"type": "FeatureCollection", "features": features})
            up.wait()
            port = state["port"]
            try:
                if connection is None or connection.port != port:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                connection.request("POST", "/api/points", body=body,
                                   headers={"Authorization": "Bearer " + TOKEN})
                response = connection.getresponse()
                answer = response.read()
                if response.status != 200:
                    fail("edit %d: %d %s" % (n, response.status, answer[:300]))
                with lock:
                    acknowledged.add(n)
            except (OSError, http.client.HTTPException):
                # The server went away before answering: the edit may or may not have been committed.
                connection = None
                with lock:
                    uncertain.add(n)

    threads = [threading.Thread(target=writer) for _ in range(arguments.writers)]
    for thread in threads:
        thread.start()
    rng = random.Random(arguments.seed)
    kill_points = sorted(rng.sample(range(total // 20, total - total // 20), arguments.kills))
    restarts = []
    for point in kill_points:
        while next_edit[0] < point:
            time.sleep(0.002)
        time.sleep(rng.random() * 0.05)
        up.clear()
        server.kill()
        began = time.time()
        server = Server(arguments.binary, store.location, token_file=token_file).start()
        restarts.append(time.time() - began)
        state["port"] = server.port
        up.set()
    for thread in threads:
        thread.join()
    elapsed = time.time() - started

    # The store: every acknowledged edit whole, with its values; every other one whole or absent.
    stored = store.points()
    for n in list(acknowledged) + list(uncertain):
        present = [point_id in stored for point_id in ids_of(n)]
        if n in acknowledged and not all(present):
            fail("acknowledged edit %d is not in the store" % n)
        if any(present) and not all(present):
            fail("edit %d is half in the store: %s" % (n, present))
        for point_id in ids_of(n):
            if point_id in stored:
                expected = feature(point_id, n)
                longitude, latitude, properties = stored[point_id]
                if [longitude, latitude] != expected["geometry"]["coordinates"] or \
                        properties != expected["properties"]:
                    fail("edit %d is in the store with other values: %s" % (n, stored[point_id]))
    # The index, as the last server answers: exactly what the store holds.
    status, body = request(server.port, "GET", "/api/stats")
    index_count = json.loads(body)["points"]
    if index_count != store.count():
        fail("the index holds %d points, the store %d" % (index_count, store.count()))
    mismatches = []

    def check(numbers):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        for n in numbers:
            for point_id in ids_of(n):
                connection.request("GET", "/api/points/" + point_id)
                response = connection.getresponse()
                data = response.read()
                if point_id in stored:
                    answer = json.loads(data) if response.status == 200 else None
                    expected = feature(point_id, n)
                    if answer is None or answer["geometry"] != expected["geometry"] or \
                            answer["properties"] != expected["properties"]:
                        mismatches.append((point_id, response.status))
                elif response.status != 404:
                    mismatches.append((point_id, response.status))

    numbers = sorted(acknowledged | uncertain)
    checkers = [threading.Thread(target=check, args=(numbers[k::8],)) for k in range(8)]
    for thread in checkers:
        thread.start()
    for thread in checkers:
        thread.join()
    if mismatches:
        fail("the index and the store disagree on %d points, such as %s" % (len(mismatches), mismatches[:5]))
    server.stop()
    committed_uncertain = sum(1 for n in uncertain if ids_of(n)[0] in stored)
    print(json.dumps({
        "store": arguments.store, "edits": total, "acknowledged": len(acknowledged),
        "unacknowledged": len(uncertain), "unacknowledged_committed": committed_uncertain,
        "kills": len(kill_points), "seconds": round(elapsed, 1),
        "edits_per_second": round(total / elapsed), "restart_seconds_max": round(max(restarts or [0]), 2),
    }))


# MARK: - two servers

def two_servers(arguments):
    directory = tempfile.mkdtemp(prefix="mapcluster-two-")
    store = PostgresStore(arguments.postgres, "mapcluster_two")
    token_file = os.path.join(directory, "token")
    with open(token_file, "w") as file:
        file.write(TOKEN + "\n")
    first = Server(arguments.binary, store.location, token_file=token_file).start()
    second = Server(arguments.binary, store.location, token_file=token_file).start()
    delays = []
    for n in range(arguments.edits):
        writer, reader = (first, second) if n % 2 == 0 else (second, first)
        point = feature("t%d" % n, n)
        status, body = request(writer.port, "POST", "/api/points", json.dumps(point))
        if status != 200:
            fail("edit %d: %d %s" % (n, status, body[:300]))
        sent = time.time()
        while True:
            status, body = request(reader.port, "GET", "/api/points/t%d" % n, token=None)
            if status == 200 and json.loads(body)["geometry"] == point["geometry"]:
                break
            # The other server hears of it from PostgreSQL's NOTIFY, or polls every second: 30 s means neither works.
            # How soon it sees it is a figure, printed at the end, not a bound a loaded machine could miss.
            if time.time() - sent > 30:
                fail("edit %d sent to one server was not seen by the other within 30 s" % n)
            time.sleep(0.005)
        delays.append(time.time() - sent)
    # A batch moving many, and a delete, then the clusters of both agree everywhere asked.
    moved = [feature("t%d" % n, n + 100_000) for n in range(0, arguments.edits, 2)]
    status, _ = request(first.port, "POST", "/api/points", json.dumps({"type": "FeatureCollection",
                                                                       "features": moved}))
    status, _ = request(second.port, "DELETE", "/api/points/t1")
    for view in ["-180,-85,180,85&zoom=1", "-30,-60,60,20&zoom=4", "170,-20,-170,20&zoom=5"]:
        def agree():
            answers = [request(server.port, "GET", "/api/clusters?bbox=" + view, token=None)[1] for server in
                       (first, second)]
            return answers[0] == answers[1]
        wait_for(agree, "agreement of the two servers' clusters at bbox=%s" % view, 30)
    first.stop()
    second.stop()
    delays.sort()
    print(json.dumps({"edits": arguments.edits, "delay_ms_median": round(delays[len(delays) // 2] * 1000, 1),
                      "delay_ms_max": round(delays[-1] * 1000, 1)}))


# MARK: - changes

def changes(arguments):
    directory = tempfile.mkdtemp(prefix="mapcluster-changes-")
    token_file = os.path.join(directory, "token")
    with open(token_file, "w") as file:
        file.write(TOKEN + "\n")
    server = Server(arguments.binary, "memory", token_file=token_file).start()
    # A subscriber of Paris's surroundings reads the stream line by line.
    stream = socket.create_connection(("127.0.0.1", server.port))
    stream.sendall(b"GET /api/changes?bbox=2,48.5,3,49.2&zoom=10 HTTP/1.1\r\nHost: x\r\n\r\n")
    reader = stream.makefile("rb")
    events = []

    def read_events():
        event = {}
        for raw in reader:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("event: "):
                event["event"] = line[7:]
            elif line.startswith("data: "):
                event["data"] = json.loads(line[6:])
                events.append(event)
                event = {}
    threading.Thread(target=read_events, daemon=True).start()
    wait_for(lambda: any(e["event"] == "ready" for e in events), "the ready event")
    # A slow subscriber: it asks for the whole world at zoom 5 (a thousand markers, most of which each edit changes)
    # and never reads, with a small receive buffer, so that what the server sends it backs up.
    slow = socket.socket()
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.connect(("127.0.0.1", server.port))
    slow.sendall(b"GET /api/changes?bbox=-180,-85,180,85&zoom=5 HTTP/1.1\r\nHost: x\r\n\r\n")
    point = feature("paris-1", 1)
    point["geometry"]["coordinates"] = [2.35, 48.86]
    status, body = request(server.port, "POST", "/api/points", json.dumps(point))
    if status != 200:
        fail("edit: %d %s" % (status, body))
    wait_for(lambda: any(e["event"] == "changes" for e in events), "a changes event")
    change = [e for e in events if e["event"] == "changes"][0]["data"]
    if not (change["insertions"] or change["updates"]):
        fail("the change of an edit in view has no insertion or update: %s" % change)
    # Many edits, each moving 1,000 points around the world, while the slow subscriber reads nothing: its stream backs
    # up (past the kernel's buffers, megabytes on loopback), and every edit is still acknowledged promptly.
    started = time.time()
    latencies = []
    rng = random.Random(3)
    edits = 80
    for n in range(edits):
        points = [feature("van-%d" % rng.randrange(5000), rng.randrange(10**6)) for _ in range(1000)]
        body = json.dumps({"type": "FeatureCollection", "features": list({p["id"]: p for p in points}.values())})
        sent = time.time()
        status, _ = request(server.port, "POST", "/api/points", body)
        latencies.append(time.time() - sent)
        if status != 200:
            fail("edit %d while a subscriber is slow: %d" % (n, status))
    # Each edit was answered (a request that waited on the slow subscriber would have hit its 30 s timeout); how soon
    # is a figure, printed at the end.
    latencies.sort()
    # The slow one, read at last: it was told to resync (or kept up), and its stream still works.
    slow.settimeout(30)
    received = b""
    deadline = time.time() + 60
    while b"event: resync" not in received and time.time() < deadline:
        try:
            received += slow.recv(1 << 20)
        except socket.timeout:
            break
    resynced = b"event: resync" in received
    if not resynced:
        fail("a subscriber that fell %d versions behind was not told to resync" % edits)
    # Deleting the point: its marker goes from the stream of its view.
    count = len(events)
    status, _ = request(server.port, "DELETE", "/api/points/paris-1")
    if status != 200:
        fail("deleting paris-1: %d" % status)
    wait_for(lambda: any(e["event"] == "changes" and (e["data"]["removals"] or e["data"]["updates"])
                         for e in events[count:]), "change for the deleted point")
    server.stop()
    print(json.dumps({"events": len(events), "edit_ms_p99": round(latencies[int(len(latencies) * 0.99)] * 1000, 1),
                      "slow_subscriber_resynced": resynced, "seconds": round(time.time() - started, 1)}))


def stop(arguments):
    directory = tempfile.mkdtemp(prefix="mapcluster-stop-")
    token_file = os.path.join(directory, "token")
    with open(token_file, "w") as file:
        file.write(TOKEN + "\n")
    rng = random.Random(arguments.seed)
    stops = []
    for round_number in range(arguments.rounds):
        # Over PostgreSQL, a fresh database each round: the store must outlive the stop's requests, not just answer.
        store = PostgresStore(arguments.postgres, "mapcluster_stop").location if arguments.postgres else "memory"
        server = Server(arguments.binary, store, token_file=token_file).start()
        readers, idle = [], []
        for n in range(20):
            connection = socket.socket()
            if n % 2:
                # Never read, with a small receive buffer, so that what the server sends it backs up at once.
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            connection.connect(("127.0.0.1", server.port))
            connection.sendall(b"GET /api/changes?bbox=-180,-85,180,85&zoom=%d HTTP/1.1\r\nHost: x\r\n\r\n" % (n % 6))
            if n % 2:
                idle.append(connection)
            else:
                readers.append(StreamReader(connection))
        wait_for(lambda: all("ready" in r.events for r in readers), "ready event on every stream read", 60)
        answers, refusals = [], []

        def send_edits(first, count):
            for n in range(first, first + count):
                points = [feature("van-%d" % rng.randrange(100_000), rng.randrange(10**6)) for _ in range(1000)]
                unique = list({p["id"]: p for p in points}.values())
                body = json.dumps({"type": "FeatureCollection", "features": unique})
                try:
                    status, answer = request(server.port, "POST", "/api/points", body)
                    if status != 200:
                        refusals.append(answer.decode(errors="replace"))
                except (OSError, http.client.HTTPException):
                    status = None  # refused: the connection closed before an answer
                answers.append(status)

        senders = [threading.Thread(target=send_edits, args=(n * 5, 5)) for n in range(3)]
        for sender in senders:
            sender.start()
        # SIGTERM once every edit is answered (even rounds), or once three are, while the others are under way.
        wanted = 15 if round_number % 2 == 0 else 3
        wait_for(lambda: len(answers) >= wanted, "%d answered edits" % wanted, 300)
        stopped_at = time.time()
        server.process.send_signal(signal.SIGTERM)
        try:
            status = server.process.wait(timeout=arguments.limit)
        except subprocess.TimeoutExpired:
            server.kill()
            fail("round %d: the server was still running %d s after SIGTERM" % (round_number, arguments.limit))
        seconds = time.time() - stopped_at
        if status != 0:
            fail("round %d: the server exited with status %d after SIGTERM" % (round_number, status))
        for sender in senders:
            sender.join(60)
        wrong = [a for a in answers if a not in (200, 503, None)]
        if wrong or len(answers) != 15:
            fail("round %d: edits answered %s; each must be acknowledged (200) or refused" % (round_number, answers))
        # Refused at the door, never failed by a store that stopped before the edits it took were committed.
        failed = [answer for answer in refusals if "server is stopping" not in answer]
        if failed:
            fail("round %d: an edit under way at SIGTERM was not committed: %s" % (round_number, failed[0][:300]))
        for reader in readers:
            reader.thread.join(10)
            if reader.events[-1:] != ["end"] or not reader.closed:
                fail("round %d: a stream read got %s, closed: %s; its last event must be end" % (
                    round_number, reader.events[-3:], reader.closed))
        for connection in idle:
            connection.settimeout(10)
            try:
                while connection.recv(1 << 20):
                    pass
            except ConnectionResetError:
                pass
            except socket.timeout:
                fail("round %d: a stream not read was still open after the server stopped" % round_number)
            connection.close()
        stops.append(seconds)
    print(json.dumps({"rounds": len(stops), "stop_seconds_max": round(max(stops), 2),
                      "stop_seconds_median": round(sorted(stops)[len(stops) // 2], 2)}))


class StreamReader:
    """A change stream read to its end in a thread: the names of its events, and whether the server closed it."""

    def __init__(self, connection):
        self.events = []
        self.closed = False
        self.thread = threading.Thread(target=self.read, args=(connection.makefile("rb"),), daemon=True)
        self.thread.start()

    def read(self, lines):
        try:
            for raw in lines:
                line = raw.decode(errors="replace").rstrip("\r\n")
                if line.startswith("event: "):
                    self.events.append(line[7:])
        except OSError:
            pass
        self.closed = True


def wait_for(condition, what, seconds=10):
    deadline = time.time() + seconds
    while not condition():
        if time.time() > deadline:
            fail("no %s within %d s" % (what, seconds))
        time.sleep(0.01)


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("crash")
    one.add_argument("binary")
    one.add_argument("--store", choices=["sqlite", "postgres"], required=True)
    one.add_argument("--postgres")
    one.add_argument("--batches", type=int, default=50_000)
    one.add_argument("--kills", type=int, default=10)
    one.add_argument("--writers", type=int, default=16)
    one.add_argument("--seed", type=int, default=14)
    two = commands.add_parser("two-servers")
    two.add_argument("binary")
    two.add_argument("--postgres", required=True)
    two.add_argument("--edits", type=int, default=40)
    three = commands.add_parser("changes")
    three.add_argument("binary")
    four = commands.add_parser("stop")
    four.add_argument("binary")
    four.add_argument("--rounds", type=int, default=10)
    four.add_argument("--limit", type=float, default=10, help="the seconds a stop may take")
    four.add_argument("--seed", type=int, default=24)
    four.add_argument("--postgres", help="a PostgreSQL server's URL: the points live in a database of it")
    arguments = parser.parse_args()
    {"crash": crash, "two-servers": two_servers, "changes": changes, "stop": stop}[arguments.command](arguments)


if __name__ == "__main__":
    main()
