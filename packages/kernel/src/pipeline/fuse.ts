import diagnosticsChannel from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import type { BaseMessage } from "@langchain/core/messages";
import { messagesStateReducer, StateSchema } from "@langchain/langgraph";
import { type AgentMiddleware, createMiddleware } from "langchain";
import { AntlerError, ErrorCodes } from "../errors.js";
import type { AntlerTool } from "../tools.js";
import { getCurrentTraceId } from "../trace.js";
import { runContextSchema } from "./context.js";
import { reducerOf, threadStateFields } from "./state.js";
import type { AgentState, HookRuntime, JumpTarget, MiddlewareEntry, NodeHook, NodeHookFn, StateField, StateUpdate } from "./types.js";

/** One span per middleware hook call, published on diagnostics_channel under this name. */
export const MIDDLEWARE_SPAN_CHANNEL = "antler:middleware";
export interface MiddlewareSpan {
  middleware: string;
  plugin: string;
  hook: NodeHookName;
  durationMs: number;
  ok: boolean;
  traceId: string | null;
}

type NodeHookName = "beforeAgent" | "beforeModel" | "afterModel" | "afterAgent";
const NODE_HOOKS: readonly NodeHookName[] = ["beforeAgent", "beforeModel", "afterModel", "afterAgent"];

export interface CompiledPipeline {
  /** LangChain middleware for `createAgent`: the fused node-hook middleware first, then wrap-hook middlewares in chain order. */
  readonly middleware: AgentMiddleware[];
  /** Tools that middlewares bring (e.g. `write_todos`, `ask_clarification`). */
  readonly tools: AntlerTool[];
  /** The composed thread-state schema. */
  readonly stateFields: Readonly<Record<string, StateField>>;
  /** Middleware names in chain order. */
  readonly order: string[];
}

function hookParts(hook: NodeHook): { fn: NodeHookFn; canJumpTo: readonly JumpTarget[] } {
  return typeof hook === "function" ? { fn: hook, canJumpTo: [] } : { fn: hook.hook, canJumpTo: hook.canJumpTo ?? [] };
}

/** The union of the thread state and every middleware's fields; one key claimed with two schemas is an error naming both. */
export function composeStateFields(chain: readonly MiddlewareEntry[]): Record<string, StateField> {
  const fields: Record<string, StateField> = { ...threadStateFields };
  const owners = new Map<string, string>(Object.keys(threadStateFields).map((k) => [k, "thread state"]));
  for (const entry of chain) {
    for (const [key, field] of Object.entries(entry.spec.state ?? {})) {
      const existing = fields[key];
      if (existing !== undefined && existing !== field) {
        throw new AntlerError(
          ErrorCodes.PIPELINE_INVALID,
          `state key "${key}" is claimed by ${owners.get(key)} and by ${entry.name} with different schemas`,
          {
            where: entry.plugin,
            hint: "Rename one of the keys, or share one field definition between the two middlewares.",
          },
        );
      }
      fields[key] = field;
      owners.set(key, entry.name);
    }
  }
  return fields;
}

/**
 * Compiles an ordered chain into LangChain middleware. Node-style hooks of every spec become ONE middleware
 * (one graph node per hook kind instead of one per spec; see reference/pipeline-notes.md): `before*` hooks run
 * in chain order and `after*` hooks in reverse, each seeing the earlier hooks' updates applied through the
 * graph's own reducers, and the first `jumpTo` ends the sequence. Wrap-style hooks stay separate middlewares,
 * so LangChain's composition (first is outermost) applies unchanged.
 */
