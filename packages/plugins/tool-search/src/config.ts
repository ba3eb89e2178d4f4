import { z } from "zod";

/** The `tool_search:` section of config.yaml, owned by `@antler/plugin-tool-search` (DeerFlow's shape, plus `deferred`). */
export const toolSearchSectionSchema = z.strictObject({
  enabled: z.boolean().default(false).describe("Defer tool schemas and add tool_search."),
  defer_mcp: z.boolean().default(true).describe("Defer every MCP tool."),
  deferred: z
    .array(
      z
        .string()
        .min(1)
        .regex(/^[a-zA-Z0-9_*?-]+$/, "a tool name or a glob of letters, digits, _, -, * and ?"),
    )
    .default([])
    .describe("Other tools to defer, by name or glob (* any run of characters, ? one character)."),
  auto_promote_top_k: z
    .number()
    .int()
    .min(0)
    .max(20)
    .default(3)
    .describe("Load this many deferred tools that best match each user message before the model's first call; 0 turns it off."),
  max_results: z.number().int().min(1).max(20).default(5).describe("Most tools one tool_search call returns and loads."),
});

export type ToolSearchSection = z.output<typeof toolSearchSectionSchema>;
export type ToolSearchSectionInput = z.input<typeof toolSearchSectionSchema>;

export const toolSearchConfigSections = { tool_search: toolSearchSectionSchema.default(toolSearchSectionSchema.parse({})) };

/** The validated `tool_search:` section (defaults when absent). */
export function toolSearchSection(config: Readonly<Record<string, unknown>>): ToolSearchSection {
  return (config.tool_search as ToolSearchSection | undefined) ?? toolSearchSectionSchema.parse({});
}
