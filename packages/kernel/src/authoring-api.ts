// What `@antler/kernel/authoring` exports, and what a plugin module that default-exports a function receives.
// Importing it loads no LangChain module, so a plugin entry that imports it stays light for `antler config check`
// and `antler plugins list`. LangChain's classes load once (`loadAuthoring`): `kernel.start()` and every tool
// assembly await that, so the helpers stay synchronous for plugin code, which calls them in setup, tool factories
// and runs. The classes themselves are in authoring-core.ts.
import type { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { Command } from "@langchain/langgraph";
import { z } from "zod";
import type * as Core from "./authoring-core.js";
import { emitCustomEvent } from "./custom-events.js";
import { createToken, type Token } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";
import { resolveVirtualPath, threadPaths } from "./paths.js";
import type { ToolCallRequestOf } from "./pipeline/types.js";
import { definePlugin, type RunContext } from "./plugin.js";
import { type AntlerTool, BUILD, checkToolDefinition, type ToolDefinition } from "./tools.js";
import { TRACE_METADATA_KEY } from "./trace.js";

let core: typeof Core | undefined;
const loadCore = async () => (core ??= await import("./authoring-core.js"));
/**
 * Loads LangChain's tool and message classes for these helpers, once. A kernel does it when it starts and before
 * it assembles tools; a test that calls `refuseToolCall` or `endTurn` with no started kernel awaits it first.
 */
export const loadAuthoring = async (): Promise<void> => void (await loadCore());

function loaded(helper: string): typeof Core {
  if (core) return core;
  throw new AntlerError(ErrorCodes.KERNEL_STATE, `${helper} answers during a run, and LangChain has not been loaded yet`, {
    hint: "Call it from a hook or tool of a started kernel; in a test without one, `await loadAuthoring()` (@antler/kernel/authoring) first.",
  });
}

/**
 * Builds a LangChain tool whose arguments are validated by a zod schema before `run` sees them. In `run`,
 * `emitCustomEvent(payload)` reaches the run's stream without passing a config.
 */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): AntlerTool {
  checkToolDefinition(def);
  return core ? core.buildTool(def) : deferredTool(def);
}

// Before LangChain has loaded (a plugin's `setup` runs at boot, and `antler config check` boots), a tool cannot be
// built synchronously: ESM has no synchronous import. So `defineTool` returns a stand-in, built when first needed:
// the kernel builds it when it assembles tools (`builtTool`), and `invoke` builds it first. Until then it answers
// only name, description, schema and returnDirect, and refuses LangChain (which would take it for a plain object);
// once LangChain is loaded, every read goes to the built tool, so the stand-in can be handed to LangChain itself.
const unbuilt = (name: string) =>
  new AntlerError(ErrorCodes.KERNEL_STATE, `tool "${name}" was defined before LangChain loaded, and LangChain cannot use it yet`, {
    hint: "Give it to ctx.tools.add (the kernel builds it), call its invoke, or `await loadAuthoring()` (@antler/kernel/authoring) before defineTool.",
  });

function deferredTool<S extends z.ZodObject>(def: ToolDefinition<S>): AntlerTool {
  let built: AntlerTool | undefined;
  const build = async () => (built ??= (await loadCore()).buildTool(def));
  const known: Record<PropertyKey, unknown> = {
    name: def.name,
    description: def.description,
    schema: def.schema,
    returnDirect: def.returnDirect ?? false,
    [BUILD]: build,
    invoke: async (...args: Parameters<AntlerTool["invoke"]>) => (await build()).invoke(...args),
  };
  const real = () => (built ??= core?.buildTool(def));
  return new Proxy(known, {
    get(target, key) {
      const tool = key === BUILD ? undefined : real();
      if (tool) {
        const value: unknown = Reflect.get(tool, key, tool);
        return typeof value === "function" && key !== "constructor" ? value.bind(tool) : value;
      }
      // LangChain recognises its objects by their lc_* fields: handed to LangChain unbuilt, the stand-in says so.
      if (typeof key === "string" && key.startsWith("lc_")) throw unbuilt(def.name);
      return target[key];
    },
    has: (target, key) => key in (real() ?? target),
    getPrototypeOf: (target) => Object.getPrototypeOf(real() ?? target),
  }) as unknown as AntlerTool;
}

/**
 * Answers a tool call without running it: an error tool message the model reads as a refusal ("Refused: ..."),
 * not a failure, naming the tool once. Return it from `wrapToolCall` instead of calling `handler`.
 */
export function refuseToolCall(request: Pick<ToolCallRequestOf, "toolCall">, reason: string): ToolMessage {
  return loaded("refuseToolCall").refuseToolCall(request, reason);
}

