import type { SerializedMessage, StreamEvent, ValuesEvent } from "@antler/plugin-runtime";
import { isRecord } from "./http.js";
import { type LangGraphInterrupt, pendingInterrupt } from "./interrupts.js";
import { type LangGraphMessage, type LangGraphValues, toLangGraphMessage, toLangGraphValues } from "./messages.js";
import type { StreamMode } from "./runs-request.js";

/** The runtime's `RUN_PAUSED_EVENT`, by value (this module loads only types from the runtime). */
const RUN_PAUSED = "run_paused";

/** One SSE frame of the LangGraph stream: `event:` and its JSON `data:`. */
export interface LangGraphFrame {
  event: string;
  data: unknown;
}

type TupleData = Extract<StreamEvent, { type: "messages-tuple" }>["data"];
type AiDelta = Extract<TupleData, { type: "ai" }>;
type ToolResult = Extract<TupleData, { type: "tool" }>;

const MODEL_NODE = "model_request";
const TOOLS_NODE = "tools";

/**
 * Antler run events → LangGraph stream frames for the requested stream modes. Deterministic: the same events in
 * the same order give the same frames, which is what lets a resume replay a run from its first event and skip the
 * frames the client already has. `metadata` comes first, `end` (or `error`) last.
 */
export class LangGraphStreamEncoder {
  private readonly modes: ReadonlySet<StreamMode>;
  private lastValues: ValuesEvent["data"] | undefined;
  /** The approval the run paused on (its `run_paused` event), if it did. */
  private paused: LangGraphInterrupt | null = null;
  private readonly seenIds = new Set<string>();
  private baseline = false;
  /** `messages` mode: the AI message being streamed, its text so far, and ids whose metadata was sent. */
  private open: { id: string; content: string; toolCalls: LangGraphMessage["tool_calls"] } | undefined;
  private readonly described = new Set<string>();

  constructor(
    modes: readonly StreamMode[],
    private readonly run: { runId: string; threadId: string; subgraphs: boolean },
  ) {
    this.modes = new Set(modes);
  }

  metadata(): LangGraphFrame[] {
    return [{ event: "metadata", data: { run_id: this.run.runId, attempt: 1 } }];
  }

  encode(event: StreamEvent): LangGraphFrame[] {
    switch (event.type) {
      case "values":
        return this.fromValues(event.data);
      case "messages-tuple":
        return event.data.type === "tool" ? this.fromToolResult(event.data) : this.fromAi(event.data);
      case "custom":
        return this.fromCustom(event.data);
      case "end":
        return [...this.closeOpen(), ...this.interruptFrames(), { event: "end", data: null }];
      default:
        return [];
    }
  }

  /** The run failed or was cancelled: LangGraph's `error` frame (`{ error, message }`) ends the stream. */
  error(code: string, message: string): LangGraphFrame[] {
    return [...this.closeOpen(), { event: "error", data: { error: code, message } }];
  }

  /** Whether the run ended waiting on the user: paused for an approval, or its last values end on a question. */
  get interrupt(): LangGraphInterrupt | null {
    if (this.paused) return this.paused;
    return this.lastValues ? pendingInterrupt(this.lastValues.messages) : null;
  }

  get values(): LangGraphValues | undefined {
    return this.lastValues ? toLangGraphValues(this.lastValues) : undefined;
  }

  /**
   * The run's final values as `runs.wait` and `runs.join` answer them: the last state, with `__interrupt__` when the
   * run ended on a question and `__error__` (`{ error: <code>, message }`) when it failed.
   */
  finalValues(failed?: { error: string; message: string }): Record<string, unknown> {
    const interrupt = this.interrupt;
    return { ...(this.values ?? {}), ...(interrupt ? { __interrupt__: [interrupt] } : {}), ...(failed ? { __error__: failed } : {}) };
  }

  private fromValues(data: ValuesEvent["data"]): LangGraphFrame[] {
    const before = this.lastValues;
    this.lastValues = data;
    const out: LangGraphFrame[] = [];
    if (this.modes.has("values")) out.push({ event: "values", data: toLangGraphValues(data) });
    const fresh = this.freshMessages(data.messages);
    if (!this.baseline) {
      // The first state holds the thread's history and the new input: the baseline, not an update of a node.
      this.baseline = true;
      return out;
    }
    if (this.modes.has("updates")) {
      const update: Record<string, unknown> = {};
      const last = fresh.at(-1);
      const node = last?.type === "tool" ? TOOLS_NODE : MODEL_NODE;
      if (fresh.length > 0) update.messages = fresh.map(toLangGraphMessage);
      for (const key of ["title", "todos", "artifacts"] as const) {
        if (JSON.stringify(before?.[key] ?? null) !== JSON.stringify(data[key] ?? null)) update[key] = data[key];
      }
      if (Object.keys(update).length > 0) out.push({ event: "updates", data: { [node]: update } });
    }
    return out;
  }

