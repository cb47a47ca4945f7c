"""Debian's Chromium as every browser script starts it, and the pages they drive."""
import os

EXECUTABLE = os.environ.get("MAPCLUSTER_CHROMIUM", "/usr/bin/chromium")
# WebGL through SwiftShader, for MapLibre's pages.
WEBGL = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
# How long a page may take to load, and what a script waits for on it to come about, before the script gives up: a
# hang, not slowness, fails a test. The browser tests run side by side, and on two cores a first page has taken
# longer than Playwright's 30 s to load.
NAVIGATION_TIMEOUT_MS = 180_000
WAIT_MS = 120_000


def launch(playwright, *args):
    """Chromium, headless, with the given switches."""
    return playwright.chromium.launch(executable_path=EXECUTABLE, args=["--no-sandbox", *args])


def new_page(browser, width, height):
    """A page of `width` × `height` CSS pixels, on which the map pages fill in what they drew: they do that only for a
    test that asks, with `window.mapclusterTest`, before they load."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
    page.set_default_timeout(WAIT_MS)
    page.add_init_script("window.mapclusterTest = {}")
    return page
