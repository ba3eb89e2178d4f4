import { modelCallStamp } from "@antler/kernel";
import { AIMessage, AIMessageChunk, type BaseMessage, ToolMessage } from "@langchain/core/messages";

/** Token usage, summed once per AI message id. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface SerializedToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface SerializedMessage {
  type: "human" | "ai" | "tool" | "system";
  id: string | undefined;
  content: string;
  tool_calls?: SerializedToolCall[];
  tool_call_id?: string;
  name?: string;
  status?: "success" | "error";
  /** A tool's native artifact, kept when present (e.g. `human_input` of ask_clarification). */
  artifact?: unknown;
  additional_kwargs?: Record<string, unknown>;
}

/** A state snapshot. `summary_text` is always present (null when there is none). */
export interface ValuesEvent {
  type: "values";
  data: {
    title: string | null;
    messages: SerializedMessage[];
    artifacts: string[];
    summary_text: string | null;
    todos: unknown[] | null;
    stop_reason: string | null;
  };
}

/**
 * A piece of a tool call as the model streams it: `id` and `name` come with a call's first piece, `args` is the
 * next slice of its JSON arguments text, and `index` ties the pieces of one call together within the message.
 */
export interface SerializedToolCallChunk {
  index: number;
  id?: string;
  name?: string;
  args: string;
}

/**
 * One streamed piece of a message: an AI text delta, an AI reasoning delta (a thinking model's reasoning, kept
 * out of `content`), pieces of the AI message's tool calls as they stream, the AI message's whole tool calls
 * (once), or a tool result (once). The reasoning and tool call pieces have `content: ""`, so a consumer that
 * only joins `content` sees the same text as before they existed.
 */
export interface MessagesTupleEvent {
  type: "messages-tuple";
  data:
    | { type: "ai"; id: string; content: string }
    | { type: "ai"; id: string; content: ""; reasoning: string }
    | { type: "ai"; id: string; content: ""; tool_call_chunks: SerializedToolCallChunk[] }
    | { type: "ai"; id: string; content: ""; tool_calls: SerializedToolCall[] }
    | {
        type: "tool";
        id: string | undefined;
        tool_call_id: string;
        name: string | undefined;
        content: string;
        status: "success" | "error";
        artifact?: unknown;
      };
}

export interface CustomEvent {
  type: "custom";
  data: Record<string, unknown>;
}

/** USD a run's model calls cost (models with `pricing:`), subagents included, in total and by the model that answered. */
export interface RunCost {
  usd: number;
  by_model: Record<string, number>;
}

export interface EndEvent {
  type: "end";
  data: {
    thread_id: string;
    run_id: string;
    trace_id: string;
    usage: Usage;
    stop_reason: string | null;
    /** Always sent by AntlerClient; absent from end events logged before runs carried a cost. */
    cost?: RunCost;
  };
}

export type StreamEvent = ValuesEvent | MessagesTupleEvent | CustomEvent | EndEvent;

export function messageText(content: BaseMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => {
      if (typeof block === "string") return block;
      const b = block as { type?: string; text?: unknown };
      return b.type === "text" && typeof b.text === "string" ? b.text : "";
    })
    .join("");
}

/**
 * The reasoning text of an AI message or chunk, from each form providers give it: Anthropic's `thinking` content
 * blocks, LangChain's standard `reasoning` content blocks (and OpenAI Responses' `reasoning` blocks with a
 * `summary`), or `additional_kwargs.reasoning_content` (DeepSeek, Qwen and other OpenAI-compatible servers).
 * Empty when it has none. Never part of `messageText`.
 */
export function messageReasoning(message: BaseMessage): string {
  let out = "";
  if (Array.isArray(message.content)) {
    for (const block of message.content) {
      if (typeof block !== "object" || block === null) continue;
      const b = block as { type?: unknown; thinking?: unknown; reasoning?: unknown; summary?: unknown };
      if (b.type === "thinking" && typeof b.thinking === "string") out += b.thinking;
      else if (b.type === "reasoning" && typeof b.reasoning === "string") out += b.reasoning;
      else if (b.type === "reasoning" && Array.isArray(b.summary)) {
        for (const part of b.summary) {
          const text = (part as { text?: unknown } | null)?.text;
          if (typeof text === "string") out += text;
        }
      }
    }
  }
  const kwarg = message.additional_kwargs?.reasoning_content;
  if (typeof kwarg === "string") out += kwarg;
  return out;
}

