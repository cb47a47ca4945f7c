#!/usr/bin/env python3
"""The pages of a live `mapcluster serve --writable` as a keyboard and a screen reader meet them, in headless Chromium.

    accessibility.py URL TOKEN

Reports, as JSON:
- `axe`: axe-core's violations of its whole default rule set (the WCAG 2.1 A and AA rules and its best practices:
  one main landmark, a first-level heading, all content inside landmarks; the PyPI package axe-playwright-python) on
  the Leaflet page and the MapLibre page, each at the world view and at a city view (Paris);
- `leaflet`: the keyboard alone on the Leaflet page: Tab reaches a cluster and reads its name, Enter zooms to where it
  splits and the keyboard goes on from the new view's first marker, Escape goes back; a stack of three points at one
  place (sent through the API first) opens with Enter, its points are named, and Escape closes it and returns to it;
  what the polite live region said;
- `maplibre`: the same on the MapLibre page, through its list of markers: a cluster reached and named, Enter zooms in,
  Escape goes back;
- `docs`: the API reference at /docs: every request it made that left the server (none may), the operations it shows
  (method and path), what a broken document would show, and axe-core's violations there.
"""
import json
import sys

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import sync_playwright

import chromium
from api import edit

STACK = (-140.0, -30.0)


def settle(page, maplibre):
    if maplibre:
        page.wait_for_function("() => window.mapclusterTest.map && window.mapclusterTest.map.loaded()"
                               " && window.mapclusterTest.map.areTilesLoaded()")
        page.evaluate("() => new Promise((done) => { const m = window.mapclusterTest.map;"
                      " if (!m.isMoving() && m.loaded()) { m.once('idle', done); m.triggerRepaint(); } else m.once('idle', done); })")
    else:
        page.wait_for_function("() => document.body.dataset.drawn !== undefined && !window.mapclusterTest.pending")
    page.wait_for_timeout(300)


# Each page's zoom, and whether the focused element is one of its markers, as JavaScript expressions.
ZOOM = {False: "window.mapclusterTest.zoom", True: "window.mapclusterTest.map.getZoom()"}
ON_MARKER = {False: "document.activeElement.classList.contains('leaflet-marker-icon')",
             True: "document.activeElement.tagName === 'BUTTON'"}


def zoom(page, maplibre):
    return page.evaluate(f"() => {ZOOM[maplibre]}")


def focused(page):
    return page.evaluate("""() => { const e = document.activeElement;
        return e ? { name: e.getAttribute('aria-label') || e.textContent, role: e.getAttribute('role'),
                     tag: e.tagName, marker: e.classList.contains('leaflet-marker-icon') } : null; }""")


def tab_to(page, test, limit=60):
    """Presses Tab until the focused element passes `test`; what it passed on the way."""
    seen = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        element = focused(page)
        seen.append(element)
        if element and test(element):
            return element, seen
    return None, seen


def zoom_in_and_back(page, maplibre):
    """Enter on the focused cluster: the zoom before and after, the marker the keyboard lands on and what the live
    region said; then Escape, and the zoom it goes back to."""
    before = zoom(page, maplibre)
    page.keyboard.press("Enter")
    page.wait_for_function(f"(before) => ({ZOOM[maplibre]}) > before + 0.5", arg=before)
    settle(page, maplibre)
    page.wait_for_function(f"() => document.activeElement && ({ON_MARKER[maplibre]})")
    report = {"zoom_before": before, "zoom_after_enter": zoom(page, maplibre), "focused_after_enter": focused(page),
              "announced_after_enter": page.evaluate("() => document.getElementById('announce').textContent")}
    page.keyboard.press("Escape")
    page.wait_for_function(f"(before) => Math.abs(({ZOOM[maplibre]}) - before) < 0.01", arg=before)
    settle(page, maplibre)
    report["zoom_after_escape"] = zoom(page, maplibre)
    return report


def axe(page, url):
    report = []
    for path, maplibre in (("#2/20/0", False), ("#11/48.86/2.35", False), ("maplibre.html#1/20/0", True),
                           ("maplibre.html#10/48.86/2.35", True)):
        page.goto(url + path)
        settle(page, maplibre)
        report.append({"page": path, **axe_checks(page)})
    return report


