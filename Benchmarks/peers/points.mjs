// The peer benchmark's data, for the JavaScript harness: the seeded points, the bounding boxes asked for, and the
// fingerprint every harness prints. The Swift and Python harnesses write the same generator again; equal fingerprints
// show that all three measure the same points.

import { readFileSync } from "node:fs";

/** mulberry32, the generator of all three harnesses. */
function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** lon, lat, lon, lat, … of `count` points: uniform over the map, or in 100 blobs (the first a small one at Paris). */
export function generated(count, distribution) {
  const random = mulberry32(42);
  const out = new Float64Array(2 * count);
  if (distribution === "uniform") {
    for (let i = 0; i < count; i++) {
      out[2 * i] = -180 + 360 * random();
      out[2 * i + 1] = -85 + 170 * random();
    }
    return out;
  }
  if (distribution !== "clustered") throw new Error(`no distribution '${distribution}' (uniform, clustered, cities)`);
  const blobs = [[2.3522, 48.8566, 0.3]];
  for (let k = 1; k < 100; k++) {
    const longitude = -180 + 360 * random();
    const latitude = -60 + 130 * random();
    blobs.push([longitude, latitude, 0.5 + 4.5 * random()]);
  }
  const normal = () => (random() + random() + random() + random() - 2) * 1.7320508075688772;
  for (let i = 0; i < count; i++) {
    const [longitude, latitude, spread] = blobs[Math.floor(100 * random())];
    const dx = normal();
    const dy = normal();
    let x = longitude + spread * dx;
    if (x > 180) x -= 360;
    if (x < -180) x += 360;
    out[2 * i] = x;
    out[2 * i + 1] = Math.min(Math.max(latitude + spread * dy, -85), 85);
  }
  return out;
}

/** lon, lat, … from the lat and lon columns of a CSV file with a header row (before any quoted field). */
export function readCSV(file) {
  const [header, ...lines] = readFileSync(file, "utf8").split("\n");
  const columns = header.split(",");
  const lat = columns.indexOf("lat");
  const lon = columns.indexOf("lon");
  if (lat < 0 || lon < 0) throw new Error(`${file} has no lat and lon columns`);
  const out = [];
  for (const line of lines) {
    if (!line) continue;
    const fields = line.split(",", Math.max(lat, lon) + 1);
    out.push(Number(fields[lon]), Number(fields[lat]));
  }
  return Float64Array.from(out);
}

/** Two 32-bit sums over the coordinates' 32-bit words, in hexadecimal. */
export function fingerprint(coordinates) {
  const words = new Uint32Array(coordinates.buffer, coordinates.byteOffset, coordinates.length * 2);
  let plain = 0;
  let indexed = 0;
  for (let i = 0; i < words.length; i++) {
    plain = (plain + words[i]) >>> 0;
    indexed = (indexed + ((words[i] ^ i) >>> 0)) >>> 0;
  }
  return plain.toString(16).padStart(8, "0") + indexed.toString(16).padStart(8, "0");
}

const WORLD = [-180, -85, 180, 85];
const VIEWS = {
  5: [-20.1478, 36.517383, 24.8522, 58.761804],
  10: [1.649075, 48.508433, 3.055325, 49.202362],
  15: [2.330227, 48.845756, 2.374173, 48.867441],
};

/** The bounding boxes and zooms asked of every index: the world at zooms 0 to 3 and three views, or two for cities. */
export function queriesOf(distribution) {
  if (distribution === "cities") {
    return [{ name: "world z2", bbox: WORLD, zoom: 2 }, { name: "europe z5", bbox: VIEWS[5], zoom: 5 }];
  }
  return [0, 1, 2, 3].map((zoom) => ({ name: `world z${zoom}`, bbox: WORLD, zoom }))
    .concat([5, 10, 15].map((zoom) => ({ name: `view z${zoom}`, bbox: VIEWS[zoom], zoom })));
}
