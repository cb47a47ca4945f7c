// The HTTP API's reference at /docs, drawn from the server's own OpenAPI document (openapi.json): every operation
// with its parameters, body and answers. It asks for nothing but that document, so it works offline.
import { escape } from "./style.js";

const methods = ["get", "post", "put", "delete", "head", "options"];

/** What a `$ref` within the document names: `#/components/schemas/Feature` → that object. */
export function resolve(document, value) {
  let seen = 0;
  while (value && typeof value.$ref === "string" && seen++ < 16) {
    value = value.$ref.replace(/^#\//, "").split("/").reduce((node, key) => node?.[key.replace(/~1/g, "/").replace(/~0/g, "~")], document);
  }
  return value ?? {};
}

/** A schema's type in a few words: `integer (0…1000, default 10)`, `array of Feature`, `one of: string, integer`. */
export function typeOf(document, schema) {
  if (schema?.$ref) return schema.$ref.split("/").pop();
  const resolved = resolve(document, schema);
  const alternatives = resolved.oneOf ?? resolved.anyOf;
  if (alternatives) return "one of: " + alternatives.map((each) => typeOf(document, each)).join(", ");
  if (resolved.enum) return resolved.enum.map((value) => JSON.stringify(value)).join(" | ");
  if (resolved.const !== undefined) return JSON.stringify(resolved.const);
  let type = Array.isArray(resolved.type) ? resolved.type.join(" or ") : resolved.type ?? "any";
  if (type === "array" && resolved.items) type = "array of " + typeOf(document, resolved.items);
  const limits = [];
  if (resolved.minimum !== undefined || resolved.maximum !== undefined) {
    limits.push(`${resolved.minimum ?? ""}…${resolved.maximum ?? ""}`);
  }
  if (resolved.pattern) limits.push(`pattern ${resolved.pattern}`);
  if (resolved.default !== undefined) limits.push(`default ${JSON.stringify(resolved.default)}`);
  return limits.length ? `${type} (${limits.join(", ")})` : type;
}

/** Inline Markdown of the document's descriptions: `code` and line breaks, the rest as text. */
export function prose(text) {
  return escape(text ?? "").replace(/`([^`]+)`/g, "<code>$1</code>").replace(/\n\n/g, "<br><br>");
}

/** An anchor for an operation: its operationId, or its method and path. */
export function anchor(method, path, operation) {
  return operation.operationId ?? `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, "-");
}

function schemaHTML(document, schema, depth, seen) {
  const resolved = resolve(document, schema);
  const name = schema?.$ref?.split("/").pop();
  if (depth > 2 || (name && seen.has(name)) || !resolved.properties) return "";
  const inner = new Set(seen);
  if (name) inner.add(name);
  const required = new Set(resolved.required ?? []);
  const rows = Object.entries(resolved.properties).map(([key, value]) => {
    const description = resolve(document, value).description;
    return `<li><code>${escape(key)}</code>${required.has(key) ? "" : " (optional)"}: ${escape(typeOf(document, value))}` +
      `${description ? ` — ${prose(description)}` : ""}${schemaHTML(document, value, depth + 1, inner)}</li>`;
  });
  return `<ul class="schema">${rows.join("")}</ul>`;
}

function contentHTML(document, content) {
  return Object.entries(content ?? {}).map(([type, media]) =>
    `<p><code>${escape(type)}</code>: ${escape(typeOf(document, media.schema))}</p>` +
    schemaHTML(document, media.schema, 0, new Set())).join("");
}

function parametersHTML(document, parameters) {
  if (!parameters?.length) return "";
  const rows = parameters.map((each) => resolve(document, each)).map((parameter) =>
    `<tr><td><code>${escape(parameter.name)}</code></td><td>${escape(parameter.in)}${parameter.required ? ", required" : ""}</td>` +
    `<td>${escape(typeOf(document, parameter.schema))}</td><td>${prose(parameter.description)}</td></tr>`);
  return `<h4>Parameters</h4><table><thead><tr><th scope="col">name</th><th scope="col">in</th><th scope="col">type</th>` +
    `<th scope="col">what it is</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function responsesHTML(document, responses) {
  const rows = Object.entries(responses ?? {}).map(([status, response]) => {
    const resolved = resolve(document, response);
    const types = Object.keys(resolved.content ?? {}).map((type) => `<code>${escape(type)}</code>`).join(", ");
    return `<tr><td>${escape(status)}</td><td>${prose(resolved.description)}</td><td>${types}</td></tr>`;
  });
  return `<h4>Answers</h4><table><thead><tr><th scope="col">status</th><th scope="col">when</th>` +
    `<th scope="col">content</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** The page's HTML for a whole document: a contents list and a section per operation. */
export function reference(document) {
  const contents = [];
  const sections = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of methods.filter((each) => item[each])) {
      const operation = item[method];
      const id = anchor(method, path, operation);
      contents.push(`<li><a href="#${escape(id)}"><span class="path">${method.toUpperCase()} ${escape(path)}</span></a></li>`);
      const body = operation.requestBody ? resolve(document, operation.requestBody) : null;
      const secured = (operation.security ?? document.security ?? []).length > 0;
      sections.push(`<section aria-labelledby="${escape(id)}"><h3 id="${escape(id)}"><span class="method ${method}">` +
        `${method.toUpperCase()}</span><span class="path">${escape(path)}</span></h3>` +
        `<p><strong>${prose(operation.summary)}</strong></p>${operation.description ? `<p>${prose(operation.description)}</p>` : ""}` +
        (secured ? `<p class="note">Needs <code>Authorization: Bearer TOKEN</code>.</p>` : "") +
        parametersHTML(document, [...(item.parameters ?? []), ...(operation.parameters ?? [])]) +
        (body ? `<h4>Body</h4>${body.description ? `<p>${prose(body.description)}</p>` : ""}${contentHTML(document, body.content)}` : "") +
        responsesHTML(document, operation.responses) + `</section>`);
    }
  }
  return { contents: contents.join(""), sections: `<h2>Operations</h2>${sections.join("")}` };
}

async function main() {
  const target = document.getElementById("reference");
  try {
    const answer = await fetch("openapi.json");
    if (!answer.ok) throw new Error(`openapi.json answered ${answer.status}`);
    const spec = await answer.json();
    const { contents, sections } = reference(spec);
    document.getElementById("title").textContent = `${spec.info?.title ?? "HTTP API"} reference`;
    document.getElementById("version").innerHTML = `Version ${escape(spec.info?.version ?? "")}. ${prose(spec.info?.description)}`;
    document.getElementById("contents").innerHTML = contents;
    target.innerHTML = sections;
  } catch (error) {
    target.textContent = `The OpenAPI document could not be read: ${error.message}`;
  }
  target.setAttribute("aria-busy", "false");
}

if (typeof document !== "undefined") main();
