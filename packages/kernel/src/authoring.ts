// `@antler/kernel/authoring`: what plugin code uses to build tools. A subpath of its own because it loads
// LangChain's tool classes and zod, which importing the kernel itself must not.
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool as langchainTool, type ToolRuntime } from "@langchain/core/tools";
import { Command, getConfig } from "@langchain/langgraph";
import { z } from "zod";
import { emitCustomEvent } from "./custom-events.js";
import { createToken, type Token } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";
import { resolveVirtualPath, threadPaths } from "./paths.js";
import type { AgentState, ToolCallRequestOf } from "./pipeline/types.js";
import { definePlugin, type RunContext } from "./plugin.js";
import type { AntlerTool } from "./tools.js";
import { ensureTraceId } from "./trace.js";

export interface ToolDefinition<S extends z.ZodObject> {
  name: string;
  description: string;
  schema: S;
  /** End the agent turn with this tool's result (LangChain `returnDirect`). */
  returnDirect?: boolean;
  run(args: z.output<S>, runtime: ToolRuntime): unknown;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Builds a LangChain tool whose arguments are validated by a zod schema before `run` sees them. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): AntlerTool {
  if (!TOOL_NAME.test(def.name ?? "")) {
    throw new AntlerError(ErrorCodes.TOOL_INVALID, `tool name "${String(def.name)}" is not valid`, {
      hint: "Tool names are 1–64 characters of letters, digits, _ and -; model providers reject anything else.",
    });
  }
  if (typeof def.description !== "string" || def.description.trim() === "") {
    throw new AntlerError(ErrorCodes.TOOL_INVALID, "a tool needs a description; the model reads it to decide when to call", {
      where: `tool "${def.name}"`,
    });
  }
  const run = def.run as (args: unknown, runtime: ToolRuntime) => unknown;
  const make = langchainTool as unknown as (
    fn: (args: unknown, runtime: ToolRuntime) => unknown,
    fields: { name: string; description: string; schema: z.ZodObject; returnDirect?: boolean },
  ) => AntlerTool;
  return make((args, runtime) => run(args, runtime), {
    name: def.name,
    description: def.description,
    schema: def.schema,
    ...(def.returnDirect ? { returnDirect: true } : {}),
  });
}

/**
 * Answers a tool call without running it: an error tool message the model reads as a refusal ("Refused: ..."),
 * not a failure, naming the tool once. Return it from `wrapToolCall` instead of calling `handler`.
 */
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

/**
 * Ends the turn with `message` as the assistant's final reply and `stopReason` as the run's `stop_reason` (in the
 * final state and the `end` event). Return it from `wrapModelCall`: instead of calling `handler` (the model is not
 * called), or after it with `replacing: reply` so the model's reply (and any tool calls it asked for) is replaced.
 */
export function endTurn(message: string, options: { stopReason?: string; replacing?: AIMessage } = {}): Command {
  const id = options.replacing?.id;
  const reply = new AIMessage({ content: message, ...(id ? { id } : {}), response_metadata: { stop_reason: options.stopReason ?? null } });
  return new Command({ update: { messages: [reply], stop_reason: options.stopReason ?? null } });
}

/** What a middleware hook knows about the run it serves. */
export interface HookContext {
  /** The kernel run (`kernel.beginRun`) this call belongs to; undefined for an agent invoked outside one. */
  readonly runId: string | undefined;
  /** The thread's turn: 1 while answering the first user message, 2 for the second (hidden context messages do not count). */
  readonly turnNumber: number;
  /** Resolves a token in the run's DI scope: a `lifetime: "run"` service is this run's instance, disposed when the run ends. */
  resolve<T>(token: Token<T>): T;
}

const RUN = Symbol.for("antler.run");

/** The graph context for one kernel run: `run_id` for tools and hooks, and the run itself for `hookContext`. */
export function withRunContext<C extends object>(context: C, run: RunContext): C & { run_id: string } {
  return { ...context, run_id: run.runId, [RUN]: run };
}

type HookInput = { state: AgentState; runtime: { context?: unknown } };

/** For a wrap hook, `hookContext(request)`; for a node hook, `hookContext(state, runtime)`. */
export function hookContext(request: HookInput): HookContext;
export function hookContext(state: AgentState, runtime: HookInput["runtime"]): HookContext;
export function hookContext(first: AgentState | HookInput, second?: HookInput["runtime"]): HookContext {
  const { state, runtime } = second ? { state: first as AgentState, runtime: second } : (first as HookInput);
  // Node hooks get a context filtered through the schema, which drops the symbol; the graph's own config keeps it.
  const runOf = (context: unknown) => (context as Record<symbol, RunContext | undefined> | undefined)?.[RUN];
  const run = runOf(runtime.context) ?? runOf(getConfig()?.context);
  return Object.freeze({
    runId: run?.runId ?? (runtime.context as { run_id?: string } | undefined)?.run_id,
    get turnNumber() {
      return state.messages.filter((m: BaseMessage) => HumanMessage.isInstance(m) && m.additional_kwargs?.hide_from_ui !== true).length;
    },
    resolve<T>(token: Token<T>): T {
      if (run) return run.scope.resolve(token);
      throw new AntlerError(ErrorCodes.DI_UNREGISTERED, `cannot resolve "${token.name}": this hook runs outside a kernel run`, {
        hint: "Run the agent through AntlerClient, or give the graph withRunContext(context, run) of a kernel.beginRun run as its context.",
      });
    },
  });
}

/**
 * What a function default export receives, so that a plugin written as a single plain `.js` file with no
 * dependencies of its own can still use zod and the plugin helpers of the kernel that loads it.
 */
export const pluginAuthoringApi = Object.freeze({
  definePlugin,
  defineTool,
  createToken,
  z,
  threadPaths,
  resolveVirtualPath,
  emitCustomEvent,
  refuseToolCall,
  endTurn,
  hookContext,
});
export type PluginAuthoringApi = typeof pluginAuthoringApi;
