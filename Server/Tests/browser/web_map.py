#!/usr/bin/env python3
"""Drives the web map of a running `mapcluster serve` in headless Chromium and reports what it drew, as JSON.

The Swift browser tests (Tests/mapclusterTests/WebMapTests.swift) start the server, run this script, and check the
report: this script only acts and measures. It drives Debian's Chromium through Playwright and reads the page's
`window.mapclusterTest` hook.

    web_map.py URL views        the markers at zooms 0-10 over the world, Europe, the Pacific seam and Paris
    web_map.py URL open         where the page opens, and the hash it writes
    web_map.py URL click LAT LON ZOOM
                                clicks the cluster at LAT LON seen at ZOOM: what opened (a ring or a list)
    web_map.py URL basemap      what lies under the clusters, by default and with ?tiles=none
    web_map.py URL smooth       zoom steps and pans: the longest main-thread task of each

Needs `pip install playwright` (no browser download: it runs /usr/bin/chromium).
"""

import json
import os
import sys
import time

from playwright.sync_api import sync_playwright

import chromium

WIDTH, HEIGHT = 1280, 800
VIEWS = [("world", 20, 0), ("Europe", 50, 10), ("seam", -15, 179), ("Paris", 48.85, 2.35)]


def settled(page, requests_before):
    """Waits until the page has answered a newer request than `requests_before` and drawn it."""
    page.wait_for_function(
        "(before) => { const h = window.mapclusterTest; return h && h.requests > before && !h.pending; }",
        arg=requests_before)
    # One more frame, so that the markers' positions are laid out.
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def requests(page):
    return page.evaluate("() => window.mapclusterTest ? window.mapclusterTest.requests : 0")


def snapshot(page):
    return page.evaluate("""() => {
        const h = window.mapclusterTest;
        return { zoom: h.zoom, bbox: h.bbox, markers: h.markers, drawn: h.drawn, error: h.error,
                 hash: location.hash, status: document.getElementById('status').textContent };
    }""")


def go(page, zoom, lat, lon):
    """Sets the view through the URL hash, as a shared link would, and waits for its markers."""
    before = requests(page)
    page.evaluate("([z, lat, lon]) => { location.hash = `#${z}/${lat}/${lon}`; }", [zoom, lat, lon])
    settled(page, before)


def views(page, url):
    page.goto(url)
    settled(page, 0)
    report = []
    for name, lat, lon in VIEWS:
        for zoom in range(0, 11):
            go(page, zoom, lat, lon)
            shot = snapshot(page)
            shot.update(view=name, center=[lat, lon])
            report.append(shot)
    screenshots = os.environ.get("MAPCLUSTER_SCREENSHOTS")
    if screenshots:
        page.wait_for_function("() => window.mapclusterTest.outline")
        for name, (zoom, lat, lon) in {"world": (2, 20, 0), "europe": (5, 50, 10), "seam": (4, -15, 179)}.items():
            go(page, zoom, lat, lon)
            time.sleep(0.8)  # the markers' glide
            page.screenshot(path=os.path.join(screenshots, f"web-map-{name}.png"))
    return report


def opening(page, url):
    page.goto(url)
    settled(page, 0)
    return snapshot(page)


def click(page, url, lat, lon, zoom):
    page.goto(f"{url}#{zoom}/{lat}/{lon}")
    settled(page, 0)
    # The marker nearest the center is the cluster to open.
    marker = page.evaluate(f"""() => {{
        const markers = window.mapclusterTest.markers;
        return markers.reduce((a, b) => Math.hypot(a.x - {WIDTH / 2}, a.y - {HEIGHT / 2})
            <= Math.hypot(b.x - {WIDTH / 2}, b.y - {HEIGHT / 2}) ? a : b);
    }}""")
    page.mouse.click(marker["x"], marker["y"])
    page.wait_for_function("() => { const h = window.mapclusterTest; return h.spider || h.list; }")
    opened = page.evaluate("() => ({ spider: window.mapclusterTest.spider, list: window.mapclusterTest.list })")
    if opened["list"]:
        # Scroll the list to its end, a page at a time, until every point is in it.
        for _ in range(100):
            state = page.evaluate("() => window.mapclusterTest.list")
            if state["loaded"] >= state["total"]:
                break
            page.evaluate("() => { const l = document.querySelector('.leaf-list'); l.scrollTop = l.scrollHeight; "
                          "l.dispatchEvent(new Event('scroll')); }")
            time.sleep(0.2)
        opened["list"] = page.evaluate("() => window.mapclusterTest.list")
        opened["items"] = page.evaluate("() => document.querySelectorAll('.leaf-list li').length")
        opened["scrollable"] = page.evaluate(
            "() => { const l = document.querySelector('.leaf-list'); return l.scrollHeight > l.clientHeight; }")
    opened["clicked"] = marker
    opened["markers"] = page.evaluate("() => window.mapclusterTest.markers")
    return opened


