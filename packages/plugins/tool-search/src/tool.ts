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

/** The other `tool_search` calls of the AI message that made this one, before it in that message's order. */
function earlierSiblingQueries(state: unknown, toolCallId: string | undefined): Array<{ id: string; query: string }> {
  const messages = (state as { messages?: unknown } | null | undefined)?.messages;
  if (!toolCallId || !Array.isArray(messages)) return [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const calls = (messages[i] as { tool_calls?: Array<{ id?: string; name?: string; args?: { query?: unknown } }> } | null)?.tool_calls;
    if (!Array.isArray(calls)) continue;
    const mine = calls.findIndex((c) => c.id === toolCallId);
    if (mine < 0) continue;
    return calls
      .slice(0, mine)
      .filter((c) => c.name === TOOL_SEARCH && typeof c.args?.query === "string")
      .map((c) => ({ id: c.id ?? "", query: c.args?.query as string }));
  }
  return [];
}

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
        // Parallel searches in one response that match the same tool: the first call in the message's order
        // carries its schema, the others name that call. Decided from the message alone, so it holds however the
        // calls interleave, and replays the same.
        const shownBy = new Map<string, string>();
        for (const sibling of earlierSiblingQueries(runtime.state, toolCallId)) {
          for (const tool of catalog.search(sibling.query, maxResults).tools)
            if (!shownBy.has(tool.name)) shownBy.set(tool.name, sibling.id);
        }
        const fresh = outcome.tools.filter((t) => !shownBy.has(t.name));
        const elsewhere = names.filter((n) => shownBy.has(n));
        if (elsewhere.length > 0) {
          lines.push(
            `Schemas already returned by a parallel ${TOOL_SEARCH} call in this response: ${elsewhere.map((n) => `${n} (call ${shownBy.get(n)})`).join(", ")}.`,
          );
        }
        if (fresh.length > 0) lines.push(JSON.stringify(fresh.map((t) => catalog.schemaOf(t))));
      }
      const message = new ToolMessage({ content: lines.join("\n"), tool_call_id: toolCallId, name: TOOL_SEARCH });
      if (names.length === 0) return message;
      return new Command({ update: { promoted: { catalog_hash: catalog.hash, names }, messages: [message] } });
    },
  });
}
