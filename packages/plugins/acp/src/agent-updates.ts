import type { ContentBlock, PlanEntry, SessionUpdate, StopReason, ToolKind } from "@agentclientprotocol/sdk";
import type { ProtocolEvent } from "@antler/plugin-protocols/run-events";
import type { SerializedMessage } from "@antler/plugin-runtime";

const CLARIFICATION_TOOL = "ask_clarification";
/** The runtime's custom event for a run that paused for approval (`RUN_PAUSED_EVENT`). */
const RUN_PAUSED = "run_paused";
/** Protocol events that show a paused-or-not turn's tools are running (so held calls go `in_progress`). */
const RUNNING_SIGNS: ReadonlySet<ProtocolEvent["kind"]> = new Set([
  "tool-result",
  "custom",
  "text-delta",
  "reasoning-delta",
  "tool-input-start",
  "step-start",
  "run-finished",
  "run-error",
]);

/**
 * ACP `session/update` payloads from one Antler run's protocol-neutral events (`RunEventMapper`). Stateful per
 * prompt turn: it remembers which tool calls it announced, so a result is always an update of a known call.
 *
 * Tool calls: Antler announces a call once the model's message is complete, and the tool runs right after, so the
 * call goes out `pending` and at once `in_progress`; its result makes it `completed` (or `failed` when the tool
 * answered an error).
 */
export class AcpUpdateEncoder {
  private readonly open = new Set<string>();
  /** With `holdStart`: calls announced `pending` whose `in_progress` waits for a sign that tools run. */
  private held: string[] = [];
  /** Held calls of a turn that paused for approval: they stay `pending` until `decided`. */
  private waiting: string[] = [];

  /**
   * `holdStart` (approval rules are on): a call stays `pending` until the run shows its tools running (a result,
   * a tool's progress event, the next model output), because a `run_paused` may follow instead; without it the
   * call goes `in_progress` at once.
   */
  constructor(private readonly options: { holdStart?: boolean } = {}) {}

  encode(event: ProtocolEvent): SessionUpdate[] {
    if (event.kind === "custom" && event.name === RUN_PAUSED) {
      this.waiting.push(...this.held);
      this.held = [];
      return [];
    }
    const started = RUNNING_SIGNS.has(event.kind) ? this.flushHeld() : [];
    return [...started, ...this.encodeEvent(event)];
  }

