#!/usr/bin/env python3
"""The Leaflet page's frame rate while a live server's vehicles move: a browser measurement whose figures the live data
guide gives.

    python3 Server/scripts/live-fps.py BINARY [--vehicles 10000] [--seconds 20] [--view 5/50/10]

Starts `BINARY serve --writable --store memory`, opens the Leaflet page over Europe at zoom 5 in headless Chromium
(1280 × 800), starts Server/scripts/simulate.py (every vehicle moves once a second, in edits of 1,000 points), waits for
the first changes to reach the page, then counts the frames the page draws for --seconds with requestAnimationFrame,
and the long tasks (over 50 ms) a PerformanceObserver sees, and the changes of the page's nodes, attributes and text a
MutationObserver sees. Prints one JSON line: frames, frames a second, the median, 99th percentile and longest frame in
milliseconds, long tasks and the longest, the changes the page applied, and the DOM mutations in all and per change. Needs
`pip install playwright` and Chromium (`MAPCLUSTER_CHROMIUM`, default /usr/bin/chromium). The machine's other work
shows in the figures: run it alone.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from playwright.sync_api import sync_playwright

HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = os.environ.get("MAPCLUSTER_CHROMIUM", "/usr/bin/chromium")
TOKEN = "live-fps-token-0123456789"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--vehicles", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--view", default="5/50/10")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="mapcluster-fps-")
    token_file = os.path.join(work, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    server = subprocess.Popen([arguments.binary, "serve", "--port", "0", "--writable", "--store", "memory",
                               "--token-file", token_file], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = None
    for line in server.stdout:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if found:
            port = int(found.group(1))
            break
    if port is None:
        sys.exit("the server did not start")
    url = f"http://127.0.0.1:{port}/"
    simulation = None
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.add_init_script("window.mapclusterTest = {}")
            page.goto(url + "#" + arguments.view)
            page.wait_for_function("() => document.body.dataset.drawn !== undefined", timeout=60000)
            simulation = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "simulate.py"), "--url", url.rstrip("/"), "--token-file",
                 token_file, "--vehicles", str(arguments.vehicles)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            page.wait_for_function("() => (window.mapclusterTest.changes || 0) >= 2", timeout=120000)
            result = page.evaluate("""(seconds) => new Promise((done) => {
                const frames = [];
                const long = [];
                const observer = new PerformanceObserver((list) => long.push(...list.getEntries().map((e) => e.duration)));
                observer.observe({ entryTypes: ["longtask"] });
                const changes = window.mapclusterTest.changes;
                // Every change of the page's nodes, attributes and text while it is measured.
                let mutations = 0;
                const kinds = {};
                const watcher = new MutationObserver((records) => {
                    mutations += records.length;
                    for (const record of records) {
                        const kind = record.type === "attributes" ? "attribute " + record.attributeName : record.type;
                        kinds[kind] = (kinds[kind] || 0) + 1;
                    }
                });
                watcher.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
                const start = performance.now();
                let last = start;
                function frame(now) {
                    frames.push(now - last);
                    last = now;
                    if (now - start < seconds * 1000) requestAnimationFrame(frame);
                    else {
                        observer.disconnect();
                        watcher.disconnect();
                        done({ frames, long, changes: window.mapclusterTest.changes - changes, elapsed: now - start,
                               mutations, kinds });
                    }
                }
                requestAnimationFrame(frame);
            })""", arguments.seconds)
            browser.close()
    finally:
        if simulation:
            simulation.send_signal(signal.SIGINT)
            simulation.wait(timeout=30)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    frames = sorted(result["frames"][1:])
    elapsed = result["elapsed"] / 1000
    print(json.dumps({
        "vehicles": arguments.vehicles, "seconds": round(elapsed, 2), "frames": len(frames),
        "fps": round(len(frames) / elapsed, 1), "frame_ms_median": round(frames[len(frames) // 2], 1),
        "frame_ms_p99": round(frames[int(len(frames) * 0.99)], 1), "frame_ms_max": round(frames[-1], 1),
        "long_tasks": len(result["long"]), "longest_task_ms": round(max(result["long"], default=0), 1),
        "changes_applied": result["changes"], "dom_mutations": result["mutations"],
        "dom_mutations_per_change": round(result["mutations"] / max(result["changes"], 1), 1),
        "dom_mutations_by_kind": dict(sorted(result["kinds"].items(), key=lambda kind: -kind[1]))}))


if __name__ == "__main__":
    main()
