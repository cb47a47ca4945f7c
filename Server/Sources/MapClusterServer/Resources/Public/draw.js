// The markers on the Leaflet map: each view's features drawn in every world copy in view, kept where they stay,
// and glided where they split from or merge into (a zoom's parent cell, or what a live change says).

import { nearestCopy, worldCopies } from "./geo.js";
import { clusterHolds, parseClusterId } from "./ids.js";
import { accessibleName, count, key, markerHTML, popup, summary } from "./markers.js";
import { createScheduler } from "./scheduler.js";
import { diameter } from "./style.js";

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
    const marker = L.marker(from || at, { icon: L.divIcon({ className: "", html, iconSize: [size, size] }), keyboard: true });
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

  function labelled(marker, feature) {
    marker.feature = feature;
    const element = marker.getElement();
    if (!element) return;
    if (!element.dataset.keys && feature.properties.cluster) {
      // Enter or Space on a cluster is its click (Leaflet's keyboard handling opens popups only).
      element.dataset.keys = "on";
      element.addEventListener("keydown", (event) => {
        if (event.key !== "Enter" && event.key !== " ") return;
        event.preventDefault();
        click(marker.feature, marker, true);
      });
    }
    element.setAttribute("role", "button");
    element.setAttribute("aria-label", accessibleName(config, feature));
    element.dataset.key = key(feature);
  }

  // The markers in reading order, top to bottom and left to right: the order Tab takes them in. The focused one
  // keeps its focus.
  function reorder() {
    const entries = [...drawn.values()].filter((entry) => entry.marker && entry.marker.getElement());
    entries.sort((a, b) => (b.at.lat - a.at.lat) || (a.at.lng - b.at.lng));
    const elements = entries.map((entry) => entry.marker.getElement());
    const pane = map.getPane("markerPane");
    const current = [...pane.children].filter((element) => elements.includes(element));
    if (current.every((element, index) => element === elements[index])) return;
    const focused = document.activeElement;
    for (const element of elements) pane.appendChild(element);
    if (focused && elements.includes(focused)) focused.focus({ preventScroll: true });
  }

  // Glides a marker to a position, then calls done.
  function glide(marker, to, done) {
    const element = marker.getElement();
    if (!element) { marker.setLatLng(to); if (done) done(); return; }
    element.classList.add("moving");
    requestAnimationFrame(() => {
      marker.setLatLng(to);
      setTimeout(() => { element.classList.remove("moving"); if (done) done(); }, 380);
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
          if (live && kept.marker && !kept.at.equals(at)) glide(kept.marker, at); else if (kept.marker) kept.marker.setLatLng(at);
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
