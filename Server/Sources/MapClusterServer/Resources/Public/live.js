// A live server's changes of the view (/api/changes, Server-Sent Events), applied to the features drawn.

import { key } from "./markers.js";

/// The features after a change, and where new markers split from (`from`) and removed ones merge into (`into`), by
/// marker key: what the draw glides from and to.
export function applyChange(features, change) {
  const next = new Map(features.map((feature) => [key(feature), feature]));
  const from = new Map();
  const into = new Map();
  for (const removal of change.removals) {
    const k = (removal.cluster ? "cluster:" : "point:") + removal.id;
    next.delete(k);
    if (removal.mergesInto) into.set(k, removal.mergesInto);
  }
  for (const feature of change.updates) next.set(key(feature), feature);
  for (const insertion of change.insertions) {
    next.set(key(insertion.feature), insertion.feature);
    if (insertion.splitFrom) from.set(key(insertion.feature), insertion.splitFrom);
  }
  return { features: [...next.values()], from, into };
}

/// Follows the changes of one view: `ready` once the stream is open (fetch the clusters then, so that no change falls
/// between the two), `change` for each change, in order, once the clusters it applies to are drawn (`drawn()` says so);
/// `resync` when the page fell behind and must fetch the clusters again. `open` makes the EventSource.
export function follow(url, { ready, change, resync, open = (address) => new EventSource(address) }) {
  const source = open(url);
  let waiting = [];
  let closed = false;
  source.addEventListener("ready", () => { if (!closed) ready(); });
  source.addEventListener("changes", (event) => {
    if (closed) return;
    const parsed = JSON.parse(event.data);
    if (waiting) waiting.push(parsed); else change(parsed);
  });
  source.addEventListener("resync", () => { if (!closed) { waiting = []; resync(); } });
  // EventSource reconnects by itself; the new stream's "ready" fetches again.
  return {
    /// The clusters are drawn: the changes that came before them apply now, and later ones as they come.
    drawn() {
      const changes = waiting || [];
      waiting = null;
      for (const parsed of changes) change(parsed);
    },
    close() { closed = true; source.close(); },
  };
}
