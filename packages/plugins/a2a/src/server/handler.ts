import { randomUUID } from "node:crypto";
import type {
  AgentCard,
  Artifact,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import {
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import { isAntlerError, type Logger } from "@antler/kernel";
import { RunEventMapper } from "@antler/plugin-protocols/run-events";
import type { RunRecord, SerializedMessage, StreamEvent } from "@antler/plugin-runtime";
import type { GatewayRequest } from "@antler/plugin-runtime/routes";
import { approvalDecision } from "./decision.js";
import { A2ATaskEncoder, ASK_CLARIFICATION, agentMessage, approvalMessage, filesArtifact, status, textPart } from "./encoder.js";
import { configOfRow, newPushToken, PushFilter, type PushNotifier } from "./push.js";
import type { A2ATaskRow, A2ATaskStore } from "./task-store.js";

/** Where the route puts the gateway request in the SDK's call context, for the handler to act as the caller. */
export const GATEWAY_REQUEST_KEY = "antler.gateway-request";
/** The skill id of the distribution's lead agent; a custom agent's skill id is its name. */
export const LEAD_SKILL_ID = "lead";

const THREAD_NOT_FOUND = "ANTLER_ERR_THREAD_NOT_FOUND";
const RUN_NOT_FOUND = "ANTLER_ERR_RUN_NOT_FOUND";
const RESUME_INVALID = "ANTLER_ERR_RESUME_INVALID";
const RUN_NOT_PAUSED = "ANTLER_ERR_RUN_NOT_PAUSED";

function gatewayRequest(context: ServerCallContext): GatewayRequest {
  const req = context.state.get(GATEWAY_REQUEST_KEY) as GatewayRequest | undefined;
  if (!req) throw new Error("the A2A handler runs only behind the gateway route, which puts the request in the call context");
  return req;
}

/** The URL of one of the thread's files under the gateway's artifact route. */
export function artifactUrl(origin: string, threadId: string, path: string): string {
  const rest = path.replace(/^\/+/, "").split("/").map(encodeURIComponent).join("/");
  return `${origin}/api/threads/${encodeURIComponent(threadId)}/artifacts/${rest}`;
}

interface LaunchedTask {
  row: A2ATaskRow;
  userMessage: Message;
  items: AsyncGenerator<StreamEvent>;
  origin: string;
}

export interface AntlerA2AHandlerOptions {
  store: A2ATaskStore;
  card(origin: string, userId?: string): Promise<AgentCard>;
  /** The public origin the card and file URLs name; default: the request's own origin. */
  publicUrl: string | undefined;
  /** Each task's start and cancel, under the request's trace id. */
  logger?: Logger | undefined;
  /** Push notifications; without it the config calls answer PushNotificationNotSupportedError. */
  push?: PushNotifier | undefined;
}

/**
 * The A2A operations over Antler: a task is a run on a thread (contextId = thread id) of the caller's user, its
 * mapping stored in SQL, its state and artifacts read from the run record and the thread. Nothing lives in this
 * process's memory, so `GetTask`, `CancelTask` and `SubscribeToTask` work from any instance.
 */
export class AntlerA2AHandler implements A2ARequestHandler {
  constructor(private readonly options: AntlerA2AHandlerOptions) {}

  private origin(req: GatewayRequest): string {
    return this.options.publicUrl ?? new URL(req.request.url).origin;
  }

  getAgentCard(): Promise<AgentCard> {
    return this.options.card(this.options.publicUrl ?? "http://localhost");
  }

  getAuthenticatedExtendedAgentCard(_params: GetExtendedAgentCardRequest, _context: ServerCallContext): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError();
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const req = gatewayRequest(context);
    const launched = await this.launch(params, req);
    const { stream, encoder } = this.live(launched);
    if (params.configuration?.returnImmediately) {
      void drain(stream);
      return { ...encoder.task, status: status(TaskState.TASK_STATE_WORKING) };
    }
    for await (const _ of stream) {
      // The encoder keeps the task the events add up to.
    }
    return encoder.task;
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const req = gatewayRequest(context);
    const launched = await this.launch(params, req);
    const { stream } = this.live(launched);
    let done = false;
    try {
      for await (const item of stream) yield item;
      done = true;
    } finally {
      // The caller went away: the task goes on (it can resubscribe), so its run is pulled to the end.
      if (!done) void drain(stream);
    }
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    const req = gatewayRequest(context);
    const row = await this.requireTask(req, params.id);
    const record = await this.requireRun(req, row);
    return this.snapshot(req, row, record);
  }

  listTasks(_params: ListTasksRequest, _context: ServerCallContext): Promise<ListTasksResponse> {
    throw new UnsupportedOperationError("ListTasks is not supported yet by this server");
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const req = gatewayRequest(context);
    const row = await this.requireTask(req, params.id);
    const record = await this.requireRun(req, row);
    if (record.status !== "running" && record.status !== "pending" && record.status !== "paused") {
      throw new TaskNotCancelableError(`task ${row.task_id} is not running (its run ended: ${record.status})`);
    }
    await req.client.cancelRun(row.context_id, row.run_id, { userId: req.userId });
    this.options.logger?.info(`A2A task ${row.task_id}: cancelled (run ${row.run_id})`);
    return this.snapshot(req, row, await this.requireRun(req, row));
  }

  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const req = gatewayRequest(context);
    const row = await this.requireTask(req, params.id);
    const record = await this.requireRun(req, row);
    if (record.status !== "running" && record.status !== "pending") {
      throw new UnsupportedOperationError(`task ${row.task_id} is no longer running; read it with GetTask`);
    }
    const origin = this.origin(req);
    const encoder = new A2ATaskEncoder(
      { taskId: row.task_id, contextId: row.context_id, fileUrl: (p) => artifactUrl(origin, row.context_id, p) },
      [],
    );
    // The snapshot carries no artifacts: the replay from the run's first event below rebuilds them whole.
    yield { payload: { $case: "task", value: { ...encoder.task, status: status(TaskState.TASK_STATE_WORKING) } } };
    const followed = await req.followRun(row.context_id, row.run_id);
    if (followed === null) {
      yield* this.finalOf(req, row);
      return;
    }
    const mapper = new RunEventMapper({ runId: row.run_id, threadId: row.context_id, traceId: row.trace_id });
    for await (const event of followed) {
      if (event.event === "metadata") continue;
      if (event.event === "error") {
        const data = (event.data ?? {}) as { code?: string; message?: string };
        for (const p of mapper.fail(data.code ?? "ANTLER_ERR_INTERNAL", data.message ?? "the run failed")) yield* encoder.encode(p);
        return;
      }
      for (const p of mapper.map({ type: event.event, data: event.data } as StreamEvent)) yield* encoder.encode(p);
    }
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const push = this.requirePush();
    const req = gatewayRequest(context);
    const row = await this.requireTask(req, params.taskId);
    const existing = await push.store.list(row.task_id);
    const id = params.id.trim() || randomUUID();
    if (!existing.some((c) => c.config_id === id) && existing.length >= push.options.maxConfigsPerTask) {
      throw new RequestMalformedError(
        `task ${row.task_id} has ${existing.length} push notification configs, the most allowed; delete one first`,
      );
    }
    await this.savePushConfig(push, row, { ...params, id });
    const saved = (await push.store.list(row.task_id)).find((c) => c.config_id === id);
    if (!saved) throw new TaskNotFoundError(`no task ${row.task_id}`);
    return { ...configOfRow(saved), tenant: params.tenant };
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const push = this.requirePush();
    const row = await this.requireTask(gatewayRequest(context), params.taskId);
    const config = (await push.store.list(row.task_id)).find((c) => c.config_id === params.id);
    if (!config) throw new TaskNotFoundError(`no push notification config ${params.id} for task ${row.task_id}`);
    return { ...configOfRow(config), tenant: params.tenant };
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const push = this.requirePush();
    const row = await this.requireTask(gatewayRequest(context), params.taskId);
    const configs = (await push.store.list(row.task_id)).map((c) => ({ ...configOfRow(c), tenant: params.tenant }));
    return { configs, nextPageToken: "" };
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    const push = this.requirePush();
    const row = await this.requireTask(gatewayRequest(context), params.taskId);
    if ((await push.store.delete(row.task_id, params.id)) === 0) {
      throw new TaskNotFoundError(`no push notification config ${params.id} for task ${row.task_id}`);
    }
  }

  // ------------------------------------------------------------------ internals

  private requirePush(): PushNotifier {
    if (!this.options.push) throw new PushNotificationNotSupportedError("push notifications are off on this server (push.enabled)");
    return this.options.push;
  }

  /** Screens the webhook URL (SSRF guard), then stores the config; a client without a token gets one made. */
  private async savePushConfig(push: PushNotifier, row: A2ATaskRow, config: TaskPushNotificationConfig): Promise<void> {
    await push.screen(config.url);
    await push.store.put({
      config_id: config.id.trim() || randomUUID(),
      task_id: row.task_id,
      user_id: row.user_id,
      url: config.url,
      token: config.token || newPushToken(),
      auth_scheme: config.authentication?.scheme || null,
      auth_credentials: config.authentication?.credentials || null,
    });
  }

  private async requireTask(req: GatewayRequest, taskId: string): Promise<A2ATaskRow> {
    if (!taskId.trim()) throw new RequestMalformedError("the task id is empty");
    const row = await this.options.store.get(req.userId, taskId);
    if (!row) throw new TaskNotFoundError(`no task ${taskId}`);
    return row;
  }

  private async requireRun(req: GatewayRequest, row: A2ATaskRow): Promise<RunRecord> {
    try {
      return await req.client.getRun(row.context_id, row.run_id, { userId: req.userId });
    } catch (error) {
      if (isAntlerError(error, RUN_NOT_FOUND) || isAntlerError(error, THREAD_NOT_FOUND))
        throw new TaskNotFoundError(`no task ${row.task_id}`);
      throw error;
    }
  }

  /** The task as its run record and thread show it now. */
  private async snapshot(req: GatewayRequest, row: A2ATaskRow, record: RunRecord): Promise<Task> {
    const thread = await req.client.getThread(row.context_id, { userId: req.userId, messages: { limit: 50 } });
    const turn = lastTurn(thread.messages);
    const question = pendingQuestion(turn);
    const ids = { taskId: row.task_id, contextId: row.context_id };
    const taskStatus = (() => {
      switch (record.status) {
        case "pending":
          return status(TaskState.TASK_STATE_SUBMITTED);
        case "running":
          return status(TaskState.TASK_STATE_WORKING);
        case "cancelled":
          return status(TaskState.TASK_STATE_CANCELED);
        case "error":
          return status(TaskState.TASK_STATE_FAILED, agentMessage(ids.taskId, ids.contextId, record.error ?? "the run failed"));
        case "paused":
          return status(
            TaskState.TASK_STATE_INPUT_REQUIRED,
            approvalMessage(ids.taskId, ids.contextId, record.interrupt?.id ?? "", record.interrupt?.value ?? {}),
          );
        default:
          return question !== undefined
            ? status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(ids.taskId, ids.contextId, question))
            : status(TaskState.TASK_STATE_COMPLETED);
      }
    })();
    const done = record.status === "success";
    const origin = this.origin(req);
    const artifacts: Artifact[] = done
      ? turn
          .filter((m) => m.type === "ai" && m.content !== "")
          .map((m) => ({
            artifactId: `text-${m.id ?? randomUUID()}`,
            name: "answer",
            description: "",
            parts: [textPart(m.content)],
            metadata: undefined,
            extensions: [],
          }))
      : [];
    if (done && thread.artifacts.length > 0) artifacts.push(filesArtifact(thread.artifacts, (p) => artifactUrl(origin, row.context_id, p)));
    return {
      id: row.task_id,
      contextId: row.context_id,
      status: taskStatus,
      artifacts,
      history: [],
      metadata: { antler_run_id: row.run_id, trace_id: record.trace_id, ...(row.agent ? { skill: row.agent } : {}) },
    };
  }

  private async *finalOf(req: GatewayRequest, row: A2ATaskRow): AsyncGenerator<StreamResponse> {
    const task = await this.snapshot(req, row, await this.requireRun(req, row));
    yield {
      payload: {
        $case: "statusUpdate",
        value: { taskId: row.task_id, contextId: row.context_id, status: task.status, metadata: undefined },
      },
    };
  }

  /** Checks the message, finds or opens the task's thread, and starts the run; a refusal throws before any event. */
  private async launch(params: SendMessageRequest, req: GatewayRequest): Promise<LaunchedTask> {
    const message = params.message;
    if (!message) throw new RequestMalformedError("message is required");
    const text = messageText(message);
    const requestedSkill = skillOf(params, message);
    let existing: A2ATaskRow | undefined;
    let pausedRun = false;
    if (message.taskId) {
      existing = await this.requireTask(req, message.taskId);
      if (message.contextId && message.contextId !== existing.context_id) {
        throw new RequestMalformedError(`message.contextId ${message.contextId} is not the context of task ${existing.task_id}`);
      }
      const record = await this.requireRun(req, existing);
      const task = await this.snapshot(req, existing, record);
      if (task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
        throw new UnsupportedOperationError(
          `task ${existing.task_id} does not wait for input (it is ${TaskState[task.status?.state ?? 0]}); send a new message without taskId`,
        );
      }
      pausedRun = record.status === "paused";
    }
    const pushConfig = params.configuration?.taskPushNotificationConfig;
    if (pushConfig?.url) await this.requirePush().screen(pushConfig.url);
    if (existing && pausedRun) {
      const launched = await this.resumePaused(req, existing, message);
      if (pushConfig?.url && this.options.push)
        await this.savePushConfig(this.options.push, existing, { ...pushConfig, taskId: existing.task_id });
      return launched;
    }
    const agent = existing ? existing.agent : await this.resolveSkill(req, requestedSkill);
    const threadId = existing?.context_id ?? (message.contextId || randomUUID());
    if (!existing) await ensureThread(req, threadId);
    const runId = randomUUID();
    let admitted: () => void = () => {};
    const admission = new Promise<void>((resolve) => {
      admitted = resolve;
    });
    // Not the request's signal: a dropped connection leaves the task running, to be resubscribed.
    const events = req.client.stream(text, {
      threadId,
      runId,
      userId: req.userId,
      ...(req.principal.role !== undefined ? { userRole: req.principal.role } : {}),
      traceId: req.traceId,
      ...(agent ? { agent } : {}),
      onAdmitted: () => admitted(),
    });
    const firstStep = events.next();
    firstStep.catch(() => undefined);
    await Promise.race([admission, firstStep]);
    const items = (async function* (): AsyncGenerator<StreamEvent> {
      const step = await firstStep;
      if (step.done) return;
      yield step.value;
      yield* events;
    })();
    const taskId = existing?.task_id ?? randomUUID();
    if (existing) await this.options.store.setRun(req.userId, taskId, runId, req.traceId);
    else
      await this.options.store.insert({
        task_id: taskId,
        user_id: req.userId,
        context_id: threadId,
        run_id: runId,
        agent: agent ?? null,
        trace_id: req.traceId,
      });
    this.options.logger?.info(
      `A2A task ${taskId}: ${existing ? "follow-up" : "started"}, run ${runId} on context ${threadId} (skill ${agent ?? LEAD_SKILL_ID})`,
    );
    const row: A2ATaskRow = {
      task_id: taskId,
      user_id: req.userId,
      context_id: threadId,
      run_id: runId,
      agent: agent ?? null,
      trace_id: req.traceId,
      created_at: "",
      updated_at: "",
    };
    if (pushConfig?.url && this.options.push) await this.savePushConfig(this.options.push, row, { ...pushConfig, taskId });
    return { row, userMessage: { ...message, taskId, contextId: threadId }, items, origin: this.origin(req) };
  }

  /**
   * A message on a task whose run paused for approval: its decision continues the same run (same run id and trace
   * id) through the runtime's resume. A message that is no decision, or one the runtime refuses (edited arguments
   * the tool's schema rejects, an unknown tool_call_id), is invalid params and the task stays `input-required`.
   */
  private async resumePaused(req: GatewayRequest, row: A2ATaskRow, message: Message): Promise<LaunchedTask> {
    const decision = approvalDecision(message);
    let admitted: () => void = () => {};
    const admission = new Promise<void>((resolve) => {
      admitted = resolve;
    });
    const events = req.client.resumeStream(row.context_id, row.run_id, decision, { userId: req.userId, onAdmitted: () => admitted() });
    const firstStep = events.next();
    firstStep.catch(() => undefined);
    try {
      await Promise.race([admission, firstStep]);
    } catch (error) {
      if (isAntlerError(error, RESUME_INVALID)) {
        throw new RequestMalformedError(`the decision does not fit the pending calls: ${error.message.replace(/\n\s*hint: /, ". ")}`);
      }
      if (isAntlerError(error, RUN_NOT_PAUSED)) {
        throw new UnsupportedOperationError(`task ${row.task_id} no longer waits for a decision: ${error.message}`);
      }
      throw error;
    }
    const items = (async function* (): AsyncGenerator<StreamEvent> {
      const step = await firstStep;
      if (step.done) return;
      yield step.value;
      yield* events;
    })();
    this.options.logger?.info(
      `A2A task ${row.task_id}: approval decision ${String(decision.decision ?? "per call")}, run ${row.run_id} resumed on context ${row.context_id}`,
    );
    return { row, userMessage: { ...message, taskId: row.task_id, contextId: row.context_id }, items, origin: this.origin(req) };
  }

  private async resolveSkill(req: GatewayRequest, skill: string | undefined): Promise<string | undefined> {
    if (skill === undefined || skill === LEAD_SKILL_ID) return undefined;
    const { agents } = await req.client.listAgents({ userId: req.userId });
    if (!agents.some((a) => a.name === skill)) {
      throw new RequestMalformedError(`unknown skill "${skill}": the agent card lists the skills (the lead agent is "${LEAD_SKILL_ID}")`);
    }
    return skill;
  }

  /** The run's events as A2A stream responses: the task first, then its updates, the final status last. */
  private live(launched: LaunchedTask): { stream: AsyncGenerator<StreamResponse>; encoder: A2ATaskEncoder } {
    const { row, userMessage, items, origin } = launched;
    const encoder = new A2ATaskEncoder(
      { taskId: row.task_id, contextId: row.context_id, fileUrl: (p) => artifactUrl(origin, row.context_id, p) },
      [userMessage],
    );
    const mapper = new RunEventMapper({ runId: row.run_id, threadId: row.context_id, traceId: row.trace_id });
    const push = this.options.push;
    const filter = new PushFilter();
    // The task and each change of its state go to its webhooks, whoever reads (or stopped reading) the stream.
    const pushed = (item: StreamResponse): StreamResponse => {
      if (push && filter.accept(item)) push.notify(row.task_id, row.trace_id, item);
      return item;
    };
    const stream = (async function* (): AsyncGenerator<StreamResponse> {
      yield pushed({
        payload: { $case: "task", value: { ...encoder.task, metadata: { antler_run_id: row.run_id, trace_id: row.trace_id } } },
      });
      try {
        for await (const event of items) for (const p of mapper.map(event)) for (const r of encoder.encode(p)) yield pushed(r);
      } catch (error) {
        const code = isAntlerError(error) ? error.code : "ANTLER_ERR_INTERNAL";
        const message = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
        for (const p of mapper.fail(code, message)) for (const r of encoder.encode(p)) yield pushed(r);
      } finally {
        await items.return(undefined).catch(() => undefined);
      }
    })();
    return { stream, encoder };
  }
}

