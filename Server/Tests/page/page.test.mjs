// The page's modules that don't touch the DOM: the hash, the markers' HTML, the scheduler, live changes, the spider's
// ring and the outline's rings.
import assert from "node:assert/strict";
import test from "node:test";
import { categoriesQuery, hashOf, parseHash, toggledCategories } from "../../Sources/MapClusterServer/Resources/Public/hash.js";
import { applyChange } from "../../Sources/MapClusterServer/Resources/Public/live.js";
import { count, donut, key, markerHTML, popup, summary, title } from "../../Sources/MapClusterServer/Resources/Public/markers.js";
import { outlineRings } from "../../Sources/MapClusterServer/Resources/Public/outline.js";
import { createScheduler } from "../../Sources/MapClusterServer/Resources/Public/scheduler.js";
import { ringOffsets } from "../../Sources/MapClusterServer/Resources/Public/spider.js";
import { COUNT_STEPS, DEFAULT_SIZES, colour, countStep, diameter, escape } from "../../Sources/MapClusterServer/Resources/Public/style.js";

const config = { categories: ["EU", "AS"], reductions: ["population_sum"], category_column: "continent",
  name_column: "name", markers: DEFAULT_SIZES };
const cluster = (properties) => ({ type: "Feature", id: "c3.1.2", geometry: { type: "Point", coordinates: [2, 48] },
  properties: { cluster: true, cluster_id: "c3.1.2", point_count: 1234, point_count_abbreviated: "1.2k", ...properties } });
const point = (id, properties) => ({ type: "Feature", id, geometry: { type: "Point", coordinates: [2, 48] }, properties });

test("the hash holds the view and the filter, and reads back", () => {
  assert.deepEqual(parseHash("#5/48.8566/-2.35"), { view: { zoom: 5, lat: 48.8566, lng: -2.35 }, categories: null });
  assert.deepEqual(parseHash("#5/1/2&categories=EU,North%20America"),
    { view: { zoom: 5, lat: 1, lng: 2 }, categories: ["EU", "North America"] });
  assert.deepEqual(parseHash(""), { view: null, categories: null });
  assert.deepEqual(parseHash("#categories=%E0%A4%A"), { view: null, categories: null });
  const hash = hashOf(4, 1.23456, -7, ["EU", "a&b"]);
  assert.equal(hash, "#4/1.2346/-7.0000&categories=EU,a%26b");
  assert.deepEqual(parseHash(hash).categories, ["EU", "a&b"]);
  assert.equal(categoriesQuery(null), "");
  assert.equal(categoriesQuery(["a b"]), "&categories=a%20b");
});

test("a legend click toggles its category; all shown again is no filter", () => {
  assert.deepEqual(toggledCategories(["EU", "AS", "AF"], null, "AS"), ["EU", "AF"]);
  assert.deepEqual(toggledCategories(["EU", "AS", "AF"], ["EU"], "AS"), ["EU", "AS"]);
  assert.equal(toggledCategories(["EU", "AS"], ["EU"], "AS"), null);
});

test("sizes and colours: one step per tenfold, the count's colour step, a colour per category", () => {
  assert.equal(diameter(DEFAULT_SIZES, 1), 14);
  assert.equal(diameter(DEFAULT_SIZES, 10), 34);
  assert.equal(diameter(DEFAULT_SIZES, 1000), 50);
  assert.equal(countStep(99).kind, "small");
  assert.equal(countStep(100).kind, "medium");
  assert.equal(countStep(5000), COUNT_STEPS[2]);
  assert.equal(colour(["EU", "AS"], "AS"), "#f28e2b");
  assert.equal(colour(["EU"], "nowhere"), "#1f5f99");
});

