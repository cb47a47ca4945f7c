import assert from "node:assert/strict";
import test from "node:test";
import { bboxOf, clampLatitude, nearestCopy, unit, worldCopies, worldPixel, wrapLongitude } from "../../Sources/MapClusterServer/Resources/Public/geo.js";

test("the unit square: the antimeridian at x 0, the equator at y 0.5, the poles clamped", () => {
  assert.deepEqual(unit(0, -180), { x: 0, y: 0.5 });
  assert.equal(unit(0, 0).x, 0.5);
  assert.equal(unit(0, 180).x, 0); // the same meridian as -180
  assert.ok(Math.abs(unit(90, 0).y) < 1e-9);
  assert.ok(Math.abs(unit(-90, 0).y - 1) < 1e-9);
  assert.deepEqual(worldPixel(0, 0), [128, 128]);
  assert.equal(worldPixel(540, 0)[0], 512); // not wrapped: the outline's rings stay whole
});

test("longitudes wrap into [-180, 180) and latitudes clamp to Web Mercator's", () => {
  assert.equal(wrapLongitude(180), -180);
  assert.equal(wrapLongitude(190), -170);
  assert.equal(wrapLongitude(-541), 179);
  assert.equal(clampLatitude(89), 85.05112878);
  assert.equal(clampLatitude(-12), -12);
});

test("a longitude's world copies in a view, or the nearest one", () => {
  assert.deepEqual(worldCopies(10, -20, 40).map((k) => k + 0), [0]); // -0 is the same copy
  assert.deepEqual(worldCopies(10, -400, 400), [-1, 0, 1]);
  assert.deepEqual(worldCopies(-170, 170, 200), [1]);
  assert.deepEqual(worldCopies(0, 100, 120), [0]);
  assert.equal(nearestCopy(-170, 175), 190);
  assert.equal(nearestCopy(10, 15), 10);
});

test("the bbox the API takes: wrapped, across the antimeridian as east below west, the world when wider", () => {
  assert.equal(bboxOf(-10, -5, 20, 30), "-10.000000,-5.000000,20.000000,30.000000");
  assert.equal(bboxOf(170, 0, 190, 10), "170.000000,0.000000,-170.000000,10.000000");
  assert.equal(bboxOf(-170, 0, 180, 10), "-170.000000,0.000000,180.000000,10.000000");
  assert.equal(bboxOf(-300, -89, 200, 89), "-180.000000,-85.051129,180.000000,85.051129");
});
