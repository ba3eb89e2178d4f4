// The LangChain half of `@antler/kernel/authoring` (see authoring-api.ts, which loads this file on first need):
// building tools and the answers middleware returns, on LangChain's tool and message classes.
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { tool as langchainTool, type ToolRuntime } from "@langchain/core/tools";
import { Command, getConfig } from "@langchain/langgraph";
import type { z } from "zod";
import type { ToolCallRequestOf } from "./pipeline/types.js";
import type { AntlerTool, ToolDefinition } from "./tools.js";
import { ensureTraceId } from "./trace.js";

/** Builds the LangChain tool of a checked definition. */
export function buildTool<S extends z.ZodObject>(def: ToolDefinition<S>): AntlerTool {
  const run = def.run as (args: unknown, runtime: ToolRuntime) => unknown;
  const make = langchainTool as unknown as (
    fn: (args: unknown, runtime: ToolRuntime) => unknown,
    fields: { name: string; description: string; schema: z.ZodObject; returnDirect?: boolean },
  ) => AntlerTool;
  // LangChain runs the function under a copy of the call's config without its stream writer, so the writer is put
  // back: `emitCustomEvent(payload)` in `run` then reaches the run's stream with no config passed.
  const withWriter = (args: unknown, runtime: ToolRuntime) =>
    AsyncLocalStorageProviderSingleton.runWithConfig({ ...getConfig(), writer: runtime.writer ?? undefined }, () => run(args, runtime));
  return make(withWriter, {
    name: def.name,
    description: def.description,
    schema: def.schema,
    ...(def.returnDirect ? { returnDirect: true } : {}),
  });
}

/** The graph context of the LangGraph call in progress, if any. */
export const graphContext = (): unknown => getConfig()?.context;

export function refuseToolCall(request: Pick<ToolCallRequestOf, "toolCall">, reason: string): ToolMessage {
  const { name, id } = request.toolCall;
  const named = new RegExp(`(^|[^\\w-])${name.replace(/-/g, "\\-")}($|[^\\w-])`).test(reason);
  const meta = { status: "error", error_type: "refused", recoverable_by_model: true, trace_id: ensureTraceId() };
  return new ToolMessage({
    content: named ? `Refused: ${reason}` : `Refused: ${name} was not run: ${reason}`,
    tool_call_id: id ?? "",
    name,
    status: "error",
    additional_kwargs: { antler_tool_meta: { ...meta, recommended_next_action: "do not repeat this call; act on the reason" } },
  });
}

export function endTurn(message: string, options: { stopReason?: string; replacing?: AIMessage } = {}): Command {
  const id = options.replacing?.id;
  const reply = new AIMessage({ content: message, ...(id ? { id } : {}), response_metadata: { stop_reason: options.stopReason ?? null } });
  return new Command({ update: { messages: [reply], stop_reason: options.stopReason ?? null } });
}
