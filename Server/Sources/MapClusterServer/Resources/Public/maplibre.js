// The clusters as vector tiles, drawn by MapLibre GL JS: /tiles.json says where the tiles are, whether the server
// clusters them live or reads them from an archive. Styled as the Leaflet page: the same outline, marker sizes and
// colours. A click on a cluster zooms to where it splits (its expansion_zoom); a click on a point shows its
// properties. A test that wants to watch the page sets `window.mapclusterTest` to an object before it loads: the page
// then puts the map and its drawn features there.

import { accessibleName, summary } from "./markers.js";
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

  // A live server's tiles go through the page's own cache (a custom protocol, MapLibre's public addProtocol): when
  // /api/tile-changes names tiles an edit changed, the page fetches those and no other, then has MapLibre redraw its
  // tiles from the cache.
  const live = Boolean(config && config.live);
  const tiles = live ? followTiles(tileJSON) : null;
  const clusterSource = live
    ? { type: "vector", tiles: [tiles.template(0)], minzoom: tileJSON.minzoom, maxzoom: tileJSON.maxzoom,
        bounds: tileJSON.bounds }
    : { type: "vector", url: new URL("tiles.json", location.href).href };

  const map = new maplibregl.Map({
    container: "map",
    hash: true,
    maxZoom: tileJSON.maxzoom + 1,
    style: {
      version: 8,
      sources: {
        outline: { type: "geojson", data: new URL("basemap.geojson", location.href).href },
        clusters: clusterSource,
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
          // The marker the keyboard is on (the list below the map): a dark ring around it.
          id: "focus", type: "circle", source: "clusters", "source-layer": layer, filter: ["==", ["get", "cluster_id"], ""],
          paint: { "circle-radius": ["+", radius, 4], "circle-color": "rgba(0,0,0,0)", "circle-stroke-color": "#111",
            "circle-stroke-width": 3 },
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
  const keyboard = markerList(map, config, layer, () => drawn());

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
    keyboard.update(features);
    const points = features.reduce((sum, f) => sum + (f.properties.cluster ? f.properties.point_count : 1), 0);
    status.innerHTML = `${escape(points.toLocaleString())} points in ${escape(features.length.toLocaleString())} markers · ` +
      `zoom ${escape(map.getZoom().toFixed(1))}` + (config ? ` · <a href="./#${escape(leafletView())}">Leaflet page</a>` : "");
  });

  // The view in the Leaflet page's hash: its 256-point tiles make its zoom one more for the same scale.
  function leafletView() {
    const center = map.getCenter();
    return `${Math.round(map.getZoom() + 1)}/${center.lat.toFixed(4)}/${center.lng.toFixed(4)}`;
  }

  if (tiles) tiles.start(map, (count) => keyboard.announce(`A live edit changed ${count} ${count === 1 ? "tile" : "tiles"} in view`));

  // For a browser test that asked: the map, the distinct features drawn, and the live tiles' cache.
  if (window.mapclusterTest && typeof window.mapclusterTest === "object") {
    Object.assign(window.mapclusterTest, { map, drawn, tiles, keyboard });
  }
})().catch((error) => {
  document.getElementById("status").textContent = "could not load the tiles: " + error.message;
});

