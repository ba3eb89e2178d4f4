import { createHash } from "node:crypto";
import type { AntlerTool } from "@antler/kernel";
import { toJsonSchema } from "@langchain/core/utils/json_schema";

const fingerprints = new WeakMap<object, string>();

/**
 * What a tool looks like to the model: its name, description and argument schema, hashed. A tool whose schema
 * changes under the same name (an MCP server's new version) changes it, so an agent built with the old schema is
 * not reused. Computed once per tool object.
 */
export function toolFingerprint(tool: AntlerTool): string {
  let fingerprint = fingerprints.get(tool);
  if (fingerprint === undefined) {
    let schema: string;
    try {
      schema = JSON.stringify(toJsonSchema(tool.schema as Parameters<typeof toJsonSchema>[0]));
    } catch {
      schema = "unrepresentable";
    }
    fingerprint = `${tool.name}:${createHash("sha256").update(`${tool.description}\0${schema}`).digest("base64url").slice(0, 16)}`;
    fingerprints.set(tool, fingerprint);
  }
  return fingerprint;
}