export function serializeMessage(message: BaseMessage): SerializedMessage {
  const type = message.getType() as string;
  const out: SerializedMessage = {
    type: (type === "human" || type === "ai" || type === "tool" || type === "system" ? type : "system") as SerializedMessage["type"],
    id: message.id,
    content: messageText(message.content),
  };
  if (AIMessage.isInstance(message) && message.tool_calls?.length) {
    out.tool_calls = message.tool_calls.map((c) => ({ id: c.id ?? "", name: c.name, args: c.args }));
  }
  if (ToolMessage.isInstance(message)) {
    out.tool_call_id = message.tool_call_id;
    out.name = message.name;
    out.status = message.status === "error" ? "error" : "success";
    if (message.artifact !== undefined && message.artifact !== null) out.artifact = message.artifact;
  }
  // Keys set to undefined are left out, as JSON leaves them out: a message read back from a checkpoint then
  // serializes exactly as it did in the run's stream.
  const kwargs = Object.entries(message.additional_kwargs ?? {}).filter(([, value]) => value !== undefined);
  if (kwargs.length > 0) out.additional_kwargs = Object.fromEntries(kwargs);
  return out;
}

/**
 * Serialized messages by message object. A message in the graph's state is not changed in place (a change is a new
 * message with the same id), so its serialized form stays valid as long as the object lives.
 */
export type SerializedMessages = WeakMap<BaseMessage, SerializedMessage>;

/**
 * `serializeMessage`, once per message object. The result is shared by every values event that holds the
 * message: treat it as read-only.
 */
export function serializeCached(message: BaseMessage, cache: SerializedMessages): SerializedMessage {
  let out = cache.get(message);
  if (!out) {
    out = serializeMessage(message);
    cache.set(message, out);
  }
  return out;
}

/** A chunk's tool call pieces that carry something (an id, a name or argument text). */
function toolCallPieces(chunk: AIMessageChunk): SerializedToolCallChunk[] {
  const out: SerializedToolCallChunk[] = [];
  (chunk.tool_call_chunks ?? []).forEach((piece, i) => {
    const args = piece.args ?? "";
    if (!piece.id && !piece.name && !args) return;
    out.push({
      index: piece.index ?? i,
      ...(piece.id ? { id: piece.id } : {}),
      ...(piece.name ? { name: piece.name } : {}),
      args,
    });
  });
  return out;
}

interface ChunkMetadata {
  langgraph_node?: string;
  tags?: string[];
}

/**
 * Turns LangGraph's `["values", "messages", "custom"]` stream into Antler's StreamEvents with the seed's
 * semantics: AI text as deltas per message id; each tool call and each tool result exactly once; every
 * `values` carries `summary_text`; usage summed once per AI message id, only for messages of this run.
 */
export class StreamTranslator {
  private readonly emittedToolCalls = new Set<string>();
  private readonly emittedToolResults = new Set<string>();
  private readonly streamedText = new Map<string, string>();
  /** AI message ids whose reasoning or tool call pieces streamed: their reasoning is not sent again from state. */
  private readonly streamedPieces = new Set<string>();
  private readonly usageById = new Map<string, Usage>();
  /** Cost by AI message id (the answering model's), and by task tool call id for subagents' reports. */
  private readonly costById = new Map<string, { model: string; usd: number }>();
  private readonly subagentCosts = new Map<string, RunCost>();
  /** `model_attempt` events of this run's calls (its subagents' too, as forwarded), in order. */
  readonly modelAttempts: Array<Record<string, unknown>> = [];
  private readonly preexisting = new Set<string>();
  private lastValues: ValuesEvent["data"] | undefined;
  /** The message list of the last values event, whose serialized form is `lastValues.messages`. */
  private lastMessages: readonly BaseMessage[] = [];
  private readonly serialized: SerializedMessages;
  /** Set until the first values event has told the thread's earlier messages apart from this run's. */
  private inputMessageId: string | undefined;

  /**
   * `inputMessageId` is the id of the message that starts this run. The stream's first values event is the
   * thread's state with that message appended, so everything before it is history and never re-emitted; this
   * costs no extra checkpoint read before the run. `serialized` is a cache of serialized messages to share with
   * other runs (the client's own); without one the translator keeps its own.
   */
  constructor(options: { inputMessageId: string; serialized?: SerializedMessages }) {
    this.inputMessageId = options.inputMessageId;
    this.serialized = options.serialized ?? new WeakMap();
  }

