// Web Mercator as the server's grid has it, and the longitudes of a map that shows several world copies.

/// The latitude Web Mercator reaches: beyond it, the square world ends.
export const MAX_LATITUDE = 85.05112878;

/// A latitude held within the square world.
export function clampLatitude(lat) {
  return Math.max(-MAX_LATITUDE, Math.min(MAX_LATITUDE, lat));
}

/// A longitude wrapped into [-180, 180).
export function wrapLongitude(lon) {
  return ((((lon + 180) % 360) + 360) % 360) - 180;
}

/// A position on the unit square: x from the antimeridian eastwards, y from the north edge southwards (the longitude
/// wrapped, the latitude clamped).
export function unit(lat, lon) {
  const sin = Math.sin((clampLatitude(lat) * Math.PI) / 180);
  return { x: ((((lon + 180) / 360) % 1) + 1) % 1, y: 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI) };
}

/// A position in the world's pixels at zoom 0 (256 wide), the longitude not wrapped: what the outline is drawn from.
export function worldPixel(lon, lat) {
  const { y } = unit(lat, 0);
  return [((lon + 180) / 360) * 256, y * 256];
}

/// The shifts (in whole turns of 360°) that put a longitude inside west…east, a view's unwrapped longitudes; the
/// nearest one if none does.
export function worldCopies(lng, west, east) {
  const shifts = [];
  for (let k = Math.ceil((west - lng) / 360); lng + 360 * k <= east; k++) shifts.push(k);
  if (!shifts.length) shifts.push(Math.round(((west + east) / 2 - lng) / 360));
  return shifts;
}

/// A longitude moved by whole turns to the world copy nearest another.
export function nearestCopy(lng, near) {
  return lng + 360 * Math.round((near - lng) / 360);
}

/// The `bbox` the API takes (west,south,east,north, six decimals) for a view's unwrapped west and east and its south
/// and north: the whole world's width when the view is wider, and east past the antimeridian written as the API reads
/// it (east below west).
export function bboxOf(west, south, east, north) {
  let bbox;
  if (east - west >= 360) {
    bbox = [-180, clampLatitude(south), 180, clampLatitude(north)];
  } else {
    let wrappedEast = wrapLongitude(east);
    if (wrappedEast === -180) wrappedEast = 180;
    bbox = [wrapLongitude(west), clampLatitude(south), wrappedEast, clampLatitude(north)];
  }
  return bbox.map((value) => value.toFixed(6)).join(",");
}
