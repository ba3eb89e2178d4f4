import { z } from "zod";
import type { LoadedPluginInfo } from "../plugin.js";
import { kernelConfigSchema } from "./schema.js";

type JsonSchema = Record<string, unknown>;

// Keywords whose values are data, not schemas (a default `{ format: "json" }` stays), and maps of named schemas.
const VALUE_KEYWORDS = new Set(["default", "const", "enum", "examples"]);
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"]);

/**
 * Objects with known keys reject others, as `config check` does; `.loose()` objects and records stay open.
 * `format` goes (Ajv warns about each one without ajv-formats; `config check` checks values anyway): a URI keeps
 * the scheme its RFC starts with as a pattern.
 */
function normalize(node: unknown): void {
  if (node === null || typeof node !== "object") return;
  const o = node as JsonSchema;
  if (o.type === "object" && o.properties !== undefined && !("additionalProperties" in o)) o.additionalProperties = false;
  if (o.format === "uri" && o.pattern === undefined) o.pattern = "^[A-Za-z][A-Za-z0-9+.-]*:";
  if (typeof o.format === "string") delete o.format;
  for (const [key, child] of Object.entries(o)) {
    if (SCHEMA_MAPS.has(key) && child !== null && typeof child === "object") Object.values(child).forEach(normalize);
    else if (!VALUE_KEYWORDS.has(key)) normalize(child);
  }
}

/**
 * JSON Schema of config.yaml with each loaded plugin's config schema composed into `plugins[]`, keyed by
 * the package name or path that enables it. Point an editor's YAML language server at it for completion. Entries are
 * picked by `if`/`then` on that key, not an `anyOf`, so a typo in one plugin's block is one error there, not one per plugin.
 */
export function composedConfigJsonSchema(plugins: readonly LoadedPluginInfo[] = []): JsonSchema {
  const sections = Object.assign({}, ...plugins.map((p) => p.configSections)) as Record<string, z.ZodType>;
  const root = z.toJSONSchema(kernelConfigSchema.extend(sections), { io: "input", unrepresentable: "any" }) as JsonSchema;
  const properties = root.properties as Record<string, JsonSchema>;
  const generic = (properties.plugins as JsonSchema).items as JsonSchema;
  const cases: JsonSchema[] = [];
  const named: JsonSchema[] = [];
  for (const info of plugins.filter((p) => p.origin.kind !== "builtin")) {
    const key = info.origin.kind === "path" ? "path" : "package";
    const spec = info.origin.kind === "path" || info.origin.kind === "package" ? info.origin.spec : info.name;
    const entry: Record<string, JsonSchema> = { [key]: { const: spec }, enabled: { type: "boolean" } };
    // A plugin without a schema takes no config at all.
    if (info.configSchema) entry.config = z.toJSONSchema(info.configSchema, { io: "input", unrepresentable: "any" }) as JsonSchema;
    delete entry.config?.$schema;
    // Open, so that normalize() leaves it matching the whole entry, not only its key.
    named.push({ type: "object", properties: { [key]: { const: spec } }, required: [key], additionalProperties: true });
    const then = { type: "object", description: info.description ?? info.name, properties: entry, additionalProperties: false };
    cases.push({ if: named.at(-1), then });
  }
  // The generic entry is for plugins this config does not load; a loaded one must match its own entry.
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then` keyword; the object is never awaited.
  const items = cases.length ? { allOf: [...cases, { if: { not: { anyOf: named } }, then: generic }] } : generic;
  properties.plugins = { type: "array", items };
  normalize(root);
  root.title = "Antler config.yaml";
  return root;
}
