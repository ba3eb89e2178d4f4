import type { Artifact, Message, Part, StreamResponse, Task, TaskStatus } from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import { type PendingApprovalCall, type ProtocolEvent, pendingApprovalCalls } from "@antler/plugin-protocols/run-events";

export const ASK_CLARIFICATION = "ask_clarification";
const RUN_CANCELLED = "ANTLER_ERR_RUN_CANCELLED";

export const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});

/** An agent message of the task (a question, an error), as A2A's status messages carry them. */
export function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The `kind` of the data part an approval's `input-required` message carries. */
export const APPROVAL_PART_KIND = "antler.approval";

function describeCall(call: PendingApprovalCall): string {
  const args = JSON.stringify(call.args);
  const why = call.reason ? ` (${call.rule ? `rule ${call.rule}: ` : ""}${call.reason})` : call.rule ? ` (rule ${call.rule})` : "";
  return `- ${call.tool} ${args.length > 500 ? `${args.slice(0, 500)}…` : args}, tool_call_id ${call.tool_call_id}${why}`;
}

/**
 * The `input-required` message of a run paused for approval: a text part saying which calls wait and how to answer,
 * and a data part (`kind: "antler.approval"`) with the pending calls for a program to read. The answer is a
 * message on the same task: a data part `{ decision: "approve" }`, `{ decision: "reject", reason }`,
 * `{ decision: "edit", args }` or `{ decisions: { <tool_call_id>: ... } }`, or the text `approve` or `reject: <reason>`.
 */
export function approvalMessage(taskId: string, contextId: string, interruptId: string, interrupt: Record<string, unknown>): Message {
  const calls = pendingApprovalCalls(interrupt);
  const expires = typeof interrupt.expires_at === "string" ? interrupt.expires_at : undefined;
  const text = [
    `Approval needed: the agent paused before ${calls.length === 1 ? "this tool call" : `these ${calls.length} tool calls`}:`,
    ...calls.map(describeCall),
    "",
    'Answer on this task (same taskId) with the text "approve" or "reject: <reason>", or a data part ' +
      '{"decision": "approve"}, {"decision": "reject", "reason": "..."}, {"decision": "edit", "args": {...}} (one call) or ' +
      '{"decisions": {"<tool_call_id>": {...}}}.' +
      (expires ? ` Unanswered by ${expires}, the rule's on_timeout decision applies.` : ""),
  ].join("\n");
  const message = agentMessage(taskId, contextId, text);
  message.parts.push({
    content: {
      $case: "data",
      value: { kind: APPROVAL_PART_KIND, interrupt_id: interruptId, calls, ...(expires ? { expires_at: expires } : {}) },
    },
    metadata: undefined,
    filename: "",
    mediaType: "application/json",
  });
  message.metadata = { antler_interrupt: "approval" };
  return message;
}

export function status(state: TaskState, message?: Message): TaskStatus {
  return { state, message, timestamp: new Date().toISOString() };
}

/** Presented files as one artifact of URL parts the caller fetches with its own key. */
export function filesArtifact(paths: readonly string[], fileUrl: (path: string) => string): Artifact {
  return {
    artifactId: "presented-files",
    name: "files",
    description: "Files the agent presented; fetch each URL with your API key.",
    parts: paths.map((path) => ({
      content: { $case: "url", value: fileUrl(path) },
      metadata: { path },
      filename: path.split("/").pop() ?? path,
      mediaType: "",
    })),
    metadata: undefined,
    extensions: [],
  };
}

export interface TaskIds {
  taskId: string;
  contextId: string;
  fileUrl(path: string): string;
}

/**
 * Turns one run's `ProtocolEvent`s into A2A stream responses, and keeps the task they add up to (what a blocking
 * `SendMessage` answers). Each text message of the run is an artifact streamed in appended chunks; presented
 * files are one artifact of URL parts; tool calls and custom events are `working` status updates whose metadata
 * says what happened; the run's end is the final status: `input-required` when it ended on `ask_clarification` or
 * paused for an approval (`approvalMessage`), else `completed`, and `failed` or `canceled` when it did not finish.
 */
