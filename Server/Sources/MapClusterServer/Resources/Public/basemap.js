// The raster tiles under the clusters: the server's (`serve --tiles URL`), OpenStreetMap's standard tiles by default,
// or none (`serve --tiles none`, or `?tiles=none` in the page's URL), which leaves the bundled world outline alone.
// OpenStreetMap's tiles stay only if the browser can reach them: when one fails before any has loaded (offline, or a
// network that blocks them), the layer goes and the outline stays; once one has loaded, the outline goes.

export const OSM_TILES = "https://tile.openstreetmap.org/{z}/{x}/{y}.png";
// What OpenStreetMap's tile usage policy asks of a map that shows its tiles.
export const OSM_ATTRIBUTION =
  '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors';

// Which basemap a `tiles` setting asks for: "outline" alone, a "custom" tile layer, or "osm".
export function basemapChoice(tiles) {
  if (tiles === "none") return { kind: "outline" };
  if (tiles) {
    let host = tiles;
    try { host = new URL(tiles.replace(/[{}]/g, "")).host; } catch { /* a template that is no URL: named as given */ }
    return { kind: "custom", url: tiles, attribution: "tiles: " + host };
  }
  return { kind: "osm", url: OSM_TILES, attribution: OSM_ATTRIBUTION };
}

// Adds the basemap `tiles` asks for to a Leaflet map; `shown` hears which one the map shows ("outline", "custom", or
// "osm" once a tile has loaded) as soon as it is known.
export function addBasemap(L, map, tiles, shown) {
  const choice = basemapChoice(tiles);
  if (choice.kind === "outline") return shown("outline");
  const layer = L.tileLayer(choice.url, { maxZoom: 19, attribution: choice.attribution }).addTo(map);
  if (choice.kind === "custom") return shown("custom");
  let loaded = false;
  layer.once("tileload", () => {
    loaded = true;
    shown("osm");
  });
  layer.on("tileerror", () => {
    if (loaded || !map.hasLayer(layer)) return;
    map.removeLayer(layer);
    shown("outline");
  });
}