export function compilePipeline(chain: readonly MiddlewareEntry[]): CompiledPipeline {
  const stateFields = composeStateFields(chain);
  const reducers = new Map<string, (a: unknown, b: unknown) => unknown>();
  for (const [key, field] of Object.entries(stateFields)) {
    const reducer = reducerOf(field);
    if (reducer) reducers.set(key, reducer);
  }

  const stateSchema = new StateSchema(stateFields as ConstructorParameters<typeof StateSchema>[0]);
  const fusedConfig: Record<string, unknown> = {
    name: "AntlerPipeline",
    stateSchema,
    contextSchema: runContextSchema,
  };
  for (const kind of NODE_HOOKS) {
    const specs = chain.filter((e) => e.spec[kind] !== undefined);
    if (specs.length === 0) continue;
    const ordered = kind.startsWith("after") ? [...specs].reverse() : specs;
    const steps = ordered.map((e) => ({ entry: e, ...hookParts(e.spec[kind] as NodeHook) }));
    const canJumpTo = [...new Set(steps.flatMap((s) => s.canJumpTo))];
    const hook = fuseNodeHooks(kind, steps, reducers);
    fusedConfig[kind] = canJumpTo.length > 0 ? { hook, canJumpTo } : hook;
  }

  const middleware: AgentMiddleware[] = [createMiddleware(fusedConfig as Parameters<typeof createMiddleware>[0]) as AgentMiddleware];
  for (const entry of chain) {
    const { wrapModelCall, wrapToolCall } = entry.spec;
    if (!wrapModelCall && !wrapToolCall) continue;
    middleware.push(
      createMiddleware({
        name: entry.name,
        // LangChain hands a wrap hook only the state keys its own middleware declares; declaring the composed
        // schema (the same instance, so createAgent merges nothing twice) lets every wrap hook read the thread state.
        stateSchema,
        contextSchema: runContextSchema,
        ...(wrapModelCall ? { wrapModelCall } : {}),
        ...(wrapToolCall ? { wrapToolCall } : {}),
      } as Parameters<typeof createMiddleware>[0]) as AgentMiddleware,
    );
  }

  const tools: AntlerTool[] = [];
  const toolNames = new Set<string>();
  for (const entry of chain) {
    for (const tool of entry.spec.tools ?? []) {
      if (toolNames.has(tool.name)) continue;
      toolNames.add(tool.name);
      tools.push(tool);
    }
  }
  return { middleware, tools, stateFields, order: chain.map((e) => e.name) };
}

interface FusedStep {
  entry: MiddlewareEntry;
  fn: NodeHookFn;
  canJumpTo: readonly JumpTarget[];
}

function fuseNodeHooks(kind: NodeHookName, steps: readonly FusedStep[], reducers: Map<string, (a: unknown, b: unknown) => unknown>) {
  const channel = diagnosticsChannel.channel(MIDDLEWARE_SPAN_CHANNEL);
  return async (state: AgentState, runtime: HookRuntime): Promise<StateUpdate | undefined> => {
    let current: AgentState = state;
    const messageUpdates: BaseMessage[] = [];
    const writes = new Map<string, unknown[]>();
    let jump: JumpTarget | undefined;
    for (const step of steps) {
      const tracing = channel.hasSubscribers;
      const started = tracing ? performance.now() : 0;
      let result: Awaited<ReturnType<NodeHookFn>>;
      try {
        result = await step.fn(current, runtime);
      } catch (err) {
        if (tracing) publish(channel, step, kind, started, false);
        throw err;
      }
      if (tracing) publish(channel, step, kind, started, true);
      if (!result) continue;
      const { jumpTo, messages, ...rest } = result;
      if (messages !== undefined) {
        const list = (Array.isArray(messages) ? messages : [messages]) as BaseMessage[];
        messageUpdates.push(...list);
        current = { ...current, messages: messagesStateReducer(current.messages, list) as BaseMessage[] };
      }
      if (Object.keys(rest).length > 0) {
        const next: AgentState = { ...current };
        for (const [key, value] of Object.entries(rest)) {
          const reducer = reducers.get(key);
          next[key] = reducer ? reducer(next[key], value) : value;
          const list = writes.get(key) ?? [];
          list.push(value);
          writes.set(key, list);
        }
        current = next;
      }
      if (jumpTo !== undefined) {
        if (!step.canJumpTo.includes(jumpTo)) {
          throw new AntlerError(ErrorCodes.PIPELINE_INVALID, `${kind} of "${step.entry.name}" jumped to "${jumpTo}" without declaring it`, {
            where: step.entry.plugin,
            hint: `Declare the hook as { hook, canJumpTo: ["${jumpTo}"] }.`,
          });
        }
        jump = jumpTo;
        break;
      }
    }
    if (messageUpdates.length === 0 && writes.size === 0 && jump === undefined) return undefined;
    const update: StateUpdate = {};
    if (messageUpdates.length > 0) update.messages = messageUpdates;
    // One write passes through untouched, so the graph's reducer sees exactly what the hook returned; several
    // writes to one key are folded here and handed on as the folded value (reducers are idempotent on it).
    for (const [key, values] of writes) update[key] = values.length === 1 ? values[0] : current[key];
    if (jump !== undefined) update.jumpTo = jump;
    return update;
  };
}

function publish(channel: diagnosticsChannel.Channel, step: FusedStep, hook: NodeHookName, started: number, ok: boolean): void {
  const span: MiddlewareSpan = {
    middleware: step.entry.name,
    plugin: step.entry.plugin,
    hook,
    durationMs: performance.now() - started,
    ok,
    traceId: getCurrentTraceId(),
  };
  channel.publish(span);
}
