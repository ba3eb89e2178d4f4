import type { MiddlewareSpec } from "@antler/kernel";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { DeferredToolCatalog } from "./catalog.js";
import { ToolSearchErrorCodes } from "./errors.js";
import type { CatalogRegistry } from "./registry.js";
import { loadedNames, type Promoted, promotedField } from "./state.js";
import { TOOL_SEARCH } from "./tool.js";

export interface ToolSearchMiddlewareOptions {
  registry: CatalogRegistry;
  /** Deferred tools to load with each user message (best matches by words); 0: none. */
  autoPromoteTopK: number;
}

const sections = new WeakMap<DeferredToolCatalog, string>();

/** The `<available-deferred-tools>` section: every deferred name, so the prompt stays the same as tools are loaded. */
export function renderDeferredSection(catalog: DeferredToolCatalog): string {
  let text = sections.get(catalog);
  if (text === undefined) {
    text =
      "<available-deferred-tools>\n" +
      `These tools exist but their schemas are not loaded, so you cannot call them yet. Load the ones you need with ${TOOL_SEARCH} ` +
      '("select:name1,name2" for exact names, "+prefix words" for tools whose name starts with prefix, or a regular expression over names and descriptions); ' +
      "loaded tools stay callable for the rest of the conversation.\n" +
      `${catalog.sortedNames.join("\n")}\n</available-deferred-tools>`;
    sections.set(catalog, text);
  }
  return text;
}

function textOf(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content.map((part) => (typeof part === "string" ? part : part.type === "text" ? String(part.text ?? "") : "")).join("");
}

/** The user's message when this is the first model call of its turn (no AI message after it yet), else undefined. */
export function turnOpeningUserText(messages: readonly BaseMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as BaseMessage;
    if (AIMessage.isInstance(m) || ToolMessage.isInstance(m)) return undefined;
    // Hidden human messages (a skill's activation) ride along after the user's own.
    if (HumanMessage.isInstance(m) && m.additional_kwargs?.hide_from_ui !== true) return textOf(m);
  }
  return undefined;
}

function toolName(tool: unknown): string {
  return String((tool as { name?: unknown } | null)?.name ?? "");
}

/**
 * - `wrapModelCall`: finds this agent's deferred catalog (through its `tool_search` tool), binds only the tools
 *   that are not deferred or are loaded for this catalog in thread state `promoted`, and lists the deferred names
 *   in the system prompt. On a turn's first call it loads the `autoPromoteTopK` best matches of the user's message.
 *   A `promoted` record of another catalog binds nothing; the next promotion replaces it.
 * - `wrapToolCall`: refuses a call to a deferred tool that is not loaded, saying which `tool_search` call loads it.
 */
export function toolSearchMiddleware(options: ToolSearchMiddlewareOptions): MiddlewareSpec {
  const { registry, autoPromoteTopK } = options;
  // This agent's catalog, once a model call showed it (an agent's tools are fixed when it is built); null when a
  // model call showed no tool_search (a subagent allowlist that leaves it out): then nothing is deferred.
  let known: DeferredToolCatalog | null | undefined;
  return {
    name: "tool-search",
    state: { promoted: promotedField },
    async wrapModelCall(request, handler) {
      const catalog = registry.catalogAmong(request.tools) ?? known ?? null;
      known = catalog;
      if (!catalog) return handler(request);
      const loaded = new Set(loadedNames(request.state, catalog.hash));
      const auto: string[] = [];
      if (autoPromoteTopK > 0) {
        const text = turnOpeningUserText(request.state.messages);
        if (text !== undefined) {
          for (const tool of catalog.rank(text, autoPromoteTopK)) {
            if (!loaded.has(tool.name)) {
              auto.push(tool.name);
              loaded.add(tool.name);
            }
          }
        }
      }
      const tools = request.tools.filter((t) => {
        const name = toolName(t);
        return !catalog.has(name) || loaded.has(name);
      });
      const section = renderDeferredSection(catalog);
      const current = request.systemMessage;
      const systemMessage = current.text === "" ? new SystemMessage(section) : current.concat(`\n\n${section}`);
      const result = await handler({ ...request, tools, systemMessage });
      if (auto.length === 0) return result;
      return new Command({ update: { promoted: { catalog_hash: catalog.hash, names: auto } } });
    },
    async wrapToolCall(request, handler) {
      const name = request.toolCall.name;
      if (name === TOOL_SEARCH) return handler(request);
      // No model call in this process yet (a resumed thread's pending calls): the catalog the tool was assembled into.
      const catalog = known === undefined ? registry.catalogOfDeferred(request.tool) : known;
      if (!catalog?.has(name) || loadedNames(request.state, catalog.hash).has(name)) return handler(request);
      const record = request.state.promoted as Promoted | undefined;
      const why =
        record !== undefined && record.catalog_hash !== catalog.hash && record.names.includes(name)
          ? "It was loaded before, but the tool catalog has changed since, so its schema must be loaded again."
          : "Its schema has not been loaded in this conversation, so its arguments are unknown.";
      return new ToolMessage({
        content: `Error [${ToolSearchErrorCodes.NOT_LOADED}]: ${name} is a deferred tool. ${why} Call ${TOOL_SEARCH} with "select:${name}" first, then call ${name} with the arguments its schema asks for.`,
        tool_call_id: request.toolCall.id ?? "",
        name,
        status: "error",
      });
    },
  };
}
