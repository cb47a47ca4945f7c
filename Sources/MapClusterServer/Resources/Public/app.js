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
  // What clusters carry (the categories, drawn as donuts, and the reductions, in their tooltips) comes from the
  // config; the first request waits for it.
  let config = { categories: [], reductions: [], category_column: null };
  const configured = fetch("/api/config")
    .then((response) => response.json())
    .then((answer) => {
      config = answer;
      const tiles = new URLSearchParams(location.search).get("tiles") || config.tiles;
      if (tiles) L.tileLayer(tiles, { maxZoom: 19, attribution: "tiles: " + new URL(tiles.replace(/[{}]/g, "")).host }).addTo(map);
      drawLegend();
    })
    .catch(() => {});
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

  // One colour per category, in the config's order (a qualitative palette that stays apart for the colour-blind).
  const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
  function colour(category) {
    const index = config.categories.indexOf(category);
    return index < 0 ? "#1f5f99" : palette[index % palette.length];
  }

  // The categories shown: null for all of them. The URL's hash keeps them (#categories=EU,AS), so a filtered map
  // can be shared, and the legend's entries are links to the hash with their category toggled.
  function selectedCategories() {
    const match = /(?:^#|&)categories=([^&]*)/.exec(location.hash);
    return match ? decodeURIComponent(match[1]).split(",").filter((name) => name) : null;
  }

  function filterHash(categories) {
    return categories === null ? "#" : "#categories=" + categories.map(encodeURIComponent).join(",");
  }

  const legend = L.control({ position: "topright" });
  legend.onAdd = () => L.DomUtil.create("div", "legend");
  function drawLegend() {
    if (!config.categories.length) return;
    if (!legend.getContainer()) legend.addTo(map);
    const selected = selectedCategories();
    const shown = (name) => selected === null || selected.includes(name);
    const entries = config.categories.map((name) => {
      const toggled = shown(name)
        ? (selected || config.categories).filter((other) => other !== name)
        : [...selected, name];
      // Every category shown again is no filter at all.
      const target = toggled.length === config.categories.length ? null : toggled;
      return `<a class="legend-entry${shown(name) ? "" : " off"}" data-category="${escape(name)}" href="${filterHash(target)}">` +
        `<span class="swatch" style="background:${colour(name)}"></span>${escape(name)}</a>`;
    });
    const all = selected === null ? "" : `<a class="legend-entry all" href="#">show all</a>`;
    legend.getContainer().innerHTML = `<div class="legend-title">${escape(config.category_column || "categories")}</div>${entries.join("")}${all}`;
    L.DomEvent.disableClickPropagation(legend.getContainer());
  }

  // A cluster with categories is a donut: one arc per category, sized by its share of the count, the count inside.
  function donut(feature, size) {
    const categories = feature.properties.categories || {};
    const total = feature.properties.point_count;
    const radius = size / 2;
    const inner = radius * 0.62;
    let angle = -Math.PI / 2;
    const arcs = config.categories.filter((name) => categories[name] > 0).map((name) => {
      const value = categories[name];
      const sweep = (value / total) * 2 * Math.PI;
      const start = angle;
      angle += sweep;
      const attributes = `data-category="${escape(name)}" data-value="${value}" fill="${colour(name)}"`;
      if (value === total) {
        // The whole ring: two half arcs, since one arc can't start and end at one point.
        return `<path ${attributes} fill-rule="evenodd" d="M${radius},0 A${radius},${radius} 0 1 1 ${radius},${size} A${radius},${radius} 0 1 1 ${radius},0 Z ` +
          `M${radius},${radius - inner} A${inner},${inner} 0 1 0 ${radius},${radius + inner} A${inner},${inner} 0 1 0 ${radius},${radius - inner} Z"/>`;
      }
      const point = (r, a) => `${(radius + r * Math.cos(a)).toFixed(2)},${(radius + r * Math.sin(a)).toFixed(2)}`;
      const large = sweep > Math.PI ? 1 : 0;
      return `<path ${attributes} d="M${point(radius, start)} A${radius},${radius} 0 ${large} 1 ${point(radius, angle)} ` +
        `L${point(inner, angle)} A${inner},${inner} 0 ${large} 0 ${point(inner, start)} Z"/>`;
    });
    return `<svg class="donut" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}">${arcs.join("")}` +
      `<circle cx="${radius}" cy="${radius}" r="${inner}" fill="#fff"/></svg>`;
  }

  function icon(feature) {
    if (!feature.properties.cluster) {
      const category = config.category_column ? feature.properties[config.category_column] : null;
      return L.divIcon({
        className: "",
        html: `<div class="single" style="width:12px;height:12px;background:${colour(category)}"></div>`,
        iconSize: [12, 12],
      });
    }
    const n = feature.properties.point_count;
    const label = feature.properties.point_count_abbreviated;
    if (feature.properties.categories) {
      const size = Math.round(26 + 8 * Math.log10(n));
      return L.divIcon({
        className: "",
        html: `<div class="cluster donut-cluster" style="width:${size}px;height:${size}px" data-count="${n}">${donut(feature, size)}<span>${label}</span></div>`,
        iconSize: [size, size],
      });
    }
    const size = Math.round(20 + 7 * Math.log10(n));
    const kind = n < 100 ? "small" : n < 1000 ? "medium" : "large";
    return L.divIcon({
      className: "",
      html: `<div class="cluster ${kind}" style="width:${size}px;height:${size}px" data-count="${n}">${label}</div>`,
      iconSize: [size, size],
    });
  }

  function escape(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  function formatted(value) {
    return typeof value === "number" ? value.toLocaleString("en-US", { maximumFractionDigits: 2 }) : value;
  }

  function popup(feature) {
    const rows = Object.entries(feature.properties)
      .map(([name, value]) => `<tr><td>${escape(name)}</td><td>${escape(typeof value === "object" ? JSON.stringify(value) : formatted(value))}</td></tr>`)
      .join("");
    return `<strong>${escape(feature.properties.name || feature.id)}</strong><table class="popup-table">${rows}</table>`;
  }

  // What a cluster's members add up to: its count, each reduction (as "population sum"), its categories.
  function summary(feature) {
    const properties = feature.properties;
    const rows = [`<tr><td>points</td><td>${formatted(properties.point_count)}</td></tr>`];
    for (const name of config.reductions) {
      if (properties[name] != null) rows.push(`<tr><td>${escape(name.replace(/_/g, " "))}</td><td>${escape(formatted(properties[name]))}</td></tr>`);
    }
    if (properties.weight != null) rows.push(`<tr><td>weight</td><td>${escape(formatted(properties.weight))}</td></tr>`);
    for (const [name, value] of Object.entries(properties.categories || {})) {
      rows.push(`<tr><td><span class="swatch" style="background:${colour(name)}"></span>${escape(name)}</td><td>${formatted(value)}</td></tr>`);
    }
    return `<table class="popup-table">${rows.join("")}</table>`;
  }

  function makeMarker(feature, from) {
    const marker = L.marker(from || latLng(feature), { icon: icon(feature), keyboard: false });
    if (feature.properties.cluster) {
      marker.bindTooltip(summary(feature), { direction: "top", offset: [0, -12] });
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
    const categories = selectedCategories();
    const filter = categories === null ? "" : "&categories=" + categories.map(encodeURIComponent).join(",");
    fetch(`/api/clusters?bbox=${bbox()}&zoom=${zoom}${filter}`, { signal: controller.signal })
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
  // A legend click changes the hash: the legend and the clusters follow it.
  window.addEventListener("hashchange", () => { drawLegend(); refresh(); });
  configured.then(refresh);
})();