export class A2ATaskEncoder {
  private readonly artifacts = new Map<string, Artifact>();
  private question: string | undefined;
  private paused: { interruptId: string; interrupt: Record<string, unknown> } | undefined;
  private current: TaskStatus = status(TaskState.TASK_STATE_WORKING);

  constructor(
    private readonly ids: TaskIds,
    private readonly history: Message[],
  ) {}

  /** The task as the events so far make it. */
  get task(): Task {
    return {
      id: this.ids.taskId,
      contextId: this.ids.contextId,
      status: this.current,
      artifacts: [...this.artifacts.values()],
      history: this.history,
      metadata: undefined,
    };
  }

  get state(): TaskState {
    return this.current.state;
  }

  encode(event: ProtocolEvent): StreamResponse[] {
    const { taskId, contextId } = this.ids;
    switch (event.kind) {
      case "text-delta": {
        const artifactId = `text-${event.messageId}`;
        const existing = this.artifacts.get(artifactId);
        this.question = undefined;
        if (existing) {
          const first = existing.parts[0];
          if (first?.content?.$case === "text") first.content.value += event.delta;
        } else {
          this.artifacts.set(artifactId, {
            artifactId,
            name: "answer",
            description: "",
            parts: [textPart(event.delta)],
            metadata: undefined,
            extensions: [],
          });
        }
        const chunk: Artifact = {
          artifactId,
          name: "answer",
          description: "",
          parts: [textPart(event.delta)],
          metadata: undefined,
          extensions: [],
        };
        return [
          {
            payload: {
              $case: "artifactUpdate",
              value: { taskId, contextId, artifact: chunk, append: existing !== undefined, lastChunk: false, metadata: undefined },
            },
          },
        ];
      }
      case "tool-call":
        this.question = undefined;
        return [this.working({ antler_event: "tool-call", tool_name: event.toolName, tool_call_id: event.toolCallId })];
      case "tool-result":
        if (event.toolName === ASK_CLARIFICATION && !event.isError) this.question = event.output;
        else this.question = undefined;
        return [
          this.working({ antler_event: "tool-result", tool_name: event.toolName, tool_call_id: event.toolCallId, is_error: event.isError }),
        ];
      case "custom":
        return [this.working({ antler_event: "custom", name: event.name, data: event.data })];
      case "state": {
        if (event.key !== "artifacts" || !Array.isArray(event.value)) return [];
        const artifact = filesArtifact(
          event.value.filter((p): p is string => typeof p === "string"),
          this.ids.fileUrl,
        );
        this.artifacts.set(artifact.artifactId, artifact);
        return [
          {
            payload: {
              $case: "artifactUpdate",
              value: { taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined },
            },
          },
        ];
      }
      case "run-paused":
        this.paused = { interruptId: event.interruptId, interrupt: event.interrupt };
        return [];
      case "run-finished":
        this.current = this.paused
          ? status(TaskState.TASK_STATE_INPUT_REQUIRED, approvalMessage(taskId, contextId, this.paused.interruptId, this.paused.interrupt))
          : this.question !== undefined
            ? status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(taskId, contextId, this.question))
            : status(TaskState.TASK_STATE_COMPLETED);
        return [this.final({ antler_run_id: event.runId, trace_id: event.traceId, usage: event.usage })];
      case "run-error":
        this.current =
          event.code === RUN_CANCELLED
            ? status(TaskState.TASK_STATE_CANCELED)
            : status(TaskState.TASK_STATE_FAILED, agentMessage(taskId, contextId, `${event.code}: ${event.message}`));
        return [this.final({ antler_run_id: event.runId, trace_id: event.traceId, error_code: event.code })];
      default:
        return [];
    }
  }

  private working(metadata: Record<string, unknown>): StreamResponse {
    const { taskId, contextId } = this.ids;
    return { payload: { $case: "statusUpdate", value: { taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata } } };
  }

  private final(metadata: Record<string, unknown>): StreamResponse {
    const { taskId, contextId } = this.ids;
    return { payload: { $case: "statusUpdate", value: { taskId, contextId, status: this.current, metadata } } };
  }
}
