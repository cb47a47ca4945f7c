// The page's reading of cluster ids, against the test vectors the Swift tests read too.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test from "node:test";
import { clusterHolds, parseClusterId } from "../../Sources/MapClusterServer/Resources/Public/ids.js";

const vectors = JSON.parse(readFileSync(new URL("../../../Tests/vectors/cluster-ids.json", import.meta.url), "utf8"));

test("every valid vector decodes to what it says", () => {
  assert.ok(vectors.valid.length >= 10);
  for (const { text, id } of vectors.valid) assert.deepEqual(parseClusterId(text), id, text);
});

test("every invalid vector is refused", () => {
  assert.ok(vectors.invalid.length >= 20);
  for (const text of vectors.invalid) assert.equal(parseClusterId(text), null, JSON.stringify(text));
  for (const value of [undefined, null, 12, {}]) assert.equal(parseClusterId(value), null);
});

test("a cell's cluster holds the positions inside its cell, and no other", () => {
  // Level 1: four quarters; Paris is in the north-east one (x 1, y 0).
  assert.ok(clusterHolds("c1.1.0", 48.85, 2.35));
  assert.ok(!clusterHolds("c1.0.0", 48.85, 2.35));
  assert.ok(!clusterHolds("c1.1.1", 48.85, 2.35));
  // Any world copy of the position.
  assert.ok(clusterHolds("c1.1.0", 48.85, 2.35 + 360));
});

test("filtered, location, merged and point ids hold what their parts hold", () => {
  assert.ok(clusterHolds("f6-c1.1.0", 48.85, 2.35));
  assert.ok(!clusterHolds("f6-c1.0.1", 48.85, 2.35));
  assert.ok(clusterHolds("l48.85_2.35", 48.85, 2.35));
  assert.ok(!clusterHolds("l48.85_2.35", 48.86, 2.35));
  assert.ok(clusterHolds("mc1.0.1~l48.85_2.35", 48.85, 2.35));
  assert.ok(clusterHolds("mp3~f1-c1.1.0", 48.85, 2.35));
  assert.ok(!clusterHolds("mc1.0.1~p4", 48.85, 2.35));
  assert.ok(!clusterHolds("p4", 48.85, 2.35));
  assert.ok(!clusterHolds("not an id", 48.85, 2.35));
});
