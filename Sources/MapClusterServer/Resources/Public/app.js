// The MapCluster web map: clusters from /api/clusters, drawn with Leaflet over the bundled world outline.
(function () {
  "use strict";

  const status = document.getElementById("status");
  const map = L.map("map", { worldCopyJump: true, minZoom: 0, maxZoom: 18 }).setView([20, 0], 2);

  // State the page's test hook reads: what is drawn, and whether a request is pending.
  const hook = { requests: 0, pending: false, drawn: 0, markers: 0, features: [] };
  window.mapclusterTest = hook;

  fetch("/basemap.geojson")
    .then((response) => response.json())
    .then((outline) => {
      L.geoJSON(outline, {
        interactive: false,
        style: { color: "#8a9a8c", weight: 0.8, fillColor: "#f4f1ea", fillOpacity: 1 },
      }).addTo(map).bringToBack();
    });
  fetch("/api/config")
    .then((response) => response.json())
    .then((config) => {
      const tiles = new URLSearchParams(location.search).get("tiles") || config.tiles;
      if (tiles) L.tileLayer(tiles, { maxZoom: 19, attribution: "tiles: " + new URL(tiles.replace(/[{}]/g, "")).host }).addTo(map);
    });
  map.attributionControl.addAttribution("Made with Natural Earth · GeoNames, CC BY 4.0");

  const layer = L.layerGroup().addTo(map);
  let drawn = new Map(); // key → { marker, feature }
  let controller = null;
  let lastZoom = map.getZoom();

  // The Web Mercator unit square, as the server's grid has it.
  function unit(lat, lon) {
    const sin = Math.sin((Math.max(-85.05112878, Math.min(85.05112878, lat)) * Math.PI) / 180);
    return { x: (lon + 180) / 360, y: 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI) };
  }

  // Whether a cluster's cell (its id, "c<level>.<x>.<y>") holds a position.
  function cellHolds(id, lat, lon) {
    if (typeof id !== "string" || id[0] !== "c") return false;
    const [level, x, y] = id.slice(1).split(".").map(Number);
    const point = unit(lat, lon);
    const n = Math.pow(2, level);
    return Math.floor(point.x * n) === x && Math.floor(point.y * n) === y;
  }

  function key(feature) {
    return feature.properties.cluster ? "cluster:" + feature.properties.cluster_id : "point:" + feature.id;
  }

  function count(feature) {
    return feature.properties.cluster ? feature.properties.point_count : 1;
  }

  function latLng(feature) {
    const [lon, lat] = feature.geometry.coordinates;
    return L.latLng(lat, lon);
  }

  function icon(feature) {
    if (!feature.properties.cluster) {
      return L.divIcon({ className: "", html: '<div class="single" style="width:12px;height:12px"></div>', iconSize: [12, 12] });
    }
    const n = feature.properties.point_count;
    const size = Math.round(20 + 7 * Math.log10(n));
    const kind = n < 100 ? "small" : n < 1000 ? "medium" : "large";
    const label = feature.properties.point_count_abbreviated;
    return L.divIcon({
      className: "",
      html: `<div class="cluster ${kind}" style="width:${size}px;height:${size}px" data-count="${n}">${label}</div>`,
      iconSize: [size, size],
    });
  }

  function escape(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  function popup(feature) {
    const rows = Object.entries(feature.properties)
      .map(([name, value]) => `<tr><td>${escape(name)}</td><td>${escape(typeof value === "object" ? JSON.stringify(value) : value)}</td></tr>`)
      .join("");
    return `<strong>${escape(feature.id)}</strong><table class="popup-table">${rows}</table>`;
  }

  function makeMarker(feature, from) {
    const marker = L.marker(from || latLng(feature), { icon: icon(feature), keyboard: false });
    if (feature.properties.cluster) {
      marker.on("click", () => {
        const zoom = feature.properties.expansion_zoom;
        map.flyTo(latLng(feature), zoom == null ? map.getZoom() + 1 : Math.min(Math.ceil(zoom), map.getMaxZoom()));
      });
    } else {
      marker.bindPopup(popup(feature));
    }
    return marker;
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

  function draw(features, zoomedIn, zoomedOut) {
    const next = new Map();
    const previous = drawn;
    const oldClusters = [...previous.values()].filter((entry) => entry.feature.properties.cluster);
    for (const feature of features) {
      const k = key(feature);
      const kept = previous.get(k);
      if (kept) {
        kept.marker.setLatLng(latLng(feature));
        next.set(k, kept);
        continue;
      }
      const position = latLng(feature);
      // Zooming in: start where the cluster it split out of stood.
      const parent = zoomedIn && oldClusters.find((entry) => cellHolds(entry.feature.properties.cluster_id, position.lat, position.lng));
      const marker = makeMarker(feature, parent ? parent.marker.getLatLng() : null).addTo(layer);
      if (parent) glide(marker, position);
      next.set(k, { marker, feature });
    }
    for (const [k, entry] of previous) {
      if (next.has(k)) continue;
      const position = entry.marker.getLatLng();
      // Zooming out: glide into the cluster it merged into, then go.
      const into = zoomedOut && features.find((feature) => feature.properties.cluster && cellHolds(feature.properties.cluster_id, position.lat, position.lng));
      if (into) {
        const element = entry.marker.getElement();
        if (element) element.classList.add("leaving");
        glide(entry.marker, latLng(into), () => layer.removeLayer(entry.marker));
      } else {
        layer.removeLayer(entry.marker);
      }
    }
    drawn = next;
    hook.features = features;
    hook.markers = features.length;
    hook.drawn = features.reduce((sum, feature) => sum + count(feature), 0);
    document.body.dataset.drawn = String(hook.drawn);
    document.body.dataset.markers = String(hook.markers);
    status.textContent = `${hook.drawn.toLocaleString()} points in ${hook.markers.toLocaleString()} markers · zoom ${map.getZoom()}`;
  }

  // The bbox of the view and half a view around it, in the API's terms: longitudes wrapped, the whole world when
  // the view spans it.
  function bbox() {
    const bounds = map.getBounds().pad(0.5);
    let west = bounds.getWest();
    let east = bounds.getEast();
    if (east - west >= 360) { west = -180; east = 180; }
    const wrap = (lon) => ((((lon + 180) % 360) + 360) % 360) - 180;
    if (west !== -180 || east !== 180) { west = wrap(west); east = wrap(east); if (east === -180) east = 180; }
    const clamp = (lat) => Math.max(-85.05112878, Math.min(85.05112878, lat));
    return [west, clamp(bounds.getSouth()), east, clamp(bounds.getNorth())].map((v) => v.toFixed(6)).join(",");
  }

  function refresh() {
    if (controller) controller.abort(); // a newer view makes the last request stale
    controller = new AbortController();
    const zoom = map.getZoom();
    const zoomedIn = zoom > lastZoom;
    const zoomedOut = zoom < lastZoom;
    lastZoom = zoom;
    hook.requests += 1;
    hook.pending = true;
    fetch(`/api/clusters?bbox=${bbox()}&zoom=${zoom}`, { signal: controller.signal })
      .then((response) => response.json().then((body) => {
        if (!response.ok) throw new Error(body.error || response.statusText);
        return body;
      }))
      .then((collection) => { hook.pending = false; draw(collection.features, zoomedIn, zoomedOut); })
      .catch((error) => {
        if (error.name === "AbortError") return;
        hook.pending = false;
        status.textContent = "could not load clusters: " + error.message;
      });
  }

  map.on("moveend", refresh);
  refresh();
})();