  /** Messages not in any earlier state, found from the end (a state appends), so the cost is the new ones. */
  private freshMessages(messages: readonly SerializedMessage[]): SerializedMessage[] {
    const fresh: SerializedMessage[] = [];
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i] as SerializedMessage;
      const id = m.id ?? `${m.type}:${m.tool_call_id ?? i}`;
      if (this.seenIds.has(id)) break;
      fresh.unshift(m);
    }
    for (const [i, m] of fresh.entries()) this.seenIds.add(m.id ?? `${m.type}:${m.tool_call_id ?? i}`);
    return fresh;
  }

  private fromAi(data: AiDelta | (AiDelta & { tool_calls: NonNullable<SerializedMessage["tool_calls"]> })): LangGraphFrame[] {
    const out: LangGraphFrame[] = [];
    const toolCalls = "tool_calls" in data ? data.tool_calls.map((c) => ({ ...c, type: "tool_call" as const })) : undefined;
    const chunk: Record<string, unknown> = { type: "AIMessageChunk", id: data.id, content: data.content };
    if (toolCalls) {
      chunk.tool_calls = toolCalls;
      chunk.tool_call_chunks = toolCalls.map((c, index) => ({
        id: c.id,
        name: c.name,
        args: JSON.stringify(c.args),
        index,
        type: "tool_call_chunk",
      }));
    }
    const metadata = this.chunkMetadata(MODEL_NODE);
    if (this.modes.has("messages-tuple")) out.push({ event: "messages", data: [chunk, metadata] });
    if (this.modes.has("messages")) {
      if (this.open?.id !== data.id) out.push(...this.closeOpen(), ...this.describe(data.id, metadata));
      const open = this.open?.id === data.id ? this.open : { id: data.id, content: "", toolCalls: undefined };
      open.content += data.content;
      if (toolCalls) open.toolCalls = [...(open.toolCalls ?? []), ...toolCalls];
      this.open = open;
      out.push({ event: "messages/partial", data: [this.openMessage(open)] });
    }
    if (this.modes.has("events")) {
      if (data.content !== "") out.push(this.langChainEvent("on_chat_model_stream", "model", data.id, MODEL_NODE, { chunk }));
      for (const call of toolCalls ?? [])
        out.push(this.langChainEvent("on_tool_start", call.name, call.id, TOOLS_NODE, { input: call.args }));
    }
    return out;
  }

  private fromToolResult(data: ToolResult): LangGraphFrame[] {
    const out: LangGraphFrame[] = [];
    const message: LangGraphMessage = {
      type: "tool",
      // A tool message without an id still needs one: the SDK keys streamed messages by id.
      id: data.id ?? `tool-${data.tool_call_id}`,
      content: data.content,
      tool_call_id: data.tool_call_id,
      status: data.status,
      ...(data.name !== undefined ? { name: data.name } : {}),
      ...(data.artifact !== undefined ? { artifact: data.artifact } : {}),
    };
    const metadata = this.chunkMetadata(TOOLS_NODE);
    if (this.modes.has("messages-tuple")) out.push({ event: "messages", data: [message, metadata] });
    if (this.modes.has("messages"))
      out.push(...this.closeOpen(), ...this.describe(message.id as string, metadata), { event: "messages/complete", data: [message] });
    if (this.modes.has("events"))
      out.push(this.langChainEvent("on_tool_end", data.name ?? "tool", data.tool_call_id, TOOLS_NODE, { output: message }));
    return out;
  }

  private fromCustom(data: Record<string, unknown>): LangGraphFrame[] {
    const out: LangGraphFrame[] = [];
    // The run paused for an approval: LangGraph's interrupt is the pause's (its id, the pending calls).
    if (data.type === RUN_PAUSED && isRecord(data.interrupt)) this.paused = { id: String(data.interrupt_id ?? ""), value: data.interrupt };
    const task = isRecord(data.subagent) && typeof data.subagent.task_id === "string" ? data.subagent.task_id : undefined;
    // A subagent's own events (re-emitted by the task tool) are its subgraph's, when the client asked for those.
    const event = this.run.subgraphs && task !== undefined ? `custom|tools:${task}` : "custom";
    if (this.modes.has("custom")) out.push({ event, data });
    if (this.modes.has("events")) {
      const name = typeof data.type === "string" ? data.type : "custom";
      out.push(this.langChainEvent("on_custom_event", name, this.run.runId, MODEL_NODE, data));
    }
    return out;
  }

  private interruptFrames(): LangGraphFrame[] {
    const interrupt = this.interrupt;
    if (!interrupt || !this.lastValues) return [];
    const out: LangGraphFrame[] = [];
    if (this.modes.has("values"))
      out.push({ event: "values", data: { ...toLangGraphValues(this.lastValues), __interrupt__: [interrupt] } });
    if (this.modes.has("updates")) out.push({ event: "updates", data: { __interrupt__: [interrupt] } });
    return out;
  }

  private closeOpen(): LangGraphFrame[] {
    const open = this.open;
    if (!open) return [];
    this.open = undefined;
    return [{ event: "messages/complete", data: [this.openMessage(open)] }];
  }

  private openMessage(open: NonNullable<LangGraphStreamEncoder["open"]>): LangGraphMessage {
    return { type: "ai", id: open.id, content: open.content, ...(open.toolCalls ? { tool_calls: open.toolCalls } : {}) };
  }

  private describe(id: string, metadata: Record<string, unknown>): LangGraphFrame[] {
    if (this.described.has(id)) return [];
    this.described.add(id);
    return [{ event: "messages/metadata", data: { [id]: { metadata } } }];
  }

  private chunkMetadata(node: string): Record<string, unknown> {
    return { langgraph_node: node, run_id: this.run.runId, thread_id: this.run.threadId, langgraph_checkpoint_ns: "" };
  }

  private langChainEvent(event: string, name: string, runId: string, node: string, data: unknown): LangGraphFrame {
    return { event: "events", data: { event, name, run_id: runId, tags: [], metadata: this.chunkMetadata(node), data } };
  }
}
