// The MapCluster web map: clusters from /api/clusters, drawn with Leaflet over the bundled world outline.
//
// The server keeps markers apart at the sizes /api/config gives, and this page draws them at exactly those sizes, in
// every world copy in view. The view and the category filter live in the URL hash (#zoom/lat/lon&categories=…).
(function () {
  "use strict";

  const status = document.getElementById("status");
  // What the page drew, for tests and for anyone curious: one entry per marker in container pixels, the long tasks
  // the browser reported, and whether a request is on its way.
  const hook = { requests: 0, pending: true, drawn: 0, markers: [], longTasks: [], spider: null, list: null, error: null };
  window.mapclusterTest = hook;
  if (window.PerformanceObserver && PerformanceObserver.supportedEntryTypes && PerformanceObserver.supportedEntryTypes.includes("longtask")) {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) hook.longTasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: "longtask", buffered: true });
  }

  let config = { categories: [], reductions: [], category_column: null, name_column: null, bounds: null, max_zoom: 18,
    markers: { single: 14, cluster: 26, per_decade: 8, gap: 2 } };
  const map = L.map("map", { worldCopyJump: true, minZoom: 0, maxZoom: 18 });
  // Leaflet's map itself, for tests that drive it (not enumerable, so the hook still reads as plain data).
  Object.defineProperty(hook, "map", { value: map });
  map.attributionControl.addAttribution("Made with Natural Earth · GeoNames, CC BY 4.0");
  const layer = L.layerGroup().addTo(map);
  let drawn = new Map(); // key → { marker, feature }
  let controller = null;
  let requesting = false; // whether an answer is on its way
  let lastZoom = null;
  let started = false;

  // The outline, on a canvas of its own: its shapes are projected once, as paths in the world's pixels at zoom 0,
  // and each view draws them scaled, once for each world copy it shows, so that the map has no edge. A zoom step
  // costs one fill of the screen, not a projection of every vertex.
  const OutlineLayer = L.Layer.extend({
    initialize(geojson) {
      this._path = new Path2D();
      const project = ([lon, lat]) => {
        const sin = Math.sin((Math.max(-85.05112878, Math.min(85.05112878, lat)) * Math.PI) / 180);
        return [((lon + 180) / 360) * 256, (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * 256];
      };
      const ring = (positions) => positions.forEach((position, index) => {
        const [x, y] = project(position);
        if (index === 0) this._path.moveTo(x, y); else this._path.lineTo(x, y);
      });
      for (const feature of geojson.features || []) {
        const geometry = feature.geometry || {};
        const polygons = geometry.type === "Polygon" ? [geometry.coordinates] : geometry.type === "MultiPolygon" ? geometry.coordinates : [];
        for (const polygon of polygons) for (const positions of polygon) { ring(positions); this._path.closePath(); }
      }
    },
    onAdd(map) {
      this._canvas = L.DomUtil.create("canvas", "outline leaflet-zoom-animated", map.getPane("outline"));
      map.on("moveend resize", this._draw, this);
      map.on("zoomanim", this._animateZoom, this);
      this._draw();
    },
    onRemove(map) {
      L.DomUtil.remove(this._canvas);
      map.off("moveend resize", this._draw, this);
      map.off("zoomanim", this._animateZoom, this);
    },
    _draw() {
      const map = this._map;
      // A margin around the screen, so that a pan shows land before the next draw.
      const view = map.getSize();
      const margin = view.multiplyBy(0.15).round();
      const size = view.add(margin.multiplyBy(2));
      const ratio = window.devicePixelRatio || 1;
      const canvas = this._canvas;
      canvas.width = size.x * ratio;
      canvas.height = size.y * ratio;
      canvas.style.width = size.x + "px";
      canvas.style.height = size.y + "px";
      const corner = L.point(-margin.x, -margin.y);
      L.DomUtil.setPosition(canvas, map.containerPointToLayerPoint(corner));
      this._bounds = L.latLngBounds(map.containerPointToLatLng(corner), map.containerPointToLatLng(corner.add(size)));
      const scale = Math.pow(2, map.getZoom());
      const origin = map.getPixelBounds().min.add(corner);
      const world = 256 * scale;
      const context = canvas.getContext("2d");
      context.setTransform(1, 0, 0, 1, 0, 0);
      context.clearRect(0, 0, canvas.width, canvas.height);
      context.fillStyle = "#f4f1ea";
      context.strokeStyle = "#8a9a8c";
      context.lineWidth = 0.8 / scale;
      for (let copy = Math.floor(origin.x / world); copy * world < origin.x + size.x; copy++) {
        context.setTransform(ratio * scale, 0, 0, ratio * scale, ratio * (copy * world - origin.x), ratio * -origin.y);
        context.fill(this._path);
        context.stroke(this._path);
      }
      hook.outline = true;
    },
    // During a zoom's animation the drawn canvas is scaled with the map, as Leaflet's image overlays are.
    _animateZoom(event) {
      const scale = this._map.getZoomScale(event.zoom);
      const offset = this._map._latLngBoundsToNewLayerBounds(this._bounds, event.zoom, event.center).min;
      L.DomUtil.setTransform(this._canvas, offset, scale);
    },
  });
  map.createPane("outline").style.zIndex = 200;
  let outline = null;
  fetch("/basemap.geojson")
    .then((response) => response.json())
    .then((answer) => { outline = new OutlineLayer(answer); if (started) outline.addTo(map); });

  // MARK: - The URL hash: the view, then the filter

  function parseHash() {
    const view = /^#(\d+(?:\.\d+)?)\/(-?\d+(?:\.\d+)?)\/(-?\d+(?:\.\d+)?)/.exec(location.hash);
    const filter = /(?:^#|&)categories=([^&]*)/.exec(location.hash);
    return {
      view: view ? { zoom: Number(view[1]), lat: Number(view[2]), lng: Number(view[3]) } : null,
      categories: filter ? decodeURIComponent(filter[1]).split(",").filter((name) => name) : null,
    };
  }

  function selectedCategories() {
    return parseHash().categories;
  }

  // The hash of the current view with a filter (null: all categories).
  function hashOf(categories) {
    const center = map.getCenter().wrap();
    const view = `#${map.getZoom()}/${center.lat.toFixed(4)}/${center.lng.toFixed(4)}`;
    return categories === null ? view : view + "&categories=" + categories.map(encodeURIComponent).join(",");
  }

  // MARK: - Markers

  // The diameter the server keeps apart for a count, in points.
  function diameter(count) {
    const sizes = config.markers;
    return count <= 1 ? sizes.single : Math.round(sizes.cluster + sizes.per_decade * Math.log10(count));
  }

  function count(feature) {
    return feature.properties.cluster ? feature.properties.point_count : 1;
  }

  // One colour per category, in the config's order (a qualitative palette that stays apart for the colour-blind).
  const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
  function colour(category) {
    const index = config.categories.indexOf(category);
    return index < 0 ? "#1f5f99" : palette[index % palette.length];
  }

  function escape(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  function formatted(value) {
    return typeof value === "number" ? value.toLocaleString("en-US", { maximumFractionDigits: 2 }) : value;
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

  function singleIcon(feature) {
    const category = config.category_column ? feature.properties[config.category_column] : null;
    const size = diameter(1);
    return L.divIcon({
      className: "",
      html: `<div class="single" style="width:${size}px;height:${size}px;background:${colour(category)}"></div>`,
      iconSize: [size, size],
    });
  }

  function icon(feature) {
    if (!feature.properties.cluster) return singleIcon(feature);
    const n = feature.properties.point_count;
    const label = feature.properties.point_count_abbreviated;
    const size = diameter(n);
    if (feature.properties.categories) {
      return L.divIcon({
        className: "",
        html: `<div class="cluster donut-cluster" style="width:${size}px;height:${size}px" data-count="${n}">${donut(feature, size)}<span>${label}</span></div>`,
        iconSize: [size, size],
      });
    }
    const kind = n < 100 ? "small" : n < 1000 ? "medium" : "large";
    return L.divIcon({
      className: "",
      html: `<div class="cluster ${kind}" style="width:${size}px;height:${size}px" data-count="${n}">${label}</div>`,
      iconSize: [size, size],
    });
  }

  // A point's title: its name column, else its id.
  function title(feature) {
    const name = config.name_column ? feature.properties[config.name_column] : null;
    return name != null && name !== "" ? name : feature.id;
  }

  function popup(feature) {
    const rows = Object.entries(feature.properties)
      .map(([name, value]) => `<tr><td>${escape(name)}</td><td>${escape(typeof value === "object" ? JSON.stringify(value) : formatted(value))}</td></tr>`)
      .join("");
    return `<strong>${escape(title(feature))}</strong><table class="popup-table">${rows}</table>`;
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

  function makeMarker(feature, at, from) {
    const marker = L.marker(from || at, { icon: icon(feature), keyboard: false });
    if (feature.properties.cluster) {
      marker.bindTooltip(summary(feature), { direction: "top", offset: [0, -diameter(count(feature)) / 2] });
      marker.on("click", () => expand(feature, marker));
    } else {
      marker.bindPopup(popup(feature));
    }
    return marker;
  }

  // A click on a cluster zooms to where it splits; where it never does within the map's zooms (its points share a
  // place, or lie closer than the deepest zoom shows), it opens: a ring of its points, or a list of them.
  function expand(feature, marker) {
    const zoom = feature.properties.expansion_zoom;
    const maxZoom = map.getMaxZoom();
    if (zoom != null && zoom <= maxZoom && map.getZoom() < maxZoom) {
      map.flyTo(marker.getLatLng(), Math.min(Math.max(zoom, map.getZoom() + 1), maxZoom));
    } else if (feature.properties.point_count <= spiderLimit) {
      spiderfy(feature, marker);
    } else {
      listLeaves(feature, marker);
    }
  }

  // MARK: - A cluster opened in place

  const spiderLimit = 12;
  let spider = null;

  function closeSpider() {
    if (!spider) return;
    map.removeLayer(spider.group);
    const element = spider.anchor.getElement();
    if (element) element.classList.remove("spiderfied");
    spider = null;
    hook.spider = null;
  }

  function leaves(id, offset, limit) {
    return fetch(`/api/clusters/${encodeURIComponent(id)}/leaves?limit=${limit}&offset=${offset}`)
      .then((response) => response.json().then((body) => {
        if (!response.ok) throw new Error(body.error || response.statusText);
        return body.features;
      }));
  }

  // The points on a circle around the cluster, each with a leg to where it really is.
  function spiderfy(feature, anchor) {
    leaves(feature.properties.cluster_id, 0, spiderLimit).then((points) => {
      closeSpider();
      map.closePopup();
      const center = anchor.getLatLng();
      const origin = map.latLngToLayerPoint(center);
      const size = diameter(1);
      // Far enough out that neighbours on the ring keep a marker's width between them.
      const radius = Math.max(size * 2.5, ((size + config.markers.gap * 2 + 6) * points.length) / (2 * Math.PI));
      const group = L.layerGroup();
      const drawnLeaves = [];
      points.forEach((point, index) => {
        const angle = (2 * Math.PI * index) / points.length - Math.PI / 2;
        const at = map.layerPointToLatLng(origin.add(L.point(radius * Math.cos(angle), radius * Math.sin(angle))));
        const [lng, lat] = point.geometry.coordinates;
        const truth = L.latLng(lat, lng + 360 * Math.round((center.lng - lng) / 360));
        L.polyline([truth, at], { className: "spider-leg", interactive: false }).addTo(group);
        L.marker(at, { icon: singleIcon(point), keyboard: false, zIndexOffset: 1000 }).bindPopup(popup(point)).addTo(group);
        drawnLeaves.push({ id: point.id, lat: at.lat, lng: at.lng, truth: [truth.lat, truth.lng] });
      });
      const element = anchor.getElement();
      if (element) element.classList.add("spiderfied");
      spider = { group: group.addTo(map), anchor };
      hook.spider = { id: feature.properties.cluster_id, count: feature.properties.point_count, leaves: drawnLeaves };
      markersChanged();
    }).catch((error) => showError(error));
  }

  // A long list of a cluster's points in a popup, fetched a page at a time as it scrolls.
  function listLeaves(feature, anchor) {
    closeSpider();
    const id = feature.properties.cluster_id;
    const total = feature.properties.point_count;
    const container = L.DomUtil.create("div", "leaf-list");
    container.innerHTML = `<div class="leaf-list-title">${formatted(total)} points here</div><ol></ol><div class="leaf-list-more">loading…</div>`;
    const list = container.querySelector("ol");
    const more = container.querySelector(".leaf-list-more");
    const state = { id, total, loaded: 0, loading: false };
    hook.list = state;
    const page = 50;
    function next() {
      if (state.loading || state.loaded >= total) return;
      state.loading = true;
      leaves(id, state.loaded, page).then((points) => {
        for (const point of points) {
          const item = document.createElement("li");
          item.innerHTML = `<a href="#" data-id="${escape(point.id)}">${escape(title(point))}</a>`;
          item.firstChild.addEventListener("click", (event) => {
            event.preventDefault();
            const [lng, lat] = point.geometry.coordinates;
            L.popup().setLatLng([lat, lng + 360 * Math.round((anchor.getLatLng().lng - lng) / 360)]).setContent(popup(point)).openOn(map);
          });
          list.appendChild(item);
        }
        state.loaded += points.length;
        state.loading = false;
        more.textContent = state.loaded < total ? `${formatted(total - state.loaded)} more: scroll for them` : "";
        // A list shorter than its box has no scroll to wait for.
        if (state.loaded < total && container.scrollHeight <= container.clientHeight) next();
      }).catch((error) => { state.loading = false; more.textContent = "could not load: " + error.message; });
    }
    container.addEventListener("scroll", () => {
      if (container.scrollTop + container.clientHeight >= container.scrollHeight - 40) next();
    });
    L.DomEvent.disableScrollPropagation(container);
    L.popup({ minWidth: 220, maxWidth: 320, className: "leaf-list-popup" }).setLatLng(anchor.getLatLng()).setContent(container).openOn(map);
    next();
  }

  // MARK: - Drawing

  // The Web Mercator unit square, as the server's grid has it.
  function unit(lat, lon) {
    const sin = Math.sin((Math.max(-85.05112878, Math.min(85.05112878, lat)) * Math.PI) / 180);
    const x = (((lon + 180) / 360) % 1 + 1) % 1;
    return { x, y: 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI) };
  }

  // Whether a cluster's cell (its id, "c<level>.<x>.<y>") holds a position: what a zoom's markers split out of or
  // merge into.
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

  // The world copies of a longitude inside west…east (the view's, unwrapped); the nearest one if none is.
  function copies(lng, west, east) {
    const shifts = [];
    for (let k = Math.ceil((west - lng) / 360); lng + 360 * k <= east; k++) shifts.push(k);
    if (!shifts.length) shifts.push(Math.round(((west + east) / 2 - lng) / 360));
    return shifts;
  }

  // Changes to the markers on the map, applied a few milliseconds' worth at a time so that no task holds the main
  // thread long: a zoom step's hundred markers go in over a few frames, not in one long task.
  const work = [];
  let pumping = false;
  function schedule(operations) {
    work.push(...operations);
    if (!pumping) { pumping = true; setTimeout(pump, 0); }
  }
  function pump() {
    const start = performance.now();
    while (work.length && performance.now() - start < 8) work.shift()();
    if (work.length) { setTimeout(pump, 0); return; }
    pumping = false;
    markersChanged();
    hook.drawMS = performance.now() - hook.drawStarted;
    hook.pending = requesting;
  }

  // A ring opened in place stays through pans (a leaf's popup may pan the map to fit); a zoom or a click closes it.
  // `live`, for the changes of a live server: where new markers split from and removed ones merge into, by key.
  function draw(features, area, zoomedIn, zoomedOut, live) {
    hook.drawStarted = performance.now();
    const next = new Map();
    const previous = drawn;
    const operations = [];
    const oldClusters = [...previous.values()].filter((entry) => entry.feature.properties.cluster);
    for (const feature of features) {
      const [lng, lat] = feature.geometry.coordinates;
      for (const shift of copies(lng, area.west, area.east)) {
        const k = key(feature) + "@" + shift;
        const at = L.latLng(lat, lng + 360 * shift);
        const kept = previous.get(k);
        if (kept && kept.feature.properties.point_count === feature.properties.point_count) {
          // A live point that moved glides to its new place, with its new properties.
          if (live && kept.marker && !kept.at.equals(at)) glide(kept.marker, at); else if (kept.marker) kept.marker.setLatLng(at);
          if (live && kept.marker && !feature.properties.cluster) kept.marker.setPopupContent(popup(feature));
          kept.feature = feature;
          kept.at = at;
          next.set(k, kept);
          continue;
        }
        if (kept) operations.push(() => { if (kept.marker) layer.removeLayer(kept.marker); });
        // Zooming in: start where the cluster it split out of stood; a live change says where it came from, and a
        // kept marker with a new count starts where it was.
        const parent = zoomedIn && oldClusters.find((entry) =>
          Math.abs(entry.at.lng - at.lng) < 180 && cellHolds(entry.feature.properties.cluster_id, lat, lng));
        const source = live && live.from.get(key(feature));
        const start = parent ? parent.at : kept ? kept.at : source ? L.latLng(source[1], source[0] + 360 * shift) : null;
        const entry = { feature, at, marker: null };
        operations.push(() => {
          if (drawn.get(k) !== entry) return; // a later draw replaced it before its turn
          entry.marker = makeMarker(feature, at, start).addTo(layer);
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
        const into = merged ? { at: L.latLng(merged[1], merged[0] + 360 * Math.round((entry.at.lng - merged[0]) / 360)) }
          : zoomedOut && [...drawn.values()].find((other) => other.feature.properties.cluster &&
            Math.abs(other.at.lng - entry.at.lng) < 180 &&
            cellHolds(other.feature.properties.cluster_id, entry.at.lat, entry.at.lng));
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
    document.body.dataset.drawn = String(hook.drawn);
    document.body.dataset.markers = String(features.length);
    // The same view on the vector tile page, whose 512-point tiles make its zoom one less for the same scale.
    const center = map.getCenter();
    const tiles = `/maplibre.html#${Math.max(map.getZoom() - 1, 0)}/${center.lat.toFixed(4)}/${center.lng.toFixed(4)}`;
    status.innerHTML = `${hook.drawn.toLocaleString()} points in ${features.length.toLocaleString()} markers · ` +
      `zoom ${map.getZoom()} · <a href="${tiles}">vector tiles</a>`;
    schedule(operations);
  }

  // The hook's markers: where each drawn one stands in the container (where it glides to, if it is on its way), and
  // its size.
  function markersChanged() {
    hook.markers = [...drawn.values()].map(({ feature, at }) => {
      const point = map.latLngToContainerPoint(at);
      return { x: point.x, y: point.y, radius: diameter(count(feature)) / 2, count: count(feature), id: key(feature) };
    });
  }

  // The area to ask for: the view and a margin of the largest marker's radius, so that a marker whose center lies
  // just outside still shows its edge. Longitudes unwrapped (the view's own), and as the API takes them.
  function area() {
    const margin = diameter(config.points || 1) / 2 + config.markers.gap;
    const pixels = map.getPixelBounds();
    const northWest = map.unproject(pixels.min.subtract([margin, margin]));
    const southEast = map.unproject(pixels.max.add([margin, margin]));
    const west = northWest.lng;
    const east = southEast.lng;
    const clamp = (lat) => Math.max(-85.05112878, Math.min(85.05112878, lat));
    const wrap = (lon) => ((((lon + 180) % 360) + 360) % 360) - 180;
    let bbox;
    if (east - west >= 360) {
      bbox = [-180, clamp(southEast.lat), 180, clamp(northWest.lat)];
    } else {
      let wrappedEast = wrap(east);
      if (wrappedEast === -180) wrappedEast = 180;
      bbox = [wrap(west), clamp(southEast.lat), wrappedEast, clamp(northWest.lat)];
    }
    return { west, east, bbox: bbox.map((v) => v.toFixed(6)).join(",") };
  }

  function showError(error) {
    hook.error = error.message;
    status.textContent = "could not load clusters: " + error.message;
  }

  // MARK: - Live points

  // A live server streams the changes of the view (/api/changes): the page subscribes to each view it shows, fetches
  // its clusters once the stream is ready (so that no change falls between the two), and applies each change to the
  // markers it drew, with the same glides as a zoom. Changes that arrive before the clusters wait for them; a
  // "resync" (the page fell behind) fetches them again.
  let stream = null;
  let lastArea = null;
  let waiting = null; // changes that came before the clusters they apply to
  hook.changes = 0;

  function subscribe(asked, zoom, filter) {
    if (stream) stream.close();
    waiting = [];
    const source = new EventSource(`/api/changes?bbox=${asked.bbox}&zoom=${zoom}${filter}`);
    stream = source;
    source.addEventListener("ready", () => { if (stream === source) fetchClusters(); });
    source.addEventListener("changes", (event) => {
      if (stream !== source) return;
      const change = JSON.parse(event.data);
      if (waiting) waiting.push(change); else applyChange(change);
    });
    source.addEventListener("resync", () => { if (stream === source) { waiting = []; fetchClusters(); } });
    // EventSource reconnects by itself; the new stream's "ready" fetches again.
  }

  function applyChange(change) {
    hook.changes += 1;
    const features = new Map(hook.features.map((feature) => [key(feature), feature]));
    const from = new Map();
    const into = new Map();
    for (const removal of change.removals) {
      const k = (removal.cluster ? "cluster:" : "point:") + removal.id;
      features.delete(k);
      if (removal.mergesInto) into.set(k, removal.mergesInto);
    }
    for (const feature of change.updates) features.set(key(feature), feature);
    for (const insertion of change.insertions) {
      features.set(key(insertion.feature), insertion.feature);
      if (insertion.splitFrom) from.set(key(insertion.feature), insertion.splitFrom);
    }
    draw([...features.values()], lastArea, false, false, { from, into });
  }

  function refresh() {
    const zoom = map.getZoom();
    const categories = selectedCategories();
    const filter = categories === null ? "" : "&categories=" + categories.map(encodeURIComponent).join(",");
    if (config.live) {
      hook.pending = true;
      subscribe(area(), zoom, filter);
      return;
    }
    fetchClusters();
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
    requesting = true;
    const categories = selectedCategories();
    const filter = categories === null ? "" : "&categories=" + categories.map(encodeURIComponent).join(",");
    const asked = area();
    fetch(`/api/clusters?bbox=${asked.bbox}&zoom=${zoom}${filter}`, { signal: controller.signal })
      .then((response) => response.json().then((body) => {
        if (!response.ok) throw new Error(body.error || response.statusText);
        return body;
      }))
      .then((collection) => {
        requesting = false;
        hook.bbox = asked.bbox;
        hook.zoom = zoom;
        lastArea = asked;
        draw(collection.features, asked, zoomedIn, zoomedOut);
        if (waiting) {
          const changes = waiting;
          waiting = null;
          for (const change of changes) applyChange(change);
        }
      })
      .catch((error) => {
        if (error.name === "AbortError") return;
        requesting = false;
        hook.pending = pumping;
        showError(error);
      });
  }

  // MARK: - The legend

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
      return `<a class="legend-entry${shown(name) ? "" : " off"}" data-category="${escape(name)}" href="${hashOf(target)}">` +
        `<span class="swatch" style="background:${colour(name)}"></span>${escape(name)}</a>`;
    });
    const all = selected === null ? "" : `<a class="legend-entry all" href="${hashOf(null)}">show all</a>`;
    legend.getContainer().innerHTML = `<div class="legend-title">${escape(config.category_column || "categories")}</div>${entries.join("")}${all}`;
    L.DomEvent.disableClickPropagation(legend.getContainer());
  }

  // MARK: - Starting

  // Where the page opens: the hash's view, or the data fitted to the screen.
  function startView() {
    const { view } = parseHash();
    if (view) {
      map.setView([view.lat, view.lng], Math.min(view.zoom, map.getMaxZoom()), { animate: false });
      return;
    }
    const bounds = config.bounds;
    if (!bounds) {
      map.setView([20, 0], 2, { animate: false });
      return;
    }
    const [west, south, east, north] = bounds;
    // A box across the antimeridian ends east of 180°.
    const fitted = L.latLngBounds([south, west], [north, east < west ? east + 360 : east]);
    map.fitBounds(fitted, { animate: false, padding: [24, 24], maxZoom: Math.min(12, map.getMaxZoom()) });
  }

  let lastHash = null;
  map.on("moveend", () => {
    if (!started) return;
    // The view goes in the hash without a history entry per pan; hashchange is not fired by this.
    const hash = hashOf(selectedCategories());
    if (hash !== location.hash) history.replaceState(null, "", hash);
    lastHash = location.hash;
    drawLegend();
    refresh();
  });
  map.on("zoomstart", closeSpider);
  map.on("click", closeSpider);
  // A legend click or an edited URL changes the hash: the view, the legend and the clusters follow it.
  window.addEventListener("hashchange", () => {
    if (location.hash === lastHash) return;
    lastHash = location.hash;
    const { view } = parseHash();
    const center = map.getCenter();
    if (view && (view.zoom !== map.getZoom() || Math.abs(view.lat - center.lat) > 1e-4 || Math.abs(view.lng - center.wrap().lng) > 1e-4)) {
      map.setView([view.lat, view.lng], Math.min(view.zoom, map.getMaxZoom()));
      return; // moveend refreshes
    }
    drawLegend();
    refresh();
  });

  fetch("/api/config")
    .then((response) => response.json())
    .then((answer) => { config = Object.assign(config, answer); })
    .catch(() => {})
    .then(() => {
      map.setMaxZoom(config.max_zoom);
      const tiles = new URLSearchParams(location.search).get("tiles") || config.tiles;
      if (tiles) L.tileLayer(tiles, { maxZoom: 19, attribution: "tiles: " + new URL(tiles.replace(/[{}]/g, "")).host }).addTo(map);
      startView();
      started = true;
      if (outline) outline.addTo(map);
      const hash = hashOf(selectedCategories());
      if (hash !== location.hash) history.replaceState(null, "", hash);
      lastHash = location.hash;
      drawLegend();
      refresh();
    });
})();
