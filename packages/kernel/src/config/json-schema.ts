import { z } from "zod";
import type { LoadedPluginInfo } from "../plugin.js";
import { kernelConfigSchema } from "./schema.js";

type JsonSchema = Record<string, unknown>;

/** Objects with known keys reject others, as `config check` does; `.loose()` objects and records stay open. */
function closeObjects(node: unknown): void {
  if (node === null || typeof node !== "object") return;
  const o = node as JsonSchema;
  if (o.type === "object" && o.properties !== undefined && !("additionalProperties" in o)) o.additionalProperties = false;
  for (const child of Object.values(o)) closeObjects(child);
}

/**
 * JSON Schema of config.yaml with each loaded plugin's config schema composed into `plugins[]`, keyed by
 * the package name or path that enables it. Point an editor's YAML language server at it for completion.
 */
export function composedConfigJsonSchema(plugins: readonly LoadedPluginInfo[] = []): JsonSchema {
  const sections = Object.assign({}, ...plugins.map((p) => p.configSections)) as Record<string, z.ZodType>;
  const root = z.toJSONSchema(kernelConfigSchema.extend(sections), { io: "input", unrepresentable: "any" }) as JsonSchema;
  const properties = root.properties as Record<string, JsonSchema>;
  const generic = (properties.plugins as JsonSchema).items as JsonSchema;
  const specific: JsonSchema[] = [];
  const named: JsonSchema[] = [];
  for (const info of plugins.filter((p) => p.origin.kind !== "builtin")) {
    const key = info.origin.kind === "path" ? "path" : "package";
    const spec = info.origin.kind === "path" || info.origin.kind === "package" ? info.origin.spec : info.name;
    const entry: Record<string, JsonSchema> = { [key]: { const: spec }, enabled: { type: "boolean" } };
    // A plugin without a schema takes no config at all.
    if (info.configSchema) entry.config = z.toJSONSchema(info.configSchema, { io: "input", unrepresentable: "any" }) as JsonSchema;
    delete entry.config?.$schema;
    specific.push({
      type: "object",
      description: info.description ?? info.name,
      properties: entry,
      required: [key],
      additionalProperties: false,
    });
    named.push({ type: "object", properties: { [key]: { const: spec } }, required: [key], additionalProperties: true });
  }
  // The generic entry is for plugins this config does not load; a loaded one must match its own entry.
  const other = named.length ? { allOf: [generic, { not: { anyOf: named } }] } : generic;
  properties.plugins = { type: "array", items: specific.length ? { anyOf: [...specific, other] } : generic };
  closeObjects(root);
  root.title = "Antler config.yaml";
  return root;
}