/**
 * Ends the turn with `message` as the assistant's final reply and `stopReason` as the run's `stop_reason` (in the
 * final state and the `end` event). Return it from `wrapModelCall`: instead of calling `handler` (the model is not
 * called), or after it with `replacing: reply` so the model's reply (and any tool calls it asked for) is replaced.
 */
export function endTurn(message: string, options: { stopReason?: string; replacing?: AIMessage } = {}): Command {
  return loaded("endTurn").endTurn(message, options);
}

/** What a middleware hook or tool knows about the run it serves. */
export interface HookContext {
  /** The kernel run (`kernel.beginRun`) this call belongs to; undefined for an agent invoked outside one. */
  readonly runId: string | undefined;
  /** The thread's turn: 1 while answering the first user message, 2 for the second (hidden context messages do not count). */
  readonly turnNumber: number;
  /** Resolves a token in the run's DI scope: a `lifetime: "run"` service is this run's instance, disposed when the run ends. */
  resolve<T>(token: Token<T>): T;
}

const RUN = Symbol.for("antler.run");
const runOf = (context: unknown) => (context as Record<symbol, RunContext | undefined> | undefined)?.[RUN];

/** The graph context for one kernel run: `run_id` for tools and hooks, and the run itself for `hookContext`. */
export function withRunContext<C extends object>(context: C, run: RunContext): C & { run_id: string } {
  return { ...context, run_id: run.runId, [RUN]: run };
}

/** A hook's or tool's view of the run: its state (messages) and its runtime (context). */
type HookInput = { state: unknown; runtime: { context?: unknown } };

/**
 * For a wrap hook, `hookContext(request)`; for a node hook, `hookContext(state, runtime)`; in a tool,
 * `hookContext({ state: runtime.state, runtime })`.
 */
export function hookContext(request: HookInput): HookContext;
export function hookContext(state: unknown, runtime: HookInput["runtime"]): HookContext;
export function hookContext(first: unknown, second?: HookInput["runtime"]): HookContext {
  const { state, runtime } = second ? { state: first, runtime: second } : (first as HookInput);
  // Node hooks get a context filtered through the schema, which drops the symbol; the graph's own config keeps it.
  const run = runOf(runtime.context) ?? runOf(core?.graphContext());
  return Object.freeze({
    runId: run?.runId ?? (runtime.context as { run_id?: string } | undefined)?.run_id,
    get turnNumber() {
      const messages = (state as { messages?: unknown } | undefined)?.messages;
      if (!Array.isArray(messages)) {
        throw new AntlerError(ErrorCodes.KERNEL_STATE, "hookContext got a state without messages", {
          hint: "Pass the hook's state (or request), or in a tool { state: runtime.state, runtime }.",
        });
      }
      return messages.filter(
        (m: { type?: unknown; additional_kwargs?: { hide_from_ui?: unknown } }) =>
          m?.type === "human" && m.additional_kwargs?.hide_from_ui !== true,
      ).length;
    },
    resolve<T>(token: Token<T>): T {
      if (run) return run.scope.resolve(token);
      throw new AntlerError(ErrorCodes.DI_UNREGISTERED, `cannot resolve "${token.name}": this hook runs outside a kernel run`, {
        hint: "Run the agent through AntlerClient, or give the graph withRunContext(context, run) of a kernel.beginRun run as its context.",
      });
    },
  });
}

/** The ids of the run a tool or hook serves. */
export interface RunIds {
  /** The thread's id as the caller gave it (`"t1"`), not the checkpoint key in `configurable.thread_id`. */
  readonly threadId: string | undefined;
  /** The user the run belongs to (`"default"` when the caller named none). */
  readonly userId: string | undefined;
  /** The kernel run: `RunInfo.runId` in run hooks and the `end` event. */
  readonly runId: string | undefined;
  /** The run's trace id, as in its logs and spans. */
  readonly traceId: string | undefined;
}

/**
 * The run's ids, from a tool's `runtime` (the second argument of `run`), a node hook's `runtime` or a wrap hook's
 * `request.runtime`. Undefined where the agent runs outside a kernel run that sets them.
 */
export function runIds(runtime: { context?: unknown }): RunIds {
  const contexts = [runtime.context, core?.graphContext()] as (Record<string, unknown> | undefined)[];
  const key = (name: string) => contexts.map((c) => c?.[name]).find((v): v is string => typeof v === "string");
  const run = runOf(contexts[0]) ?? runOf(contexts[1]);
  return Object.freeze({
    threadId: key("thread_id") ?? run?.threadId,
    userId: key("user_id") ?? run?.userId,
    runId: run?.runId ?? key("run_id"),
    traceId: key(TRACE_METADATA_KEY) ?? run?.traceId,
  });
}

/** The authoring API of a single-file plugin with no dependencies of its own: the same helpers, and zod. */
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
  runIds,
});
export type PluginAuthoringApi = typeof pluginAuthoringApi;
