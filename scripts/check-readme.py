#!/usr/bin/env python3
"""Runs every command of README.md as a newcomer would, from the repository's root, and checks what it claims.

- Each `$ ` line of a ```console block runs in bash, in order, must exit 0, and must print each line the block shows
  under it (but `…`). A command that serves (`mapcluster serve`) runs in the background until /readyz answers 200;
  the block's later commands run while it serves (a `curl` must get a FeatureCollection with features), and it is
  stopped with SIGTERM at the block's end and must exit 0.
- The README's test command is the one .ci/run runs first, on the fresh clone: it must be there word for word, and is
  not run twice.
- The peer benchmark's commands run as written, then with `--rounds 1 --runs 1` and 2,000 points appended (the full
  run takes most of an hour; MAPCLUSTER_README_PEERS=full runs them as written alone).
- The Swift library's quick start shows Examples/HelloClusters' main.swift: the block must be that file, unchanged.
- "When something goes wrong": the tool must print the errors the README quotes, for a port in use, a CSV without a
  coordinate column, a bad value and a GeoJSON file without points.

The files the commands write (their `>FILE` and `-o FILE`: places.csv, places.pmtiles) are removed at the end. Needs the Swift
toolchain, python3 and curl; .ci/run runs it on its fresh clone. Usage: check-readme.py [README]
"""

import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
TEST_COMMAND = "swift test && swift test --package-path Server"
PEERS_SMOKE = ' --rounds 1 --runs 1 --configs "--n 2000 --dist clustered"'
# Where the peer benchmark's results go, which the README's chart command reads.
PEERS_RESULTS = "/tmp/mapcluster-peers-bench/results"
failures: list[str] = []
# A block run on a thread of its own (the peer benchmark's) keeps what it says here, printed once it ends.
output = threading.local()


def say(text: str) -> None:
    lines = getattr(output, "lines", None)
    if lines is None:
        print(text, flush=True)
    else:
        lines.append(text)


def fail(message: str) -> None:
    say(f"FAIL: {message}")
    failures.append(message)


def blocks(text: str, language: str) -> list[tuple[int, list[str]]]:
    """The blocks of a language: their first line's number and their lines."""
    found, current, start = [], None, 0
    for number, line in enumerate(text.split("\n"), start=1):
        if current is None:
            if line.strip() == f"```{language}":
                current, start = [], number + 1
        elif line.strip() == "```":
            found.append((start, current))
            current = None
        else:
            current.append(line)
    return found


