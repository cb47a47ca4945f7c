// The MapCluster web map: clusters from /api/clusters, drawn with Leaflet over OpenStreetMap's tiles, or the bundled
// world outline where those can't be reached (basemap.js).
//
// The server keeps markers apart at the sizes /api/config gives, and this page draws them at exactly those sizes, in
// every world copy in view. The view and the category filter live in the URL hash (#zoom/lat/lon&categories=…).
// A test that wants to watch the page sets `window.mapclusterTest` to an object before it loads: the page then fills
// it with what it drew, and records the browser's long tasks.

import { bboxOf } from "./geo.js";
import { categoriesQuery, hashOf, parseHash, toggledCategories } from "./hash.js";
import { addBasemap } from "./basemap.js";
import { applyChange, follow } from "./live.js";
import { createMarkers } from "./draw.js";
import { outlineLayer } from "./outline.js";
import { createSpider } from "./spider.js";
import { DEFAULT_SIZES, colour, diameter, escape } from "./style.js";

const status = document.getElementById("status");
const hook = testHook();
const config = { categories: [], reductions: [], category_column: null, name_column: null, bounds: null, max_zoom: 18,
  markers: { ...DEFAULT_SIZES }, zoom_convention: "leaflet" };
// The API counts zooms as Leaflet does, or as MapLibre does (one less at the same scale), as its config says.
const apiZoom = (zoom) => (config.zoom_convention === "maplibre" ? Math.max(zoom - 1, 0) : zoom);
const leafletZoom = (zoom) => (config.zoom_convention === "maplibre" ? zoom + 1 : zoom);
const map = L.map("map", { worldCopyJump: true, minZoom: 0, maxZoom: 18 });
map.attributionControl.addAttribution("Made with Natural Earth · GeoNames, CC BY 4.0");
map.createPane("outline").style.zIndex = 200;

const spider = createSpider(map, config, hook, {
  changed: (message) => { markers.changed(); if (message) announce(message); },
  failed: showError,
});
const markers = createMarkers(map, config, hook, expand);
let controller = null;
let lastZoom = null;
let lastArea = null;
let started = false;
let outline = null;
// Whether the outline is drawn: not under a tile layer that loaded.
let outlineShown = true;
let stream = null;
let lastHash = null;

// What the page drew, in the object a test put on `window` (and Leaflet's map, not enumerable so that the hook still
// reads as plain data); a private object the page alone writes to otherwise.
function testHook() {
  const asked = window.mapclusterTest;
  const hook = Object.assign(asked && typeof asked === "object" ? asked : {},
    { requests: 0, pending: true, drawn: 0, markers: [], longTasks: [], spider: null, list: null, error: null, changes: 0 });
  if (!asked) return hook;
  const observed = window.PerformanceObserver && PerformanceObserver.supportedEntryTypes || [];
  if (observed.includes("longtask")) {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) hook.longTasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: "longtask", buffered: true });
  }
  return hook;
}
if (window.mapclusterTest === hook) Object.defineProperty(hook, "map", { value: map });

fetch("basemap.geojson")
  .then((response) => response.json())
  .then((answer) => {
    outline = outlineLayer(answer, () => { hook.outline = true; });
    if (started && outlineShown) outline.addTo(map);
  });

// A click on a cluster zooms to where it splits; where it never does within the map's zooms (its points share a
// place, or lie closer than the deepest zoom shows), it opens in place. From the keyboard, the view it left is kept for
// Escape, and the keyboard goes on from the first marker of the new view.
const views = [];
let keyboardMove = false;
function expand(feature, marker, fromKeyboard = false) {
  const zoom = feature.properties.expansion_zoom == null ? null : leafletZoom(feature.properties.expansion_zoom);
  const maxZoom = map.getMaxZoom();
  if (zoom != null && zoom <= maxZoom && map.getZoom() < maxZoom) {
    if (fromKeyboard) {
      views.push({ center: map.getCenter(), zoom: map.getZoom() });
      keyboardMove = true;
    }
    map.flyTo(marker.getLatLng(), Math.min(Math.max(zoom, map.getZoom() + 1), maxZoom));
  } else {
    spider.open(feature, marker, fromKeyboard);
  }
}

// Escape closes what a cluster opened in place, else goes back to the view a keyboard zoom left.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  if (spider.isOpen) {
    const anchor = spider.close();
    if (anchor) anchor.focus();
    announce("Closed the stack");
  } else if (views.length > 0) {
    const view = views.pop();
    keyboardMove = true;
    map.flyTo(view.center, view.zoom);
  }
});

