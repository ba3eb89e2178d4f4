import type { StreamEvent } from "@antler/plugin-runtime";

/** Token usage of a run, as the run's `end` event sums it. */
export interface ProtocolUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/**
 * What happened in a run, in terms every front-end protocol has: the protocol-neutral model each encoder (AI SDK,
 * AG-UI, LangGraph) translates to its wire format. It is derived from Antler's run events (`StreamEvent`), so any
 * source of them (a live run, the run event log) feeds every protocol the same way.
 *
 * Order guarantees: `step-start` precedes the reasoning, text and tool calls of each model turn; `text-start`
 * precedes a message's deltas and `text-end` follows them before anything else of the run (`reasoning-start`,
 * `-delta`, `-end` likewise); `tool-input-start` precedes a call's `tool-input-delta`s, which precede its
 * `tool-call` (a model that does not stream tool calls sends the `tool-call` alone); `tool-result` follows its
 * `tool-call`; `run-finished` or `run-error` is last.
 */
export type ProtocolEvent =
  | { kind: "run-started"; runId: string; threadId: string; traceId: string }
  | { kind: "step-start"; messageId: string }
  | { kind: "step-end"; messageId: string }
  | { kind: "text-start"; messageId: string }
  | { kind: "text-delta"; messageId: string; delta: string }
  | { kind: "text-end"; messageId: string }
  /** A thinking model's reasoning, streamed like text and kept apart from it. */
  | { kind: "reasoning-start"; messageId: string }
  | { kind: "reasoning-delta"; messageId: string; delta: string }
  | { kind: "reasoning-end"; messageId: string }
  /** A tool call as the model streams it: its name first, then its JSON arguments text in pieces. */
  | { kind: "tool-input-start"; messageId: string; toolCallId: string; toolName: string }
  | { kind: "tool-input-delta"; toolCallId: string; delta: string }
  | { kind: "tool-call"; messageId: string; toolCallId: string; toolName: string; args: Record<string, unknown> }
  /** `messageId`: the tool message's own id, when the run event carries one. */
  | { kind: "tool-result"; toolCallId: string; toolName: string; output: string; isError: boolean; artifact?: unknown; messageId?: string }
  /** A state key changed: `todos`, `title` or `artifacts`, with its whole new value. */
  | { kind: "state"; key: "todos" | "title" | "artifacts"; value: unknown }
  /** A custom event a tool, middleware or subagent emitted; `name` is its `type` (or `custom` when it has none). */
  | { kind: "custom"; name: string; data: Record<string, unknown> }
  /**
   * The run paused for a person (an approval; the runtime's `run_paused` event, which also comes as a `custom`
   * just before): `interrupt` is the pause's value (`kind`, `calls`, `expires_at`), `interruptId` what answers it.
   * The run's `run-finished` (stop reason `paused`) follows.
   */
  | { kind: "run-paused"; runId: string; interruptId: string; interrupt: Record<string, unknown> }
  | { kind: "run-finished"; runId: string; threadId: string; traceId: string; usage: ProtocolUsage; stopReason: string | null }
  | { kind: "run-error"; runId: string; traceId: string; code: string; message: string };

const STATE_KEYS = ["todos", "title", "artifacts"] as const;

/** The runtime's `RUN_PAUSED_EVENT`, by value (this module loads only types from the runtime). */
export const RUN_PAUSED = "run_paused";

/** One call an approval pause waits on, as the interrupt's `calls` list it (guardrails' `PendingApprovalCall`). */
export interface PendingApprovalCall {
  tool_call_id: string;
  tool: string;
  args: Record<string, unknown>;
  rule: string;
  reason: string;
}

/** The calls an approval interrupt waits on; empty for another kind of pause or a malformed value. */
export function pendingApprovalCalls(interrupt: unknown): PendingApprovalCall[] {
  if (typeof interrupt !== "object" || interrupt === null) return [];
  const value = interrupt as { kind?: unknown; calls?: unknown };
  if (value.kind !== "approval" || !Array.isArray(value.calls)) return [];
  return value.calls.flatMap((c: unknown) => {
    if (typeof c !== "object" || c === null) return [];
    const call = c as Record<string, unknown>;
    if (typeof call.tool_call_id !== "string" || typeof call.tool !== "string") return [];
    return [
      {
        tool_call_id: call.tool_call_id,
        tool: call.tool,
        args: typeof call.args === "object" && call.args !== null ? (call.args as Record<string, unknown>) : {},
        rule: typeof call.rule === "string" ? call.rule : "",
        reason: typeof call.reason === "string" ? call.reason : "",
      },
    ];
  });
}

/**
 * Turns one run's `StreamEvent`s into `ProtocolEvent`s, in order. Stateful per run: it tracks the open model turn
 * and text message, and the state keys last seen, so a `values` event yields only what changed (cost grows with
 * the change, not the thread).
 */
export class RunEventMapper {
  private step: string | undefined;
  private text: string | undefined;
  private reasoning: string | undefined;
  /** The streaming tool calls of the current model turn, by their index in the message. */
  private readonly streamingCalls = new Map<number, string>();
  private readonly toolNames = new Map<string, string>();
  private readonly lastState = new Map<string, string>();

  constructor(private readonly run: { runId: string; threadId: string; traceId: string }) {}

  start(): ProtocolEvent[] {
    return [{ kind: "run-started", ...this.run }];
  }

