// The URL hash: the view, then the category filter (#zoom/lat/lon&categories=a,b).

/// The view and the filter a hash holds: `view` is `{ zoom, lat, lng }` or null, `categories` a list of names or null
/// for no filter.
export function parseHash(hash) {
  const view = /^#(\d+(?:\.\d+)?)\/(-?\d+(?:\.\d+)?)\/(-?\d+(?:\.\d+)?)/.exec(hash);
  const filter = /(?:^#|&)categories=([^&]*)/.exec(hash);
  let categories = null;
  if (filter) {
    try {
      categories = decodeURIComponent(filter[1]).split(",").filter((name) => name);
    } catch {
      categories = null; // a malformed escape in an edited URL is no filter
    }
  }
  return { view: view ? { zoom: Number(view[1]), lat: Number(view[2]), lng: Number(view[3]) } : null, categories };
}

/// The hash of a view (its center's longitude wrapped) with a filter (null: all categories).
export function hashOf(zoom, lat, lng, categories) {
  const view = `#${zoom}/${lat.toFixed(4)}/${lng.toFixed(4)}`;
  return categories === null ? view : view + "&categories=" + categories.map(encodeURIComponent).join(",");
}

/// A filter as the API's query takes it: nothing for none, else `&categories=` and the names.
export function categoriesQuery(categories) {
  return categories === null ? "" : "&categories=" + categories.map(encodeURIComponent).join(",");
}

/// The filter a click on a legend entry makes: the entry toggled; every category shown again is no filter (null).
export function toggledCategories(all, selected, name) {
  const shown = selected === null || selected.includes(name);
  const toggled = shown ? (selected || all).filter((other) => other !== name) : [...selected, name];
  return toggled.length === all.length ? null : toggled;
}
