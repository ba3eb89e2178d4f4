import { type ProtocolEvent, pendingApprovalCalls } from "../run-events.js";
import { diffJsonPatch, type JsonPatchOperation } from "./json-patch.js";

const RUN_CANCELLED = "ANTLER_ERR_RUN_CANCELLED";

/** The AG-UI agent state Antler keeps in step with a thread: its todo list, title and artifact paths. */
export interface AgUiState {
  todos: unknown[];
  title: string | null;
  artifacts: unknown[];
}

/** What RUN_FINISHED's `result` holds (and so what `HttpAgent.runAgent` resolves `result` to). */
export interface AgUiRunResult {
  run_id: string;
  thread_id: string;
  trace_id: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  stop_reason: string | null;
}

interface Base {
  timestamp: number;
  metadata?: Record<string, unknown>;
}

/**
 * One AG-UI event, the subset Antler sends. Field names are AG-UI's (`@ag-ui/core` 1.0); the client validates each
 * event and strips (with a warning) any field its schema lacks, so Antler's own data goes under `metadata`.
 */
export type AgUiEvent = Base &
  (
    | { type: "RUN_STARTED"; threadId: string; runId: string; protocolVersion: string }
    | { type: "STEP_STARTED"; stepName: string }
    | { type: "STEP_FINISHED"; stepName: string }
    | { type: "TEXT_MESSAGE_START"; messageId: string; role: "assistant" }
    | { type: "TEXT_MESSAGE_CONTENT"; messageId: string; delta: string }
    | { type: "TEXT_MESSAGE_END"; messageId: string }
    | { type: "TOOL_CALL_START"; toolCallId: string; toolCallName: string; parentMessageId: string }
    | { type: "TOOL_CALL_ARGS"; toolCallId: string; delta: string }
    | { type: "TOOL_CALL_END"; toolCallId: string }
    | { type: "TOOL_CALL_RESULT"; messageId: string; toolCallId: string; content: string; role: "tool" }
    | { type: "STATE_SNAPSHOT"; snapshot: AgUiState }
    | { type: "STATE_DELTA"; delta: JsonPatchOperation[] }
    | { type: "CUSTOM"; name: string; value: unknown }
    | {
        type: "RUN_FINISHED";
        threadId: string;
        runId: string;
        outcome: { type: "success" | "cancelled" } | { type: "interrupt"; interrupts: AgUiInterrupt[] };
        result?: AgUiRunResult;
        usage?: Array<{ inputTokens: number; outputTokens: number; totalTokens: number }>;
      }
    | { type: "RUN_ERROR"; message: string; code: string }
  );

/** AG-UI's `Interrupt` (`@ag-ui/core` 1.0), as Antler fills it for an approval: one per pending tool call. */
export interface AgUiInterrupt {
  /** The pending call's `tool_call_id`: a resume entry answers it by this id. */
  id: string;
  reason: "tool_approval";
  message: string;
  toolCallId: string;
  responseSchema: Record<string, unknown>;
  expiresAt?: string;
  metadata: Record<string, unknown>;
}

/** The resume payload an approval interrupt takes: AG-UI's `approved` (+ `editedArgs`, `reason`), or Antler's decision. */
const APPROVAL_RESPONSE_SCHEMA = {
  type: "object",
  properties: {
    approved: { type: "boolean", description: "true runs the call (with editedArgs when given); false rejects it." },
    reason: { type: "string", description: "Why it was rejected; the model reads it." },
    editedArgs: { type: "object", description: "Arguments to run the call with instead of the model's." },
  },
  required: ["approved"],
};

/** The AG-UI interrupts of an approval pause: one per pending call. */
export function approvalInterrupts(interrupt: Record<string, unknown>, interruptId: string): AgUiInterrupt[] {
  const expiresAt = typeof interrupt.expires_at === "string" ? interrupt.expires_at : undefined;
  return pendingApprovalCalls(interrupt).map((call) => ({
    id: call.tool_call_id,
    reason: "tool_approval",
    message: `Approve ${call.tool} ${JSON.stringify(call.args)}?${call.reason ? ` ${call.reason}` : ""}`,
    toolCallId: call.tool_call_id,
    responseSchema: APPROVAL_RESPONSE_SCHEMA,
    ...(expiresAt ? { expiresAt } : {}),
    metadata: { tool: call.tool, args: call.args, rule: call.rule, antler_interrupt_id: interruptId },
  }));
}

/** The AG-UI protocol version this encoder speaks (RUN_STARTED's `protocolVersion`). */
export const AG_UI_PROTOCOL_VERSION = "1.0";

export interface AgUiRunIds {
  threadId: string;
  runId: string;
  traceId: string;
  /** The request's `runId` when Antler ran under another id (it was not a UUID, or already taken). */
  requestedRunId?: string;
}

/**
 * Encodes one run's protocol events as AG-UI events. Stateful per run: it holds the state last sent, so each
 * `state` change becomes a STATE_DELTA (an RFC 6902 patch against it) after the one STATE_SNAPSHOT that follows
 * RUN_STARTED.
 */
export class AgUiEncoder {
  private state: AgUiState;
  /** The approval the run paused on: RUN_FINISHED then has the interrupt outcome. */
  private interrupts: AgUiInterrupt[] = [];