def commands_and_output(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The `$ ` commands of a console block, continuation lines joined, each with the output lines shown under it."""
    found: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("$ "):
            found.append((line[2:], []))
        elif found and found[-1][0].rstrip().endswith("\\") and not found[-1][1]:
            found[-1] = (found[-1][0].rstrip()[:-1] + " " + line.strip(), [])
        elif found and line.strip() and line.strip() != "…":
            found[-1][1].append(line)
    return found


def commands(lines: list[str]) -> list[str]:
    """The `$ ` commands of a console block, continuation lines joined."""
    return [command for command, _ in commands_and_output(lines)]


def without_comment(command: str) -> str:
    """The command without a trailing `# …` comment: a `#` after a space, outside quotes."""
    quote = None
    for index, character in enumerate(command):
        if quote:
            quote = None if character == quote else quote
        elif character in "'\"":
            quote = character
        elif character == "#" and index > 0 and command[index - 1] == " ":
            return command[:index].rstrip()
    return command


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


def peers_smoke_results() -> str:
    """The folder of the peer benchmark's smoke results, made on first need and removed at exit."""
    global smoke_results
    if smoke_results is None:
        smoke_results = tempfile.TemporaryDirectory(prefix="mapcluster-readme-peers-")
    return smoke_results.name


smoke_results: tempfile.TemporaryDirectory | None = None


def run(command: str, where: str) -> subprocess.CompletedProcess:
    say(f"$ {command}")
    started = time.monotonic()
    result = subprocess.run(["bash", "-c", f"set -o pipefail; {command}"], cwd=ROOT, capture_output=True, text=True,
                            timeout=1800)
    say(f"  exit {result.returncode} after {time.monotonic() - started:.1f} s")
    if result.returncode != 0:
        fail(f"{where}: `{command}` exited {result.returncode}: {(result.stderr or result.stdout)[-1500:]}")
    return result


def check_console_block(start: int, lines: list[str]) -> None:
    server, port = None, 8080
    for command, shown in commands_and_output(lines):
        where = f"README.md:{start}"
        bare = without_comment(command).strip()
        if bare == TEST_COMMAND:
            ci = (ROOT / ".ci" / "run").read_text()
            if f"bash -c '{TEST_COMMAND}'" not in ci:
                fail(f"{where}: .ci/run does not run the README's test command `{TEST_COMMAND}`")
            else:
                say(f"$ {command}\n  run by .ci/run's first step, on the fresh clone")
            continue
        smoke = os.environ.get("MAPCLUSTER_README_PEERS") != "full"
        if bare.startswith("Benchmarks/peers/run-all.sh") and smoke:
            # Its results in a folder of their own, so that a full run's file (which the README's chart and table
            # are drawn from) takes no smoke lines.
            run(bare + PEERS_SMOKE + f" --out {peers_smoke_results()}", where)
            continue
        if bare.startswith("python3 scripts/peers-chart.py") and smoke:
            # The smoke run's chart, beside its results: the repository's chart stays that of the full run.
            chart = bare.replace(PEERS_RESULTS, peers_smoke_results())
            run(re.sub(r"-o\s+\S+", f"-o {peers_smoke_results()}/peers.svg", chart), where)
            continue
        if re.search(r"\bmapcluster serve\b", bare):
            if server is not None:
                stop(server, where)
            match = re.search(r"--port[ =](\d+)", bare)
            port = int(match.group(1)) if match else 8080
            if ready(port):
                fail(f"{where}: something already serves on port {port}; stop it and run this again")
                return
            say(f"$ {command}   (in the background)")
            # Its log goes to a file: a pipe nobody reads while it serves could fill and stop it.
            log = tempfile.TemporaryFile(mode="w+")
            server = subprocess.Popen(["bash", "-c", f"exec {bare}"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                      text=True, start_new_session=True)
            deadline = time.monotonic() + 600
            while not ready(port):
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    fail(f"{where}: `{command}` did not serve /readyz on port {port}: {log.read()[-1500:]}")
                    if server.poll() is None:
                        stop(server, where)
                    return
                time.sleep(0.5)
            say(f"  serving on port {port}")
            continue
        result = run(bare, where)
        printed = result.stdout.split("\n")
        for line in shown:
            if result.returncode == 0 and line not in printed:
                fail(f"{where}: `{command}` didn't print the line the README shows: {line!r}")
        if bare.startswith("curl") and result.returncode == 0:
            try:
                answer = json.loads(result.stdout)
            except ValueError:
                answer = None
            if not isinstance(answer, dict) or answer.get("type") != "FeatureCollection" or not answer.get("features"):
                fail(f"{where}: `{command}` answered {result.stdout[:300]!r}, not a FeatureCollection of clusters")
    if server is not None:
        stop(server, where)


def stop(server: subprocess.Popen, where: str) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        status = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        fail(f"{where}: the server did not stop within 30 s of SIGTERM")
        return
    if status != 0:
        fail(f"{where}: the server exited {status} on SIGTERM")
    else:
        say("  stopped with SIGTERM: exit 0")


def check_hello_clusters(text: str) -> None:
    source = ROOT / "Examples/HelloClusters/Sources/HelloClusters/main.swift"
    shown = ["\n".join(lines) + "\n" for _, lines in blocks(text, "swift")]
    if source.read_text() not in shown:
        fail(f"README.md: no Swift block is {source.relative_to(ROOT)} as it is")
    else:
        print(f"the README's Swift library block is {source.relative_to(ROOT)}, unchanged", flush=True)


def quoted_errors(text: str) -> list[str]:
    section = text.split("## When something goes wrong", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"`(Error: [^`]+)`", section.replace("\n  ", " "))


def check_errors(text: str) -> None:
    """The errors the README quotes are what the tool prints."""
    quoted = quoted_errors(text)
    binary = pathlib.Path(subprocess.run(["swift", "build", "--package-path", "Server", "--show-bin-path"], cwd=ROOT,
                                         capture_output=True, text=True, check=True).stdout.strip()) / "mapcluster"
    if not binary.exists():
        fail(f"no {binary}: the README's commands should have built it")
        return
    with tempfile.TemporaryDirectory() as scratch:
        work = pathlib.Path(scratch)
        (work / "places.csv").write_text("id,name,city\n1,Louvre,Paris\n")
        (work / "lines.geojson").write_text('{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},'
                                            '"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}]}')
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen()
            port = busy.getsockname()[1]
            in_use = next((quote for quote in quoted if quote.startswith("Error: Port 8080")), None)
            if in_use is None:
                fail("README.md's \"When something goes wrong\" quotes no error for a port in use")
            else:
                check_error([str(binary), "serve", "--port", str(port)], work, in_use.replace("8080", str(port)))
        no_column = next((quote for quote in quoted if "has no latitude column" in quote), None)
        if no_column is None:
            fail("README.md's \"When something goes wrong\" quotes no error for a file without coordinates")
        else:
            check_error([str(binary), "cluster", "places.csv", "--zoom", "3"], work, no_column)
        value = next((quote for quote in quoted if "is not a number" in quote), None)
        if value is None:
            fail("README.md's \"When something goes wrong\" quotes no error for a bad value")
        else:
            (work / "places.csv").write_text("id,lat,lon\n1,48.86,2.33\n2,abc,2.35\n")
            check_error([str(binary), "cluster", "places.csv", "--zoom", "3"], work, value)
        if "no points to cluster" not in text:
            fail("README.md doesn't say what a GeoJSON file without points gets")
        else:
            check_error([str(binary), "cluster", "lines.geojson", "--zoom", "3"], work,
                        "Error: lines.geojson: no points to cluster (1 features skipped)")


def check_error(arguments: list[str], where: pathlib.Path, want: str) -> None:
    result = subprocess.run(arguments, cwd=where, capture_output=True, text=True, timeout=120)
    # The tool names a file by its full path, which the README writes as `…/places.csv`.
    said = (result.stderr + result.stdout).replace(f"{where.resolve()}/", "…/").replace(f"{where}/", "…/")
    said = said.strip().split("\n")
    shown = " ".join(arguments[1:])
    if result.returncode == 0:
        fail(f"`mapcluster {shown}` succeeded; the README says it fails with {want!r}")
    elif want not in said:
        fail(f"`mapcluster {shown}` said {said!r}, not the README's {want!r}")
    else:
        print(f"`mapcluster {shown}`: {want}", flush=True)


def main() -> int:
    readme = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "README.md"
    text = readme.read_text()
    # What the commands write: their `>FILE` and `-o FILE`, removed at the end unless git tracks them.
    outputs = {match for _, lines in blocks(text, "console") for command in commands(lines)
               for match in re.findall(r"(?:>\s*|-o\s+)([\w.-]+)", without_comment(command))}
    try:
        beside = []
        for start, lines in blocks(text, "console"):
            if any(command.startswith("Benchmarks/peers/") for command in commands(lines)):
                # The peer benchmark builds and installs what it compares in a scratch folder of its own: it runs
                # beside the other blocks, which wait on servers more than they compute.
                said: list[str] = []

                def block(start: int = start, lines: list[str] = lines, said: list[str] = said) -> None:
                    output.lines = said
                    check_console_block(start, lines)

                thread = threading.Thread(target=block)
                thread.start()
                beside.append((start, thread, said))
                continue
            print(f"== the console block at README.md:{start}", flush=True)
            check_console_block(start, lines)
        for start, thread, said in beside:
            thread.join()
            print(f"== the console block at README.md:{start} (run beside the others)", flush=True)
            print("\n".join(said), flush=True)
        print("== the Swift library's quick start", flush=True)
        check_hello_clusters(text)
        print("== the errors the README quotes", flush=True)
        check_errors(text)
    finally:
        tracked = set(subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                     check=True).stdout.split())
        for name in sorted(outputs - tracked):
            if (ROOT / name).is_file():
                (ROOT / name).unlink()
                print(f"removed {name}, which a command wrote", flush=True)
    if failures:
        print(f"{len(failures)} of the README's commands or claims failed", flush=True)
        return 1
    print("every command of the README ran, and says what the README says", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
