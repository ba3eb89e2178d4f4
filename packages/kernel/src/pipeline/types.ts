import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { Command, ReducedValue } from "@langchain/langgraph";
import type { ModelRequest, Runtime, ToolCallRequest } from "langchain";
import type { z } from "zod";
import type { ModelInfo } from "../models/contract.js";
import type { AntlerTool } from "../tools.js";

/** Where graph hooks may send the run: the end of the turn, the tools node or the model node. */
export type JumpTarget = "end" | "tools" | "model";

/** The thread state a hook sees: messages plus every field of the composed state schema. */
export type AgentState = { messages: BaseMessage[] } & Record<string, unknown>;
/** A partial state update; `messages` goes through add-messages semantics. `jumpTo` redirects the run. */
export type StateUpdate = Partial<AgentState> & { jumpTo?: JumpTarget };
/**
 * Runtime context keys every run carries; hooks and tools read them from `runtime.context`. The server sets
 * `run_id`, `thread_id`, `user_id`, the trace id and `non_interactive`; callers cannot. The runtime validates them.
 */
export interface RunContextValues {
  /** The kernel run (`RunInfo.runId`) this graph invocation belongs to. */
  run_id?: string | undefined;
  thread_id?: string | undefined;
  user_id?: string | undefined;
  antler_trace_id?: string | undefined;
  /** Scheduled and other unattended runs: no `ask_clarification`. */
  non_interactive?: boolean | undefined;
  /** The configured model name this run uses. */
  model_name?: string | undefined;
  /** A custom agent's name, for `update_agent`. */
  agent_name?: string | undefined;
  /** Bootstrap runs create a new custom agent with `setup_agent`. */
  is_bootstrap?: boolean | undefined;
  /** Plan mode switches on the Todo middleware's `write_todos`. */
  plan_mode?: boolean | undefined;
  /** Set by a sandbox provider when it acquires one. */
  sandbox_id?: string | undefined;
}

export type HookRuntime = Runtime<RunContextValues>;

// biome-ignore lint/suspicious/noConfusingVoidType: a hook that changes nothing may just return; `() => void x()` is idiomatic.
type HookResult = StateUpdate | undefined | void;
export type NodeHookFn = (state: AgentState, runtime: HookRuntime) => HookResult | Promise<HookResult>;
/** A node-style hook, optionally declaring where it may jump. */
export type NodeHook = NodeHookFn | { hook: NodeHookFn; canJumpTo?: readonly JumpTarget[] };

export type ModelCallRequest = ModelRequest<AgentState, RunContextValues>;
export type ModelCallHandler = (request: ModelCallRequest) => Promise<AIMessage | Command>;
export type ToolCallRequestOf = ToolCallRequest<AgentState, RunContextValues>;
export type ToolCallHandlerOf = (request: ToolCallRequestOf) => Promise<ToolMessage | Command>;

/** A state field: a zod schema (last value wins) or a LangGraph `ReducedValue` (custom reducer). */
export type StateField = z.ZodType | ReducedValue<unknown, unknown>;

/**
 * What plugins and built-ins contribute to the pipeline. The kernel compiles the node-style hooks of all specs
 * into one fused LangChain middleware (run in pipeline order; `after*` hooks in reverse), and keeps the wrap-style
 * hooks as separate middlewares in pipeline order (first is outermost), as LangChain composes them.
 */
export interface MiddlewareSpec {
  /** Local name. Plugin middleware is addressed as `<plugin>/<name>`; default-chain slots by their bare name. */
  readonly name: string;
  /** Thread-state fields this middleware owns; merged into the agent's state schema. */
  readonly state?: Readonly<Record<string, StateField>>;
  /** Names that must come earlier in the chain when both are present (asserted at build). */
  readonly requires?: readonly string[];
  /** Tools the middleware brings with it (e.g. `write_todos`). */
  readonly tools?: readonly AntlerTool[];
  readonly beforeAgent?: NodeHook;
  readonly beforeModel?: NodeHook;
  readonly afterModel?: NodeHook;
  readonly afterAgent?: NodeHook;
  /** Around each model call; LangChain order: the first middleware in the chain is the outermost. */
  readonly wrapModelCall?: (request: ModelCallRequest, handler: ModelCallHandler) => Promise<AIMessage | Command> | AIMessage | Command;
  /** Around each tool call; same ordering rule. */
  readonly wrapToolCall?: (
    request: ToolCallRequestOf,
    handler: ToolCallHandlerOf,
  ) => Promise<ToolMessage | Command> | ToolMessage | Command;
}

/** Named slots in the default chain for middleware that does not anchor to a specific neighbour. */
export type MiddlewareStage = "first" | "early" | "normal" | "late";

/** The slots of the default chain, in DeerFlow's order; Clarification is always last. */
export const DEFAULT_CHAIN = [
  "ThreadData",
  "Uploads",
  "DanglingToolCall",
  "LLMErrorHandling",
  "ToolErrorHandling",
  "Summarization",
  "Todo",
  "Title",
  "ViewImage",
  "LoopDetection",
  "TokenUsage",
  "Clarification",
] as const;
export type DefaultSlotName = (typeof DEFAULT_CHAIN)[number];

export interface MiddlewarePlacement {
  /**
   * Fill a slot of the default chain: the middleware takes the slot's bare name and its default position. The
   * runtime plugin fills them all; a second filler of one slot needs `override: true` and replaces the first.
   */
  slot?: DefaultSlotName;
  /** Place directly before the middleware with this (namespaced or built-in) name. */
  before?: string;
  /** Place directly after the middleware with this name. */
  after?: string;
  /** A slot: `first` (outermost), `early` (after error handling), `normal` (default) or `late` (just before Clarification). */
  stage?: MiddlewareStage;
  /** Replace the middleware with this name, at its position. Requires `override: true`. */
  replace?: string;
  override?: boolean;
}

export interface MiddlewareEntry {
  /** Fully qualified name: `<plugin>/<name>` for plugin middleware, bare for the slots of the default chain. */
  readonly name: string;
  readonly plugin: string;
  readonly placement: MiddlewarePlacement;
  readonly spec: MiddlewareSpec;
}

export interface MiddlewareAssemblyContext {
  readonly modelName: string | undefined;
  /** Capabilities of the run's model (vision, thinking), when it comes from `models:`. */
  readonly modelInfo: ModelInfo | undefined;
  /** The run's chat model, for middleware that calls a model itself (titles, summaries). */
  readonly model: BaseChatModel | undefined;
  readonly subagent: boolean;
  readonly context: Readonly<Record<string, unknown>>;
}

/** A middleware decided per agent build; return null to leave it out (e.g. ViewImage for a text-only model). */
export interface MiddlewareFactory {
  readonly name: string;
  create(context: MiddlewareAssemblyContext): MiddlewareSpec | null | undefined | Promise<MiddlewareSpec | null | undefined>;
}
