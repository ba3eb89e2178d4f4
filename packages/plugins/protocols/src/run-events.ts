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
 * Order guarantees: `step-start` precedes the text and tool calls of each model turn; `text-start` precedes a
 * message's deltas and `text-end` follows them before anything else of the run; `tool-result` follows its
 * `tool-call`; `run-finished` or `run-error` is last.
 */
export type ProtocolEvent =
  | { kind: "run-started"; runId: string; threadId: string; traceId: string }
  | { kind: "step-start"; messageId: string }
  | { kind: "step-end"; messageId: string }
  | { kind: "text-start"; messageId: string }
  | { kind: "text-delta"; messageId: string; delta: string }
  | { kind: "text-end"; messageId: string }
  | { kind: "tool-call"; messageId: string; toolCallId: string; toolName: string; args: Record<string, unknown> }
  /** `messageId`: the tool message's own id, when the run event carries one. */
  | { kind: "tool-result"; toolCallId: string; toolName: string; output: string; isError: boolean; artifact?: unknown; messageId?: string }
  /** A state key changed: `todos`, `title` or `artifacts`, with its whole new value. */
  | { kind: "state"; key: "todos" | "title" | "artifacts"; value: unknown }
  /** A custom event a tool, middleware or subagent emitted; `name` is its `type` (or `custom` when it has none). */
  | { kind: "custom"; name: string; data: Record<string, unknown> }
  | { kind: "run-finished"; runId: string; threadId: string; traceId: string; usage: ProtocolUsage; stopReason: string | null }
  | { kind: "run-error"; runId: string; traceId: string; code: string; message: string };

const STATE_KEYS = ["todos", "title", "artifacts"] as const;

/**
 * Turns one run's `StreamEvent`s into `ProtocolEvent`s, in order. Stateful per run: it tracks the open model turn
 * and text message, and the state keys last seen, so a `values` event yields only what changed (cost grows with
 * the change, not the thread).
 */
export class RunEventMapper {
  private step: string | undefined;
  private text: string | undefined;
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
        return [...this.closeText(), { kind: "custom", name, data: event.data }];
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
      return [...this.closeText(), result];
    }
    const out = this.enterStep(data.id);
    if ("tool_calls" in data) {
      out.push(...this.closeText());
      for (const call of data.tool_calls) {
        this.toolNames.set(call.id, call.name);
        out.push({ kind: "tool-call", messageId: data.id, toolCallId: call.id, toolName: call.name, args: call.args });
      }
      return out;
    }
    if (data.content === "") return out;
    if (this.text !== data.id) {
      out.push(...this.closeText(), { kind: "text-start", messageId: data.id });
      this.text = data.id;
    }
    out.push({ kind: "text-delta", messageId: data.id, delta: data.content });
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
    out.push({ kind: "step-start", messageId });
    return out;
  }

  private closeText(): ProtocolEvent[] {
    if (this.text === undefined) return [];
    const messageId = this.text;
    this.text = undefined;
    return [{ kind: "text-end", messageId }];
  }

  private closeStep(): ProtocolEvent[] {
    const out = this.closeText();
    if (this.step !== undefined) out.push({ kind: "step-end", messageId: this.step });
    this.step = undefined;
    return out;
  }
}

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0);
}
