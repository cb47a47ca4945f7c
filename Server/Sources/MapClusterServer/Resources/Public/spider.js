// A cluster opened in place, where zooming in would not split it: a ring of its points with a leg to where each
// really is, or for many points a list fetched a page at a time as it scrolls.

import { nearestCopy } from "./geo.js";
import { accessibleName, markerHTML, popup, title } from "./markers.js";
import { escape, formatted } from "./style.js";

/// The most points drawn as a ring; more are listed.
export const SPIDER_LIMIT = 12;

/// The positions of `count` points on a ring around (0, 0), in pixels, the first at the top, clockwise; far enough out
/// that neighbours keep a marker's width and gaps between them.
export function ringOffsets(count, size, gap) {
  const radius = Math.max(size * 2.5, ((size + gap * 2 + 6) * count) / (2 * Math.PI));
  return Array.from({ length: count }, (_, index) => {
    const angle = (2 * Math.PI * index) / count - Math.PI / 2;
    return [radius * Math.cos(angle), radius * Math.sin(angle)];
  });
}

/// A page of a cluster's points, as GeoJSON features.
export function fetchLeaves(id, offset, limit) {
  return fetch(`api/clusters/${encodeURIComponent(id)}/leaves?limit=${limit}&offset=${offset}`)
    .then((response) => response.json().then((body) => {
      if (!response.ok) throw new Error(body.error || response.statusText);
      return body.features;
    }));
}

/// Opens clusters on `map` with `config`'s sizes; `hook` gets what is open (`spider`, `list`), `changed` is called
/// with what to tell a screen reader when a ring opens, `failed` with an error.
export function createSpider(map, config, hook, { changed, failed }) {
  let open = null;

  function icon(feature) {
    const { html, size } = markerHTML(config, feature);
    return L.divIcon({ className: "", html, iconSize: [size, size] });
  }

  /// Closes what is open; the element of the marker it opened from, for the keyboard to go back to.
  function close() {
    if (!open) {
      const list = map.getPane("popupPane").querySelector(".leaf-list");
      if (list) map.closePopup();
      return listAnchor;
    }
    map.removeLayer(open.group);
    const element = open.anchor.getElement();
    if (element) element.classList.remove("spiderfied");
    open = null;
    hook.spider = null;
    return element;
  }
  let listAnchor = null;

  function ring(feature, anchor, fromKeyboard) {
    fetchLeaves(feature.properties.cluster_id, 0, SPIDER_LIMIT).then((points) => {
      close();
      map.closePopup();
      const center = anchor.getLatLng();
      const origin = map.latLngToLayerPoint(center);
      const group = L.layerGroup();
      const drawnLeaves = [];
      const offsets = ringOffsets(points.length, config.markers.single, config.markers.gap);
      points.forEach((point, index) => {
        const at = map.layerPointToLatLng(origin.add(L.point(offsets[index][0], offsets[index][1])));
        const [lng, lat] = point.geometry.coordinates;
        const truth = L.latLng(lat, nearestCopy(lng, center.lng));
        L.polyline([truth, at], { className: "spider-leg", interactive: false }).addTo(group);
        const leaf = L.marker(at, { icon: icon(point), keyboard: true, zIndexOffset: 1000 }).bindPopup(popup(config, point));
        leaf.on("add", () => {
          const element = leaf.getElement();
          element.setAttribute("role", "button");
          element.setAttribute("aria-label", accessibleName(config, point));
        });
        leaf.addTo(group);
        drawnLeaves.push({ id: point.id, lat: at.lat, lng: at.lng, truth: [truth.lat, truth.lng] });
      });
      const element = anchor.getElement();
      if (element) element.classList.add("spiderfied");
      open = { group: group.addTo(map), anchor };
      hook.spider = { id: feature.properties.cluster_id, count: feature.properties.point_count, leaves: drawnLeaves };
      changed(`Opened a stack of ${points.length} points; Escape closes it`);
      if (fromKeyboard) {
        const first = group.getLayers().find((layer) => layer instanceof L.Marker);
        if (first && first.getElement()) first.getElement().focus();
      }
    }).catch(failed);
  }

  function list(feature, anchor, fromKeyboard) {
    close();
    listAnchor = anchor.getElement();
    const id = feature.properties.cluster_id;
    const total = feature.properties.point_count;
    const container = L.DomUtil.create("div", "leaf-list");
    container.innerHTML = `<div class="leaf-list-title">${escape(formatted(total))} points here</div><ol></ol><div class="leaf-list-more">loading…</div>`;
    const items = container.querySelector("ol");
    const more = container.querySelector(".leaf-list-more");
    const state = { id, total, loaded: 0, loading: false };
    hook.list = state;
    const page = 50;
    function next() {
      if (state.loading || state.loaded >= total) return;
      state.loading = true;
      fetchLeaves(id, state.loaded, page).then((points) => {
        for (const point of points) {
          const item = document.createElement("li");
          item.innerHTML = `<a href="#" data-id="${escape(point.id)}">${escape(title(config, point))}</a>`;
          item.firstChild.addEventListener("click", (event) => {
            event.preventDefault();
            const [lng, lat] = point.geometry.coordinates;
            L.popup().setLatLng([lat, nearestCopy(lng, anchor.getLatLng().lng)]).setContent(popup(config, point)).openOn(map);
          });
          items.appendChild(item);
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
    if (fromKeyboard) {
      container.setAttribute("tabindex", "-1");
      container.focus();
    }
  }

  return {
    /// Opens a cluster in place: a ring for a few points, a list for more; from the keyboard, focus goes into it.
    open(feature, anchor, fromKeyboard = false) {
      if (feature.properties.point_count <= SPIDER_LIMIT) ring(feature, anchor, fromKeyboard);
      else list(feature, anchor, fromKeyboard);
    },
    close,
    /// Whether a ring or a list is open.
    get isOpen() { return open !== null || map.getPane("popupPane").querySelector(".leaf-list") !== null; },
  };
}
