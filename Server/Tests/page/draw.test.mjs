import assert from "node:assert/strict";
import test from "node:test";
import { inOrder } from "../../Sources/MapClusterServer/Resources/Public/draw.js";

// The brute-force length of the longest increasing run (not necessarily contiguous) of a list.
function longest(indices) {
  const best = indices.map(() => 1);
  for (let i = 0; i < indices.length; i += 1) {
    for (let j = 0; j < i; j += 1) if (indices[j] < indices[i]) best[i] = Math.max(best[i], best[j] + 1);
  }
  return Math.max(0, ...best);
}

test("the markers already in reading order are a longest increasing run of it, and stay", () => {
  assert.deepEqual([...inOrder([])], []);
  assert.deepEqual([...inOrder([0, 1, 2, 3])].sort(), [0, 1, 2, 3]);
  // One marker moved to the front: only it moves.
  assert.deepEqual([...inOrder([3, 0, 1, 2])].sort(), [0, 1, 2]);
  // Reversed: one stays, every other moves.
  assert.equal(inOrder([4, 3, 2, 1, 0]).size, 1);
  // Seeded random orders against brute force: as long as the longest run, and increasing in the list's order.
  let seed = 42;
  const random = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  for (let round = 0; round < 200; round += 1) {
    const n = Math.floor(random() * 30);
    const indices = [...Array(n).keys()].sort(() => random() - 0.5);
    const staying = inOrder(indices);
    assert.equal(staying.size, longest(indices), `${indices}`);
    const kept = indices.filter((index) => staying.has(index));
    assert.deepEqual(kept, [...kept].sort((a, b) => a - b), `${indices}`);
  }
});
