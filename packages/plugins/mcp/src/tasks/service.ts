import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  type AntlerDatabase,
  AntlerError,
  ErrorCodes,
  ensureTraceContext,
  generateTraceId,
  type Logger,
  outsideTraceContext,
  redactText,
  resolveTraceId,
  TRACE_METADATA_KEY,
} from "@antler/kernel";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { BackgroundTaskStart, BackgroundTaskStarter, McpToolCatalog } from "../catalog.js";
import type { BackgroundTasksConfig, McpServerConfig, McpTaskToolConfig } from "../config.js";
import { cutMiddle, errorText } from "../results.js";
import { McpTaskErrorCodes, mcpTaskError } from "./errors.js";
import {
  type BackgroundTaskRow,
  type BackgroundTaskStatus,
  BackgroundTaskStore,
  type BackgroundTaskView,
  newTaskId,
  viewTask,
} from "./store.js";

/** What a notification run is given: the finished task and its own trace id (already bound around the call). */
export interface TaskNotification {
  readonly task: BackgroundTaskView;
  readonly userId: string;
  readonly threadId: string;
  readonly traceId: string;
  /** The message the agent receives. */
  readonly prompt: string;
  /** Runtime context: `non_interactive: true`, the owner's `user_id`, `background_task_id`. */
  readonly context: Record<string, unknown>;
}

/** Launches one notification run and resolves with its run id when it ends. */
export type TaskNotifier = (notification: TaskNotification) => Promise<{ runId: string | null }>;

export interface BackgroundTaskServiceOptions {
  config: BackgroundTasksConfig;
  catalog: McpToolCatalog;
  openDatabase: () => Promise<AntlerDatabase>;
  logger?: Logger | undefined;
  /** Runs the notification on the task's thread; default: none (the plugin passes one over `AntlerClient`). */
  notifier?: TaskNotifier | undefined;
  instanceId?: string | undefined;
  now?: (() => Date) | undefined;
}

export interface TaskPollResult {
  /** Task ids this poll worked on (claimed the lease of). */
  readonly worked: string[];
}

/** What a status tool reported, mapped onto the local statuses. */
interface RemoteState {
  status: BackgroundTaskStatus;
  summary: string | null;
  error: string | null;
}

/** Tasks one instance works on at once (a poll step, or a notification run). */
const MAX_CONCURRENT_TASKS = 16;

const COMPLETED = new Set(["completed", "complete", "succeeded", "success", "done", "finished"]);
const FAILED = new Set(["failed", "failure", "error", "errored"]);
const CANCELLED = new Set(["cancelled", "canceled", "aborted"]);

