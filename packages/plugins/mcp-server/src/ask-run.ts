import { randomUUID } from "node:crypto";
import { ErrorCodes, isAntlerError, type Logger } from "@antler/kernel";
import { type ProtocolEvent, RunEventMapper } from "@antler/plugin-protocols/run-events";
import type { AntlerClient, SerializedMessage, StreamEvent } from "@antler/plugin-runtime";
import type { CallToolResult, ContentBlock, ProgressToken } from "@modelcontextprotocol/sdk/types.js";
import { type AgentTool, type AskOutput, antlerToolError, toolError } from "./agent-tools.js";
import { artifactLink } from "./artifacts.js";
import type { McpCaller, McpRequestExtra } from "./caller.js";

const THREAD_NOT_FOUND = "ANTLER_ERR_THREAD_NOT_FOUND";
const RUN_CANCELLED = "ANTLER_ERR_RUN_CANCELLED";
const ASK_CLARIFICATION = "ask_clarification";
/** A progress message carries at most this much of the answer so far (its tail): each one costs the same. */
const PROGRESS_TEXT_CHARS = 400;

export interface AskRequest {
  tool: AgentTool;
  message: string;
  threadId: string | undefined;
  caller: McpCaller;
  traceId: string;
}

/**
 * One `ask_<agent>` call: one Antler run on the caller's thread (a new one without `thread_id`), its events sent
 * as `notifications/progress` when the caller asked for progress, cancelled when the request is (its signal).
 */
export async function runAsk(client: AntlerClient, request: AskRequest, extra: McpRequestExtra, logger: Logger): Promise<CallToolResult> {
  const { caller, tool } = request;
  let threadId: string;
  if (request.threadId !== undefined) {
    try {
      threadId = (await client.getThreadRecord(request.threadId, { userId: caller.userId })).thread_id;
    } catch (error) {
      // Another user's thread reads exactly like a missing one: a caller cannot learn which ids exist.
      if (isAntlerError(error, THREAD_NOT_FOUND) || isAntlerError(error, ErrorCodes.PATH_UNSAFE)) {
        return toolError(
          `thread_id ${JSON.stringify(request.threadId)} is not a conversation of this caller.`,
          "Pass a thread_id an earlier call returned to you, or omit thread_id to start a new conversation.",
        );
      }
      return antlerToolError(error);
    }
  } else {
    threadId = (await client.createThread({ userId: caller.userId, metadata: { source: "mcp" } })).thread_id;
  }
  const runId = randomUUID();
  const progress = progressSender(extra);
  const mapper = new RunEventMapper({ runId, threadId, traceId: request.traceId });
  progress.send(mapper.start());
  logger.info({ run_id: runId, thread_id: threadId, trace_id: request.traceId, tool: tool.name, user_id: caller.userId }, "MCP agent call");
  let last: { messages: SerializedMessage[]; artifacts: string[] } | undefined;
  let before: Set<string> | undefined;
  let end: Extract<StreamEvent, { type: "end" }>["data"] | undefined;
  try {
    for await (const event of client.stream(request.message, {
      threadId,
      runId,
      userId: caller.userId,
      ...(caller.role !== undefined ? { userRole: caller.role } : {}),
      traceId: request.traceId,
      ...(tool.agent !== undefined ? { agent: tool.agent } : {}),
      // notifications/cancelled (or the session closing) aborts it: the run ends cancelled.
      signal: extra.signal,
    })) {
      if (event.type === "values") {
        before ??= new Set(event.data.artifacts);
        last = event.data;
      }
      if (event.type === "end") end = event.data;
      progress.send(mapper.map(event));
    }
  } catch (error) {
    if (extra.signal.aborted || isAntlerError(error, RUN_CANCELLED)) {
      // Nobody reads the answer to a cancelled request; the SDK drops it.
      return toolError(`${RUN_CANCELLED}: the run was cancelled`);
    }
    return antlerToolError(error);
  }
  const files = (last?.artifacts ?? []).filter((path) => !before?.has(path));
  const question = clarificationOf(last?.messages.at(-1));
  const output: AskOutput = {
    answer: question ?? lastAiText(last?.messages ?? []),
    status: question === undefined ? "completed" : "input_required",
    thread_id: threadId,
    run_id: runId,
    trace_id: end?.trace_id ?? request.traceId,
    files: files.map((path) => {
      const link = artifactLink(threadId, path);
      return { uri: link.uri, name: link.name, path };
    }),
  };
  const note =
    output.status === "input_required"
      ? `The agent asks a question. Answer it with thread_id "${threadId}".`
      : `thread_id: ${threadId} (pass it as thread_id to continue this conversation)`;
  const content: ContentBlock[] = [
    { type: "text", text: output.answer },
    { type: "text", text: note },
  ];
  for (const path of files) content.push(artifactLink(threadId, path));
  return { content, structuredContent: output as unknown as Record<string, unknown> };
}

/** The question of a run that ended on `ask_clarification` (the thread waits for the answer), else undefined. */
function clarificationOf(message: SerializedMessage | undefined): string | undefined {
  if (message?.type !== "tool" || message.name !== ASK_CLARIFICATION || message.status === "error") return undefined;
  return message.content;
}

function lastAiText(messages: readonly SerializedMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.type === "ai" && m.content !== "") return m.content;
    if (m?.type === "human") break;
  }
  return "";
}

/**
 * Sends the run's protocol events as `notifications/progress` (only when the request carried a progress token):
 * the run's start, each tool call and result, custom events, and the answer's text so far (its tail).
 */
function progressSender(extra: McpRequestExtra) {
  const token: ProgressToken | undefined = extra._meta?.progressToken;
  let count = 0;
  const texts = new Map<string, string>();
  const notify = (message: string) => {
    if (token === undefined || extra.signal.aborted) return;
    count += 1;
    extra
      .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: count, message } })
      .catch(() => undefined);
  };
  const describe = (event: ProtocolEvent): string | undefined => {
    switch (event.kind) {
      case "run-started":
        return `run ${event.runId} started on thread ${event.threadId}`;
      case "tool-call":
        return `calling tool ${event.toolName}`;
      case "tool-result":
        return `tool ${event.toolName} ${event.isError ? "failed" : "finished"}`;
      case "custom":
        return `event ${event.name}`;
      case "text-delta": {
        const text = (texts.get(event.messageId) ?? "") + event.delta;
        const tail = text.length > PROGRESS_TEXT_CHARS ? `…${text.slice(-PROGRESS_TEXT_CHARS)}` : text;
        texts.set(event.messageId, tail);
        return tail;
      }
      case "text-end":
        texts.delete(event.messageId);
        return undefined;
      case "run-finished":
        return "run finished";
      default:
        return undefined;
    }
  };
  return {
    send(events: ProtocolEvent[]) {
      if (token === undefined) return;
      for (const event of events) {
        const message = describe(event);
        if (message !== undefined) notify(message);
      }
    },
  };
}
