// What both pages draw markers with: sizes from the server's config, the counts' colour steps and the categories'
// palette, and text made safe for HTML.

/// The sizes a server without a config (or before it answers) draws at.
export const DEFAULT_SIZES = { single: 14, cluster: 26, per_decade: 8, gap: 2 };

/// A single point's colour when it has no category.
export const POINT_COLOUR = "#1f5f99";

/// The colour steps of a cluster without categories: under 100 members, under 1,000, and more.
export const COUNT_STEPS = [
  { below: 100, kind: "small", colour: "#3b8bd0" },
  { below: 1000, kind: "medium", colour: "#e0902a" },
  { below: Infinity, kind: "large", colour: "#d2452f" },
];

/// One colour per category, in the config's order: a qualitative palette that stays apart for the colour-blind.
export const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f", "#bab0ac"];

/// The diameter the server keeps apart for a count, in points: a cluster grows by `per_decade` for each tenfold.
export function diameter(sizes, count) {
  return count <= 1 ? sizes.single : Math.round(sizes.cluster + sizes.per_decade * Math.log10(count));
}

/// The step of a cluster's count: its kind (a CSS class) and colour.
export function countStep(count) {
  return COUNT_STEPS.find((step) => count < step.below);
}

/// A category's colour among `categories` (the config's), or the point colour for none.
export function colour(categories, category) {
  const index = categories.indexOf(category);
  return index < 0 ? POINT_COLOUR : PALETTE[index % PALETTE.length];
}

/// Any value as text safe inside HTML, an attribute's quotes included.
export function escape(value) {
  return String(value).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

/// A number as the page shows it (`12,345.68`); anything else as it is.
export function formatted(value) {
  return typeof value === "number" ? value.toLocaleString("en-US", { maximumFractionDigits: 2 }) : value;
}
