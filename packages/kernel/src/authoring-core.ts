// The implementation behind `@antler/kernel/authoring` (see authoring.ts): defineTool and the helpers that answer
// from middleware, on LangChain's tool and message classes.
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool as langchainTool, type ToolRuntime } from "@langchain/core/tools";
import { Command, getConfig } from "@langchain/langgraph";
import type { z } from "zod";
import type { Token } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";
import type { AgentState, ToolCallRequestOf } from "./pipeline/types.js";
import type { RunContext } from "./plugin.js";
import { type AntlerTool, checkToolDefinition } from "./tools.js";
import { ensureTraceId } from "./trace.js";

export interface ToolDefinition<S extends z.ZodObject> {
  name: string;
  description: string;
  schema: S;
  /** End the agent turn with this tool's result (LangChain `returnDirect`). */
  returnDirect?: boolean;
  run(args: z.output<S>, runtime: ToolRuntime): unknown;
}

/** Builds a LangChain tool whose arguments are validated by a zod schema before `run` sees them. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): AntlerTool {
  checkToolDefinition(def);
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