async function drain(stream: AsyncGenerator<unknown>): Promise<void> {
  try {
    for await (const _ of stream) {
      // Only the run's progress matters.
    }
  } catch {
    // The run's own record says how it ended.
  }
}

async function ensureThread(req: GatewayRequest, threadId: string): Promise<void> {
  try {
    await req.client.getThreadRecord(threadId, { userId: req.userId });
  } catch (error) {
    if (!isAntlerError(error, THREAD_NOT_FOUND)) throw error;
    await req.client.createThread({ threadId, userId: req.userId, metadata: { a2a: true } });
  }
}

/** The message as the text a run takes: text parts as they are, data parts as JSON; files are not taken yet. */
function messageText(message: Message): string {
  if (message.role === Role.ROLE_AGENT) throw new RequestMalformedError("message.role must be ROLE_USER");
  const texts: string[] = [];
  for (const part of message.parts) {
    const content = part.content;
    if (content?.$case === "text") texts.push(content.value);
    else if (content?.$case === "data") texts.push(JSON.stringify(content.value));
    else throw new ContentTypeNotSupportedError("only text and data parts are accepted; send files' contents as text");
  }
  const text = texts.join("\n");
  if (text.trim() === "") throw new RequestMalformedError("the message has no text");
  return text;
}

/** The skill a message asks for: `metadata.skill` on the request or the message. */
function skillOf(params: SendMessageRequest, message: Message): string | undefined {
  const fromRequest = params.metadata?.skill;
  const fromMessage = message.metadata?.skill;
  const skill = fromRequest ?? fromMessage;
  if (skill === undefined) return undefined;
  if (typeof skill !== "string" || skill === "") throw new RequestMalformedError("metadata.skill must be a skill id from the agent card");
  return skill;
}

/** The messages of the thread's latest turn: everything after its last human message. */
function lastTurn(messages: readonly SerializedMessage[]): SerializedMessage[] {
  const lastHuman = messages.findLastIndex((m) => m.type === "human");
  return messages.slice(lastHuman + 1);
}

/** The question the turn ended on: `ask_clarification`'s tool message last. */
function pendingQuestion(turn: readonly SerializedMessage[]): string | undefined {
  const last = turn.at(-1);
  return last?.type === "tool" && last.name === ASK_CLARIFICATION && last.status !== "error" ? last.content : undefined;
}