/** Replaces every occurrence of the private handle, so a server that echoes it cannot leak it through us. */
export function scrubHandle(text: string, handle: string): string {
  return handle.length > 0 ? text.split(handle).join("[job handle]") : text;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The result's JSON payload: structured content, else its text parsed as JSON, else null. */
function payloadOf(result: CallToolResult): Record<string, unknown> | null {
  const structured = result.structuredContent;
  if (structured && typeof structured === "object" && !Array.isArray(structured)) return structured as Record<string, unknown>;
  const text = result.content
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("\n")
    .trim();
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function asText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Drives durable MCP tasks (tools under a server's `tasks:`): starts the remote job for the model and stores it,
 * then polls every task with a lease per task (any number of instances on one database; a task is worked on by
 * one at a time, and an expired lease is taken over), retries failed remote calls with exponential backoff,
 * makes the remote cancel call for cancel requests, and launches one notification run per finished task.
 */
export class BackgroundTaskService implements BackgroundTaskStarter {
  readonly instanceId: string;
  private readonly config: BackgroundTasksConfig;
  private readonly catalog: McpToolCatalog;
  private readonly logger: Logger | undefined;
  private readonly openDatabaseFn: () => Promise<AntlerDatabase>;
  private readonly now: () => Date;
  private notifier: TaskNotifier | undefined;
  private database: Promise<AntlerDatabase> | undefined;
  private storeInstance: BackgroundTaskStore | undefined;
  private timer: NodeJS.Timeout | undefined;
  private tick: Promise<unknown> | undefined;
  private polling = false;
  private closed = false;
  private readonly working = new Map<string, Promise<void>>();

  constructor(options: BackgroundTaskServiceOptions) {
    this.config = options.config;
    this.catalog = options.catalog;
    this.logger = options.logger;
    this.openDatabaseFn = options.openDatabase;
    this.notifier = options.notifier;
    this.now = options.now ?? (() => new Date());
    this.instanceId = options.instanceId ?? options.config.instance_id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  }

  /** Sets the notification runner (the plugin installs one over `AntlerClient` once the kernel exists). */
  setNotifier(notifier: TaskNotifier | undefined): void {
    this.notifier = notifier;
  }

  get isPolling(): boolean {
    return this.polling;
  }

  /** The store, opened (and migrated) on first use. */
  async store(): Promise<BackgroundTaskStore> {
    if (this.closed)
      throw new AntlerError(ErrorCodes.KERNEL_STATE, "the MCP background task service is closed", { hint: "Create a new kernel." });
    if (this.storeInstance) return this.storeInstance;
    this.database ??= this.openDatabaseFn();
    this.database.catch(() => {
      this.database = undefined;
    });
    const store = await BackgroundTaskStore.open(await this.database);
    this.storeInstance ??= store;
    return this.storeInstance;
  }

  // ------------------------------------------------------------------------------------------ the model's side

  /** A long tool's call: starts the remote job, stores it, and answers with the local task id (never the handle). */
  async start(request: BackgroundTaskStart): Promise<string> {
    const { caller, task } = request;
    if (!caller.threadId) {
      throw mcpTaskError(McpTaskErrorCodes.NO_THREAD, `${request.toolName} runs as a background task and needs a thread to report to`, {
        hint: "Call it inside a thread (every AntlerClient run has one).",
      });
    }
    const store = await this.store();
    const result = await this.catalog.callRaw(
      request.server,
      request.config,
      task.tool,
      request.toolName,
      request.args,
      caller,
      request.signal,
    );
    if (result.isError) throw new Error(errorText(result.content));
    const payload = payloadOf(result);
    const raw = payload?.[task.handle_field];
    if ((typeof raw !== "string" || raw === "") && typeof raw !== "number") {
      throw mcpTaskError(
        McpTaskErrorCodes.NO_HANDLE,
        `MCP tool ${request.toolName} started no job Antler can follow: its result has no \`${task.handle_field}\``,
        {
          where: `servers.${request.server}.tasks.tools[${task.tool}].handle_field`,
          hint: "Set handle_field to the result field (structured content or JSON text) that carries the job handle.",
        },
      );
    }
    const handle = String(raw);
    const nowIso = this.now().toISOString();
    const row: BackgroundTaskRow = {
      id: newTaskId(),
      owner_user_id: caller.userId ?? "",
      thread_id: caller.threadId,
      server: request.server,
      remote_tool: task.tool,
      task_name: request.toolName,
      status: "running",
      remote_handle: handle,
      cancel_requested: 0,
      cancel_requested_at: null,
      cancel_sent_at: null,
      result_summary: null,
      error: null,
      trace_id: resolveTraceId(request.runContext[TRACE_METADATA_KEY]),
      notify_state: "none",
      notify_trace_id: null,
      notify_run_id: null,
      failures: 0,
      lease_owner: null,
      lease_expires_at: null,
      next_poll_at: this.nextPollAt(this.now()),
      created_at: nowIso,
      updated_at: nowIso,
      finished_at: null,
    };
    await store.insert(row);
    this.logger?.info({ task: row.id, server: row.server, tool: row.task_name, thread_id: row.thread_id }, "MCP background task started");
    this.startPoller();
    return [
      `Started background task ${row.id} (${row.task_name}). It runs in the background; you will get a message on this thread when it finishes.`,
      `Check it with list_background_tasks; stop it with cancel_background_task(task="${row.id}").`,
      JSON.stringify({ task_id: row.id, task_name: row.task_name, status: row.status }),
    ].join("\n");
  }

  /** A thread's tasks as the model and the API see them. */
  async list(owner: string, threadId: string, options: { activeOnly?: boolean } = {}): Promise<BackgroundTaskView[]> {
    const store = await this.store();
    return (await store.listForThread(owner, threadId, options)).map(viewTask);
  }

  /**
   * Records a cancel request durably and returns at once; the service makes the remote call (and retries it).
   * Without `taskId`, the thread's only active task is meant.
   */
  async requestCancel(owner: string, threadId: string, taskId?: string): Promise<BackgroundTaskView> {
    const store = await this.store();
    let row: BackgroundTaskRow | undefined;
    if (taskId) {
      row = await store.get(owner, threadId, taskId);
      if (!row) {
        throw mcpTaskError(McpTaskErrorCodes.NOT_FOUND, `no background task ${JSON.stringify(taskId)} on this thread`, {
          hint: "list_background_tasks shows this thread's task ids (bgt_…).",
        });
      }
    } else {
      const active = await store.listForThread(owner, threadId, { activeOnly: true });
      if (active.length !== 1) {
        throw mcpTaskError(
          McpTaskErrorCodes.AMBIGUOUS,
          active.length === 0
            ? "this thread has no running background task to cancel"
            : `this thread has ${active.length} running background tasks (${active.map((t) => t.id).join(", ")}); say which one`,
          { hint: "Pass task=<task id> from list_background_tasks." },
        );
      }
      row = active[0] as BackgroundTaskRow;
    }
    if (row.status !== "running") {
      throw mcpTaskError(McpTaskErrorCodes.NOT_CANCELLABLE, `background task ${row.id} already finished (${row.status})`, {
        hint: "Only running tasks can be cancelled.",
      });
    }
    if (!this.taskConfig(row)?.task.cancel_tool) {
      throw mcpTaskError(
        McpTaskErrorCodes.NOT_CANCELLABLE,
        `background task ${row.id} (${row.task_name}) cannot be cancelled: its server offers no cancel tool`,
        {
          where: `servers.${row.server}.tasks.tools[${row.remote_tool}].cancel_tool`,
          hint: "Configure cancel_tool for this tool, or wait for the task to finish.",
        },
      );
    }
    const nowIso = this.now().toISOString();
    await store.requestCancel(row.id, nowIso);
    this.logger?.info({ task: row.id, thread_id: threadId }, "MCP background task cancel requested");
    this.startPoller();
    const fresh = (await store.byId(row.id)) ?? row;
    return viewTask(fresh);
  }

  // ------------------------------------------------------------------------------------------ the poller

  /** Starts polling (idempotent). Timers are unref'd: the poller never keeps the process alive by itself. */
  startPoller(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    this.logger?.info({ instance: this.instanceId, interval_s: this.config.poll_interval_seconds }, "MCP background task poller started");
    // A loop, never a unit of work: the scope around its start (a tool call's run) must not tag later polls.
    outsideTraceContext(() => this.scheduleTick(0));
  }

  private scheduleTick(delayMs: number): void {
    if (!this.polling) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A tick does not wait for the tasks it claimed: one long notification run must not hold up the others.
      this.tick = outsideTraceContext(() => this.pollDetached(false))
        .catch((err: unknown) =>
          this.logger?.error({ err: redactText(message(err)), instance: this.instanceId }, "MCP background task poll failed"),
        )
        .finally(() => {
          this.tick = undefined;
          this.scheduleTick(this.jittered(this.config.poll_interval_seconds * 1000));
        });
    }, delayMs);
    this.timer.unref();
  }

  async stopPoller(): Promise<void> {
    this.polling = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.tick;
  }

  /** One poll: claims due tasks (free or expired leases) and works on each, until done. For tests and `--once`. */
  pollOnce(): Promise<TaskPollResult> {
    return outsideTraceContext(() => this.pollDetached(true));
  }

  private async pollDetached(wait: boolean): Promise<TaskPollResult> {
    const store = await this.store();
    const now = this.now();
    const nowIso = now.toISOString();
    const worked: string[] = [];
    const room = MAX_CONCURRENT_TASKS - this.working.size;
    if (room <= 0) return { worked };
    const ids = await store.due(nowIso, room + this.working.size);
    const jobs: Promise<void>[] = [];
    for (const id of ids) {
      if (this.closed || this.working.has(id) || this.working.size >= MAX_CONCURRENT_TASKS) continue;
      const row = await store.claim(id, this.instanceId, this.config.lease_seconds * 1000);
      if (!row) continue;
      worked.push(id);
      const job = this.work(store, row).finally(() => this.working.delete(id));
      this.working.set(id, job);
      jobs.push(job);
    }
    if (wait) await Promise.all(jobs);
    return { worked };
  }

  /** One task's turn, under the lease: its own trace scope (never the poller's), renewed while it lasts. */
  private async work(store: BackgroundTaskStore, row: BackgroundTaskRow): Promise<void> {
    const heartbeat = setInterval(
      () => {
        void store.renew(row.id, this.instanceId, this.config.lease_seconds * 1000).catch(() => undefined);
      },
      Math.max(50, (this.config.lease_seconds * 1000) / 3),
    );
    heartbeat.unref();
    let next = this.nextPollAt(this.now());
    try {
      if (row.status === "running") {
        next = await ensureTraceContext(generateTraceId(), () => this.advance(store, row));
      }
      const fresh = await store.byId(row.id);
      if (fresh && fresh.notify_state === "pending" && fresh.lease_owner === this.instanceId) await this.notify(store, fresh);
    } catch (err) {
      this.logger?.warn({ task: row.id, err: scrubHandle(redactText(message(err)), row.remote_handle) }, "MCP background task step failed");
    } finally {
      clearInterval(heartbeat);
      await store.release(row.id, this.instanceId, next).catch(() => undefined);
    }
  }

  /** Sends a pending cancel, then asks the server for the job's state; returns when to look again. */
  private async advance(store: BackgroundTaskStore, row: BackgroundTaskRow): Promise<string> {
    const now = this.now();
    const found = this.taskConfig(row);
    try {
      if (!found) throw new Error(`MCP server ${row.server} (or its task tool ${row.remote_tool}) is no longer configured`);
      const { server, task } = found;
      const caller = { userId: row.owner_user_id, threadId: row.thread_id };
      const handleArgs = { [task.handle_arg ?? task.handle_field]: row.remote_handle };
      if (Number(row.cancel_requested) === 1 && row.cancel_sent_at === null) {
        if (!task.cancel_tool) {
          await this.finishTask(store, row, {
            status: "cancelled",
            summary: null,
            error: "cancelled locally: the server offers no cancel tool",
          });
          return now.toISOString();
        }
        const cancelled = await this.catalog.callRaw(row.server, server, task.cancel_tool, task.cancel_tool, handleArgs, caller);
        if (cancelled.isError) throw new Error(`cancel failed: ${errorText(cancelled.content)}`);
        await store.update(row.id, this.instanceId, {
          cancel_sent_at: this.now().toISOString(),
          failures: 0,
          updated_at: this.now().toISOString(),
        });
        this.logger?.info({ task: row.id, server: row.server }, "MCP background task cancelled on the server");
      }
      const result = await this.catalog.callRaw(row.server, server, task.status_tool, task.status_tool, handleArgs, caller);
      if (result.isError) throw new Error(`status failed: ${errorText(result.content)}`);
      const state = this.remoteState(result, row.remote_handle);
      if (state.status === "running") {
        if (Number(row.failures) > 0) await store.update(row.id, this.instanceId, { failures: 0 });
        return this.nextPollAt(this.now());
      }
      await this.finishTask(store, row, state);
      return this.now().toISOString();
    } catch (err) {
      const failures = Number(row.failures) + 1;
      const error = scrubHandle(redactText(message(err)), row.remote_handle).slice(0, 1000);
      if (failures >= this.config.max_remote_failures) {
        this.logger?.warn(
          { task: row.id, server: row.server, failures, err: error },
          "MCP background task failed: too many failed remote calls",
        );
        await this.finishTask(store, row, {
          status: "failed",
          summary: null,
          error: `gave up after ${failures} failed remote calls; last: ${error}`,
        });
        return this.now().toISOString();
      }
      const delay = this.backoffMs(failures);
      this.logger?.warn(
        { task: row.id, server: row.server, failures, retry_in_ms: delay, err: error },
        "MCP background task remote call failed; retrying",
      );
      await store.update(row.id, this.instanceId, { failures, updated_at: this.now().toISOString() });
      return new Date(this.now().getTime() + delay).toISOString();
    }
  }

  private async finishTask(store: BackgroundTaskStore, row: BackgroundTaskRow, state: RemoteState): Promise<void> {
    const nowIso = this.now().toISOString();
    const written = await store.update(row.id, this.instanceId, {
      status: state.status,
      result_summary: state.summary === null ? null : cutMiddle(state.summary, this.config.result_max_chars),
      error: state.error === null ? null : cutMiddle(state.error, 1000),
      failures: 0,
      notify_state: this.config.notify && this.notifier ? "pending" : "none",
      finished_at: nowIso,
      updated_at: nowIso,
    });
    if (written) this.logger?.info({ task: row.id, server: row.server, status: state.status }, "MCP background task finished");
  }

  private remoteState(result: CallToolResult, handle: string): RemoteState {
    const payload = payloadOf(result);
    const raw = String(payload?.status ?? payload?.state ?? "").toLowerCase();
    const status: BackgroundTaskStatus = COMPLETED.has(raw)
      ? "completed"
      : FAILED.has(raw)
        ? "failed"
        : CANCELLED.has(raw)
          ? "cancelled"
          : "running";
    const summary = asText(payload?.result ?? payload?.output ?? null);
    const error = asText(payload?.error ?? (status === "failed" ? (payload?.message ?? null) : null));
    return {
      status,
      summary: summary === null ? null : scrubHandle(summary, handle),
      error: error === null ? null : scrubHandle(error, handle),
    };
  }

  /**
   * Launches the task's notification run: at most once (the durable `launched` mark is won before it starts), in
   * a trace scope of its own, detached from the poll step's, so each notification has its own trace id.
   */
  private async notify(store: BackgroundTaskStore, row: BackgroundTaskRow): Promise<void> {
    const notifier = this.notifier;
    if (!notifier) return;
    const traceId = generateTraceId();
    if (!(await store.markNotifyLaunched(row.id, this.instanceId, traceId, this.now().toISOString()))) return;
    const task = viewTask({ ...row, notify_state: "launched" });
    const notification: TaskNotification = {
      task,
      userId: row.owner_user_id,
      threadId: row.thread_id,
      traceId,
      prompt: notificationPrompt(task),
      context: { non_interactive: true, user_id: row.owner_user_id, background_task_id: row.id },
    };
    await outsideTraceContext(() =>
      ensureTraceContext(traceId, async () => {
        this.logger?.info({ task: row.id, thread_id: row.thread_id, trace_id: traceId }, "MCP background task notification run launched");
        try {
          const { runId } = await notifier(notification);
          await store.setNotifyOutcome(row.id, "done", runId);
        } catch (err) {
          await store.setNotifyOutcome(row.id, "failed", null);
          this.logger?.warn(
            { task: row.id, trace_id: traceId, err: scrubHandle(redactText(message(err)), row.remote_handle) },
            "MCP background task notification run failed",
          );
        }
      }),
    );
  }

  private taskConfig(
    row: Pick<BackgroundTaskRow, "server" | "remote_tool">,
  ): { server: McpServerConfig; task: McpTaskToolConfig } | undefined {
    const server = this.catalog.enabledServers().find((s) => s.name === row.server)?.config;
    const task = server?.tasks?.tools.find((t) => t.tool === row.remote_tool);
    return server && task ? { server, task } : undefined;
  }

  private jittered(ms: number): number {
    return Math.round(ms * (0.8 + Math.random() * 0.4));
  }

  private nextPollAt(now: Date): string {
    return new Date(now.getTime() + this.jittered(this.config.poll_interval_seconds * 1000)).toISOString();
  }

  /** Exponential backoff after `failures` consecutive failed remote calls, capped, with jitter. */
  backoffMs(failures: number): number {
    const base = Math.min(this.config.retry_max_seconds, this.config.retry_initial_seconds * 2 ** Math.max(0, failures - 1)) * 1000;
    return this.jittered(base);
  }

  /** Stops polling, waits for the tasks being worked on, and closes the database. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.stopPoller();
    await Promise.allSettled([...this.working.values()]);
    this.closed = true;
    const database = await this.database?.catch(() => undefined);
    this.database = undefined;
    this.storeInstance = undefined;
    await database?.close();
  }
}

export function notificationPrompt(task: BackgroundTaskView): string {
  const lines = [
    `[Background task update] The background task ${task.task_id} (${task.task_name}) that was started earlier on this thread has finished with status: ${task.status}.`,
  ];
  if (task.result_summary) lines.push(`Result:\n${task.result_summary}`);
  if (task.error) lines.push(`Error: ${task.error}`);
  lines.push("Report this outcome to the user now. Do not start the task again unless the user asked for that.");
  return lines.join("\n");
}