test("every server value in the markers' HTML is escaped", () => {
  assert.equal(escape(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  const hostile = "<img src=x onerror=alert(1)>";
  const drawn = [
    markerHTML(config, cluster({ point_count_abbreviated: hostile })).html,
    markerHTML(config, cluster({ categories: { EU: 1000, AS: 234 }, point_count_abbreviated: hostile })).html,
    popup(config, point(hostile, { name: hostile, [hostile]: hostile })),
    summary(config, cluster({ population_sum: hostile, categories: { EU: hostile } })),
  ];
  for (const html of drawn) assert.ok(!html.includes("<img"), html);
});

test("a marker: a point's dot in its category's colour, a cluster's disc by its count, a donut by its categories", () => {
  const dot = markerHTML(config, point(7, { continent: "AS" }));
  assert.equal(dot.size, 14);
  assert.match(dot.html, /class="single".*background:#f28e2b/);
  const disc = markerHTML(config, cluster({}));
  assert.equal(disc.size, diameter(DEFAULT_SIZES, 1234));
  assert.match(disc.html, /class="cluster large".*background-color:#d2452f.*>1\.2k</);
  const ring = donut(config, cluster({ categories: { EU: 1000, AS: 234 } }), 40);
  assert.equal((ring.match(/<path /g) || []).length, 2);
  assert.match(ring, /data-category="EU" data-value="1000"/);
  const whole = donut(config, cluster({ categories: { EU: 1234 } }), 40);
  assert.match(whole, /fill-rule="evenodd"/);
});

test("titles, summaries and keys", () => {
  assert.equal(title(config, point(3, { name: "Lyon" })), "Lyon");
  assert.equal(title(config, point(3, { name: "" })), 3);
  assert.match(summary(config, cluster({ population_sum: 1234567.891, weight: 2 })), /population sum<\/td><td>1,234,567\.89/);
  assert.equal(key(cluster({})), "cluster:c3.1.2");
  assert.equal(key(point(3, {})), "point:3");
  assert.equal(count(cluster({})), 1234);
  assert.equal(count(point(3, {})), 1);
});

test("the scheduler runs operations in order, in slices of its budget, then says it is done", () => {
  let now = 0;
  const deferred = [];
  let done = 0;
  const ran = [];
  const scheduler = createScheduler(() => { done += 1; }, { budget: 8, clock: () => now, defer: (run) => deferred.push(run) });
  scheduler.schedule(Array.from({ length: 5 }, (_, index) => () => { ran.push(index); now += 3; }));
  assert.ok(scheduler.busy);
  assert.deepEqual(ran, []);
  deferred.shift()();
  assert.deepEqual(ran, [0, 1, 2]); // 0, 3 and 6 ms in: the third starts inside the budget
  scheduler.schedule([() => ran.push("later")]);
  assert.equal(deferred.length, 1);
  deferred.shift()();
  assert.deepEqual(ran, [0, 1, 2, 3, 4, "later"]);
  assert.equal(done, 1);
  assert.ok(!scheduler.busy);
});

test("a live change removes, updates and inserts markers, and says where they split from and merge into", () => {
  const features = [cluster({}), point(1, { name: "a" }), point(2, { name: "b" })];
  const change = {
    version: 4,
    insertions: [{ feature: point(9, { name: "new" }), splitFrom: [2, 48] }, { feature: point(10, {}), splitFrom: null }],
    removals: [{ id: "c3.1.2", cluster: true, mergesInto: null }, { id: 1, cluster: false, mergesInto: [3, 49] }],
    updates: [point(2, { name: "moved" })],
  };
  const next = applyChange(features, change);
  assert.deepEqual(next.features.map(key), ["point:2", "point:9", "point:10"]);
  assert.equal(next.features[0].properties.name, "moved");
  assert.deepEqual([...next.from], [["point:9", [2, 48]]]);
  assert.deepEqual([...next.into], [["point:1", [3, 49]]]);
});

test("a ring keeps its points a marker's width apart, the first at the top", () => {
  const offsets = ringOffsets(12, 14, 2);
  assert.equal(offsets.length, 12);
  assert.ok(Math.abs(offsets[0][0]) < 1e-9 && offsets[0][1] < 0);
  for (let index = 0; index < offsets.length; index++) {
    const [a, b] = [offsets[index], offsets[(index + 1) % offsets.length]];
    assert.ok(Math.hypot(a[0] - b[0], a[1] - b[1]) >= 14 + 4, `${index}`);
  }
});

test("the outline's rings are in the world's pixels at zoom 0, polygons and multipolygons alike", () => {
  const rings = outlineRings({ features: [
    { geometry: { type: "Polygon", coordinates: [[[-180, 0], [0, 0], [0, 10], [-180, 0]]] } },
    { geometry: { type: "MultiPolygon", coordinates: [[[[0, 0], [10, 0], [0, 0]]], [[[20, 0], [30, 0], [20, 0]]]] } },
    { geometry: { type: "Point", coordinates: [0, 0] } },
    { geometry: null },
  ] });
  assert.equal(rings.length, 3);
  assert.deepEqual(rings[0][0], [0, 128]);
  assert.deepEqual(rings[0][1], [128, 128]);
});
