import assert from "node:assert/strict";
import test from "node:test";
import { OSM_ATTRIBUTION, OSM_TILES, addBasemap, basemapChoice } from "../../Sources/MapClusterServer/Resources/Public/basemap.js";

test("the basemap a setting asks for: OpenStreetMap's by default, a server's own, or the outline alone", () => {
  assert.deepEqual(basemapChoice(null), { kind: "osm", url: OSM_TILES, attribution: OSM_ATTRIBUTION });
  assert.deepEqual(basemapChoice("none"), { kind: "outline" });
  const own = basemapChoice("https://tiles.example.org/{z}/{x}/{y}.png");
  assert.equal(own.kind, "custom");
  assert.equal(own.attribution, "tiles: tiles.example.org");
  assert.equal(basemapChoice("not a url {z}").attribution, "tiles: not a url {z}");
  assert.match(OSM_ATTRIBUTION, /OpenStreetMap<\/a> contributors/);
});

// A Leaflet stand-in: a tile layer that fires what a test tells it to, on a map that holds layers.
function fakeLeaflet() {
  const map = { layers: new Set(), hasLayer(layer) { return this.layers.has(layer); }, removeLayer(layer) { this.layers.delete(layer); } };
  const L = {
    made: [],
    tileLayer(url, options) {
      const handlers = {};
      const layer = {
        url, options,
        addTo(target) { target.layers.add(layer); return layer; },
        on(name, handler) { (handlers[name] ||= []).push({ handler, once: false }); return layer; },
        once(name, handler) { (handlers[name] ||= []).push({ handler, once: true }); return layer; },
        fire(name) {
          for (const entry of [...(handlers[name] || [])]) {
            entry.handler();
            if (entry.once) handlers[name] = handlers[name].filter((other) => other !== entry);
          }
        },
      };
      L.made.push(layer);
      return layer;
    },
  };
  return { L, map };
}

test("offline, OpenStreetMap's layer goes at its first failed tile and the outline stays", () => {
  const { L, map } = fakeLeaflet();
  const shown = [];
  addBasemap(L, map, null, (kind) => shown.push(kind));
  const [layer] = L.made;
  assert.equal(layer.url, OSM_TILES);
  assert.ok(map.hasLayer(layer));
  layer.fire("tileerror");
  layer.fire("tileerror");
  assert.equal(map.hasLayer(layer), false);
  assert.deepEqual(shown, ["outline"]);
});

test("online, OpenStreetMap's tiles stay once one loaded, whatever fails later", () => {
  const { L, map } = fakeLeaflet();
  const shown = [];
  addBasemap(L, map, undefined, (kind) => shown.push(kind));
  const [layer] = L.made;
  layer.fire("tileload");
  layer.fire("tileerror");
  assert.ok(map.hasLayer(layer));
  assert.deepEqual(shown, ["osm"]);
});

test("--tiles none adds no layer; a server's own tiles are kept as they are", () => {
  const none = fakeLeaflet();
  const shown = [];
  addBasemap(none.L, none.map, "none", (kind) => shown.push(kind));
  assert.equal(none.L.made.length, 0);
  const own = fakeLeaflet();
  addBasemap(own.L, own.map, "https://tiles.example.org/{z}/{x}/{y}.png", (kind) => shown.push(kind));
  own.L.made[0].fire("tileerror");
  assert.ok(own.map.hasLayer(own.L.made[0]));
  assert.deepEqual(shown, ["outline", "custom"]);
});
