#!/usr/bin/env python3
"""Drives the MapLibre page (/maplibre.html) of a running `mapcluster serve` in headless Chromium with WebGL, and
reports what MapLibre drew, as JSON.

    maplibre_map.py URL views       for each view (a tile zoom and the tile corner it is centred on), the distinct
                                    features MapLibre rendered, each with its count and where it is on the screen
    maplibre_map.py URL click       clicks the largest cluster in a view: the zoom it asked for and the zoom reached
    maplibre_map.py URL offline     the page as it is with no MapLibre GL JS to load (its requests fail, as without a
                                    copy beside the server and offline): the message it shows, and its links
    maplibre_map.py URL live TOKEN  a live server's page over the Alps at tile zoom 6, then 20 edits through the API:
                                    the tiles the page fetched after its first load, those /api/tile-changes named, and
                                    whether each tile it holds is, byte for byte, what /tiles answers at the end

The page is 1024 × 1024 pixels, so that at a whole zoom centred on a tile corner it shows exactly 2 × 2 tiles. The
Swift test (Tests/mapclusterTests/MapLibreTests.swift) checks the report. WebGL runs on SwiftShader
(`--use-angle=swiftshader --enable-unsafe-swiftshader`). Needs `pip install playwright`; MapLibre GL JS comes from
the server (the `maplibre` Python package's copy, or the CDN).
"""

import hashlib
import json
import math
import os
import sys
import urllib.parse

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError, sync_playwright

import chromium
from api import edit, send

SIDE = 1024
# Tile zoom, and the tile corner (column, row) the view is centred on.
VIEWS = [(1, 1, 1), (2, 2, 1), (3, 4, 3), (5, 16, 11), (7, 65, 44), (9, 260, 176)]


def corner(z, x, y):
    """The longitude and latitude of a tile corner."""
    n = 2 ** z
    return x / n * 360 - 180, math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * y / n))))


def idle(page):
    """Waits until MapLibre has loaded every tile in view and drawn them."""
    page.wait_for_function("() => window.mapclusterTest && window.mapclusterTest.map && window.mapclusterTest.map.loaded()"
                           " && window.mapclusterTest.map.areTilesLoaded()")
    page.evaluate("() => new Promise((done) => { const m = window.mapclusterTest.map;"
                  " if (!m.isMoving() && m.loaded()) { m.once('idle', done); m.triggerRepaint(); } else m.once('idle', done); })")


def rendered(page):
    return page.evaluate("""() => {
        const t = window.mapclusterTest;
        return t.drawn().map((f) => {
            const [lon, lat] = f.geometry.coordinates;
            const p = t.map.project([lon, lat]);
            return { cluster: !!f.properties.cluster, count: f.properties.point_count || 1,
                     id: f.properties.cluster_id || String(f.id ?? f.properties.id), x: p.x, y: p.y,
                     expansion_zoom: f.properties.expansion_zoom ?? null };
        });
    }""")


def jump(page, z, lon, lat):
    page.evaluate("([z, lon, lat]) => window.mapclusterTest.map.jumpTo({ zoom: z, center: [lon, lat] })", [z, lon, lat])
    idle(page)


def views(page, url):
    page.goto(url + "maplibre.html")
    idle(page)
    report = []
    for z, x, y in VIEWS:
        lon, lat = corner(z, x, y)
        jump(page, z, lon, lat)
        bounds = page.evaluate("() => window.mapclusterTest.map.getBounds().toArray()")
        report.append({"z": z, "corner": [x, y], "zoom": page.evaluate("() => window.mapclusterTest.map.getZoom()"),
                       "bounds": bounds, "features": rendered(page),
                       "canvas": page.evaluate("() => { const c = window.mapclusterTest.map.getCanvas();"
                                               " return [c.clientWidth, c.clientHeight]; }")})
    screenshots = os.environ.get("MAPCLUSTER_SCREENSHOTS")
    if screenshots:
        jump(page, 3, 10, 48)
        page.screenshot(path=os.path.join(screenshots, "maplibre-europe.png"))
    return report


def click(page, url):
    page.goto(url + "maplibre.html")
    idle(page)
    lon, lat = corner(3, 4, 3)
    jump(page, 3, lon, lat)
    features = [f for f in rendered(page) if f["cluster"] and 0 <= f["x"] < SIDE and 0 <= f["y"] < SIDE]
    target = max(features, key=lambda f: f["count"])
    page.mouse.click(target["x"], target["y"])
    page.wait_for_function(f"() => Math.abs(window.mapclusterTest.map.getZoom() - 3) > 0.01")
    idle(page)
    return {"clicked": target, "zoom": page.evaluate("() => window.mapclusterTest.map.getZoom()"),
            "center": page.evaluate("() => window.mapclusterTest.map.getCenter().toArray()"),
            "features": rendered(page)}