  constructor(
    private readonly run: AgUiRunIds,
    initial: AgUiState,
  ) {
    this.state = jsonCopy(initial);
  }

  encode(event: ProtocolEvent): AgUiEvent[] {
    const timestamp = Date.now();
    switch (event.kind) {
      case "run-started": {
        const metadata = {
          trace_id: this.run.traceId,
          run_id_from: this.run.requestedRunId === undefined ? "request" : "server",
          ...(this.run.requestedRunId !== undefined ? { requested_run_id: this.run.requestedRunId } : {}),
        };
        return [
          {
            type: "RUN_STARTED",
            timestamp,
            threadId: event.threadId,
            runId: event.runId,
            protocolVersion: AG_UI_PROTOCOL_VERSION,
            metadata,
          },
          { type: "STATE_SNAPSHOT", timestamp, snapshot: jsonCopy(this.state) },
        ];
      }
      case "step-start":
        return [{ type: "STEP_STARTED", timestamp, stepName: stepName(event.messageId) }];
      case "step-end":
        return [{ type: "STEP_FINISHED", timestamp, stepName: stepName(event.messageId) }];
      case "text-start":
        return [{ type: "TEXT_MESSAGE_START", timestamp, messageId: event.messageId, role: "assistant" }];
      case "text-delta":
        return [{ type: "TEXT_MESSAGE_CONTENT", timestamp, messageId: event.messageId, delta: event.delta }];
      case "text-end":
        return [{ type: "TEXT_MESSAGE_END", timestamp, messageId: event.messageId }];
      case "tool-call":
        // Antler's run events carry a call's arguments whole, so they go out as one ARGS fragment.
        return [
          {
            type: "TOOL_CALL_START",
            timestamp,
            toolCallId: event.toolCallId,
            toolCallName: event.toolName,
            parentMessageId: event.messageId,
          },
          { type: "TOOL_CALL_ARGS", timestamp, toolCallId: event.toolCallId, delta: JSON.stringify(event.args) },
          { type: "TOOL_CALL_END", timestamp, toolCallId: event.toolCallId },
        ];
      case "tool-result":
        return [
          {
            type: "TOOL_CALL_RESULT",
            timestamp,
            messageId: event.messageId ?? `${event.toolCallId}:result`,
            toolCallId: event.toolCallId,
            content: event.output,
            role: "tool",
            metadata: { tool_name: event.toolName, status: event.isError ? "error" : "success" },
          },
        ];
      case "state": {
        const next: AgUiState = { ...this.state, [event.key]: stateValue(event.key, event.value) };
        const delta = diffJsonPatch(this.state, next);
        this.state = next;
        return delta.length === 0 ? [] : [{ type: "STATE_DELTA", timestamp, delta }];
      }
      case "custom":
        return [{ type: "CUSTOM", timestamp, name: event.name, value: event.data }];
      case "run-paused":
        this.interrupts = approvalInterrupts(event.interrupt, event.interruptId);
        return [];
      case "run-finished": {
        const result: AgUiRunResult = {
          run_id: event.runId,
          thread_id: event.threadId,
          trace_id: event.traceId,
          usage: event.usage,
          stop_reason: event.stopReason,
        };
        const usage = [
          { inputTokens: event.usage.input_tokens, outputTokens: event.usage.output_tokens, totalTokens: event.usage.total_tokens },
        ];
        return [
          {
            type: "RUN_FINISHED",
            timestamp,
            threadId: event.threadId,
            runId: event.runId,
            // A run paused for approval ends with AG-UI's interrupt outcome; HttpAgent keeps them as pendingInterrupts.
            outcome: this.interrupts.length > 0 ? { type: "interrupt", interrupts: this.interrupts } : { type: "success" },
            result,
            usage,
            metadata: { trace_id: event.traceId },
          },
        ];
      }
      case "run-error":
        // Cancelled by someone else while this client still listens (a cancel call, an `interrupt` run): AG-UI's
        // cancelled outcome, which is not a failure.
        if (event.code === RUN_CANCELLED) {
          const metadata = { trace_id: event.traceId, code: event.code, message: event.message };
          return [
            { type: "RUN_FINISHED", timestamp, threadId: this.run.threadId, runId: event.runId, outcome: { type: "cancelled" }, metadata },
          ];
        }
        return [
          {
            type: "RUN_ERROR",
            timestamp,
            message: `${event.message} (trace id ${event.traceId})`,
            code: event.code,
            metadata: { trace_id: event.traceId, run_id: event.runId },
          },
        ];
      default:
        return [];
    }
  }
}

/** A model turn's step, named for the AI message it produces. */
function stepName(messageId: string): string {
  return `model_turn:${messageId}`;
}

/** The thread's value of a state key as AG-UI state: lists are never null, so patches on them stay valid. */
function stateValue(key: keyof AgUiState, value: unknown): unknown {
  if (key === "title") return typeof value === "string" ? value : null;
  return Array.isArray(value) ? jsonCopy(value) : [];
}

/** Builds AG-UI state from a thread's values. */
export function agUiState(values: { todos?: unknown[] | null; title?: string | null; artifacts?: unknown[] | null }): AgUiState {
  return {
    todos: stateValue("todos", values.todos) as unknown[],
    title: stateValue("title", values.title) as string | null,
    artifacts: stateValue("artifacts", values.artifacts) as unknown[],
  };
}

function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
