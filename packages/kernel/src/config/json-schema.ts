import { z } from "zod";
import type { LoadedPluginInfo } from "../plugin.js";
import { kernelConfigSchema } from "./schema.js";

type JsonSchema = Record<string, unknown>;

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
  for (const info of plugins.filter((p) => p.origin.kind !== "builtin")) {
    const config = info.configSchema
      ? (z.toJSONSchema(info.configSchema, { io: "input", unrepresentable: "any" }) as JsonSchema)
      : { type: "null" };
    delete config.$schema;
    const key = info.origin.kind === "path" ? "path" : "package";
    const spec = info.origin.kind === "path" || info.origin.kind === "package" ? info.origin.spec : info.name;
    specific.push({
      type: "object",
      description: info.description ?? info.name,
      properties: { [key]: { const: spec }, enabled: { type: "boolean" }, config },
      required: [key],
      additionalProperties: false,
    });
  }
  properties.plugins = { type: "array", items: specific.length ? { anyOf: [...specific, generic] } : generic };
  root.title = "Antler config.yaml";
  return root;
}
