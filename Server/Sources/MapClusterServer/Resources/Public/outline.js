// The world's outline on a canvas of its own: its shapes are projected once, as paths in the world's pixels at zoom 0,
// and each view draws them scaled, once for each world copy it shows, so that the map has no edge. A zoom step costs
// one fill of the screen, not a projection of every vertex.

import { worldPixel } from "./geo.js";

/// The rings of a GeoJSON FeatureCollection's polygons, each a list of [x, y] in the world's pixels at zoom 0.
export function outlineRings(geojson) {
  const rings = [];
  for (const feature of geojson.features || []) {
    const geometry = feature.geometry || {};
    const polygons = geometry.type === "Polygon" ? [geometry.coordinates]
      : geometry.type === "MultiPolygon" ? geometry.coordinates : [];
    for (const polygon of polygons) for (const positions of polygon) rings.push(positions.map(([lon, lat]) => worldPixel(lon, lat)));
  }
  return rings;
}

/// A Leaflet layer that draws the rings in the pane `outline`; `onDraw` is called after each draw.
export function outlineLayer(geojson, onDraw = () => {}) {
  const Layer = L.Layer.extend({
    initialize() {
      this.path = new Path2D();
      for (const ring of outlineRings(geojson)) {
        ring.forEach(([x, y], index) => { if (index === 0) this.path.moveTo(x, y); else this.path.lineTo(x, y); });
        this.path.closePath();
      }
    },
    onAdd(map) {
      this.shownOn = map;
      this.canvas = L.DomUtil.create("canvas", "outline leaflet-zoom-animated", map.getPane("outline"));
      map.on("moveend resize", this.redraw, this);
      map.on("zoomanim", this.followZoom, this);
      this.redraw();
    },
    onRemove(map) {
      L.DomUtil.remove(this.canvas);
      map.off("moveend resize", this.redraw, this);
      map.off("zoomanim", this.followZoom, this);
    },
    redraw() {
      const map = this.shownOn;
      // A margin around the screen, so that a pan shows land before the next draw.
      const view = map.getSize();
      const margin = view.multiplyBy(0.15).round();
      const size = view.add(margin.multiplyBy(2));
      const ratio = window.devicePixelRatio || 1;
      const canvas = this.canvas;
      canvas.width = size.x * ratio;
      canvas.height = size.y * ratio;
      canvas.style.width = size.x + "px";
      canvas.style.height = size.y + "px";
      const corner = L.point(-margin.x, -margin.y);
      L.DomUtil.setPosition(canvas, map.containerPointToLayerPoint(corner));
      this.northWest = map.containerPointToLatLng(corner);
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
        context.fill(this.path);
        context.stroke(this.path);
      }
      onDraw();
    },
    // During a zoom's animation the drawn canvas is scaled with the map, about the corner it was drawn from: where
    // that corner will stand in the layer at the new zoom and center, from the map's public projection.
    followZoom(event) {
      const map = this.shownOn;
      const scale = map.getZoomScale(event.zoom);
      const pane = L.DomUtil.getPosition(map.getPane("mapPane"));
      const pixelOrigin = map.project(event.center, event.zoom).subtract(map.getSize().divideBy(2)).add(pane).round();
      const offset = map.project(this.northWest, event.zoom).subtract(pixelOrigin);
      L.DomUtil.setTransform(this.canvas, offset, scale);
    },
  });
  return new Layer();
}
