import { randomUUID } from "node:crypto";
import type { AgentCard, Message, StreamResponse } from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { type AntlerTool, emitCustomEvent, isAntlerError, type Logger, resolveTraceId, TRACE_METADATA_KEY } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import type { A2AAgentConfig } from "./config.js";
import { A2A_EVENT, INVOKE_A2A_AGENT_TOOL } from "./names.js";
import type { RemoteAgents } from "./remote.js";
import type { A2ARemoteSessionRow, A2ARemoteSessionStore } from "./session-store.js";

const CANCEL_TIMEOUT_MS = 10_000;
const RESULT_MAX_CHARS = 40_000;

const TERMINAL = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const PAUSED = new Set<TaskState>([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);

/** `TASK_STATE_INPUT_REQUIRED` → `input-required`, as A2A's docs and the events name states. */
export function stateName(state: TaskState | undefined): string {
  const name = state === undefined ? "TASK_STATE_UNSPECIFIED" : (TaskState[state] ?? "TASK_STATE_UNSPECIFIED");
  return name
    .replace(/^TASK_STATE_/, "")
    .toLowerCase()
    .replaceAll("_", "-");
}

export interface InvokeToolDeps {
  remote: RemoteAgents;
  sessions: A2ARemoteSessionStore;
  logger: Logger;
  /** What each agent's card says (or why it could not be read), for the description. */
  cards: ReadonlyMap<string, AgentCard | Error>;
}

function describeAgent(agent: A2AAgentConfig, card: AgentCard | Error | undefined): string {
  if (card === undefined || card instanceof Error) {
    const why = card ? ` (its card could not be read: ${firstLine(card.message)})` : "";
    return `- ${agent.name}: ${agent.description ?? "a remote A2A agent"}${why}`;
  }
  const lines = [`- ${agent.name}: ${agent.description ?? card.description ?? card.name}`];
  for (const skill of card.skills.slice(0, 20)) {
    lines.push(`  - skill ${skill.id}${skill.name && skill.name !== skill.id ? ` (${skill.name})` : ""}: ${skill.description}`);
  }
  return lines.join("\n");
}

export function invokeToolDescription(agents: readonly A2AAgentConfig[], cards: ReadonlyMap<string, AgentCard | Error>): string {
  return (
    "Send a message to a remote agent over the Agent2Agent (A2A) protocol and wait for its answer. The remote agent " +
    "sees only the message (and its own earlier exchanges with this conversation), so make the message self-contained. " +
    "Calls to one agent in this conversation continue one remote conversation. If the agent asks for more input, the " +
    "result says what it asks; get the answer (from the user with ask_clarification if you cannot answer it yourself) " +
    "and call this tool again with the same agent: that continues the same remote task. If the agent pauses for a " +
    'person\'s approval of its own tool calls, ask the user (never decide yourself) and send their "approve" or ' +
    '"reject: <reason>" the same way.\n\n' +
    `Agents:\n${agents.map((a) => describeAgent(a, cards.get(a.name))).join("\n")}`
  );
}

export function invokeSchema(names: readonly string[]) {
  return z.object({
    agent: z.enum(names as [string, ...string[]]).describe("Which remote agent to call (see the list in this tool's description)."),
    message: z.string().min(1).describe("The message for the remote agent: a complete request, or the answer to its question."),
    skill: z
      .string()
      .min(1)
      .optional()
      .describe("A skill id from the agent's list, when the agent offers several; sent as the message's metadata.skill."),
  });
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? "";
}

function partsText(message: Message | undefined): string {
  if (!message) return "";
  return message.parts
    .map((p) => (p.content?.$case === "text" ? p.content.value : p.content?.$case === "data" ? JSON.stringify(p.content.value) : ""))
    .join("");
}

/** The approval a remote Antler agent paused on: its status message's `antler.approval` data part. */
function approvalOf(message: Message | undefined): Record<string, unknown> | undefined {
  for (const part of message?.parts ?? []) {
    const value = part.content?.$case === "data" ? (part.content.value as unknown) : undefined;
    if (typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "antler.approval") {
      return value as Record<string, unknown>;
    }
  }
  return undefined;
}

function statusMessageText(message: Message | undefined): string {
  // An approval's data part repeats the text's calls for programs; the model reads the text.
  if (approvalOf(message)) return message?.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("") ?? "";
  return partsText(message);
}

function cut(text: string): string {
  if (text.length <= RESULT_MAX_CHARS) return text;
  const half = Math.floor(RESULT_MAX_CHARS / 2);
  return `${text.slice(0, half)}\n… [${text.length - RESULT_MAX_CHARS} characters cut] …\n${text.slice(-half)}`;
}

/** What one call saw of the remote task. */
export class CallProgress {
  /** The client the call streams through, kept so a failed call can still cancel its task. */
  client: Client | undefined;
  taskId = "";
  contextId = "";
  state: TaskState | undefined;
  statusText = "";
  /** The pending calls when the remote task waits for an approval decision (an Antler agent's pause). */
  approval: Record<string, unknown> | undefined;
  direct = "";
  remoteTraceId: string | undefined;
  readonly texts = new Map<string, { name: string; text: string }>();
  readonly files: string[] = [];

  /** Applies one stream response; returns the custom event it makes, if any. */
  apply(event: StreamResponse): Record<string, unknown> | undefined {
    const payload = event.payload;
    switch (payload?.$case) {
      case "task": {
        const task = payload.value;
        this.taskId = task.id;
        this.contextId = task.contextId;
        this.state = task.status?.state;
        this.statusText = statusMessageText(task.status?.message);
        this.approval = approvalOf(task.status?.message);
        const trace = task.metadata?.trace_id;
        if (typeof trace === "string") this.remoteTraceId = trace;
        for (const artifact of task.artifacts) this.artifact(artifact, false);
        return { type: A2A_EVENT.started, task_id: task.id, context_id: task.contextId, state: stateName(this.state) };
      }
      case "statusUpdate": {
        const update = payload.value;
        this.taskId ||= update.taskId;
        this.contextId ||= update.contextId;
        this.state = update.status?.state;
        this.statusText = statusMessageText(update.status?.message);
        this.approval = approvalOf(update.status?.message);
        const trace = update.metadata?.trace_id;
        if (typeof trace === "string") this.remoteTraceId = trace;
        return {
          type: A2A_EVENT.status,
          task_id: update.taskId,
          state: stateName(this.state),
          ...(this.statusText ? { message: this.statusText } : {}),
          ...(update.metadata ? { remote: update.metadata } : {}),
        };
      }
      case "artifactUpdate": {
        const update = payload.value;
        if (!update.artifact) return undefined;
        const delta = this.artifact(update.artifact, update.append);
        return {
          type: A2A_EVENT.artifact,
          task_id: update.taskId,
          artifact_id: update.artifact.artifactId,
          name: update.artifact.name,
          append: update.append,
          ...(delta ? { text: delta } : {}),
        };
      }
      case "message": {
        this.direct += partsText(payload.value);
        this.contextId ||= payload.value.contextId;
        this.state = TaskState.TASK_STATE_COMPLETED;
        return { type: A2A_EVENT.status, state: "completed", message: partsText(payload.value) };
      }
      default:
        return undefined;
    }
  }

  private artifact(
    artifact: NonNullable<StreamResponse["payload"] & { $case: "artifactUpdate" }>["value"]["artifact"],
    append: boolean,
  ): string {
    if (!artifact) return "";
    let delta = "";
    for (const part of artifact.parts) {
      if (part.content?.$case === "text") delta += part.content.value;
      else if (part.content?.$case === "data") delta += JSON.stringify(part.content.value);
      else if (part.content?.$case === "url" && !this.files.includes(part.content.value)) this.files.push(part.content.value);
    }
    const existing = this.texts.get(artifact.artifactId);
    if (existing && append) existing.text += delta;
    else this.texts.set(artifact.artifactId, { name: artifact.name, text: delta });
    return delta;
  }

  get answer(): string {
    const artifacts = [...this.texts.values()].map((a) => a.text).filter((t) => t !== "");
    return [this.direct, ...artifacts].filter((t) => t !== "").join("\n\n");
  }
}

/**
 * `invoke_a2a_agent(agent, message, skill?)`: one message to a configured remote A2A agent over its streaming
 * transport. Progress streams as `a2a_task_*` custom events; the result is the agent's answer, or its question when
 * the task waits for input (the next call to that agent on this thread answers that same task), or a clear error.
 * The run's cancel (or the agent's timeout) cancels the remote task. Nothing here throws to the run.
 */
export function createInvokeA2AAgentTool(deps: InvokeToolDeps): AntlerTool {
  const names = deps.remote.agents.map((a) => a.name);
  return defineTool({
    name: INVOKE_A2A_AGENT_TOOL,
    description: invokeToolDescription(deps.remote.agents, deps.cards),
    schema: invokeSchema(names),
    async run(args, runtime: ToolRuntime) {
      const toolCallId = runtime.toolCallId ?? "";
      const reply = (content: string, status: "success" | "error", kwargs: Record<string, unknown> = {}) =>
        new ToolMessage({ content, name: INVOKE_A2A_AGENT_TOOL, tool_call_id: toolCallId, status, additional_kwargs: kwargs });
      const agent = deps.remote.get(args.agent);
      if (!agent) {
        return reply(`Error: unknown agent "${args.agent}". Configured agents: ${names.join(", ")}. Call again with one of them.`, "error");
      }
      const ctx = (runtime.context !== null && typeof runtime.context === "object" ? runtime.context : {}) as Record<string, unknown>;
      const threadId = typeof ctx.thread_id === "string" ? ctx.thread_id : (runtime.configurable?.thread_id as string | undefined);
      const call: RemoteCall = {
        deps,
        agent,
        threadId,
        traceId: resolveTraceId(ctx[TRACE_METADATA_KEY]),
        logger: deps.logger.child({ a2a_agent: agent.name }),
        emit: (payload) =>
          emitCustomEvent({ agent: agent.name, tool_call_id: toolCallId, trace_id: call.traceId, ...payload }, runtime).catch(
            () => undefined,
          ),
        session: threadId ? await deps.sessions.get(threadId, agent.name).catch(() => undefined) : undefined,
        progress: new CallProgress(),
      };
      const timeout = AbortSignal.timeout(agent.timeout_seconds * 1000);
      try {
        await streamCall(call, args, runtime.signal ? AbortSignal.any([runtime.signal, timeout]) : timeout);
      } catch (error) {
        const cancelled = runtime.signal?.aborted === true;
        const failure = await failedCall(call, error, cancelled ? "cancelled" : timeout.aborted ? "timeout" : "error");
        if (cancelled) throw error;
        return reply(failure, "error", { a2a_agent: agent.name, a2a_task_id: call.progress.taskId || null, a2a_state: "failed" });
      }
      const { progress } = call;
      await rememberSession(call);
      await call.emit({ type: A2A_EVENT.ended, task_id: progress.taskId || null, state: stateName(progress.state) });
      call.logger.info(`remote A2A agent ${agent.name}: task ${progress.taskId || "(message)"} ended ${stateName(progress.state)}`);
      const outcome = outcomeText(agent.name, progress);
      return reply(outcome.content, outcome.status, {
        a2a_agent: agent.name,
        a2a_task_id: progress.taskId || null,
        a2a_context_id: progress.contextId || null,
        a2a_state: stateName(progress.state),
        ...(progress.remoteTraceId ? { a2a_remote_trace_id: progress.remoteTraceId } : {}),
        ...outcome.kwargs,
      });
    },
  });
}

/** One tool call to one remote agent: what it knows and what it saw. */
interface RemoteCall {
  deps: InvokeToolDeps;
  agent: A2AAgentConfig;
  threadId: string | undefined;
  traceId: string;
  logger: Logger;
  emit(payload: Record<string, unknown>): Promise<unknown>;
  /** What this thread has going with the agent: the context to continue, the task waiting for an answer. */
  session: A2ARemoteSessionRow | undefined;
  progress: CallProgress;
}

/**
 * Sends the message (answering the waiting task, if any, in the session's context) and follows the task's stream
 * to its final or paused state, emitting each update. The client is kept on `progress`, so a failure can still
 * cancel the task.
 */
async function streamCall(call: RemoteCall, args: { message: string; skill?: string | undefined }, signal: AbortSignal): Promise<void> {
  const { agent, session, progress } = call;
  const message: Message = {
    messageId: randomUUID(),
    contextId: session?.context_id ?? "",
    taskId: session?.pending_task_id ?? "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: args.message }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  call.logger.info(`calling remote A2A agent ${agent.name}${message.taskId ? ` (answering task ${message.taskId})` : ""}`);
  const { client } = await call.deps.remote.client(agent, call.traceId, signal);
  progress.client = client;
  const stream = client.sendMessageStream(
    { tenant: "", message, configuration: undefined, metadata: args.skill ? { skill: args.skill } : undefined },
    { signal },
  );
  for await (const event of stream) {
    const custom = progress.apply(event);
    if (custom) await call.emit(custom);
    // Some servers keep the stream open a moment after the final status; the task's outcome is known.
    const settled = progress.state !== undefined && (TERMINAL.has(progress.state) || PAUSED.has(progress.state));
    if (settled && event.payload?.$case === "statusUpdate") break;
  }
}

/**
 * A call that did not get to an outcome: cancels the remote task when the run was cancelled or the call timed
 * out, drops a waiting task the remote refused to continue, logs, and says what happened for the model.
 */
async function failedCall(call: RemoteCall, error: unknown, why: "cancelled" | "timeout" | "error"): Promise<string> {
  const { agent, progress, session } = call;
  const client = progress.client;
  const live = progress.taskId !== "" && !(progress.state !== undefined && TERMINAL.has(progress.state));
  if (why !== "error" && client && live) await cancelRemote(client, progress.taskId, call.logger);
  const continuing = Boolean(session?.pending_task_id);
  if (continuing && why === "error") await forgetPending(call.deps.sessions, call.threadId, agent.name, session?.context_id ?? "");
  const reason =
    why === "cancelled"
      ? "the run was cancelled"
      : why === "timeout"
        ? `no answer within ${agent.timeout_seconds} s (timeout_seconds)`
        : describeError(error);
  call.logger.warn(`remote A2A agent ${agent.name} call failed: ${reason}`);
  if (!isAntlerError(error)) call.deps.remote.forget(agent.name);
  await call.emit({
    type: A2A_EVENT.ended,
    task_id: progress.taskId || null,
    state: why === "cancelled" ? "canceled" : "failed",
    error: reason,
  });
  const cancelledNote = why === "timeout" && progress.taskId ? ` The remote task ${progress.taskId} was cancelled.` : "";
  const retry = continuing
    ? " Its earlier question is dropped; call again to start a new task."
    : " Tell the user, or try again later if the cause looks temporary.";
  return `Error: the remote agent "${agent.name}" could not complete the call: ${reason}.${cancelledNote}${retry}`;
}

/** Stores the remote context for the thread, and the task now waiting for an answer (input-required) if any. */
async function rememberSession(call: RemoteCall): Promise<void> {
  const { progress, session, threadId, agent } = call;
  if (!threadId || !(progress.contextId || session)) return;
  // Only a question is answered by the next call; an auth-required task needs the operator, not a message.
  const pending = progress.state === TaskState.TASK_STATE_INPUT_REQUIRED ? progress.taskId : null;
  await call.deps.sessions
    .put({
      thread_id: threadId,
      agent: agent.name,
      context_id: progress.contextId || session?.context_id || "",
      pending_task_id: pending,
      last_task_id: progress.taskId || null,
    })
    .catch((error: unknown) => call.logger.warn(`could not store the remote session: ${describeError(error)}`));
}

/** The tool result for how the remote task ended: its answer, its question, or why it did not finish. */
export function outcomeText(
  agent: string,
  progress: CallProgress,
): { content: string; status: "success" | "error"; kwargs?: Record<string, unknown> } {
  const { state, taskId, statusText } = progress;
  const files = progress.files.length
    ? `\n\nFiles (fetch them with the agent's key):\n${progress.files.map((f) => `- ${f}`).join("\n")}`
    : "";
  switch (state) {
    case TaskState.TASK_STATE_COMPLETED:
      return { content: cut(progress.answer || "(the agent finished without a text answer)") + files, status: "success" };
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      if (progress.approval) {
        return {
          content:
            `The remote agent "${agent}" paused for a person's approval before it goes on (task ${taskId} is waiting):\n\n` +
            `${statusText}\n\n` +
            `Do not decide this yourself: ask the user with ask_clarification whether to approve, showing them the calls above. ` +
            `Then call ${INVOKE_A2A_AGENT_TOOL} again with agent "${agent}" and the message "approve", or "reject: <the user's reason>": ` +
            "that answers the same remote task.",
          status: "success",
          kwargs: { a2a_approval: progress.approval },
        };
      }
      return {
        content:
          `The remote agent "${agent}" needs more input before it can finish (task ${taskId} is waiting). It asks:\n\n` +
          `${statusText || progress.answer || "(no question text)"}\n\n` +
          `Answer it yourself if you know the answer; otherwise ask the user with ask_clarification. Then call ${INVOKE_A2A_AGENT_TOOL} ` +
          `again with agent "${agent}" and the answer as the message: that continues the same remote task.`,
        status: "success",
        kwargs: { a2a_question: statusText || progress.answer },
      };
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return {
        content: `Error: the remote agent "${agent}" needs authorization before it can go on (task ${taskId}): ${statusText || "no details"}. Tell the user; an operator has to set the agent's credentials.`,
        status: "error",
      };
    case TaskState.TASK_STATE_FAILED:
    case TaskState.TASK_STATE_REJECTED:
      return {
        content: `Error: the remote agent "${agent}" ${state === TaskState.TASK_STATE_REJECTED ? "rejected" : "failed"} the task ${taskId}: ${statusText || "no reason given"}.`,
        status: "error",
      };
    case TaskState.TASK_STATE_CANCELED:
      return { content: `Error: the remote task ${taskId} of agent "${agent}" was cancelled on the remote side.`, status: "error" };
    default:
      return {
        content:
          `Error: the remote agent "${agent}" ended the stream with task ${taskId || "(none)"} still ${stateName(state)}; its answer is not available.` +
          (progress.answer ? `\n\nPartial answer:\n${cut(progress.answer)}` : ""),
        status: "error",
      };
  }
}

async function cancelRemote(client: Client, taskId: string, logger: Logger): Promise<void> {
  try {
    const task = await client.cancelTask(
      { tenant: "", id: taskId, metadata: undefined },
      { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) },
    );
    logger.info(`cancelled remote task ${taskId}: now ${stateName(task.status?.state)}`);
  } catch (error) {
    logger.warn(`could not cancel remote task ${taskId}: ${describeError(error)}`);
  }
}

async function forgetPending(sessions: A2ARemoteSessionStore, threadId: string | undefined, agent: string, contextId: string) {
  if (!threadId || !contextId) return;
  await sessions
    .put({ thread_id: threadId, agent, context_id: contextId, pending_task_id: null, last_task_id: null })
    .catch(() => undefined);
}

/** One line the model can act on: the A2A error's name, or the network failure under the fetch error. */
export function describeError(error: unknown): string {
  if (isAntlerError(error)) return error.message.replace(/\n\s*hint: /, ". ");
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const causeText = cause instanceof Error ? `: ${firstLine(cause.message)}` : "";
    const name = error.name && error.name !== "Error" ? `${error.name}: ` : "";
    return `${name}${firstLine(error.message)}${causeText}`;
  }
  return String(error);
}
