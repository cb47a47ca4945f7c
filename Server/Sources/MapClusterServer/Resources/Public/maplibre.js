// The clusters as vector tiles, drawn by MapLibre GL JS: /tiles.json says where the tiles are, whether the server
// clusters them live or reads them from an archive. Styled as the Leaflet page: the same outline, marker sizes and
// colours. A click on a cluster zooms to where it splits (its expansion_zoom); a click on a point shows its
// properties. A test that wants to watch the page sets `window.mapclusterTest` to an object before it loads: the page
// then puts the map and its drawn features there.

import { summary } from "./markers.js";
import { COUNT_STEPS, DEFAULT_SIZES, PALETTE, POINT_COLOUR, escape } from "./style.js";

// What the page says when MapLibre GL JS didn't load: the server has no copy of it (it redirects to the CDN then), and
// the browser can't reach the CDN.
const MISSING_MAPLIBRE =
  "<strong>MapLibre GL JS could not be loaded</strong>: this server has no copy of it, and the browser could not " +
  "reach its CDN. Any one of these brings it: <code>pip install maplibre</code> where the server runs (the server " +
  "finds the package at its next start), <code>mapcluster serve --maplibre DIR</code> with a folder that holds " +
  "<code>maplibre-gl.js</code> and <code>maplibre-gl.css</code>, or a browser that is online.";

