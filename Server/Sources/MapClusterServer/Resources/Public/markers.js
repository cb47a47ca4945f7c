// The markers' HTML: a point's dot, a cluster's disc or donut with its count, and what a click or a hover shows. Plain
// strings from a feature and the server's config, every server value escaped.

import { colour, countStep, diameter, escape, formatted } from "./style.js";

/// How many points a feature stands for.
export function count(feature) {
  return feature.properties.cluster ? feature.properties.point_count : 1;
}

/// A point's title: its name column, else its id.
export function title(config, feature) {
  const name = config.name_column ? feature.properties[config.name_column] : null;
  return name != null && name !== "" ? name : feature.id;
}

/// A cluster with categories as a donut: one arc per category, sized by its share of the count.
export function donut(config, feature, size) {
  const categories = feature.properties.categories || {};
  const total = feature.properties.point_count;
  const radius = size / 2;
  const inner = radius * 0.62;
  let angle = -Math.PI / 2;
  const arcs = config.categories.filter((name) => categories[name] > 0).map((name) => {
    const value = categories[name];
    const sweep = (value / total) * 2 * Math.PI;
    const start = angle;
    angle += sweep;
    const attributes = `data-category="${escape(name)}" data-value="${escape(value)}" fill="${colour(config.categories, name)}"`;
    if (value === total) {
      // The whole ring: two half arcs, since one arc can't start and end at one point.
      return `<path ${attributes} fill-rule="evenodd" d="M${radius},0 A${radius},${radius} 0 1 1 ${radius},${size} A${radius},${radius} 0 1 1 ${radius},0 Z ` +
        `M${radius},${radius - inner} A${inner},${inner} 0 1 0 ${radius},${radius + inner} A${inner},${inner} 0 1 0 ${radius},${radius - inner} Z"/>`;
    }
    const point = (r, a) => `${(radius + r * Math.cos(a)).toFixed(2)},${(radius + r * Math.sin(a)).toFixed(2)}`;
    const large = sweep > Math.PI ? 1 : 0;
    return `<path ${attributes} d="M${point(radius, start)} A${radius},${radius} 0 ${large} 1 ${point(radius, angle)} ` +
      `L${point(inner, angle)} A${inner},${inner} 0 ${large} 0 ${point(inner, start)} Z"/>`;
  });
  return `<svg class="donut" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}">${arcs.join("")}` +
    `<circle cx="${radius}" cy="${radius}" r="${inner}" fill="#fff"/></svg>`;
}

/// A marker's HTML and its diameter: a point's dot in its category's colour, a cluster's disc or donut.
export function markerHTML(config, feature) {
  if (!feature.properties.cluster) {
    const category = config.category_column ? feature.properties[config.category_column] : null;
    const size = diameter(config.markers, 1);
    return { size, html: `<div class="single" style="width:${size}px;height:${size}px;background:${colour(config.categories, category)}"></div>` };
  }
  const n = feature.properties.point_count;
  const label = escape(feature.properties.point_count_abbreviated);
  const size = diameter(config.markers, n);
  const box = `style="width:${size}px;height:${size}px" data-count="${escape(n)}"`;
  if (feature.properties.categories) {
    return { size, html: `<div class="cluster donut-cluster" ${box}>${donut(config, feature, size)}<span>${label}</span></div>` };
  }
  const step = countStep(n);
  const disc = `style="width:${size}px;height:${size}px;background-color:${step.colour}" data-count="${escape(n)}"`;
  return { size, html: `<div class="cluster ${step.kind}" ${disc}>${label}</div>` };
}

/// A point's popup: its title and every property.
export function popup(config, feature) {
  const rows = Object.entries(feature.properties)
    .map(([name, value]) => `<tr><td>${escape(name)}</td><td>${escape(typeof value === "object" ? JSON.stringify(value) : formatted(value))}</td></tr>`)
    .join("");
  return `<strong>${escape(title(config, feature))}</strong><table class="popup-table">${rows}</table>`;
}

/// What a cluster's members add up to: its count, each reduction (as "population sum"), its weight, its categories
/// and its counts of each further column of categories.
export function summary(config, feature) {
  const properties = feature.properties;
  const rows = [`<tr><td>points</td><td>${escape(formatted(properties.point_count))}</td></tr>`];
  for (const name of config.reductions) {
    if (properties[name] != null) rows.push(`<tr><td>${escape(name.replace(/_/g, " "))}</td><td>${escape(formatted(properties[name]))}</td></tr>`);
  }
  if (properties.weight != null) rows.push(`<tr><td>weight</td><td>${escape(formatted(properties.weight))}</td></tr>`);
  for (const [name, value] of Object.entries(categoryCounts(properties))) {
    rows.push(`<tr><td><span class="swatch" style="background:${colour(config.categories, name)}"></span>${escape(name)}</td><td>${escape(formatted(value))}</td></tr>`);
  }
  // Each further column of categories, as COLUMN_VALUE properties.
  for (const column of config.counted_categories || []) {
    for (const [name, value] of Object.entries(properties)) {
      if (name.startsWith(column + "_")) {
        rows.push(`<tr><td>${escape(column)}: ${escape(name.slice(column.length + 1))}</td><td>${escape(formatted(value))}</td></tr>`);
      }
    }
  }
  return `<table class="popup-table">${rows.join("")}</table>`;
}

/// A cluster's count of each category of the first column: its `categories` in GeoJSON, its `category_VALUE`
/// properties in a vector tile.
export function categoryCounts(properties) {
  if (properties.categories && typeof properties.categories === "object") return properties.categories;
  return Object.fromEntries(Object.entries(properties)
    .filter(([name, value]) => name.startsWith("category_") && value > 0).map(([name, value]) => [name.slice(9), value]));
}

/// A marker's key among the drawn ones: a cluster's id or a point's, apart.
export function key(feature) {
  return feature.properties.cluster ? "cluster:" + feature.properties.cluster_id : "point:" + feature.id;
}

/// What a screen reader says of a marker: a cluster's count, its leading categories and its reductions ("Cluster of
/// 1,204 points: 812 EU, 392 AS; population sum 41 million"); a point's title, and its category.
export function accessibleName(config, feature) {
  const properties = feature.properties;
  if (!properties.cluster) {
    const category = config.category_column ? properties[config.category_column] : null;
    return `${title(config, feature)}${category != null && category !== "" ? `, ${category}` : ""}`;
  }
  const parts = [`Cluster of ${properties.point_count.toLocaleString("en-US")} points`];
  const leading = Object.entries(categoryCounts(properties)).sort((a, b) => b[1] - a[1]).slice(0, 3)
    .map(([name, value]) => `${value.toLocaleString("en-US")} ${name}`);
  const reductions = (config.reductions || []).filter((name) => typeof properties[name] === "number")
    .map((name) => `${name.replace(/_/g, " ")} ${spoken(properties[name])}`);
  let name = parts[0];
  if (leading.length > 0) name += `: ${leading.join(", ")}`;
  if (reductions.length > 0) name += `; ${reductions.join("; ")}`;
  return name;
}

/// A number as it is read aloud: "41 million", "1,204", "3.5".
function spoken(value) {
  if (Math.abs(value) >= 1e6) return new Intl.NumberFormat("en-US", { notation: "compact", compactDisplay: "long", maximumFractionDigits: 1 }).format(value);
  return formatted(value);
}