  map(event: StreamEvent): ProtocolEvent[] {
    switch (event.type) {
      case "messages-tuple":
        return this.fromMessage(event.data);
      case "values":
        return this.fromValues(event.data);
      case "custom": {
        const name = typeof event.data.type === "string" && event.data.type !== "" ? event.data.type : "custom";
        const out: ProtocolEvent[] = [...this.closeParts(), { kind: "custom", name, data: event.data }];
        const interrupt = event.data.interrupt;
        if (name === RUN_PAUSED && typeof interrupt === "object" && interrupt !== null) {
          const interruptId = typeof event.data.interrupt_id === "string" ? event.data.interrupt_id : "";
          out.push({ kind: "run-paused", runId: this.run.runId, interruptId, interrupt: interrupt as Record<string, unknown> });
        }
        return out;
      }
      case "end":
        return [
          ...this.closeStep(),
          {
            kind: "run-finished",
            runId: event.data.run_id,
            threadId: event.data.thread_id,
            traceId: event.data.trace_id,
            usage: event.data.usage,
            stopReason: event.data.stop_reason,
          },
        ];
      default:
        return [];
    }
  }

  /** The run failed or was cancelled mid-stream: closes what is open and reports the error last. */
  fail(code: string, message: string): ProtocolEvent[] {
    return [...this.closeStep(), { kind: "run-error", runId: this.run.runId, traceId: this.run.traceId, code, message }];
  }

  private fromMessage(data: Extract<StreamEvent, { type: "messages-tuple" }>["data"]): ProtocolEvent[] {
    if (data.type === "tool") {
      const toolName = data.name ?? this.toolNames.get(data.tool_call_id) ?? "tool";
      const result: ProtocolEvent = {
        kind: "tool-result",
        toolCallId: data.tool_call_id,
        toolName,
        output: data.content,
        isError: data.status === "error",
        ...(data.id !== undefined ? { messageId: data.id } : {}),
        ...(data.artifact !== undefined ? { artifact: data.artifact } : {}),
      };
      return [...this.closeParts(), result];
    }
    const out = this.enterStep(data.id);
    if ("tool_calls" in data) {
      out.push(...this.closeParts());
      for (const call of data.tool_calls) {
        this.toolNames.set(call.id, call.name);
        out.push({ kind: "tool-call", messageId: data.id, toolCallId: call.id, toolName: call.name, args: call.args });
      }
      return out;
    }
    if ("tool_call_chunks" in data) {
      out.push(...this.closeParts());
      for (const piece of data.tool_call_chunks) out.push(...this.toolInput(data.id, piece));
      return out;
    }
    if ("reasoning" in data) {
      if (data.reasoning === "") return out;
      if (this.reasoning !== data.id) {
        out.push(...this.closeParts(), { kind: "reasoning-start", messageId: data.id });
        this.reasoning = data.id;
      }
      out.push({ kind: "reasoning-delta", messageId: data.id, delta: data.reasoning });
      return out;
    }
    if (data.content === "") return out;
    if (this.text !== data.id) {
      out.push(...this.closeParts(), { kind: "text-start", messageId: data.id });
      this.text = data.id;
    }
    out.push({ kind: "text-delta", messageId: data.id, delta: data.content });
    return out;
  }

  /** A streamed piece of a tool call: a call is announced by its first piece with an id and a name. */
  private toolInput(messageId: string, piece: { index: number; id?: string; name?: string; args: string }): ProtocolEvent[] {
    const out: ProtocolEvent[] = [];
    let toolCallId = this.streamingCalls.get(piece.index);
    if (piece.id !== undefined && piece.id !== toolCallId) {
      if (piece.name === undefined) return out;
      toolCallId = piece.id;
      this.streamingCalls.set(piece.index, toolCallId);
      this.toolNames.set(toolCallId, piece.name);
      out.push({ kind: "tool-input-start", messageId, toolCallId, toolName: piece.name });
    }
    // Pieces of a call whose start was never seen (a provider that sends no id) wait for the whole call.
    if (toolCallId !== undefined && piece.args !== "") out.push({ kind: "tool-input-delta", toolCallId, delta: piece.args });
    return out;
  }

  private fromValues(data: Extract<StreamEvent, { type: "values" }>["data"]): ProtocolEvent[] {
    const out: ProtocolEvent[] = [];
    for (const key of STATE_KEYS) {
      const value = data[key];
      // The first values event sets the baseline: a key that has a value then is reported once, an empty one is not.
      const json = JSON.stringify(value ?? null);
      const before = this.lastState.get(key);
      this.lastState.set(key, json);
      if (before === json || (before === undefined && isEmpty(value))) continue;
      out.push({ kind: "state", key, value: value ?? null });
    }
    return out;
  }

  private enterStep(messageId: string): ProtocolEvent[] {
    if (this.step === messageId) return [];
    const out = this.closeStep();
    this.step = messageId;
    this.streamingCalls.clear();
    out.push({ kind: "step-start", messageId });
    return out;
  }

  /** Ends the open reasoning and text, if any. */
  private closeParts(): ProtocolEvent[] {
    const out: ProtocolEvent[] = [];
    if (this.reasoning !== undefined) out.push({ kind: "reasoning-end", messageId: this.reasoning });
    if (this.text !== undefined) out.push({ kind: "text-end", messageId: this.text });
    this.reasoning = undefined;
    this.text = undefined;
    return out;
  }

  private closeStep(): ProtocolEvent[] {
    const out = this.closeParts();
    if (this.step !== undefined) out.push({ kind: "step-end", messageId: this.step });
    this.step = undefined;
    return out;
  }
}

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0);
}
