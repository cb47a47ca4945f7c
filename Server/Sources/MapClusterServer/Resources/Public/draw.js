// The markers on the Leaflet map: each view's features drawn in every world copy in view, kept where they stay,
// and glided where they split from or merge into (a zoom's parent cell, or what a live change says).

import { nearestCopy, worldCopies } from "./geo.js";
import { clusterHolds, parseClusterId } from "./ids.js";
import { accessibleName, count, key, markerHTML, popup, summary } from "./markers.js";
import { createScheduler } from "./scheduler.js";
import { diameter } from "./style.js";

/// How long a live marker keeps its transition after a glide: longer than the second between a vehicle's moves.
const LIVE_LINGER_MS = 1500;

/// The markers of `map` with `config`'s sizes; `hook` gets what is drawn, `click(feature, marker)` is a cluster's click.
export function createMarkers(map, config, hook, click) {
  const layer = L.layerGroup().addTo(map);
  let drawn = new Map(); // key@copy → { feature, at, marker }
  const scheduler = createScheduler(() => {
    changed();
    reorder();
    hook.drawMS = performance.now() - hook.drawStarted;
    hook.pending = hook.requesting;
  });

  // Every marker is a button a keyboard reaches (Leaflet's keyboard option: Tab, and Enter for its click), named for
  // a screen reader; `labelled` names it once it is on the map.
  function make(feature, at, from) {
    const { html, size } = markerHTML(config, feature);
    const icon = L.divIcon({ className: "", html, iconSize: [size, size] });
    // Named as the icon is made, before Leaflet puts it on the page: one insertion, rather than an insertion and three
    // changes of a node already shown.
    const createIcon = icon.createIcon.bind(icon);
    icon.createIcon = (old) => {
      const element = createIcon(old);
      element.setAttribute("role", "button");
      element.setAttribute("aria-label", accessibleName(config, feature));
      element.setAttribute("data-key", key(feature));
      if (feature.properties.cluster) listenForKeys(element, marker);
      return element;
    };
    const marker = L.marker(from || at, { icon, keyboard: true });
    marker.feature = feature;
    if (feature.properties.cluster) {
      marker.bindTooltip(summary(config, feature), { direction: "top", offset: [0, -size / 2] });
      marker.on("click", () => click(marker.feature, marker));
    } else {
      marker.bindPopup(popup(config, feature));
    }
    marker.on("add", () => labelled(marker, feature));
    return marker;
  }

  // Only what differs is written: a live page relabels every kept marker on every change, and each write of an
  // attribute is a mutation the browser handles, even of the value it had.
  function labelled(marker, feature) {
    marker.feature = feature;
    const element = marker.getElement();
    if (!element) return;
    // Its role and keys came with its icon (make); a live edit changes its name and key.
    setIfChanged(element, "aria-label", accessibleName(config, feature));
    setIfChanged(element, "data-key", key(feature));
  }

  // Enter or Space on a cluster is its click (Leaflet's keyboard handling opens popups only): one listener an element.
  function listenForKeys(element, marker) {
    if (element.dataset.keys) return;
    element.dataset.keys = "on";
    element.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      click(marker.feature, marker, true);
    });
  }

  function setIfChanged(element, name, value) {
    if (element.getAttribute(name) !== value) element.setAttribute(name, value);
  }

  // The markers in reading order, top to bottom and left to right: the order Tab takes them in. Only the markers out
  // of order move: those outside the longest run already in order (a live edit that moves a few vehicles moves a few
  // nodes, not every marker). The focused one keeps its focus.
  function reorder() {
    const entries = [...drawn.values()].filter((entry) => entry.marker && entry.marker.getElement());
    entries.sort((a, b) => (b.at.lat - a.at.lat) || (a.at.lng - b.at.lng));
    const elements = entries.map((entry) => entry.marker.getElement());
    const pane = map.getPane("markerPane");
    const wanted = new Map(elements.map((element, index) => [element, index]));
    const current = [...pane.children].filter((element) => wanted.has(element));
    const staying = inOrder(current.map((element) => wanted.get(element)));
    if (staying.size === elements.length) return;
    const focused = document.activeElement;
    // From the last to the first, each marker not staying goes just before its successor in reading order.
    for (let index = elements.length - 1; index >= 0; index -= 1) {
      if (staying.has(index)) continue;
      const next = index + 1 < elements.length ? elements[index + 1] : null;
      if (elements[index].nextSibling !== next) pane.insertBefore(elements[index], next);
    }
    if (focused && wanted.has(focused) && document.activeElement !== focused) focused.focus({ preventScroll: true });
  }

  // Glides a marker to a position, then calls done. A marker stays `moving` (its transition on) a while after its
  // glide, `linger` milliseconds: a live vehicle that moves every second glides again before then, and its class isn't
  // written twice a second. A zoom takes every marker's transition off, so that Leaflet's zoom animation runs alone.
  const gliding = new Map(); // element → the timer that ends its transition
  map.on("zoomstart", () => {
    for (const [element, timer] of gliding) { clearTimeout(timer); element.classList.remove("moving"); }
    gliding.clear();
  });
  function glide(marker, to, done, linger = 380) {
    const element = marker.getElement();
    if (!element) { marker.setLatLng(to); if (done) done(); return; }
    if (gliding.has(element)) clearTimeout(gliding.get(element)); else element.classList.add("moving");
    gliding.set(element, null);
    requestAnimationFrame(() => {
      marker.setLatLng(to);
      if (done) setTimeout(done, 380);
      if (!gliding.has(element)) return; // a zoom started meanwhile
      clearTimeout(gliding.get(element)); // a second glide in the same frame
      gliding.set(element, setTimeout(() => { gliding.delete(element); element.classList.remove("moving"); }, Math.max(linger, 380)));
    });
  }

  // The hook's markers: where each drawn one stands in the container (where it glides to, if it is on its way), and
  // its size.
  function changed() {
    hook.markers = [...drawn.values()].map(({ feature, at }) => {
      const point = map.latLngToContainerPoint(at);
      return { x: point.x, y: point.y, radius: diameter(config.markers, count(feature)) / 2, count: count(feature), id: key(feature) };
    });
  }

  // The drawn cluster whose id holds a position, in the world copy near it. Each entry's id is read once: a zoom
  // step asks every new marker about every old one.
  function holder(entries, lat, lng) {
    return entries.find((entry) => {
      if (!entry.feature.properties.cluster || Math.abs(entry.at.lng - lng) >= 180) return false;
      if (entry.id === undefined) entry.id = parseClusterId(entry.feature.properties.cluster_id);
      return clusterHolds(entry.id, lat, lng);
    });
  }

  /// Draws `features` over `area`'s unwrapped west…east. `zoomedIn`/`zoomedOut` glide markers out of and into the
  /// clusters drawn before; `live` (`{ from, into }`, by key) says where a live change's markers come from and go.
  function draw(features, area, zoomedIn, zoomedOut, live) {
    hook.drawStarted = performance.now();
    const next = new Map();
    const previous = drawn;
    const operations = [];
    const oldEntries = [...previous.values()];
    for (const feature of features) {
      const [lng, lat] = feature.geometry.coordinates;
      for (const shift of worldCopies(lng, area.west, area.east)) {
        const k = key(feature) + "@" + shift;
        const at = L.latLng(lat, lng + 360 * shift);
        const kept = previous.get(k);
        if (kept && kept.feature.properties.point_count === feature.properties.point_count) {
          // A live point that moved glides to its new place, with its new properties.
          if (kept.marker && !kept.at.equals(at)) {
            if (live) glide(kept.marker, at, null, LIVE_LINGER_MS); else kept.marker.setLatLng(at);
          }
          if (live && kept.marker && !feature.properties.cluster) kept.marker.setPopupContent(popup(config, feature));
          if (kept.marker) labelled(kept.marker, feature);
          kept.feature = feature;
          kept.at = at;
          next.set(k, kept);
          continue;
        }
        if (kept) operations.push(() => { if (kept.marker) layer.removeLayer(kept.marker); });
        // Zooming in: start where the cluster it split out of stood; a live change says where it came from, and a
        // kept marker with a new count starts where it was.
        const parent = zoomedIn && holder(oldEntries, lat, at.lng);
        const source = live && live.from.get(key(feature));
        const start = parent ? parent.at : kept ? kept.at : source ? L.latLng(source[1], source[0] + 360 * shift) : null;
        const entry = { feature, at, marker: null };
        operations.push(() => {
          if (drawn.get(k) !== entry) return; // a later draw replaced it before its turn
          entry.marker = make(feature, at, start).addTo(layer);
          if (start) glide(entry.marker, at);
        });
        next.set(k, entry);
      }
    }
    for (const [k, entry] of previous) {
      if (next.has(k)) continue;
      operations.push(() => {
        if (!entry.marker) return;
        // Zooming out: glide into the cluster it merged into, then go; a live change says where.
        const merged = live && live.into.get(key(entry.feature));
        const into = merged ? { at: L.latLng(merged[1], nearestCopy(merged[0], entry.at.lng)) }
          : zoomedOut && holder([...drawn.values()], entry.at.lat, entry.at.lng);
        if (into) {
          const element = entry.marker.getElement();
          if (element) element.classList.add("leaving");
          glide(entry.marker, into.at, () => layer.removeLayer(entry.marker));
        } else {
          layer.removeLayer(entry.marker);
        }
      });
    }
    drawn = next;
    hook.features = features;
    hook.drawn = features.reduce((sum, feature) => sum + count(feature), 0);
    scheduler.schedule(operations);
  }

  /// The marker of a feature key, drawn in the world copy nearest the view's centre.
  function element(featureKey) {
    return map.getPane("markerPane").querySelector(`[data-key="${CSS.escape(featureKey)}"]`);
  }

  return { draw, changed, element, get busy() { return scheduler.busy; } };
}

/// The positions, in a list of wanted indices, of its longest increasing run (not necessarily contiguous): the nodes
/// already in order, which need not move. O(n log n).
export function inOrder(indices) {
  const tails = []; // tails[k]: the position of the smallest last index of an increasing run of k + 1
  const previous = new Array(indices.length);
  for (let position = 0; position < indices.length; position += 1) {
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (indices[tails[middle]] < indices[position]) low = middle + 1; else high = middle;
    }
    previous[position] = low > 0 ? tails[low - 1] : -1;
    tails[low] = position;
  }
  const staying = new Set();
  for (let position = tails.length ? tails[tails.length - 1] : -1; position >= 0; position = previous[position]) {
    staying.add(indices[position]);
  }
  return staying;
}
