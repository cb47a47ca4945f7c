// supercluster on the peer benchmark's data: builds of the index and bounding-box queries, timed in one process,
// printed as one JSON line (--json) in the shape the Swift and Python harnesses print.
//
//   node --expose-gc supercluster-bench.mjs --n 100000 --dist uniform|clustered [--runs 5] [--qruns 11] [--aggregates] [--json]
//   node --expose-gc supercluster-bench.mjs --dist cities --csv FILE.csv
//
// supercluster comes from node_modules here, or from --supercluster DIR: a folder npm installed package-lock.json
// into (8.0.1 with kdbush 4.1.0), or, where the npm registry can't be reached, one holding supercluster/ and
// node_modules/kdbush/, unmodified. Index: minZoom 0, maxZoom 16, radius 40, extent 512, nodeSize 64 (minPoints 2).
// With --aggregates every point carries a category of 8 and a value; clusters sum the values and count each category
// through map/reduce, as MapLibre's clusterProperties do.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { fingerprint, generated, queriesOf, readCSV } from "./points.mjs";

const argv = process.argv.slice(2);
const value = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const aggregated = argv.includes("--aggregates");
const folder = value("--supercluster", process.env.SUPERCLUSTER_DIR);
// A folder of supercluster/ beside node_modules/kdbush/, or one that npm installed into (node_modules/supercluster/).
const candidates = folder
  ? ["supercluster", "node_modules/supercluster"].map((sub) => path.resolve(folder, sub, "index.js"))
  : [];
const found = candidates.find((file) => existsSync(file));
if (folder && !found) throw new Error(`no supercluster in ${folder}: looked for ${candidates.join(" and ")}`);
const module = found ? pathToFileURL(found).href : "supercluster";
const { default: Supercluster } = await import(module);
const version = JSON.parse(
  readFileSync(new URL("package.json", import.meta.resolve(module)), "utf8"),
).version;

const distribution = value("--dist", "uniform");
const buildRuns = Number(value("--runs", 5));
const queryRuns = Number(value("--qruns", 11));
const coordinates = distribution === "cities" ? readCSV(value("--csv")) : generated(Number(value("--n", 100000)), distribution);
const count = coordinates.length / 2;

const now = () => Number(process.hrtime.bigint()) / 1e6;
const collect = () => globalThis.gc?.();
const residentMB = () => process.memoryUsage.rss() / 1048576;
const heapMB = () => {
  const usage = process.memoryUsage();
  return (usage.heapUsed + usage.external) / 1048576;
};
const peakMB = () => process.resourceUsage().maxRSS / 1024;
function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  return { median: (sorted[(n - 1) >> 1] + sorted[n >> 1]) / 2, min: sorted[0], max: sorted[n - 1], runs: n, samples };
}

let started = now();
const categoryOf = (i) => (i * 7 + (i >> 3)) % 8;
const valueOf = (i) => ((Math.imul(i, 2654435761) >>> 0) % 1000) / 10;
const features = Array.from({ length: count }, (_, i) => ({
  type: "Feature",
  properties: aggregated ? { id: i, v: valueOf(i), cat: categoryOf(i) } : { id: i },
  geometry: { type: "Point", coordinates: [coordinates[2 * i], coordinates[2 * i + 1]] },
}));
const generationMs = now() - started;

const categories = [0, 1, 2, 3, 4, 5, 6, 7];
const mapReduce = {
  map: (p) => {
    const mapped = { v: p.v };
    for (const c of categories) mapped[`c${c}`] = p.cat === c ? 1 : 0;
    return mapped;
  },
  reduce: (into, other) => {
    into.v += other.v;
    for (const c of categories) into[`c${c}`] += other[`c${c}`];
  },
};
const build = () =>
  new Supercluster({ minZoom: 0, maxZoom: 16, radius: 40, extent: 512, nodeSize: 64, ...(aggregated ? mapReduce : {}) }).load(features);

collect();
const residentBefore = residentMB();
const heapBefore = heapMB();
started = now();
let index = build();
const firstBuildMs = now() - started;
const peakAfterFirstBuild = peakMB();
collect();
const indexMB = residentMB() - residentBefore;
const heapIndexMB = heapMB() - heapBefore;

const builds = [];
for (let run = 0; run < buildRuns; run++) {
  index = null;
  collect();
  started = now();
  index = build();
  builds.push(now() - started);
}

let check;
if (aggregated) {
  // The world at zoom 0 holds every point once: its sum and its count of c0 are the data's, in every harness.
  let v = 0;
  let c0 = 0;
  for (const { properties: p } of index.getClusters([-180, -85, 180, 85], 0)) {
    v += p.v;
    c0 += p.cluster ? p.c0 : p.cat === 0 ? 1 : 0;
  }
  check = { v: Math.round(v * 10) / 10, c0 };
}

let sink = 0;
const answers = [];
for (const query of queriesOf(distribution)) {
  const features = index.getClusters(query.bbox, query.zoom);
  const clusters = features.filter((f) => f.properties.cluster).length;
  const members = features.reduce((sum, f) => sum + (f.properties.cluster ? f.properties.point_count : 1), 0);
  started = now();
  index.getClusters(query.bbox, query.zoom);
  const calls = Math.max(1, Math.min(100000, Math.ceil(20 / Math.max(now() - started, 1e-4))));
  const perCall = [];
  for (let run = 0; run < queryRuns; run++) {
    started = now();
    for (let call = 0; call < calls; call++) sink += index.getClusters(query.bbox, query.zoom).length;
    perCall.push((now() - started) / calls);
  }
  answers.push({
    name: query.name, zoom: query.zoom, bbox: query.bbox, count: features.length, clusters,
    points: features.length - clusters, members, reps: calls, ms: summary(perCall),
  });
}
if (sink < 0) console.log(sink);

const result = {
  impl: "supercluster-js", n: count, dist: distribution, fingerprint: fingerprint(coordinates), genMs: generationMs,
  aggregates: aggregated, check, supercluster: version, node: process.version,
  load: { cold: firstBuildMs, ...summary(builds) },
  queries: answers,
  mem: { rssBeforeLoadMB: residentBefore, indexMB, heapIndexMB, peakAfterFirstBuildMB: peakAfterFirstBuild, peakRssMB: peakMB() },
};
if (argv.includes("--json")) {
  console.log(JSON.stringify(result));
} else {
  const short = (x) => x.toFixed(x >= 100 ? 0 : x >= 1 ? 2 : 4);
  console.log(`## supercluster ${version}${aggregated ? " with map/reduce" : ""} ${distribution} N=${count} (fingerprint ${result.fingerprint})`);
  console.log(`build: first ${short(firstBuildMs)} ms, median of ${buildRuns} ${short(result.load.median)} ms`);
  for (const a of answers) console.log(`${a.name}: ${a.count} items, ${a.clusters} clusters; median ${short(a.ms.median)} ms a query`);
  if (check) console.log(`check: ${JSON.stringify(check)}`);
}