def offline(page, url):
    # No copy beside the server and no network: every request for MapLibre GL JS fails.
    page.route("**/maplibre/**", lambda route: route.abort())
    page.route("https://unpkg.com/**", lambda route: route.abort())
    page.goto(url + "maplibre.html")
    page.wait_for_selector("#status.problem")
    return page.evaluate("""() => {
        const status = document.getElementById("status");
        return { text: status.textContent, links: [...status.querySelectorAll("a")].map((a) => a.getAttribute("href")),
                 map: !!(window.mapclusterTest && window.mapclusterTest.map) };
    }""")


def live(page, url, token):
    tile_requests = []
    page.on("request", lambda request: tile_requests.append(urllib.parse.urlsplit(request.url).path)
            if "/tiles/" in request.url else None)
    page.goto(url + "maplibre.html#6/46.5/9")
    idle(page)
    # The page follows its tiles' zooms once it is idle: wait for the stream's first event.
    page.wait_for_function("() => window.mapclusterTest.tiles && window.mapclusterTest.tiles.state.version !== null")
    first = len(tile_requests)
    held = page.evaluate("() => [...window.mapclusterTest.tiles.state.held.keys()]")
    for n in range(20):
        # Moves and adds inside the view (edits 0-14), and far away (15-19), which names no tile the page holds.
        if n < 15:
            body = {"type": "FeatureCollection", "features": [
                {"type": "Feature", "id": f"live-{n % 7}", "geometry": {"type": "Point", "coordinates": [
                    6 + (n * 0.37) % 6, 44.5 + (n * 0.23) % 4]}, "properties": {"name": f"live {n}", "continent": "EU"}}]}
        else:
            body = {"type": "FeatureCollection", "features": [
                {"type": "Feature", "id": f"far-{n}", "geometry": {"type": "Point", "coordinates": [-120 + n, -30]},
                 "properties": {"name": f"far {n}", "continent": "SA"}}]}
        last = edit(url, token, "POST", "/api/points", body)["version"]
    # Every edit's event applied: the page's tiles are of the last edit's version, and none is being fetched.
    try:
        page.wait_for_function("(last) => window.mapclusterTest.tiles.state.version >= last"
                               " && window.mapclusterTest.tiles.state.pending === 0", arg=last)
    except PlaywrightTimeoutError:
        held_now = page.evaluate("() => { const s = window.mapclusterTest.tiles.state;"
                                 " return { version: s.version, pending: s.pending, named: s.named.length }; }")
        raise SystemExit(f"the page never caught up with the last edit (version {last}) in"
                         f" {chromium.WAIT_MS // 1000} s: it holds {held_now}")
    idle(page)
    state = page.evaluate("""async () => {
        const s = window.mapclusterTest.tiles.state;
        const digests = {};
        for (const [key, bytes] of s.held) {
            digests[key] = bytes ? [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
                .map((b) => b.toString(16).padStart(2, "0")).join("") : null;
        }
        return { named: s.named, fetched: s.fetched, version: s.version, digests };
    }""")
    # The server's tiles now, uncompressed, as the page holds them.
    mismatched = []
    for key, digest in state["digests"].items():
        status, data = send(url, None, "GET", f"/tiles/{key}.mvt")
        served = hashlib.sha256(data).hexdigest() if status == 200 else None
        if served != digest:
            mismatched.append(key)
    requests_after = [path[len("/tiles/"):-len(".mvt")] for path in tile_requests[first:]]
    return {"held": held, "requests_after_load": requests_after, "named": state["named"],
            "fetched_after_load": state["fetched"][len(state["fetched"]) - len(requests_after):],
            "mismatched": mismatched, "version": state["version"], "tiles_held": len(state["digests"])}


def main():
    url, command = sys.argv[1], sys.argv[2]
    with sync_playwright() as playwright:
        browser = chromium.launch(playwright, *chromium.WEBGL, "--hide-scrollbars")
        page = chromium.new_page(browser, SIDE, SIDE)
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))

        def console(message):
            # A server of an archive has no /api/config: the page asks, and gets the 404 it expects.
            # Offline, the requests for MapLibre GL JS fail, as the test means them to.
            source = message.location.get("url", "")
            expected = source.endswith("/api/config") or (command == "offline" and "/maplibre/" in source)
            if message.type == "error" and not expected:
                errors.append(f"{message.text} ({message.location.get('url', '')})")
        page.on("console", console)
        if command == "views":
            result = views(page, url)
        elif command == "click":
            result = click(page, url)
        elif command == "offline":
            result = offline(page, url)
        elif command == "live":
            result = live(page, url, sys.argv[3])
        else:
            raise SystemExit(f"unknown command {command}")
        browser.close()
    json.dump({"result": result, "errors": errors}, sys.stdout)


if __name__ == "__main__":
    main()
