import type { AntlerTool } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import type { DeferredToolCatalog } from "./catalog.js";
import { ToolSearchErrorCodes } from "./errors.js";

export const TOOL_SEARCH = "tool_search";

const schema = z.object({
  query: z
    .string()
    .describe(
      'What to load: "select:name1,name2" for exact names from <available-deferred-tools>; "+prefix words" for tools whose name starts with prefix (e.g. an MCP server), ranked by the words; anything else is a case-insensitive regular expression over names and descriptions.',
    ),
});

/**
 * `tool_search` over one catalog. It answers with the matched tools' full schemas and records them in thread
 * state `promoted` (scoped by the catalog's hash), so the model has them bound from its next call on.
 */
export function toolSearchTool(catalog: DeferredToolCatalog, maxResults: number): AntlerTool {
  return defineTool({
    name: TOOL_SEARCH,
    description:
      "Load deferred tools so you can call them. Deferred tools are listed by name only in <available-deferred-tools>; " +
      "their schemas are not loaded and calling one before loading it fails. This returns the full schemas of the matching tools " +
      `(at most ${maxResults}) and makes them callable for the rest of the conversation.`,
    schema,
    run({ query }, runtime) {
      const toolCallId = runtime.toolCallId;
      const outcome = catalog.search(query, maxResults);
      if (outcome.error !== undefined) {
        return new ToolMessage({
          content: `Error [${ToolSearchErrorCodes.QUERY}]: ${outcome.error}`,
          tool_call_id: toolCallId,
          name: TOOL_SEARCH,
          status: "error",
        });
      }
      const names = outcome.tools.map((t) => t.name);
      const lines: string[] = [];
      if (names.length === 0) lines.push(outcome.note ?? `No deferred tool matches ${JSON.stringify(query)}.`);
      else {
        lines.push(`Loaded ${names.length} tool${names.length === 1 ? "" : "s"}, callable now: ${names.join(", ")}.`);
        if (outcome.note) lines.push(outcome.note);
        lines.push(JSON.stringify(outcome.tools.map((t) => catalog.schemaOf(t))));
      }
      const message = new ToolMessage({ content: lines.join("\n"), tool_call_id: toolCallId, name: TOOL_SEARCH });
      if (names.length === 0) return message;
      return new Command({ update: { promoted: { catalog_hash: catalog.hash, names }, messages: [message] } });
    },
  });
}
