import diagnosticsChannel from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage, RemoveMessage, type ToolMessage } from "@langchain/core/messages";
import {
  Command,
  getCurrentTaskInput,
  isCommand,
  messagesStateReducer,
  REMOVE_ALL_MESSAGES,
  ReducedValue,
  StateSchema,
} from "@langchain/langgraph";
import { type AgentMiddleware, createMiddleware } from "langchain";
import { AntlerError, ErrorCodes } from "../errors.js";
import type { AntlerTool } from "../tools.js";
import { getCurrentTraceId } from "../trace.js";
import type {
  AgentState,
  HookRuntime,
  JumpTarget,
  MiddlewareEntry,
  ModelCallRequest,
  NodeHook,
  NodeHookFn,
  StateField,
  StateUpdate,
  ToolCallRequestOf,
} from "./types.js";

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
  /** LangChain middleware for `createAgent`: the state schema and node hooks, then the composed wrap hooks. */
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

type Reducer = (a: unknown, b: unknown) => unknown;

/** What a runtime compiles its chain against: its base thread state and its run-context schema. */
export interface PipelineBase {
  /** State every agent of the runtime has, whichever middleware is on (e.g. DeerFlow's thread state). */
  readonly state?: Readonly<Record<string, StateField>> | undefined;
  /** The zod schema of `runtime.context`. */
  readonly context?: unknown;
}

/** The union of the base state and every middleware's fields; one key claimed with two schemas is an error naming both. */
export function composeStateFields(
  chain: readonly MiddlewareEntry[],
  base: Readonly<Record<string, StateField>> = {},
): Record<string, StateField> {
  const fields: Record<string, StateField> = { ...base };
  const owners = new Map<string, string>(Object.keys(base).map((k) => [k, "thread state"]));
  for (const entry of chain) {
    for (const [key, field] of Object.entries(entry.spec.state ?? {})) {
      const existing = fields[key];
      if (existing !== undefined && existing !== field) {
        throw new AntlerError(
          ErrorCodes.PIPELINE_INVALID,
          `state key "${key}" is claimed by ${owners.get(key)} and by ${entry.name} with different schemas`,
          { where: entry.plugin, hint: "Rename one of the keys, or share one field definition between the two middlewares." },
        );
      }
      fields[key] = field;
      owners.set(key, entry.name);
    }
  }
  return fields;
}

/**
 * Compiles an ordered chain into ONE LangChain middleware (see reference/pipeline-notes.md).
 * - Node-style hooks get one graph node per hook kind instead of one per spec: `before*` hooks run in chain
 *   order and `after*` hooks in reverse, each seeing the earlier hooks' updates applied through the graph's own
 *   reducers, and the first `jumpTo` ends the sequence.
 * - Wrap-style hooks are composed here with LangChain's own rules (the first in the chain is outermost; a
 *   `Command` returned by an inner hook reaches the outer hooks as the AI message, and its update is kept),
 *   into a second middleware without state or context schemas, because LangChain parses both for every
 *   wrapping middleware on every call; the hooks read the full state from the node's input instead.
 */
