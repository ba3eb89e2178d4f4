// `pnpm docs:config-reference` / `pnpm docs:config-reference:check`: docs/reference/config-schema.md, the reference
// of every config.yaml key, rendered from the JSON Schema that `antler config schema` prints (the kernel's
// `composedConfigJsonSchema`) with every in-tree plugin loaded. Nothing in it is written by hand: each key's type,
// default and description come from the zod schemas, so the page cannot drift from what `config check` accepts.
//
// Usage: node scripts/docs-config-reference.mjs check|update [--root DIR]. Run after a build (it imports dist/).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { publishedPackages } from "./workspace-packages.mjs";

export const REFERENCE_FILE = "docs/reference/config-schema.md";

/** The plugin each published package default-exports, in package-name order (packages without one are skipped). */
export async function inTreePlugins(root) {
  const plugins = [];
  for (const pkg of publishedPackages(root)) {
    const target = importTarget(pkg.manifest);
    if (!target) continue;
    const file = join(pkg.dir, target);
    if (!existsSync(file)) throw new Error(`${relative(root, file)} is missing: run \`pnpm build\` first`);
    const plugin = (await import(pathToFileURL(file).href)).default;
    if (plugin && typeof plugin.setup === "function" && typeof plugin.name === "string") plugins.push({ pkg, plugin });
  }
  return plugins;
}

function importTarget(manifest) {
  const dot = typeof manifest.exports === "object" && manifest.exports !== null ? manifest.exports["."] : manifest.exports;
  if (typeof dot === "string") return dot;
  if (dot && typeof dot === "object") return typeof dot.import === "string" ? dot.import : (dot.import?.default ?? dot.default);
  return manifest.main;
}

/** The composed schema, as `antler config schema` prints it for a config that enables every in-tree plugin by package name. */
export async function composedSchema(root) {
  const { composedConfigJsonSchema } = await import("@antler/kernel/config");
  const plugins = await inTreePlugins(root);
  const infos = plugins.map(({ plugin }) => ({
    name: plugin.name,
    version: plugin.version,
    description: plugin.description,
    origin: { kind: "package", spec: plugin.name, where: "" },
    dependsOn: plugin.dependsOn ?? [],
    configSchema: plugin.configSchema,
    configSections: plugin.configSections ?? {},
    contributions: { tools: [], middlewares: [], providers: [], commands: [], hooks: [] },
  }));
  return { schema: composedConfigJsonSchema(infos), plugins };
}

// ---- rendering -------------------------------------------------------------------------------------------------

const MAX_SAFE = 9007199254740991;

const URI_SCHEME_PATTERN = "^[A-Za-z][A-Za-z0-9+.-]*:";

/** A short type for a table cell: `string (uri)`, `"a" | "b"`, `integer ≥ 1`, `object[]`, `map of string`. */
export function typeOf(schema) {
  if (!schema || typeof schema !== "object" || Object.keys(schema).length === 0) return "any";
  if ("const" in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" \\| ");
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return [...new Set(union.map(typeOf))].join(" \\| ");
  if (Array.isArray(schema.type)) return schema.type.join(" \\| ");
  switch (schema.type) {
    case "array": {
      const item = typeOf(schema.items);
      return /[ |]/.test(item) ? `(${item})[]` : `${item}[]`;
    }
    case "object":
      if (schema.additionalProperties && typeof schema.additionalProperties === "object" && !schema.properties) {
        return `map of ${typeOf(schema.additionalProperties)}`;
      }
      return "object";
    case "string":
      if (schema.format) return `string (${schema.format})`;
      // The composed schema states a URI as this scheme pattern instead of `format: "uri"` (see json-schema.ts).
      return schema.pattern === URI_SCHEME_PATTERN ? "string (uri)" : "string";
    case "number":
    case "integer": {
      const bounds = [];
      if (schema.minimum !== undefined) bounds.push(`≥ ${schema.minimum}`);
      if (schema.exclusiveMinimum !== undefined) bounds.push(`> ${schema.exclusiveMinimum}`);
      if (schema.maximum !== undefined && schema.maximum !== MAX_SAFE) bounds.push(`≤ ${schema.maximum}`);
      if (schema.exclusiveMaximum !== undefined) bounds.push(`< ${schema.exclusiveMaximum}`);
      return [schema.type, ...bounds].join(" ");
    }
    default:
      return schema.type ?? "any";
  }
}

/** Rows `{ path, type, default, description }` for a schema's keys and, depth first, their nested keys. */
export function rowsOf(schema, prefix = "", depth = 0) {
  const rows = [];
  if (!schema || typeof schema !== "object" || depth > 6) return rows;
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) {
    for (const member of union) rows.push(...rowsOf(member, prefix, depth));
    return dedupe(rows);
  }
  if (schema.type === "array" && schema.items) return rowsOf(schema.items, `${prefix}[]`, depth + 1);
  if (schema.properties) {
    for (const [key, child] of Object.entries(schema.properties)) {
      const path = prefix ? `${prefix}.${key}` : key;
      rows.push({
        path,
        type: typeOf(child),
        default: child.default === undefined ? "" : JSON.stringify(child.default),
        description: child.description ?? "",
        required: Array.isArray(schema.required) && schema.required.includes(key) && child.default === undefined,
      });
      rows.push(...rowsOf(child, path, depth + 1));
    }
  } else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
    rows.push(...rowsOf(schema.additionalProperties, `${prefix}.<name>`, depth + 1));
  }
  return dedupe(rows);
}