# A timer every 5 ms, whose lateness is how long the main thread was held: the long-task API only reports tasks over
# 50 ms, this gives the figure below that too.
HEARTBEAT = """
    window.__gaps = [];
    let last = performance.now();
    setInterval(() => {
        const now = performance.now();
        window.__gaps.push({ start: last, duration: now - last });
        last = now;
    }, 5);
"""


def smooth(page, url):
    """Zoom steps in and out and pans, each timed by the longest task the browser reported while it settled."""
    page.add_init_script(HEARTBEAT)
    page.goto(f"{url}#3/45/10")
    settled(page, 0)
    # The page has loaded when its outline is drawn too: what follows is use, not loading.
    page.wait_for_function("() => window.mapclusterTest.outline")
    time.sleep(1)
    steps = []
    actions = [("zoom in", "zoomIn()")] * 5 + [("pan", "panBy([400, 150])"), ("pan", "panBy([-300, 200])")] \
        + [("zoom out", "zoomOut()")] * 4 + [("pan", "panBy([500, -100])")]
    for name, action in actions:
        start = page.evaluate("() => performance.now()")
        before = requests(page)
        page.evaluate(f"() => {{ window.mapclusterTest.map.{action}; }}")
        settled(page, before)
        # Let late tasks (the markers' glide) land before reading.
        time.sleep(0.5)
        tasks = page.evaluate("(start) => window.mapclusterTest.longTasks.filter((t) => t.start >= start)", start)
        held = page.evaluate("(start) => Math.max(0, ...window.__gaps.filter((g) => g.start >= start).map((g) => g.duration))",
                             start)
        shot = snapshot(page)
        steps.append({"action": name, "zoom": shot["zoom"], "markers": len(shot["markers"]),
                      "draw_ms": page.evaluate("() => window.mapclusterTest.drawMS"),
                      "longest_task_ms": max([t["duration"] for t in tasks], default=0),
                      "longest_hold_ms": held,
                      "blocked_ms": sum(t["duration"] for t in tasks),
                      "elapsed_ms": page.evaluate("() => performance.now()") - start})
    return steps


def basemap(page, url):
    """What the page shows under the clusters: by default (OpenStreetMap's tiles if the browser reaches them, else the
    outline), then with ?tiles=none. For each: the basemap the page settled on, the attribution, whether the outline
    is drawn, and how many requests went to OpenStreetMap."""
    osm = []
    page.on("request", lambda request: osm.append(request.url) if "tile.openstreetmap.org" in request.url else None)
    report = {}
    for name, address in (("default", url), ("none", url + "?tiles=none")):
        osm.clear()
        page.goto(address)
        settled(page, 0)
        page.wait_for_function("() => ['outline', 'osm'].includes(window.mapclusterTest.basemap)")
        if page.evaluate("() => window.mapclusterTest.basemap") == "outline":
            page.wait_for_function("() => window.mapclusterTest.outline")
        report[name] = page.evaluate("""() => ({
            basemap: window.mapclusterTest.basemap, outline: !!window.mapclusterTest.outline,
            attribution: document.querySelector('.leaflet-control-attribution').textContent,
            tileLayers: document.querySelectorAll('.leaflet-tile-pane .leaflet-layer').length,
            markers: window.mapclusterTest.drawn })""")
        report[name]["osmRequests"] = len(osm)
    return report


def main():
    url, command = sys.argv[1], sys.argv[2]
    with sync_playwright() as playwright:
        browser = chromium.launch(playwright, "--disable-gpu", "--hide-scrollbars")
        page = chromium.new_page(browser, WIDTH, HEIGHT)
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        if command == "views":
            result = views(page, url)
        elif command == "open":
            result = opening(page, url)
        elif command == "click":
            result = click(page, url, float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
        elif command == "smooth":
            result = smooth(page, url)
        elif command == "basemap":
            result = basemap(page, url)
        else:
            raise SystemExit(f"unknown command {command}")
        browser.close()
    json.dump({"result": result, "errors": errors}, sys.stdout)


if __name__ == "__main__":
    main()