// What a zoom or a live edit changed in the view, said by a polite live region.
const announcer = document.getElementById("announce");
let lastAnnounced = "";
function announce(text) {
  if (text === lastAnnounced) return;
  lastAnnounced = text;
  announcer.textContent = text;
  hook.announced = text;
}
function describeView(features) {
  const clusters = features.filter((feature) => feature.properties.cluster).length;
  const points = features.length - clusters;
  return `Zoom ${Math.round(map.getZoom() * 10) / 10}: ${clusters.toLocaleString("en-US")} clusters and ` +
    `${points.toLocaleString("en-US")} single points in view, ${hook.drawn.toLocaleString("en-US")} points in all`;
}

function currentHash(categories) {
  const center = map.getCenter().wrap();
  return hashOf(map.getZoom(), center.lat, center.lng, categories);
}

function selectedCategories() {
  return parseHash(location.hash).categories;
}

// The area to ask for: the view and a margin of the largest marker's radius, so that a marker whose center lies just
// outside still shows its edge. Longitudes unwrapped (the view's own), and as the API takes them.
function area() {
  const margin = diameter(config.markers, config.points || 1) / 2 + config.markers.gap;
  const pixels = map.getPixelBounds();
  const northWest = map.unproject(pixels.min.subtract([margin, margin]));
  const southEast = map.unproject(pixels.max.add([margin, margin]));
  return { west: northWest.lng, east: southEast.lng,
    bbox: bboxOf(northWest.lng, southEast.lat, southEast.lng, northWest.lat) };
}

function draw(features, asked, zoomedIn, zoomedOut, live) {
  markers.draw(features, asked, zoomedIn, zoomedOut, live);
  document.body.dataset.drawn = String(hook.drawn);
  document.body.dataset.markers = String(features.length);
  // The same view on the vector tile page, whose 512-point tiles make its zoom one less for the same scale.
  const center = map.getCenter();
  const tiles = `maplibre.html#${Math.max(map.getZoom() - 1, 0)}/${center.lat.toFixed(4)}/${center.lng.toFixed(4)}`;
  status.innerHTML = `${escape(hook.drawn.toLocaleString())} points in ${escape(features.length.toLocaleString())} markers · ` +
    `zoom ${escape(map.getZoom())} · <a href="${escape(tiles)}">vector tiles</a>`;
}

function showError(error) {
  hook.error = error.message;
  status.textContent = error.message;
}

// A live server streams the changes of the view (/api/changes): the page follows each view it shows, fetches its
// clusters once the stream is ready, and applies each change to the markers it drew, with the same glides as a zoom.
function refresh() {
  if (!config.live) { fetchClusters(); return; }
  if (stream) stream.close();
  hook.pending = true;
  const asked = area();
  stream = follow(`api/changes?bbox=${asked.bbox}&zoom=${apiZoom(map.getZoom())}${categoriesQuery(selectedCategories())}`, {
    ready: fetchClusters,
    resync: fetchClusters,
    change(change) {
      hook.changes += 1;
      const next = applyChange(hook.features, change);
      draw(next.features, lastArea, false, false, next);
      liveChanged(change.insertions.length + change.removals.length + change.updates.length);
    },
  });
}

// Live edits are said together, once every few seconds at most: a screen reader can't follow one a second, and each
// word said is a change of the page.
const LIVE_ANNOUNCEMENT_MS = 5000;
let liveMarkers = 0;
let liveTimer = null;
function liveChanged(markers) {
  liveMarkers += markers;
  if (liveTimer !== null) return;
  liveTimer = setTimeout(() => {
    liveTimer = null;
    const changed = liveMarkers;
    liveMarkers = 0;
    announce(`Live edits changed ${changed.toLocaleString("en-US")} ${changed === 1 ? "marker" : "markers"} in view; ` +
      `${hook.drawn.toLocaleString("en-US")} points in all`);
  }, LIVE_ANNOUNCEMENT_MS);
}

function fetchClusters() {
  if (controller) controller.abort(); // a newer view makes the last request stale
  controller = new AbortController();
  const zoom = map.getZoom();
  const zoomedIn = lastZoom !== null && zoom > lastZoom;
  const zoomedOut = lastZoom !== null && zoom < lastZoom;
  lastZoom = zoom;
  hook.requests += 1;
  hook.pending = true;
  hook.requesting = true;
  const asked = area();
  const following = stream;
  fetch(`api/clusters?bbox=${asked.bbox}&zoom=${apiZoom(zoom)}${categoriesQuery(selectedCategories())}`, { signal: controller.signal })
    .then((response) => response.json().then((body) => {
      if (!response.ok) throw new Error(body.error || response.statusText);
      return body;
    }))
    .then((collection) => {
      hook.requesting = false;
      hook.bbox = asked.bbox;
      hook.zoom = zoom;
      lastArea = asked;
      draw(collection.features, asked, zoomedIn, zoomedOut);
      if (zoomedIn || zoomedOut || lastAnnounced === "") announce(describeView(collection.features));
      if (keyboardMove) {
        // The keyboard goes on from the first marker of the view it moved to, once it is drawn.
        keyboardMove = false;
        focusFirstMarker();
      }
      if (following && following === stream) following.drawn();
    })
    .catch((error) => {
      if (error.name === "AbortError") return;
      hook.requesting = false;
      hook.pending = markers.busy;
      showError(new Error("could not load clusters: " + error.message));
    });
}