(async () => {
  const status = document.getElementById("status");
  // The Leaflet page's marker sizes, when the server has points (a server of an archive has no /api, nor a Leaflet
  // page).
  const config = await fetch("api/config").then((r) => (r.ok ? r.json() : null)).catch(() => null);
  if (typeof maplibregl === "undefined") {
    status.classList.add("problem");
    status.innerHTML = MISSING_MAPLIBRE + (config ? ' The <a href="./">Leaflet page</a> needs none of it.' : "");
    return;
  }
  const tileJSON = await (await fetch("tiles.json")).json();
  const sizes = (config && config.markers) || DEFAULT_SIZES;
  const layer = tileJSON.vector_layers[0].id;
  const count = ["coalesce", ["get", "point_count"], 1];
  // A cluster's diameter grows by per_decade for each tenfold of its count, as on the Leaflet page.
  const radius = ["case", ["to-boolean", ["get", "cluster"]],
    ["/", ["+", sizes.cluster, ["*", sizes.per_decade, ["log10", count]]], 2], sizes.single / 2];
  // A cluster's ring takes the colour of its leading category (the Leaflet page's colours), from its category_VALUE
  // properties: the one no other outnumbers. Past a dozen categories, the ring is plain.
  const categories = (config && config.categories) || [];
  const share = (category) => ["coalesce", ["get", "category_" + category], 0];
  const ring = categories.length === 0 || categories.length > 12 ? "rgba(255,255,255,0.6)" : ["case",
    ...categories.flatMap((category, index) => [
      ["all", [">", share(category), 0], ...categories.filter((other) => other !== category)
        .map((other) => [">=", share(category), share(other)])],
      PALETTE[index % PALETTE.length]]),
    "rgba(255,255,255,0.6)"];

  const map = new maplibregl.Map({
    container: "map",
    hash: true,
    maxZoom: tileJSON.maxzoom + 1,
    style: {
      version: 8,
      sources: {
        outline: { type: "geojson", data: new URL("basemap.geojson", location.href).href },
        clusters: { type: "vector", url: new URL("tiles.json", location.href).href },
      },
      layers: [
        { id: "sea", type: "background", paint: { "background-color": "#cfe3ef" } },
        { id: "land", type: "fill", source: "outline", paint: { "fill-color": "#f4f1ea", "fill-outline-color": "#8a9a8c" } },
        {
          id: "markers", type: "circle", source: "clusters", "source-layer": layer,
          paint: {
            "circle-radius": radius,
            // The Leaflet page's colours: a point's, then a cluster's by the step of its count.
            "circle-color": ["case", ["!", ["to-boolean", ["get", "cluster"]]], POINT_COLOUR,
              ...COUNT_STEPS.slice(0, -1).flatMap((step) => [["<", count, step.below], step.colour]),
              COUNT_STEPS[COUNT_STEPS.length - 1].colour],
            "circle-stroke-color": ["case", ["to-boolean", ["get", "cluster"]], ring, "#fff"],
            "circle-stroke-width": ["case", ["to-boolean", ["get", "cluster"]], 3, 2],
          },
        },
        {
          // The counts: images drawn on demand (below), so the page needs no glyph server.
          id: "counts", type: "symbol", source: "clusters", "source-layer": layer,
          filter: ["to-boolean", ["get", "cluster"]],
          layout: {
            "icon-image": ["concat", "count:", ["to-string", ["get", "point_count_abbreviated"]]],
            "icon-allow-overlap": true, "icon-ignore-placement": true,
          },
        },
      ],
    },
  });
  map.addControl(new maplibregl.NavigationControl({ showCompass: false }));
  if (!location.hash && tileJSON.bounds) {
    map.fitBounds([[tileJSON.bounds[0], tileJSON.bounds[1]], [tileJSON.bounds[2], tileJSON.bounds[3]]],
      { padding: 20, animate: false });
  }

  // A count's label, drawn once in white on a transparent square.
  map.on("styleimagemissing", (event) => {
    if (!event.id.startsWith("count:")) return;
    const text = event.id.slice(6);
    const ratio = window.devicePixelRatio || 1;
    const side = Math.ceil((text.length * 8 + 8) * ratio);
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = side;
    const context = canvas.getContext("2d");
    context.font = `600 ${13 * ratio}px system-ui, -apple-system, "Segoe UI", sans-serif`;
    context.fillStyle = "#fff";
    context.textAlign = "center";
    context.textBaseline = "middle";
    context.fillText(text, side / 2, side / 2);
    map.addImage(event.id, context.getImageData(0, 0, side, side), { pixelRatio: ratio });
  });

  map.on("click", "markers", (event) => {
    const feature = event.features[0];
    const properties = feature.properties;
    if (properties.cluster) {
      const zoom = Math.min(properties.expansion_zoom ?? map.getZoom() + 2, map.getMaxZoom());
      map.easeTo({ center: feature.geometry.coordinates, zoom });
      return;
    }
    const rows = Object.entries({ id: feature.id, ...properties })
      .map(([key, value]) => `<tr><td>${escape(key)}</td><td>${escape(value)}</td></tr>`).join("");
    new maplibregl.Popup().setLngLat(feature.geometry.coordinates)
      .setHTML(`<table class="popup-table">${rows}</table>`).addTo(map);
  });
  // A cluster's summary while the pointer is on it: its count, reductions and categories, as the tiles carry them.
  const hover = new maplibregl.Popup({ closeButton: false, closeOnClick: false, className: "cluster-summary" });
  map.on("mousemove", "markers", (event) => {
    map.getCanvas().style.cursor = "pointer";
    const feature = event.features[0];
    if (!feature.properties.cluster || !config) { hover.remove(); return; }
    hover.setLngLat(feature.geometry.coordinates).setHTML(summary(config, feature)).addTo(map);
  });
  map.on("mouseleave", "markers", () => { map.getCanvas().style.cursor = ""; hover.remove(); });

  // The features drawn in the view, each once (a feature near a tile's edge is in its neighbour's buffer too).
  function drawn() {
    const seen = new Map();
    for (const feature of map.queryRenderedFeatures({ layers: ["markers"] })) {
      const properties = feature.properties;
      // A single point's id is the feature's id when it is a whole number, else its `id` property.
      const key = properties.cluster ? `c${properties.cluster_id}` : `p${feature.id ?? properties.id}`;
      if (!seen.has(key)) seen.set(key, feature);
    }
    return [...seen.values()];
  }
  map.on("idle", () => {
    const features = drawn();
    const points = features.reduce((sum, f) => sum + (f.properties.cluster ? f.properties.point_count : 1), 0);
    status.innerHTML = `${escape(points.toLocaleString())} points in ${escape(features.length.toLocaleString())} markers · ` +
      `zoom ${escape(map.getZoom().toFixed(1))}` + (config ? ` · <a href="./#${escape(leafletView())}">Leaflet page</a>` : "");
  });

  // The view in the Leaflet page's hash: its 256-point tiles make its zoom one more for the same scale.
  function leafletView() {
    const center = map.getCenter();
    return `${Math.round(map.getZoom() + 1)}/${center.lat.toFixed(4)}/${center.lng.toFixed(4)}`;
  }

  // For a browser test that asked: the map, and the distinct features drawn.
  if (window.mapclusterTest && typeof window.mapclusterTest === "object") Object.assign(window.mapclusterTest, { map, drawn });
})().catch((error) => {
  document.getElementById("status").textContent = "could not load the tiles: " + error.message;
});
