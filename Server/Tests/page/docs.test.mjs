// The API reference page's drawing (Resources/Public/docs.js), on the server's own OpenAPI document.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { anchor, reference, resolve, typeOf } from "../../Sources/MapClusterServer/Resources/Public/docs.js";

const spec = JSON.parse(readFileSync(new URL("../../Sources/MapClusterServer/Resources/openapi.json", import.meta.url)));

test("every operation of the document has a section and an entry in the contents", () => {
  const { contents, sections } = reference(spec);
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of ["get", "post", "delete"].filter((each) => item[each])) {
      const id = anchor(method, path, item[method]);
      assert.ok(sections.includes(`<h3 id="${id}">`), `${method} ${path}: no section`);
      assert.ok(contents.includes(`href="#${id}"`), `${method} ${path}: not in the contents`);
    }
  }
});

test("references resolve, and every parameter and answer is named", () => {
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation.parameters ?? []) assert.ok(resolve(spec, parameter).name, JSON.stringify(parameter));
      for (const response of Object.values(operation.responses ?? {})) {
        assert.ok(resolve(spec, response).description, JSON.stringify(response));
      }
    }
  }
  const { sections } = reference(spec);
  assert.ok(!sections.includes("undefined"));
});

test("a schema's type reads in a few words", () => {
  assert.equal(typeOf(spec, { type: "integer", minimum: 0, maximum: 1000, default: 10 }), "integer (0…1000, default 10)");
  assert.equal(typeOf(spec, { $ref: "#/components/schemas/FeatureCollection" }), "FeatureCollection");
  assert.equal(typeOf(spec, { type: "array", items: { type: "string" } }), "array of string");
  assert.equal(typeOf(spec, { enum: ["leaflet", "maplibre"] }), '"leaflet" | "maplibre"');
});

test("text from the document is escaped", () => {
  const hostile = { openapi: "3.1.0", info: { title: "t", version: "1" },
    paths: { "/x": { get: { summary: "<img src=x onerror=alert(1)>", responses: { 200: { description: "`<b>`" } } } } } };
  const { sections } = reference(hostile);
  assert.ok(!sections.includes("<img"));
  assert.ok(sections.includes("<code>&lt;b&gt;</code>"));
});