// MARK: - The legend

const legend = L.control({ position: "topright" });
legend.onAdd = () => L.DomUtil.create("div", "legend");
function drawLegend() {
  if (!config.categories.length) return;
  if (!legend.getContainer()) legend.addTo(map);
  const selected = selectedCategories();
  const entries = config.categories.map((name) => {
    const shown = selected === null || selected.includes(name);
    const target = currentHash(toggledCategories(config.categories, selected, name));
    return `<a class="legend-entry${shown ? "" : " off"}" data-category="${escape(name)}" href="${escape(target)}">` +
      `<span class="swatch" style="background:${colour(config.categories, name)}"></span>${escape(name)}</a>`;
  });
  const all = selected === null ? "" : `<a class="legend-entry all" href="${escape(currentHash(null))}">show all</a>`;
  legend.getContainer().innerHTML = `<div class="legend-title">${escape(config.category_column || "categories")}</div>${entries.join("")}${all}`;
  L.DomEvent.disableClickPropagation(legend.getContainer());
}

// MARK: - Starting

// Where the page opens: the hash's view, or the data fitted to the screen.
function startView() {
  const { view } = parseHash(location.hash);
  if (view) {
    map.setView([view.lat, view.lng], Math.min(view.zoom, map.getMaxZoom()), { animate: false });
    return;
  }
  if (!config.bounds) {
    map.setView([20, 0], 2, { animate: false });
    return;
  }
  const [west, south, east, north] = config.bounds;
  // A box across the antimeridian ends east of 180°.
  const fitted = L.latLngBounds([south, west], [north, east < west ? east + 360 : east]);
  map.fitBounds(fitted, { animate: false, padding: [24, 24], maxZoom: Math.min(12, map.getMaxZoom()) });
}

map.on("moveend", () => {
  if (!started) return;
  // The view goes in the hash without a history entry per pan; hashchange is not fired by this.
  const hash = currentHash(selectedCategories());
  if (hash !== location.hash) history.replaceState(null, "", hash);
  lastHash = location.hash;
  drawLegend();
  refresh();
});
map.on("zoomstart", spider.close);
map.on("click", spider.close);
// A legend click or an edited URL changes the hash: the view, the legend and the clusters follow it.
window.addEventListener("hashchange", () => {
  if (location.hash === lastHash) return;
  lastHash = location.hash;
  const { view } = parseHash(location.hash);
  const center = map.getCenter();
  if (view && (view.zoom !== map.getZoom() || Math.abs(view.lat - center.lat) > 1e-4 || Math.abs(view.lng - center.wrap().lng) > 1e-4)) {
    map.setView([view.lat, view.lng], Math.min(view.zoom, map.getMaxZoom()));
    return; // moveend refreshes
  }
  drawLegend();
  refresh();
});

fetch("api/config")
  .then((response) => response.json().then((body) => {
    if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
    return body;
  }))
  .then((answer) => {
    Object.assign(config, answer);
    map.setMaxZoom(config.max_zoom);
    const tiles = new URLSearchParams(location.search).get("tiles") || config.tiles;
    addBasemap(L, map, tiles, (shown) => {
      hook.basemap = shown;
      outlineShown = shown === "outline";
      if (outline && !outlineShown && map.hasLayer(outline)) map.removeLayer(outline);
    });
    startView();
    started = true;
    if (outline && outlineShown) outline.addTo(map);
    const hash = currentHash(selectedCategories());
    if (hash !== location.hash) history.replaceState(null, "", hash);
    lastHash = location.hash;
    drawLegend();
    refresh();
  })
  .catch((error) => {
    hook.pending = false;
    showError(new Error("could not load the server's configuration (/api/config): " + error.message));
  });

/// Focuses the first marker in reading order once the markers are drawn.
function focusFirstMarker() {
  const attempt = (tries) => {
    const first = map.getPane("markerPane").querySelector(".leaflet-marker-icon[tabindex]");
    if (first && !markers.busy) { first.focus(); return; }
    if (tries > 0) setTimeout(() => attempt(tries - 1), 100);
  };
  attempt(50);
}

