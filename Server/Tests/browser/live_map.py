#!/usr/bin/env python3
"""Opens the web map of a live `mapcluster serve --writable` in headless Chromium, edits the points through the API,
and reports what the page did, as JSON: the page must follow the edits from /api/changes without fetching the
clusters again, and end up drawing what /api/clusters answers.

    live_map.py URL TOKEN [SCREENSHOT]

Needs `pip install playwright` (no browser download: it runs /usr/bin/chromium).
"""
import json
import sys
import time

from playwright.sync_api import sync_playwright

import chromium
from api import edit, send


def vans(count, longitude, latitude, step):
    return {"type": "FeatureCollection", "features": [
        {"type": "Feature", "id": "van-%d" % n,
         "geometry": {"type": "Point", "coordinates": [longitude + step * (n % 5), latitude + step * (n // 5)]},
         "properties": {"name": "van %d" % n, "continent": "EU"}} for n in range(count)]}


def drawn_keys(page):
    return page.evaluate("() => window.mapclusterTest.features.map((f) => (f.properties.cluster ? 'cluster:' + "
                         "f.properties.cluster_id : 'point:' + f.id) + '=' + (f.properties.point_count || 1))")


def reading_order(page):
    """Whether the markers' nodes are in reading order (north to south, then west to east: the order Tab takes), and
    how many were compared."""
    return page.evaluate("""() => {
        const at = new Map(window.mapclusterTest.features.map((f) => [
            (f.properties.cluster ? 'cluster:' + f.properties.cluster_id : 'point:' + f.id), f.geometry.coordinates]));
        const shown = [...document.querySelectorAll('.leaflet-marker-pane [data-key]')].map((e) => e.dataset.key)
            .filter((k) => at.has(k));
        const wanted = [...shown].sort((a, b) => (at.get(b)[1] - at.get(a)[1]) || (at.get(a)[0] - at.get(b)[0]));
        return { inOrder: shown.every((k, i) => k === wanted[i]), count: shown.length };
    }""")


def main():
    url, token = sys.argv[1], sys.argv[2]
    screenshot = sys.argv[3] if len(sys.argv) > 3 else None
    report = {"errors": []}
    with sync_playwright() as playwright:
        browser = chromium.launch(playwright)
        page = chromium.new_page(browser, 1024, 768)
        page.on("pageerror", lambda error: report["errors"].append(str(error)))
        # Over the Atlantic off Brittany, where no city is: what the page draws there is the edits.
        page.goto(url + "#8/47.0/-8.0")
        page.wait_for_function("() => window.mapclusterTest && window.mapclusterTest.requests > 0 && "
                               "!window.mapclusterTest.pending")
        requests = page.evaluate("() => window.mapclusterTest.requests")
        report["before"] = drawn_keys(page)
        # Ten vans a few kilometres apart: they appear without a fetch.
        edit(url, token, "POST", "/api/points", vans(10, -8.2, 46.9, 0.03))
        page.wait_for_function("() => window.mapclusterTest.changes >= 1")
        time.sleep(1)
        report["after_insert"] = drawn_keys(page)
        report["drawn_after_insert"] = page.evaluate("() => window.mapclusterTest.drawn")
        # They drive apart: the cluster splits into markers that glide out of it.
        spread = vans(10, -9.5, 46.0, 0.4)
        edit(url, token, "POST", "/api/points", spread)
        page.wait_for_function("() => window.mapclusterTest.changes >= 2")
        time.sleep(1)
        report["after_move"] = drawn_keys(page)
        report["order_after_move"] = reading_order(page)
        if screenshot:
            page.screenshot(path=screenshot)
        # Half of them are deleted.
        edit(url, token, "POST", "/api/points/delete", {"ids": ["van-%d" % n for n in range(0, 10, 2)]})
        page.wait_for_function("() => window.mapclusterTest.changes >= 3")
        time.sleep(1)
        report["after_delete"] = drawn_keys(page)
        report["drawn_after_delete"] = page.evaluate("() => window.mapclusterTest.drawn")
        report["order_after_delete"] = reading_order(page)
        report["refetches"] = page.evaluate("() => window.mapclusterTest.requests") - requests
        # What the server answers for the page's area now, to compare with what the page drew.
        bbox, zoom = page.evaluate("() => [window.mapclusterTest.bbox, window.mapclusterTest.zoom]")
        answer = json.loads(send(url, None, "GET", "/api/clusters?bbox=%s&zoom=%s" % (bbox, zoom))[1])
        report["server"] = [(f"cluster:{f['properties']['cluster_id']}" if f["properties"].get("cluster") else
                             f"point:{f['id']}") + "=" + str(f["properties"].get("point_count", 1))
                            for f in answer["features"]]
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