def axe_checks(page):
    """axe-core's checks of the page as it is, with its default rules (every rule but the experimental ones): how many
    passed, and each violation with its nodes."""
    result = Axe().run(page)
    return {"passes": len(result.response["passes"]),
            "violations": [{"id": v["id"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"][:5]]}
                           for v in result.response["violations"]]}


def docs(browser, url):
    """/docs with every request watched: the page must draw the reference from the server alone."""
    origin = url.rstrip("/")
    page = chromium.new_page(browser, 1024, 768)
    requests = []
    page.on("request", lambda request: requests.append(request.url))

    def open_reference():
        page.goto(url + "docs")
        page.wait_for_function("() => document.getElementById('reference').getAttribute('aria-busy') === 'false'")

    open_reference()
    operations = page.eval_on_selector_all(
        "#reference section h3", "nodes => nodes.map(n => n.textContent.replace(/^(GET|POST|DELETE|PUT)/, '$1 '))")
    report = {"requests": list(requests),
              "outside": [r for r in requests if not r.startswith(origin) and not r.startswith("data:")],
              "operations": operations, "title": page.title(), **axe_checks(page)}
    # A document the page can't read: it says so, rather than staying blank.
    page.route("**/openapi.json", lambda route: route.fulfill(status=500, body="no"))
    open_reference()
    report["broken"] = page.inner_text("#reference")
    page.close()
    return report


def leaflet(page, url):
    report = {}
    page.goto(url + "#4/47/8")
    settle(page, False)
    cluster, seen = tab_to(page, lambda e: e["marker"] and (e["name"] or "").startswith("Cluster of"))
    report["cluster"] = cluster
    report["tabs_to_cluster"] = len(seen)
    report.update(zoom_in_and_back(page, False))

    # A stack: three points at one place, which no zoom splits.
    edit(url, TOKEN, "POST", "/api/points", {"type": "FeatureCollection", "features": [
        {"type": "Feature", "id": f"stack-{n}", "geometry": {"type": "Point", "coordinates": list(STACK)},
         "properties": {"name": f"Stacked {n}", "continent": "OC"}} for n in range(3)]})
    page.goto(url + f"#12/{STACK[1]}/{STACK[0]}")
    settle(page, False)
    stack, _ = tab_to(page, lambda e: e["marker"] and (e["name"] or "").startswith("Cluster of 3"))
    report["stack"] = stack
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.mapclusterTest.spider && document.activeElement"
                           " && (document.activeElement.getAttribute('aria-label') || '').startsWith('Stacked')")
    report["focused_in_stack"] = focused(page)
    page.keyboard.press("Tab")
    report["next_in_stack"] = focused(page)
    page.keyboard.press("Escape")
    page.wait_for_function("() => !window.mapclusterTest.spider")
    report["focused_after_closing"] = focused(page)
    report["announced_after_closing"] = page.evaluate("() => document.getElementById('announce').textContent")
    return report


def maplibre(page, url):
    report = {}
    page.goto(url + "maplibre.html#3/47/8")
    settle(page, True)
    cluster, seen = tab_to(page, lambda e: e["tag"] == "BUTTON" and (e["name"] or "").startswith("Cluster of"))
    report["cluster"] = cluster
    report["ring_shown"] = page.evaluate("() => JSON.stringify(window.mapclusterTest.map.getFilter('focus'))")
    report.update(zoom_in_and_back(page, True))
    return report


def main():
    global TOKEN
    url, TOKEN = sys.argv[1], sys.argv[2]
    errors = []
    with sync_playwright() as playwright:
        browser = chromium.launch(playwright, *chromium.WEBGL, "--hide-scrollbars")
        page = chromium.new_page(browser, 1024, 768)
        page.on("pageerror", lambda error: errors.append(str(error)))
        result = {"axe": axe(page, url), "leaflet": leaflet(page, url), "maplibre": maplibre(page, url),
                  "docs": docs(browser, url)}
        browser.close()
    json.dump({"result": result, "errors": errors}, sys.stdout)


if __name__ == "__main__":
    main()