  translate(mode: string, data: unknown): StreamEvent[] {
    if (mode === "messages") return this.fromMessages(data as [BaseMessage, ChunkMetadata]);
    if (mode === "values") return this.fromValues(data as Record<string, unknown>);
    if (mode === "custom") {
      const event = (data && typeof data === "object" ? data : { value: data }) as Record<string, unknown>;
      if (event.type === "model_attempt") this.modelAttempts.push(event);
      return [{ type: "custom", data: event }];
    }
    return [];
  }

  private fromMessages([message, metadata]: [BaseMessage, ChunkMetadata]): StreamEvent[] {
    // Model calls made by middleware (titles, summaries) are tagged nostream by LangGraph convention, and only
    // the agent's model and tool nodes speak to the user.
    if (metadata?.tags?.includes("nostream")) return [];
    const node = metadata?.langgraph_node;
    if (node !== undefined && node !== "model_request" && node !== "tools") return [];
    const out: StreamEvent[] = [];
    if (AIMessageChunk.isInstance(message) || AIMessage.isInstance(message)) {
      const id = message.id;
      if (!id) return [];
      const reasoning = messageReasoning(message);
      if (reasoning) {
        this.streamedPieces.add(id);
        out.push({ type: "messages-tuple", data: { type: "ai", id, content: "", reasoning } });
      }
      const text = messageText(message.content);
      if (text) {
        this.streamedText.set(id, (this.streamedText.get(id) ?? "") + text);
        out.push({ type: "messages-tuple", data: { type: "ai", id, content: text } });
      }
      const pieces = AIMessageChunk.isInstance(message) ? toolCallPieces(message) : [];
      if (pieces.length > 0) {
        this.streamedPieces.add(id);
        out.push({ type: "messages-tuple", data: { type: "ai", id, content: "", tool_call_chunks: pieces } });
      }
      this.noteUsage(message);
    } else if (ToolMessage.isInstance(message)) {
      out.push(...this.toolResult(message));
    }
    return out;
  }

  private fromValues(state: Record<string, unknown>): StreamEvent[] {
    const messages = (state.messages as BaseMessage[] | undefined) ?? [];
    if (this.inputMessageId !== undefined) {
      // The input message is the last one the run was given: look from the end.
      let at = -1;
      for (let i = messages.length - 1; i >= 0; i--) {
        if (messages[i]?.id === this.inputMessageId) {
          at = i;
          break;
        }
      }
      for (const m of at === -1 ? messages : messages.slice(0, at)) if (m.id) this.preexisting.add(m.id);
      this.inputMessageId = undefined;
    }
    const out: StreamEvent[] = [];
    // Messages the previous values event held at the same places were looked at then, and looking again emits
    // nothing (each tool call, result and text goes out once, usage is per id): start after them.
    const same = this.sharedPrefix(messages);
    for (let i = same; i < messages.length; i++) {
      const m = messages[i] as BaseMessage;
      if (m.id && this.preexisting.has(m.id)) continue;
      if (AIMessage.isInstance(m)) {
        this.noteUsage(m);
        const calls = (m.tool_calls ?? []).filter((c) => c.id && !this.emittedToolCalls.has(c.id));
        if (calls.length > 0 && m.id) {
          for (const c of calls) this.emittedToolCalls.add(c.id as string);
          out.push({
            type: "messages-tuple",
            data: { type: "ai", id: m.id, content: "", tool_calls: calls.map((c) => ({ id: c.id as string, name: c.name, args: c.args })) },
          });
        }
        // A model that did not stream (or whose chunks were filtered) still gets its reasoning and text out, once.
        const text = messageText(m.content);
        const reasoning = m.id && !this.streamedText.has(m.id) && !this.streamedPieces.has(m.id) ? messageReasoning(m) : "";
        if (m.id && reasoning) {
          this.streamedPieces.add(m.id);
          out.push({ type: "messages-tuple", data: { type: "ai", id: m.id, content: "", reasoning } });
        }
        if (m.id && text && !this.streamedText.has(m.id)) {
          this.streamedText.set(m.id, text);
          out.push({ type: "messages-tuple", data: { type: "ai", id: m.id, content: text } });
        }
      } else if (ToolMessage.isInstance(m)) {
        this.noteSubagentCost(m);
        out.push(...this.toolResult(m));
      }
    }
    const values: ValuesEvent["data"] = {
      title: (state.title as string | undefined) ?? null,
      messages: this.serializeList(messages, same),
      artifacts: (state.artifacts as string[] | undefined) ?? [],
      summary_text: (state.summary_text as string | null | undefined) ?? null,
      todos: (state.todos as unknown[] | undefined) ?? null,
      stop_reason: (state.stop_reason as string | null | undefined) ?? null,
    };
    this.lastValues = values;
    out.push({ type: "values", data: values });
    return out;
  }