/** Union members may repeat a key: keep its first row, joining the types the members give it. */
function dedupe(rows) {
  const byPath = new Map();
  for (const row of rows) {
    const seen = byPath.get(row.path);
    if (!seen) byPath.set(row.path, { ...row });
    else {
      if (!seen.type.split(" \\| ").includes(row.type)) seen.type = `${seen.type} \\| ${row.type}`;
      seen.description ||= row.description;
      seen.default ||= row.default;
    }
  }
  return [...byPath.values()];
}

/** Table-cell text: one line, pipes escaped, and outside code spans `<`, `{` and `}` as entities (VitePress reads pages as Vue templates). */
function cell(text) {
  return String(text)
    .replace(/\s*\n\s*/g, " ")
    .split(/(`[^`]*`)/)
    .map((part, i) =>
      i % 2 === 1
        ? part.replace(/\|/g, "\\|")
        : part
            .replace(/</g, "&lt;")
            .replace(/[{}]/g, (c) => (c === "{" ? "&#123;" : "&#125;"))
            .replace(/(?<!\\)\|/g, "\\|"),
    )
    .join("");
}

function table(rows, prefix) {
  if (rows.length === 0) return ["Takes no config."];
  const lines = ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |"];
  for (const row of rows) {
    const key = `\`${prefix}${row.path}\`${row.required ? " (required)" : ""}`;
    const dflt = row.default ? `\`${row.default.replace(/\|/g, "\\|")}\`` : "";
    lines.push(`| ${key} | ${cell(row.type)} | ${dflt} | ${cell(row.description)} |`);
  }
  return lines;
}

/** The Markdown page for a composed schema and the plugins whose schemas it holds. */
export function renderReference(schema, plugins) {
  const properties = schema.properties;
  const owner = new Map();
  for (const { plugin } of plugins) for (const key of Object.keys(plugin.configSections ?? {})) owner.set(key, plugin.name);
  const kernelKeys = Object.keys(properties).filter((k) => !owner.has(k) && k !== "plugins");
  const pick = (keys) => ({ type: "object", properties: Object.fromEntries(keys.map((k) => [k, properties[k]])) });
  // Each loaded plugin's entry is an `if: { package: <name> }, then: <entry>` case of the items' `allOf`.
  const entries = (properties.plugins.items.allOf ?? []).flatMap((c) => (c.then ? [c.then] : []));
  const configOf = (name) => entries.find((e) => e.properties?.package?.const === name)?.properties?.config;

  const out = [
    "# config.yaml schema",
    "",
    "<!-- Generated by `pnpm docs:config-reference` from the composed JSON Schema; `pnpm docs:config-reference:check` fails when it is stale. Do not edit. -->",
    "",
    "Every key `config.yaml` accepts, with every in-tree plugin loaded: the kernel's own keys, the top-level sections",
    "that plugins own, and each plugin's `plugins[].config`. It is rendered from the same JSON Schema that",
    "`antler config schema` prints for your config, so it says exactly what `antler config check` accepts. For how the",
    "file is found, `$VAR` substitution and the error messages, see [config.yaml](config.md).",
    "",
    "A top-level section owned by a plugin is accepted only while that plugin is loaded.",
    "",
    "## Kernel keys",
    "",
    ...table(rowsOf(pick(kernelKeys)), ""),
    "",
    "`plugins:` entries are `{ package | path, enabled, config }`, or a bare package name; `config` is the plugin's own",
    "schema, listed [per plugin](#plugin-config) below.",
    "",
    "## Sections owned by plugins",
  ];
  for (const { plugin } of plugins) {
    const keys = Object.keys(plugin.configSections ?? {});
    if (keys.length === 0) continue;
    out.push("", `### ${plugin.name}`, "", ...table(rowsOf(pick(keys)), ""));
  }
  out.push("", '<a id="plugin-config"></a>', "", "## Plugin config (`plugins[].config`)");
  for (const { plugin } of plugins) {
    out.push("", `### ${plugin.name}`, "");
    if (plugin.description) out.push(cell(plugin.description), "");
    const config = configOf(plugin.name);
    out.push(...(config ? table(rowsOf(config), "") : ["Takes no config."]));
  }
  return `${out.join("\n")}\n`;
}

export async function buildReference(root) {
  const { schema, plugins } = await composedSchema(root);
  return renderReference(schema, plugins);
}

async function cli() {
  const args = process.argv.slice(2);
  const mode = args[0];
  const rootFlag = args.indexOf("--root");
  const root = rootFlag === -1 ? join(dirname(fileURLToPath(import.meta.url)), "..") : resolve(args[rootFlag + 1] ?? ".");
  if (mode !== "check" && mode !== "update") {
    console.error("usage: node scripts/docs-config-reference.mjs check|update [--root DIR]");
    return 2;
  }
  const text = await buildReference(root);
  const file = join(root, REFERENCE_FILE);
  const current = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  if (mode === "update") {
    if (current !== text) writeFileSync(file, text);
    console.log(`${REFERENCE_FILE} ${current === text ? "is up to date" : "written"}`);
    return 0;
  }
  if (current === text) {
    console.log(`${REFERENCE_FILE} matches the config schemas`);
    return 0;
  }
  console.error(
    `${REFERENCE_FILE} is ${current === undefined ? "missing" : "stale: a config schema changed"}. Run \`pnpm build && pnpm docs:config-reference\` and commit the page.`,
  );
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await cli();
}
