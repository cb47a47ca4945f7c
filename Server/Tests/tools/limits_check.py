#!/usr/bin/env python3
"""The server's limits, against a real `mapcluster serve` on loopback (standard library only).

    limits_check.py BINARY

Starts three servers on the bundled cities, with --request-timeout 2, --max-connections 4 and --rate-limit 5, and
checks:
- a slowloris client (a byte of its request every 0.25 s) is disconnected at the timeout, and a well-behaved client
  is answered promptly all the while;
- a kept-alive connection left idle is closed at the timeout too;
- with 4 connections held open, a fifth is answered only once one of them closes;
- a URL over 8 KiB is a 414, a query of 65 parameters a 400, both JSON; headers over 16 KiB are refused (a 4xx or a
  closed connection, never a 5xx) and the server goes on answering;
- a client's burst past its five requests a second is answered 429 with a Retry-After (its /healthz and /readyz
  still 200), while another client (from 127.0.0.2) is answered, and the first is answered again a second later.
Prints one JSON line of what it measured; exits 1 with the reason on the first failed check.
"""

import json
import re
import socket
import sys
import time

import server_process  # beside this file

TIMEOUT = 2.0


def fail(message):
    print("limits_check: " + message, file=sys.stderr)
    sys.exit(1)


def start(binary, *options):
    return server_process.start(binary, *options, name="limits_check")


def connect(port, source=None):
    """A connection to the server, from another loopback address (127.0.0.2: another client) if `source` says."""
    return socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0) if source else None)


def exchange(port, request, timeout=10, source=None, with_head=False):
    """Sends raw request bytes on a new connection; the status and body of the answer (and its head, with
    `with_head`), or (None, b"") if the server closed the connection without one."""
    with connect(port, source) as sock:
        sock.settimeout(timeout)
        try:
            sock.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass
        status, body, head = read_answer(sock, with_head=True)
        return (status, body, head) if with_head else (status, body)


def read_answer(sock, with_head=False):
    data = b""
    head = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return (None, b"", b"") if with_head else (None, b"")
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = re.search(rb"(?i)content-length: *(\d+)", head)
        while length and len(body) < int(length.group(1)):
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        status = int(head.split(b" ")[1])
        return (status, body, head) if with_head else (status, body)
    except ConnectionResetError:
        return (None, b"", head) if with_head else (None, b"")


def get(path):
    return f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()


def closed_within(sock, seconds):
    """Whether the server closes the connection within `seconds`: the time it took, or None."""
    start = time.time()
    sock.settimeout(seconds)
    try:
        while True:
            if not sock.recv(4096):
                return time.time() - start
    except socket.timeout:
        return None
    except ConnectionResetError:
        return time.time() - start


