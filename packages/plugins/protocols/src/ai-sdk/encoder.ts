import { type ProtocolEvent, pendingApprovalCalls } from "../run-events.js";

/**
 * One chunk of the AI SDK's UI message stream (v1), the subset Antler sends. The field names are the AI SDK's; the
 * client validates every chunk against its own schema, so nothing beyond these fields may be added.
 */
export type UiMessageChunk =
  | { type: "start"; messageId: string; messageMetadata: AiSdkMessageMetadata }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start"; id: string }
  | { type: "text-delta"; id: string; delta: string }
  | { type: "text-end"; id: string }
  | { type: "reasoning-start"; id: string }
  | { type: "reasoning-delta"; id: string; delta: string }
  | { type: "reasoning-end"; id: string }
  | { type: "tool-input-start"; toolCallId: string; toolName: string }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool-output-available"; toolCallId: string; output: unknown }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | { type: `data-${string}`; id?: string; data: unknown }
  | { type: "message-metadata"; messageMetadata: AiSdkMessageMetadata }
  | { type: "finish"; finishReason: "stop" | "tool-calls" | "error"; messageMetadata: AiSdkMessageMetadata }
  | { type: "error"; errorText: string };

/** What the assistant message's `metadata` holds: which Antler run made it, its trace id, and at the end its usage. */
export interface AiSdkMessageMetadata {
  run_id: string;
  thread_id: string;
  trace_id: string;
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number };
  stop_reason?: string | null;
}

/** A tool part's `approval.id` is this prefix and its tool call id. */
export const APPROVAL_ID_PREFIX = "approval:";

/** A custom event's name as a data part's type (`data-<name>`): letters, digits, `_` and `-` only. */
function dataPartName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_");
  return cleaned === "" ? "custom" : cleaned;
}

/**
 * Encodes protocol events as UI message chunks. Tool results keep their text; a text that is a JSON object or array
 * is sent parsed, so a front end reads structured tool output as it was returned.
 */
export function encodeUiMessageChunks(event: ProtocolEvent): UiMessageChunk[] {
  switch (event.kind) {
    case "run-started": {
      const metadata = { run_id: event.runId, thread_id: event.threadId, trace_id: event.traceId };
      return [{ type: "start", messageId: event.runId, messageMetadata: metadata }];
    }
    case "step-start":
      return [{ type: "start-step" }];
    case "step-end":
      return [{ type: "finish-step" }];
    case "text-start":
      return [{ type: "text-start", id: event.messageId }];
    case "text-delta":
      return [{ type: "text-delta", id: event.messageId, delta: event.delta }];
    case "text-end":
      return [{ type: "text-end", id: event.messageId }];
    case "reasoning-start":
      return [{ type: "reasoning-start", id: event.messageId }];
    case "reasoning-delta":
      return [{ type: "reasoning-delta", id: event.messageId, delta: event.delta }];
    case "reasoning-end":
      return [{ type: "reasoning-end", id: event.messageId }];
    case "tool-input-start":
      return [{ type: "tool-input-start", toolCallId: event.toolCallId, toolName: event.toolName }];
    case "tool-input-delta":
      return [{ type: "tool-input-delta", toolCallId: event.toolCallId, inputTextDelta: event.delta }];
    case "tool-call":
      return [{ type: "tool-input-available", toolCallId: event.toolCallId, toolName: event.toolName, input: event.args }];
    case "tool-result":
      return event.isError
        ? [{ type: "tool-output-error", toolCallId: event.toolCallId, errorText: event.output }]
        : [{ type: "tool-output-available", toolCallId: event.toolCallId, output: toolOutput(event.output) }];
    case "state":
      // One part per key with a fixed id: the client replaces it in place as the value changes.
      return [{ type: `data-${event.key}`, id: event.key, data: event.value }];
    case "custom":
      return [{ type: `data-${dataPartName(event.name)}`, data: event.data }];
    case "run-paused":
      // A run paused for approval: each pending call's tool part goes to `approval-requested`; useChat answers with
      // addToolApprovalResponse and sends the chat again (sendAutomaticallyWhen), which resumes the same run.
      return pendingApprovalCalls(event.interrupt).map((call) => ({
        type: "tool-approval-request",
        approvalId: `${APPROVAL_ID_PREFIX}${call.tool_call_id}`,
        toolCallId: call.tool_call_id,
      }));
    case "run-finished": {
      const messageMetadata = {
        run_id: event.runId,
        thread_id: event.threadId,
        trace_id: event.traceId,
        usage: event.usage,
        stop_reason: event.stopReason,
      };
      return [{ type: "finish", finishReason: event.stopReason === "paused" ? "tool-calls" : "stop", messageMetadata }];
    }
    case "run-error":
      return [{ type: "error", errorText: `${event.code}: ${event.message} (trace id ${event.traceId})` }];
    default:
      return [];
  }
}

function toolOutput(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
