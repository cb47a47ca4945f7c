// Cluster ids as the server writes them (ClusterIDText in Swift; the grammar is in the engine's DocC article "Cluster
// ids as text"), read into plain objects, and what a cluster's id says of where its members lie.

import { unit } from "./geo.js";

const decimal = "-?[0-9]+(?:\\.[0-9]+)?(?:e[-+]?[0-9]+)?";
const cellPattern = /^c([0-9]+)\.([0-9]+)\.([0-9]+)$/;
const locationPattern = new RegExp(`^l(${decimal})_(${decimal})$`);
const pointPattern = /^p([0-9]+)$/;
const filteredPattern = /^f([0-9a-f]+)-(.*)$/;

/// The id a text names, or null if it isn't one:
/// - `{ kind: "cell", level, x, y }`
/// - `{ kind: "location", latitude, longitude }`
/// - `{ kind: "point", record }`
/// - `{ kind: "filtered", categories, of }`: `categories` the hexadecimal bits as written, `of` a cell or location
/// - `{ kind: "merged", parts }`: two or more of the kinds above
export function parseClusterId(text) {
  if (typeof text !== "string") return null;
  if (text[0] !== "m") return parsePart(text);
  const parts = text.slice(1).split("~").map(parsePart);
  return parts.length > 1 && parts.every((part) => part !== null) ? { kind: "merged", parts } : null;
}

function parsePart(text) {
  let match = cellPattern.exec(text);
  if (match) {
    const [level, x, y] = match.slice(1).map(Number);
    if (level > 32 || x > 0xffffffff || y > 0xffffffff) return null;
    if (level < 32 && (x >= 2 ** level || y >= 2 ** level)) return null;
    return { kind: "cell", level, x, y };
  }
  match = locationPattern.exec(text);
  if (match) {
    const [latitude, longitude] = [Number(match[1]), Number(match[2])];
    if (!(Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180)) return null;
    return { kind: "location", latitude, longitude };
  }
  match = pointPattern.exec(text);
  if (match) {
    const record = Number(match[1]);
    return Number.isSafeInteger(record) ? { kind: "point", record } : null;
  }
  match = filteredPattern.exec(text);
  if (match) {
    if (match[1].length > 16) return null;
    const of = parsePart(match[2]);
    return of && (of.kind === "cell" || of.kind === "location") ? { kind: "filtered", categories: match[1], of } : null;
  }
  return null;
}

/// Whether the members of the cluster an id names may lie at a position: the cell of a cell's cluster holds it, a
/// location's cluster stands on it, a merged one's parts do either. What a zoom's markers split out of or merge into.
/// `id` is the text, or what parseClusterId read from it.
export function clusterHolds(id, lat, lon) {
  const parsed = typeof id === "string" ? parseClusterId(id) : id;
  if (!parsed) return false;
  switch (parsed.kind) {
    case "cell": {
      const point = unit(lat, lon);
      const n = 2 ** parsed.level;
      return Math.floor(point.x * n) === parsed.x && Math.floor(point.y * n) === parsed.y;
    }
    case "location": {
      const a = unit(lat, lon);
      const b = unit(parsed.latitude, parsed.longitude);
      return Math.abs(a.x - b.x) < 1e-9 && Math.abs(a.y - b.y) < 1e-9;
    }
    case "filtered": return clusterHolds(parsed.of, lat, lon);
    case "merged": return parsed.parts.some((part) => clusterHolds(part, lat, lon));
    default: return false;
  }
}