export function compilePipeline(chain: readonly MiddlewareEntry[], base: PipelineBase = {}): CompiledPipeline {
  const stateFields = composeStateFields(chain, base.state);
  // Last-value fields have no reducer.
  const reducers = new Map<string, Reducer>();
  for (const [key, field] of Object.entries(stateFields)) if (ReducedValue.isInstance(field)) reducers.set(key, field.reducer as Reducer);

  const stateSchema = new StateSchema(stateFields as ConstructorParameters<typeof StateSchema>[0]);
  const fusedConfig: Record<string, unknown> = {
    name: "AntlerPipeline",
    stateSchema,
    ...(base.context ? { contextSchema: base.context } : {}),
  };
  let inlineAfterModel: ReturnType<typeof fuseNodeHooks> | undefined;
  let inlineBeforeModel: ReturnType<typeof fuseNodeHooks> | undefined;
  for (const kind of NODE_HOOKS) {
    const specs = chain.filter((e) => e.spec[kind] !== undefined);
    if (specs.length === 0) continue;
    const ordered = kind.startsWith("after") ? [...specs].reverse() : specs;
    const steps = ordered.map((e) => ({ entry: e, ...hookParts(e.spec[kind] as NodeHook) }));
    const canJumpTo = [...new Set(steps.flatMap((s) => s.canJumpTo))];
    const hook = fuseNodeHooks(kind, steps, reducers);
    // beforeModel and afterModel hooks that never jump behave the same run inside the model call (their updates
    // land in the model's own step, in the same order, and routing sees them), so they cost no graph step.
    // Hooks that may jump keep their graph node, and LangChain's routing.
    if (kind === "afterModel" && canJumpTo.length === 0) inlineAfterModel = hook;
    else if (kind === "beforeModel" && canJumpTo.length === 0) inlineBeforeModel = hook;
    else fusedConfig[kind] = canJumpTo.length > 0 ? { hook, canJumpTo } : hook;
  }

  const middleware: AgentMiddleware[] = [createMiddleware(fusedConfig as Parameters<typeof createMiddleware>[0]) as AgentMiddleware];
  const modelWrappers = chain.filter((e) => e.spec.wrapModelCall);
  const toolWrappers = chain.filter((e) => e.spec.wrapToolCall);
  const inline = { before: inlineBeforeModel, after: inlineAfterModel };
  if (modelWrappers.length > 0 || toolWrappers.length > 0 || inlineAfterModel || inlineBeforeModel) {
    // No stateSchema and no contextSchema on purpose: LangChain would parse both on every call for this
    // middleware. The hooks get the full thread state from the node's input instead, and the raw run context.
    middleware.push(
      createMiddleware({
        name: "AntlerPipelineWraps",
        ...(modelWrappers.length > 0 || inlineAfterModel || inlineBeforeModel
          ? { wrapModelCall: fuseModelWrappers(modelWrappers, reducers, inline) }
          : {}),
        ...(toolWrappers.length > 0 ? { wrapToolCall: fuseToolWrappers(toolWrappers) } : {}),
      } as Parameters<typeof createMiddleware>[0]) as AgentMiddleware,
    );
  }

  // One tool per name: the first middleware in the chain that brings it.
  const tools = new Map<string, AntlerTool>();
  for (const tool of chain.flatMap((e) => e.spec.tools ?? [])) if (!tools.has(tool.name)) tools.set(tool.name, tool);
  return { middleware, tools: [...tools.values()], stateFields, order: chain.map((e) => e.name) };
}

interface FusedStep {
  entry: MiddlewareEntry;
  fn: NodeHookFn;
  canJumpTo: readonly JumpTarget[];
}