/// The tiles of a live server, held by the page: MapLibre asks for them through the `mapcluster://` protocol and gets
/// the page's copy; /api/tile-changes says which copies an edit made stale, and only those are fetched again.
function followTiles(tileJSON) {
  const held = new Map(); // "z/x/y" → the tile's bytes (null: the server had no feature there)
  const server = tileJSON.tiles[0];
  const state = { version: null, fetched: [], named: [], pending: 0, held, stream: null, follows: "" };
  const urlOf = (key) => { const [z, x, y] = key.split("/"); return server.replace("{z}", z).replace("{x}", x).replace("{y}", y); };

  // Fetches of one tile may overlap (two edits in a row) and answer out of order: the copy kept is the one asked for
  // last, which the server answered from a version at least as new.
  const asked = new Map(); // "z/x/y" → how many fetches of it began
  async function fetchTile(key) {
    state.fetched.push(key);
    const ticket = (asked.get(key) ?? 0) + 1;
    asked.set(key, ticket);
    const response = await fetch(urlOf(key), { cache: "no-cache" });
    if (!response.ok && response.status !== 204) throw new Error(`tile ${key}: ${response.status}`);
    const bytes = response.status === 204 ? null : await response.arrayBuffer();
    if (asked.get(key) === ticket) held.set(key, bytes);
    return held.get(key);
  }

  maplibregl.addProtocol("mapcluster", async (request) => {
    const key = request.url.replace(/^mapcluster:\/\//, "").replace(/\?.*$/, "");
    const bytes = held.has(key) ? held.get(key) : await fetchTile(key);
    return { data: bytes ? bytes.slice(0) : new ArrayBuffer(0) };
  });

  return {
    state,
    /// The source's tile URL template; a new `generation` makes MapLibre ask for every tile again (from the page).
    template: (generation) => `mapcluster://{z}/{x}/{y}?v=${generation}`,
    /// Follows the changes of the tiles the page holds, at their zooms.
    start(map, changed = () => {}) {
      // One redraw at a time: a new one while MapLibre still loads the last would abort its loads. One asked for
      // meanwhile is made when the one under way ends.
      let generation = 0;
      let drawing = false;
      let again = false;
      const redraw = () => {
        if (drawing) { again = true; return; }
        drawing = true;
        again = false;
        generation += 1;
        map.getSource("clusters").setTiles([this.template(generation)]);
        map.once("idle", () => {
          drawing = false;
          if (again) redraw();
        });
      };
      // Events are handled as they come, but their fetches end in any order: the version the page holds only grows.
      const reached = (version) => { state.version = state.version === null ? version : Math.max(state.version, version); };
      let told = null; // the newest version a stream told of, applied or not
      const refetchAll = async (version) => {
        state.pending += 1;
        try {
          await Promise.all([...held.keys()].map(fetchTile));
          reached(version);
          redraw();
        } finally {
          state.pending -= 1;
        }
      };
      const follow = () => {
        const zooms = [...new Set([...held.keys()].map((key) => Number(key.split("/")[0])))].sort((a, b) => a - b).slice(-8);
        const follows = zooms.join(",");
        if (!follows || follows === state.follows) return;
        state.follows = follows;
        if (state.stream) state.stream.close();
        const stream = new EventSource(`api/tile-changes?zooms=${follows}`);
        state.stream = stream;
        stream.addEventListener("ready", (event) => {
          const version = JSON.parse(event.data).version;
          // A stream that starts past what the page was told of (a reconnect, new zooms) missed the edits between:
          // every tile held may be stale.
          const missed = told !== null && version > told;
          told = told === null ? version : Math.max(told, version);
          if (missed) refetchAll(version); else reached(version);
        });
        stream.addEventListener("tiles", async (event) => {
          const change = JSON.parse(event.data);
          told = Math.max(told ?? change.version, change.version);
          state.named.push(...change.tiles);
          const stale = change.tiles.filter((key) => held.has(key));
          state.pending += 1;
          try {
            await Promise.all(stale.map(fetchTile));
            reached(change.version);
            if (stale.length > 0) {
              redraw();
              changed(stale.length);
            }
          } finally {
            state.pending -= 1;
          }
        });
        stream.addEventListener("resync", (event) => {
          const version = JSON.parse(event.data).version;
          told = Math.max(told ?? version, version);
          held.clear();
          reached(version);
          redraw();
        });
      };
      map.on("idle", follow);
    },
  };
}

/// The markers MapLibre draws on its canvas, as a list of buttons a keyboard and a screen reader reach: in reading
/// order (top to bottom, then left to right), each named as the Leaflet page names its markers. The one the keyboard is
/// on is ringed on the map and its summary shown; Enter on a cluster zooms to where it splits, on a point shows its
/// properties, and Escape goes back to the view a keyboard zoom left. A polite live region says what a zoom changed.
function markerList(map, config, layer, drawn) {
  const list = document.getElementById("markers");
  const announcer = document.getElementById("announce");
  const names = config || { categories: [], reductions: [], name_column: "name", category_column: null };
  const views = [];
  const popup = new maplibregl.Popup({ closeButton: false, closeOnClick: false, className: "cluster-summary" });
  let lastZoom = null;
  let lastAnnounced = "";
  const keyOf = (feature) => feature.properties.cluster ? `c${feature.properties.cluster_id}` : `p${feature.id ?? feature.properties.id}`;
  const pointName = (feature) => accessibleName(names, { id: feature.id ?? feature.properties.id, properties: feature.properties });

  function announce(text) {
    if (text === lastAnnounced) return;
    lastAnnounced = text;
    announcer.textContent = text;
  }

  function focusOn(feature) {
    const id = feature.properties.cluster ? feature.properties.cluster_id : null;
    map.setFilter("focus", id ? ["==", ["get", "cluster_id"], id]
      : ["==", ["id"], feature.id ?? -1]);
    popup.setLngLat(feature.geometry.coordinates)
      .setHTML(feature.properties.cluster && config ? summary(config, feature) : `<strong>${pointName(feature)}</strong>`).addTo(map);
  }

  function activate(feature) {
    if (feature.properties.cluster) {
      views.push({ center: map.getCenter(), zoom: map.getZoom() });
      const zoom = Math.min(feature.properties.expansion_zoom ?? map.getZoom() + 2, map.getMaxZoom());
      list.dataset.refocus = "first";
      map.easeTo({ center: feature.geometry.coordinates, zoom });
    } else {
      const rows = Object.entries(feature.properties).map(([key, value]) => `<tr><td>${key}</td><td>${value}</td></tr>`).join("");
      popup.setLngLat(feature.geometry.coordinates).setHTML(`<table class="popup-table">${rows}</table>`).addTo(map);
    }
  }

  list.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || views.length === 0) return;
    list.dataset.refocus = "first";
    map.easeTo(views.pop());
  });

  return {
    announce,
    /// Lists the markers drawn in view.
    update(features) {
      const canvas = map.getCanvas();
      const inView = features.map((feature) => ({ feature, at: map.project(feature.geometry.coordinates) }))
        .filter(({ at }) => at.x >= 0 && at.y >= 0 && at.x < canvas.clientWidth && at.y < canvas.clientHeight)
        .sort((a, b) => (a.at.y - b.at.y) || (a.at.x - b.at.x));
      const focused = document.activeElement && list.contains(document.activeElement) ? document.activeElement.dataset.key : null;
      list.replaceChildren(...inView.map(({ feature }) => {
        const item = document.createElement("div");
        item.setAttribute("role", "listitem");
        const button = item.appendChild(document.createElement("button"));
        button.type = "button";
        button.dataset.key = keyOf(feature);
        button.textContent = feature.properties.cluster ? accessibleName(names, feature) : pointName(feature);
        button.addEventListener("focus", () => focusOn(feature));
        button.addEventListener("blur", () => { map.setFilter("focus", ["==", ["get", "cluster_id"], ""]); popup.remove(); });
        button.addEventListener("click", () => activate(feature));
        return item;
      }));
      const again = list.dataset.refocus === "first" ? list.querySelector("button")
        : focused ? list.querySelector(`[data-key="${CSS.escape(focused)}"]`) : null;
      delete list.dataset.refocus;
      if (again) again.focus();
      const zoom = Math.round(map.getZoom() * 10) / 10;
      if (zoom !== lastZoom) {
        lastZoom = zoom;
        const clusters = inView.filter(({ feature }) => feature.properties.cluster).length;
        announce(`Zoom ${zoom}: ${clusters} clusters and ${inView.length - clusters} single points in view`);
      }
    },
  };
}