  /**
   * The list serialized, reusing the previous event's entries for the messages it shares with it (by identity, as
   * the graph carries the same message objects from step to step) and the cache for the others, so a values
   * event costs the messages that changed, not the thread.
   */
  private serializeList(messages: readonly BaseMessage[], same: number): SerializedMessage[] {
    const out = (this.lastValues?.messages ?? []).slice(0, same);
    for (let i = same; i < messages.length; i++) out.push(serializeCached(messages[i] as BaseMessage, this.serialized));
    this.lastMessages = messages;
    return out;
  }

  /** How many messages at the start of `messages` are the previous values event's, as the same objects. */
  private sharedPrefix(messages: readonly BaseMessage[]): number {
    const previous = this.lastMessages;
    const limit = Math.min(previous.length, messages.length, this.lastValues?.messages.length ?? 0);
    let same = 0;
    while (same < limit && previous[same] === messages[same]) same++;
    return same;
  }

  private toolResult(message: ToolMessage): StreamEvent[] {
    const key = message.tool_call_id || message.id;
    if (!key || this.emittedToolResults.has(key)) return [];
    if (message.id && this.preexisting.has(message.id)) return [];
    this.emittedToolResults.add(key);
    const data: MessagesTupleEvent["data"] = {
      type: "tool",
      id: message.id,
      tool_call_id: message.tool_call_id,
      name: message.name,
      content: messageText(message.content),
      status: message.status === "error" ? "error" : "success",
      ...(message.artifact !== undefined && message.artifact !== null ? { artifact: message.artifact } : {}),
    };
    return [{ type: "messages-tuple", data }];
  }

  private noteUsage(message: AIMessage | AIMessageChunk): void {
    const stamp = modelCallStamp(message);
    if (stamp?.cost_usd != null && message.id && !this.preexisting.has(message.id)) {
      this.costById.set(message.id, { model: stamp.model, usd: stamp.cost_usd });
    }
    const u = message.usage_metadata;
    if (!message.id || !u || this.preexisting.has(message.id)) return;
    // Chunks and the final message both carry usage; the final figure per id wins, counted once.
    this.usageById.set(message.id, {
      input_tokens: u.input_tokens ?? 0,
      output_tokens: u.output_tokens ?? 0,
      total_tokens: u.total_tokens ?? (u.input_tokens ?? 0) + (u.output_tokens ?? 0),
    });
  }

  get usage(): Usage {
    const total: Usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    for (const u of this.usageById.values()) {
      total.input_tokens += u.input_tokens;
      total.output_tokens += u.output_tokens;
      total.total_tokens += u.total_tokens;
    }
    return total;
  }

  /** A task tool's report of what its subagent's model calls cost (`additional_kwargs.subagent_cost`). */
  private noteSubagentCost(message: ToolMessage): void {
    const cost = message.additional_kwargs?.subagent_cost as RunCost | undefined;
    if (!cost || typeof cost.usd !== "number" || (message.id && this.preexisting.has(message.id))) return;
    this.subagentCosts.set(message.tool_call_id, cost);
  }

  /** What this run's model calls cost so far, its subagents' included. */
  get cost(): RunCost {
    const total: RunCost = { usd: 0, by_model: {} };
    const add = (model: string, usd: number) => {
      total.usd += usd;
      total.by_model[model] = (total.by_model[model] ?? 0) + usd;
    };
    for (const c of this.costById.values()) add(c.model, c.usd);
    for (const c of this.subagentCosts.values()) for (const [model, usd] of Object.entries(c.by_model)) add(model, usd);
    return total;
  }

  get finalValues(): ValuesEvent["data"] | undefined {
    return this.lastValues;
  }

  /** The text of the last AI message of this run. */
  get finalText(): string {
    const messages = this.lastValues?.messages ?? [];
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      if (m?.type === "ai" && (!m.id || !this.preexisting.has(m.id))) return m.content;
    }
    return "";
  }
}