  /**
   * The editor's answers for a paused turn: an approved call (and a call of that turn that needed no approval)
   * goes `in_progress`, a rejected one `failed` with the reason.
   */
  decided(decisions: ReadonlyMap<string, { approved: boolean; reason?: string }>): SessionUpdate[] {
    const out: SessionUpdate[] = [];
    for (const toolCallId of this.waiting) {
      const decision = decisions.get(toolCallId);
      if (decision && !decision.approved) {
        out.push({
          sessionUpdate: "tool_call_update",
          toolCallId,
          status: "failed",
          content: [{ type: "content", content: { type: "text", text: `Rejected: ${decision.reason ?? "not allowed"}` } }],
        });
      } else {
        out.push({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
      }
    }
    this.waiting = [];
    return out;
  }

  private flushHeld(): SessionUpdate[] {
    const out = this.held.map((toolCallId): SessionUpdate => ({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" }));
    this.held = [];
    return out;
  }

  private encodeEvent(event: ProtocolEvent): SessionUpdate[] {
    switch (event.kind) {
      case "text-delta":
        return [{ sessionUpdate: "agent_message_chunk", messageId: event.messageId, content: { type: "text", text: event.delta } }];
      case "tool-call": {
        this.open.add(event.toolCallId);
        const announced: SessionUpdate = {
          sessionUpdate: "tool_call",
          toolCallId: event.toolCallId,
          title: toolTitle(event.toolName, event.args),
          kind: toolKind(event.toolName),
          status: "pending",
          rawInput: event.args,
        };
        if (this.options.holdStart) {
          this.held.push(event.toolCallId);
          return [announced];
        }
        return [announced, { sessionUpdate: "tool_call_update", toolCallId: event.toolCallId, status: "in_progress" }];
      }
      case "tool-result": {
        const known = this.open.delete(event.toolCallId);
        const result: SessionUpdate = {
          sessionUpdate: "tool_call_update",
          toolCallId: event.toolCallId,
          status: event.isError ? "failed" : "completed",
          content: [{ type: "content", content: { type: "text", text: event.output } }],
          rawOutput: event.output,
        };
        // A result whose call this turn never announced (it cannot happen with RunEventMapper's order guarantee,
        // but a client must never see an update for an unknown id): announce it first.
        // A clarification ends the run waiting for the user's next prompt: the question is also the agent's
        // message, so an editor shows it in the conversation and not only inside a collapsed tool call.
        const question: SessionUpdate[] =
          event.toolName === CLARIFICATION_TOOL && !event.isError
            ? [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.output } }]
            : [];
        if (!known) {
          return [
            { sessionUpdate: "tool_call", toolCallId: event.toolCallId, title: event.toolName, kind: toolKind(event.toolName) },
            result,
            ...question,
          ];
        }
        return [result, ...question];
      }
      case "state":
        if (event.key === "todos") return [{ sessionUpdate: "plan", entries: planEntries(event.value) }];
        if (event.key === "title" && typeof event.value === "string" && event.value !== "") {
          return [{ sessionUpdate: "session_info_update", title: event.value }];
        }
        return [];
      default:
        return [];
    }
  }
}

/** An Antler todo list (`write_todos`) as ACP plan entries. Antler's todos have no priority: all are `medium`. */
export function planEntries(todos: unknown): PlanEntry[] {
  if (!Array.isArray(todos)) return [];
  const entries: PlanEntry[] = [];
  for (const todo of todos) {
    if (todo === null || typeof todo !== "object") continue;
    const { content, status } = todo as { content?: unknown; status?: unknown };
    if (typeof content !== "string") continue;
    const known = status === "pending" || status === "in_progress" || status === "completed";
    entries.push({ content, priority: "medium", status: known ? status : "pending" });
  }
  return entries;
}

const KIND_BY_TOOL: Readonly<Record<string, ToolKind>> = {
  read_file: "read",
  read_editor_file: "read",
  view_image: "read",
  ls: "search",
  glob: "search",
  grep: "search",
  web_search: "search",
  image_search: "search",
  tool_search: "search",
  write_file: "edit",
  str_replace: "edit",
  edit_file: "edit",
  write_editor_file: "edit",
  bash: "execute",
  execute: "execute",
  web_fetch: "fetch",
  write_todos: "think",
};

/** ACP's tool kind (which icon an editor shows) for an Antler tool name; `other` when the name says nothing. */
export function toolKind(toolName: string): ToolKind {
  return KIND_BY_TOOL[toolName] ?? "other";
}

/**
 * A human-readable title: Antler's sandbox tools carry a `description` argument written for exactly this;
 * else the tool name with its path or query when it has one.
 */
export function toolTitle(toolName: string, args: Record<string, unknown>): string {
  const text = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);
  const description = text(args.description);
  if (description) return description;
  const subject = text(args.path) ?? text(args.query) ?? text(args.url) ?? text(args.command);
  return subject ? `${toolName}: ${subject}` : toolName;
}

/**
 * ACP's stop reason for a run that ended normally, from the run's `stop_reason`: a loop or turn cap is
 * `max_turn_requests`, a token cap `max_tokens`; anything else (a finished answer, a clarification question
 * waiting for the user's next prompt) is `end_turn`.
 */
export function acpStopReason(stopReason: string | null): StopReason {
  switch (stopReason) {
    case "loop_capped":
    case "turn_capped":
      return "max_turn_requests";
    case "token_capped":
      return "max_tokens";
    default:
      return "end_turn";
  }
}

/**
 * A thread's stored messages as the updates `session/load` replays: the user's messages as `user_message_chunk`,
 * the agent's text as `agent_message_chunk`, its tool calls and their results as finished tool calls.
 */
export function historyUpdates(messages: readonly SerializedMessage[]): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  for (const message of messages) {
    const messageId = message.id ?? null;
    if (message.type === "human") {
      if (message.content !== "") out.push({ sessionUpdate: "user_message_chunk", messageId, content: text(message.content) });
    } else if (message.type === "ai") {
      if (message.content !== "") out.push({ sessionUpdate: "agent_message_chunk", messageId, content: text(message.content) });
      for (const call of message.tool_calls ?? []) {
        out.push({
          sessionUpdate: "tool_call",
          toolCallId: call.id,
          title: toolTitle(call.name, call.args),
          kind: toolKind(call.name),
          status: "in_progress",
          rawInput: call.args,
        });
      }
    } else if (message.type === "tool" && message.tool_call_id) {
      out.push({
        sessionUpdate: "tool_call_update",
        toolCallId: message.tool_call_id,
        status: message.status === "error" ? "failed" : "completed",
        content: [{ type: "content", content: text(message.content) }],
      });
    }
  }
  return out;
}

function text(value: string): ContentBlock {
  return { type: "text", text: value };
}

/** What the prompt's content blocks give the run: one message text, or why the prompt cannot be taken. */
export type PromptText = { ok: true; text: string } | { ok: false; message: string };

/**
 * The run's message from a prompt: text blocks as they are, embedded text resources (an editor's @-mentioned
 * file) and resource links as context after them. Images, audio and binary resources are refused: the agent
 * does not advertise them in `promptCapabilities`.
 */
export function promptText(prompt: readonly ContentBlock[]): PromptText {
  const texts: string[] = [];
  const context: string[] = [];
  for (const block of prompt) {
    switch (block.type) {
      case "text":
        texts.push(block.text);
        break;
      case "resource":
        if (!("text" in block.resource)) {
          return { ok: false, message: `the embedded resource ${block.resource.uri} is binary; only text resources are accepted` };
        }
        context.push(`<resource uri="${block.resource.uri}">\n${block.resource.text}\n</resource>`);
        break;
      case "resource_link":
        context.push(`<resource_link uri="${block.uri}" name="${block.name}" />`);
        break;
      default:
        return { ok: false, message: `${block.type} content is not supported; send text (and text resources)` };
    }
  }
  const message = texts.join("\n").trim();
  if (message === "") return { ok: false, message: "the prompt has no text; send at least one non-empty text block" };
  return { ok: true, text: context.length === 0 ? message : `${message}\n\n${context.join("\n")}` };
}