def slowloris(port):
    request = get("/api/stats")
    sock = connect(port)
    start = time.time()
    closed_after = None
    prompt = []
    for i, byte in enumerate(request[:-4]):
        try:
            sock.send(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            closed_after = time.time() - start
            break
        # Between its bytes, someone else is served.
        if i % 2 == 0:
            begin = time.time()
            status, _ = exchange(port, get("/api/stats"))
            if status != 200:
                fail(f"a prompt client got {status} beside the slow one")
            prompt.append(time.time() - begin)
        sock.settimeout(0.25)
        try:
            if sock.recv(4096) == b"":
                closed_after = time.time() - start
                break
        except socket.timeout:
            pass
        except ConnectionResetError:
            closed_after = time.time() - start
            break
        if time.time() - start > TIMEOUT * 4:
            break
    sock.close()
    if closed_after is None or not (TIMEOUT * 0.8 <= closed_after <= TIMEOUT + 1.5):
        fail(f"a slowloris client was not cut off at the {TIMEOUT} s timeout (closed after {closed_after})")
    if max(prompt) > 1.0:
        fail(f"a prompt client waited {max(prompt):.2f} s beside the slow one")
    return closed_after, max(prompt)


def idle_keep_alive(port):
    sock = connect(port)
    sock.sendall(b"GET /api/stats HTTP/1.1\r\nHost: localhost\r\n\r\n")
    status, _ = read_answer(sock)
    if status != 200:
        fail(f"a kept-alive request got {status}")
    closed = closed_within(sock, TIMEOUT + 2)
    sock.close()
    if closed is None:
        fail("an idle kept-alive connection was not closed at the timeout")
    return closed


def connection_limit(port):
    held = []
    for _ in range(4):
        sock = connect(port)
        # Each is accepted and answered, then kept alive: it holds its place.
        sock.sendall(b"GET /api/stats HTTP/1.1\r\nHost: localhost\r\n\r\n")
        status, _ = read_answer(sock)
        if status != 200:
            fail(f"a held connection got {status}")
        held.append(sock)
    fifth = connect(port)
    fifth.sendall(get("/api/stats"))
    fifth.settimeout(0.5)
    try:
        early = fifth.recv(4096)
    except socket.timeout:
        early = None
    if early:
        fail("a fifth connection was answered while 4 were open with --max-connections 4")
    start = time.time()
    held.pop().close()
    fifth.settimeout(10)
    status, _ = read_answer(fifth)
    waited = time.time() - start
    fifth.close()
    for sock in held:
        sock.close()
    if status != 200 or waited > 1.5:
        fail(f"the fifth connection got {status} {waited:.2f} s after a place was freed")
    return waited


def sizes(port):
    status, body = exchange(port, get("/api/clusters?bbox=1,2,3,4&zoom=3&pad=" + "x" * 9000))
    if status != 414 or json.loads(body).get("status") != 414:
        fail(f"a 9 KiB URL got {status} {body[:200]!r}")
    query = "&".join(f"p{i}=1" for i in range(65))
    status, body = exchange(port, get("/api/clusters?" + query))
    if status != 400 or "65 parameters" not in json.loads(body).get("error", ""):
        fail(f"65 query parameters got {status} {body[:200]!r}")
    big = b"GET /api/stats HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"y" * 20000 + b"\r\nConnection: close\r\n\r\n"
    status, body = exchange(port, big)
    if status is not None and not 400 <= status < 500:
        fail(f"20 KiB of headers got {status}")
    status, _ = exchange(port, get("/api/stats"))
    if status != 200:
        fail(f"after the oversized requests, /api/stats got {status}")


def rate_limit(port):
    """With --rate-limit 5: a client's burst past five requests is answered 429 with a Retry-After, another client
    is served all the while, and the first is served again once its allowance refills. The number answered."""
    statuses = []
    limited = None
    for _ in range(15):
        status, body, head = exchange(port, get("/api/stats"), with_head=True)
        statuses.append(status)
        if status == 429 and limited is None:
            limited = (body, head)
    answered = statuses.count(200)
    if not 5 <= answered <= 8 or statuses.count(429) != len(statuses) - answered:
        fail(f"15 quick requests with --rate-limit 5 got {statuses}")
    body, head = limited
    error = json.loads(body)
    if error.get("status") != 429 or "too many requests from 127.0.0.1" not in error.get("error", ""):
        fail(f"a limited request got {body[:200]!r}")
    retry = re.search(rb"(?i)\r\nretry-after: *(\d+)", head)
    if not retry or int(retry.group(1)) < 1:
        fail(f"a 429 without a Retry-After: {head!r}")
    # Probes are never limited: a load balancer would take a busy server for a dead one.
    for probe in ("/healthz", "/readyz"):
        status, _ = exchange(port, get(probe))
        if status != 200:
            fail(f"{probe} got {status} while 127.0.0.1 was limited: probes are exempt")
    status, _ = exchange(port, get("/api/stats"), source="127.0.0.2")
    if status != 200:
        fail(f"another client (127.0.0.2) got {status} while 127.0.0.1 was limited")
    time.sleep(1.2)
    status, _ = exchange(port, get("/api/stats"))
    if status != 200:
        fail(f"after its allowance refilled, 127.0.0.1 got {status}")
    return answered


def main():
    if len(sys.argv) != 2:
        fail("usage: limits_check.py BINARY")
    timed, timed_port = start(sys.argv[1], "--request-timeout", str(int(TIMEOUT)))
    bounded, bounded_port = start(sys.argv[1], "--max-connections", "4")
    rated, rated_port = start(sys.argv[1], "--rate-limit", "5")
    servers = (timed, bounded, rated)
    try:
        loris_closed, prompt_max = slowloris(timed_port)
        idle_closed = idle_keep_alive(timed_port)
        fifth_waited = connection_limit(bounded_port)
        sizes(bounded_port)
        answered = rate_limit(rated_port)
        for process in servers:
            if process.poll() is not None:
                fail(f"a server exited with {process.returncode}")
    finally:
        for process in servers:
            process.terminate()
            process.wait(timeout=30)
    print(json.dumps({
        "slowloris_closed_after_s": round(loris_closed, 2), "prompt_client_max_s": round(prompt_max, 3),
        "idle_closed_after_s": round(idle_closed, 2), "fifth_answered_after_free_s": round(fifth_waited, 3),
        "rate_limited_answered_of_15": answered,
    }))


if __name__ == "__main__":
    main()