function fuseNodeHooks(kind: NodeHookName, steps: readonly FusedStep[], reducers: Map<string, Reducer>) {
  const channel = diagnosticsChannel.channel(MIDDLEWARE_SPAN_CHANNEL);
  return async (state: AgentState, runtime: HookRuntime | ModelCallRequest["runtime"]): Promise<StateUpdate | undefined> => {
    let current: AgentState = state;
    const messageUpdates: BaseMessage[] = [];
    const writes = new Map<string, unknown[]>();
    let jump: JumpTarget | undefined;
    for (const step of steps) {
      const tracing = channel.hasSubscribers;
      const started = tracing ? performance.now() : 0;
      let result: Awaited<ReturnType<NodeHookFn>>;
      try {
        // A hook that answers synchronously (most return nothing on most calls) costs no await.
        const out = step.fn(current, runtime as HookRuntime);
        result = out instanceof Promise ? await out : out;
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
          writes.set(key, [...(writes.get(key) ?? []), value]);
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

/** The whole thread state of the running node; LangChain hands a wrap hook only what its middleware declared. */
function fullState(declared: AgentState): AgentState {
  try {
    return { ...(getCurrentTaskInput() as AgentState), ...declared };
  } catch {
    return declared;
  }
}

type ModelWrap = NonNullable<MiddlewareEntry["spec"]["wrapModelCall"]>;
type ToolWrap = NonNullable<MiddlewareEntry["spec"]["wrapToolCall"]>;

function applyUpdate(state: AgentState, update: Record<string, unknown>, reducers: Map<string, Reducer>): AgentState {
  const next: AgentState = { ...state };
  for (const [key, value] of Object.entries(update)) {
    if (key === "messages") next.messages = messagesStateReducer(next.messages, value as BaseMessage[]) as BaseMessage[];
    else next[key] = reducers.has(key) ? (reducers.get(key) as Reducer)(next[key], value) : value;
  }
  return next;
}

/** Folds the updates of several Commands into one, applying the state reducers for keys written twice. */
function mergeCommands(commands: readonly Command[], reducers: Map<string, Reducer>, lead: readonly BaseMessage[]): Command {
  const messages: BaseMessage[] = [...lead];
  const update: Record<string, unknown> = {};
  let goto: Command["goto"] | undefined;
  for (const command of commands) {
    for (const [key, value] of Object.entries((command.update ?? {}) as Record<string, unknown>)) {
      if (key === "messages") messages.push(...((Array.isArray(value) ? value : [value]) as BaseMessage[]));
      else if (key in update && reducers.has(key)) update[key] = (reducers.get(key) as Reducer)(update[key], value);
      else update[key] = value;
    }
    if (command.goto !== undefined && (!Array.isArray(command.goto) || command.goto.length > 0)) goto = command.goto;
  }
  if (messages.length > 0) update.messages = messages;
  return new Command({ update, ...(goto !== undefined ? { goto } : {}) });
}

function fuseModelWrappers(
  entries: readonly MiddlewareEntry[],
  reducers: Map<string, Reducer>,
  inline: { before?: ReturnType<typeof fuseNodeHooks> | undefined; after?: ReturnType<typeof fuseNodeHooks> | undefined },
): ModelWrap {
  const wraps = entries.map((e) => e.spec.wrapModelCall as ModelWrap);
  const afterModel = inline.after;
  return async (incoming, handler) => {
    let request = { ...incoming, state: fullState(incoming.state) };
    const commands: Command[] = [];
    let rewrite: BaseMessage[] | undefined;
    if (inline.before) {
      const update = await inline.before(request.state, request.runtime);
      if (update) {
        const { messages, ...rest } = update;
        const state = applyUpdate(request.state, update as Record<string, unknown>, reducers);
        request = { ...request, state, messages: state.messages };
        if (Object.keys(rest).length > 0) commands.push(new Command({ update: rest }));
        const list = messages === undefined ? [] : ((Array.isArray(messages) ? messages : [messages]) as BaseMessage[]);
        // Removals can ride along in any order. Added messages must sit before the model's reply, which the
        // framework appends first, so the list is rewritten: everything the hooks left, then the reply.
        if (list.some((m) => !RemoveMessage.isInstance(m))) rewrite = [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...state.messages];
        else if (list.length > 0) commands.push(new Command({ update: { messages: list } }));
      }
    }
    let lastAi: AIMessage | undefined;
    let modelReply: AIMessage | undefined;
    const call = async (index: number, req: ModelCallRequest): Promise<AIMessage | Command> => {
      const wrap = wraps[index];
      const result = wrap ? await wrap(req, (next) => call(index + 1, next)) : await handler(req);
      if (!wrap && AIMessage.isInstance(result)) modelReply = result;
      if (isCommand(result)) {
        commands.push(result);
        // Outer hooks see the AI message, as LangChain does for separate middlewares.
        return lastAi ?? result;
      }
      if (AIMessage.isInstance(result)) lastAi = result;
      return result;
    };
    const top = await call(0, request);
    if (afterModel && lastAi) {
      // The state an afterModel node would see: the model's reply and the wrap hooks' updates applied.
      let after: AgentState = { ...request.state, messages: messagesStateReducer(request.state.messages, [lastAi]) as BaseMessage[] };
      for (const command of commands) after = applyUpdate(after, (command.update ?? {}) as Record<string, unknown>, reducers);
      const update = await afterModel(after, request.runtime);
      if (update) commands.push(new Command({ update }));
    }
    if (commands.length === 0 && !rewrite) return top;
    // The framework writes the model's latest reply itself. Only a different final AI message (a hook's
    // replacement) leads the update, so that it wins; repeating the same one would write it twice.
    const lead = lastAi && (rewrite || lastAi !== modelReply) ? [lastAi] : [];
    return mergeCommands(commands, reducers, [...(rewrite ?? []), ...lead]);
  };
}

function fuseToolWrappers(entries: readonly MiddlewareEntry[]): ToolWrap {
  const wraps = entries.map((e) => e.spec.wrapToolCall as ToolWrap);
  return (incoming, handler) => {
    const request = { ...incoming, state: fullState(incoming.state) };
    const call = async (index: number, req: ToolCallRequestOf): Promise<ToolMessage | Command> => {
      const wrap = wraps[index];
      return wrap ? wrap(req, (next) => call(index + 1, next)) : handler(req);
    };
    return call(0, request);
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
