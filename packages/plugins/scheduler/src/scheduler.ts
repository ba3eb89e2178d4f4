import { randomUUID } from "node:crypto";
import { channel } from "node:diagnostics_channel";
import { hostname } from "node:os";
import {
  type AntlerDatabase,
  AntlerError,
  assertSafeId,
  ErrorCodes,
  ensureTraceContext,
  ensureTraceId,
  type Kernel,
  type Logger,
  outsideTraceContext,
} from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import type { Kysely } from "kysely";
import { type SchedulerConfig, type TaskInput, taskInputSchema } from "./config.js";
import { SchedulerErrorCodes, schedulerError } from "./errors.js";
import { assertTimezone, nextCronFire, parseRunAt, validateCron } from "./schedule.js";
import {
  changed,
  newId,
  RUNS_TABLE,
  type RunStatus,
  type RunTrigger,
  type ScheduledRun,
  type ScheduledTask,
  type SchedulerTables,
  schedulerDb,
  schedulerMigrations,
  TASKS_TABLE,
  type TaskState,
} from "./store.js";

/** diagnostics_channel that receives a `SchedulerFiringEvent` each time this instance fires, skips or takes over an occurrence. */
export const SCHEDULER_FIRING_CHANNEL = "antler:scheduler:firing";
export interface SchedulerFiringEvent {
  readonly task_id: string;
  readonly trigger: RunTrigger;
  /** `fired`: a new occurrence runs; `skipped`: the previous one still held the claim; `taken_over`: a crashed instance's occurrence runs again. */
  readonly result: "fired" | "skipped" | "taken_over";
}
const firingChannel = channel(SCHEDULER_FIRING_CHANNEL);
function publishFiring(event: SchedulerFiringEvent): void {
  if (firingChannel.hasSubscribers) firingChannel.publish(event);
}

/** Where a task's answers go (`deliver_to`): a channel provider's chat. */
export interface DeliverTo {
  channel: string;
  chat: string;
  workspace?: string | undefined;
  thread?: string | undefined;
}

/** A task as the API shows it: the stored row with `context` and `deliver_to` parsed. */
export type ScheduledTaskView = Omit<ScheduledTask, "context" | "deliver_to"> & {
  context: Record<string, unknown>;
  deliver_to: DeliverTo | null;
};

/** One occurrence handed to the runner: the claim is held while it runs. */
export interface Occurrence {
  readonly task: ScheduledTaskView;
  readonly run: ScheduledRun;
  /** This occurrence's own trace id (also `run.trace_id`); the runner is called inside its trace scope. */
  readonly traceId: string;
  readonly threadId: string;
  /** Runtime context for the run: the task's context plus `non_interactive: true` and the owner's `user_id`. */
  readonly context: Record<string, unknown>;
  /** Aborts on lease loss and on shutdown after the grace period. */
  readonly signal: AbortSignal;
}

export interface OccurrenceResult {
  /** The kernel run id of the agent turn, when there was one. */
  readonly agentRunId?: string | null | undefined;
}

/** Runs one occurrence. The default goes through `AntlerClient.stream`, the normal run path. */
export type OccurrenceRunner = (occurrence: Occurrence) => Promise<OccurrenceResult>;

export interface SchedulerOptions {
  kernel: Kernel;
  config: SchedulerConfig;
  logger?: Logger | undefined;
  /** Default: the kernel's `storage:` database (SQLite under base_dir, or PostgreSQL). */
  openDatabase?: (() => Promise<AntlerDatabase>) | undefined;
  /** Default: an `AntlerClient` over the kernel, acting as the internal principal for the task's owner. */
  runner?: OccurrenceRunner | undefined;
  /** Names this instance in leases and run records. Default `<hostname>:<pid>:<random>`. */
  instanceId?: string | undefined;
  now?: (() => Date) | undefined;
}

export interface PollResult {
  claimed: string[];
  skipped: string[];
  takenOver: string[];
}

export interface TriggerResult {
  /** The new run row (`running`, or `skipped` when the previous occurrence is still running). */
  run: ScheduledRun;
  /** Resolves with the finished run row. */
  done: Promise<ScheduledRun>;
}

interface InFlight {
  controller: AbortController;
  done: Promise<ScheduledRun>;
  /** Set when shutdown interrupts the run: the claim is handed back for another instance to take over. */
  requeue: boolean;
}

const NOW = () => new Date();
const ABORT_SETTLE_MS = 2000;

/**
 * Scheduled tasks on the kernel's SQL store. Any number of instances (processes, machines) may share one
 * database: an occurrence is claimed by a conditional UPDATE that only one instance can win (the row must
 * still show the `next_fire_at` the instance read, and no live claim), so it fires once. A claim is a lease
 * renewed while the run lasts; when an instance dies, the lease expires and another instance takes the
 * occurrence over as a new attempt.
 */
export class Scheduler {
  readonly instanceId: string;
  private readonly kernel: Kernel;
  private readonly config: SchedulerConfig;
  private readonly logger: Logger | undefined;
  private readonly openDatabaseFn: () => Promise<AntlerDatabase>;
  private readonly runner: OccurrenceRunner;
  private readonly usesClient: boolean;
  private clientReady: Promise<void> | undefined;
  private readonly now: () => Date;
  private database: Promise<AntlerDatabase> | undefined;
  private client: AntlerClient | undefined;
  private readonly inflight = new Map<string, InFlight>();
  private timer: NodeJS.Timeout | undefined;
  private tick: Promise<unknown> | undefined;
  private polling = false;
  private closed = false;

  constructor(options: SchedulerOptions) {
    this.kernel = options.kernel;
    this.config = options.config;
    this.logger = options.logger;
    this.now = options.now ?? NOW;
    this.instanceId = options.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.openDatabaseFn = options.openDatabase ?? (() => this.kernel.openDatabase({ migrations: schedulerMigrations }));
    this.usesClient = options.runner === undefined;
    this.runner = options.runner ?? ((occurrence) => this.runThroughClient(occurrence));
  }

  /** Whether the poller is running in this instance. */
  get isPolling(): boolean {
    return this.polling;
  }

  /** Occurrences this instance is running now. */
  get runningCount(): number {
    return this.inflight.size;
  }

  private async db(): Promise<Kysely<SchedulerTables>> {
    if (this.closed) throw new AntlerError(ErrorCodes.KERNEL_STATE, "the scheduler is closed", { hint: "Create a new kernel." });
    this.database ??= this.openDatabaseFn();
    this.database.catch(() => {
      this.database = undefined;
    });
    return schedulerDb(await this.database);
  }

  // ---------------------------------------------------------------------------------------------- management

  /**
   * Adds a task for `ownerUserId`. Bad cron expressions, timezones, past `once` times and unknown models are coded
   * errors. `userRole` is the adding principal's authorization role, recorded with the task: each occurrence runs
   * with it (its tools and models are that role's); without one, occurrences run with `default_role`.
   */
  async add(ownerUserId: string, input: TaskInput, options: { userRole?: string | undefined } = {}): Promise<ScheduledTaskView> {
    const owner = assertSafeId("user", ownerUserId);
    const parsed = taskInputSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw schedulerError(SchedulerErrorCodes.INVALID, issue?.message ?? "invalid task", {
        where: issue?.path.length ? issue.path.join(".") : "task",
        hint: "A task needs a prompt and either `at` (ISO time, once) or `cron` (five fields, recurring).",
      });
    }
    const task = parsed.data;
    const now = this.now();
    const timezone = assertTimezone(task.timezone ?? this.config.default_timezone);
    const context = task.context ?? {};
    // The runtime loads with the first task added or run, not with the plugin entry that builds the scheduler.
    const { requireCustomAgent, SERVER_OWNED_CONTEXT_KEYS } = await import("@antler/plugin-runtime");
    const forbidden = Object.keys(context).filter((k) => SERVER_OWNED_CONTEXT_KEYS.includes(k) || k === "scheduled_task_id");
    if (forbidden.length > 0) {
      throw new AntlerError(ErrorCodes.CONTEXT_FORBIDDEN_KEY, `context key(s) ${forbidden.join(", ")} are set by the server`, {
        where: "context",
        hint: "Scheduled runs always get non_interactive: true, the owner's user_id and their own trace id; leave those keys out.",
      });
    }
    if (task.model !== undefined) this.kernel.modelConfig(task.model);
    if (task.agent !== undefined) await requireCustomAgent(this.kernel, { userId: owner, name: task.agent });
    if (task.deliver_to !== undefined) await (await this.channels()).checkPushTarget(owner, task.deliver_to);
    let nextFireAt: Date;
    let runAt: string | null = null;
    if (task.cron !== undefined) {
      nextFireAt = validateCron(task.cron, timezone, now);
    } else {
      nextFireAt = parseRunAt(task.at as string, timezone);
      const earliest = now.getTime() + this.config.min_once_delay_seconds * 1000;
      if (nextFireAt.getTime() <= earliest) {
        throw schedulerError(
          SchedulerErrorCodes.INVALID,
          `once time ${nextFireAt.toISOString()} is in the past (now ${now.toISOString()}${this.config.min_once_delay_seconds ? `, minimum delay ${this.config.min_once_delay_seconds}s` : ""})`,
          { where: "at", hint: "Give a future time, e.g. with an explicit offset: 2026-12-01T09:00:00+01:00." },
        );
      }
      runAt = nextFireAt.toISOString();
    }
    const fixed = task.thread === "fixed" || task.thread_id !== undefined;
    const threadId = fixed ? assertSafeId("thread", task.thread_id ?? randomUUID()) : null;
    const stamp = now.toISOString();
    const row: ScheduledTask = {
      id: newId("task"),
      owner_user_id: owner,
      name: task.name ?? null,
      kind: task.cron !== undefined ? "cron" : "once",
      run_at: runAt,
      cron: task.cron?.trim() ?? null,
      timezone,
      prompt: task.prompt,
      thread_policy: fixed ? "fixed" : "new",
      thread_id: threadId,
      model: task.model ?? null,
      agent_name: task.agent ?? null,
      context: JSON.stringify(context),
      user_role: options.userRole ?? null,
      state: task.paused ? "paused" : "active",
      deliver_to: task.deliver_to ? JSON.stringify(task.deliver_to) : null,
      overlap_policy: "skip",
      next_fire_at: nextFireAt.toISOString(),
      lease_owner: null,
      lease_expires_at: null,
      lease_run_id: null,
      last_run_id: null,
      last_status: null,
      last_trace_id: null,
      last_error: null,
      last_fired_at: null,
      run_count: 0,
      created_at: stamp,
      updated_at: stamp,
    };
    const db = await this.db();
    await db.insertInto(TASKS_TABLE).values(row).execute();
    this.logger?.info({ task: row.id, owner, kind: row.kind, next_fire_at: row.next_fire_at }, "scheduled task added");
    return view(row);
  }

  /** Tasks of one user (or of everyone, with `null`: operator use), oldest first. */
  async list(ownerUserId: string | null, options: { limit?: number; offset?: number } = {}): Promise<ScheduledTaskView[]> {
    const db = await this.db();
    let query = db.selectFrom(TASKS_TABLE).selectAll();
    if (ownerUserId !== null) query = query.where("owner_user_id", "=", ownerUserId);
    const rows = await query
      .orderBy("created_at")
      .orderBy("id")
      .limit(options.limit ?? 1000)
      .offset(options.offset ?? 0)
      .execute();
    return rows.map(view);
  }

  /** One task; another user's id is NOT_FOUND, exactly like a missing one. */
  async get(ownerUserId: string | null, id: string): Promise<ScheduledTaskView> {
    return view(await this.row(ownerUserId, id));
  }

  private async row(ownerUserId: string | null, id: string): Promise<ScheduledTask> {
    const db = await this.db();
    let query = db.selectFrom(TASKS_TABLE).selectAll().where("id", "=", id);
    if (ownerUserId !== null) query = query.where("owner_user_id", "=", ownerUserId);
    const row = await query.executeTakeFirst();
    if (!row) throw notFound(id);
    return row;
  }

  /** Stops a task from firing (a running occurrence finishes). Pausing a paused task is a no-op. */
  async pause(ownerUserId: string | null, id: string): Promise<ScheduledTaskView> {
    const task = await this.row(ownerUserId, id);
    if (task.state === "done") {
      throw schedulerError(SchedulerErrorCodes.INVALID, `task ${id} already ran (a once task) and cannot be paused`, {
        hint: "Remove it with `antler schedule rm`, or trigger it again.",
      });
    }
    if (task.state === "paused") return view(task);
    return this.setState(task, "paused", task.next_fire_at);
  }

  /**
   * Lets a paused task fire again. A cron task continues from now (occurrences missed while paused are not
   * caught up); a once task whose time passed while paused fires at the next poll.
   */
  async resume(ownerUserId: string | null, id: string): Promise<ScheduledTaskView> {
    const task = await this.row(ownerUserId, id);
    if (task.state === "done") {
      throw schedulerError(SchedulerErrorCodes.INVALID, `task ${id} already ran (a once task) and cannot be resumed`, {
        hint: "Add a new task, or run it again now with `antler schedule trigger`.",
      });
    }
    if (task.state === "active") return view(task);
    const next = task.kind === "cron" ? nextCronFire(task.cron as string, task.timezone, this.now()) : new Date(task.run_at as string);
    return this.setState(task, "active", next?.toISOString() ?? null);
  }

  private async setState(task: ScheduledTask, state: TaskState, nextFireAt: string | null): Promise<ScheduledTaskView> {
    const db = await this.db();
    const updated_at = this.now().toISOString();
    const result = await db
      .updateTable(TASKS_TABLE)
      .set({ state, next_fire_at: nextFireAt, updated_at })
      .where("id", "=", task.id)
      .where("state", "=", task.state)
      .executeTakeFirst();
    if (changed(result) !== 1) return this.get(task.owner_user_id, task.id);
    this.logger?.info({ task: task.id, state }, `scheduled task ${state === "paused" ? "paused" : "resumed"}`);
    return view({ ...task, state, next_fire_at: nextFireAt, updated_at });
  }

  /** Deletes a task and its run history. A run of it in this instance is aborted. */
  async remove(ownerUserId: string | null, id: string): Promise<void> {
    const task = await this.row(ownerUserId, id);
    const db = await this.db();
    await inSequence(db, async (trx) => {
      await trx.deleteFrom(RUNS_TABLE).where("task_id", "=", task.id).execute();
      await trx.deleteFrom(TASKS_TABLE).where("id", "=", task.id).execute();
    });
    if (task.lease_run_id) this.inflight.get(task.lease_run_id)?.controller.abort(new Error(`task ${id} was removed`));
    this.logger?.info({ task: id }, "scheduled task removed");
  }

  /** A task's runs (occurrences, skips and takeover attempts), newest first. */
  async runs(ownerUserId: string | null, id: string, options: { limit?: number } = {}): Promise<ScheduledRun[]> {
    const task = await this.row(ownerUserId, id);
    const db = await this.db();
    return db
      .selectFrom(RUNS_TABLE)
      .selectAll()
      .where("task_id", "=", task.id)
      .orderBy("started_at", "desc")
      .orderBy("attempt", "desc")
      .limit(options.limit ?? 100)
      .execute();
  }

  /**
   * Runs a task now, in this instance, whatever its schedule or state (paused and done tasks too). The schedule
   * is left as it is. With the previous occurrence still running, the trigger is recorded as `skipped`.
   */
  async trigger(ownerUserId: string | null, id: string): Promise<TriggerResult> {
    const task = await this.row(ownerUserId, id);
    const now = this.now();
    if (task.lease_owner !== null) {
      const run = await this.insertSkip(task, now.toISOString(), "manual", now);
      return { run, done: Promise.resolve(run) };
    }
    await this.prepareClient();
    const claimed = await this.claim(task, now, "manual");
    if (!claimed) {
      const fresh = await this.row(ownerUserId, id);
      const run = await this.insertSkip(fresh, now.toISOString(), "manual", now);
      return { run, done: Promise.resolve(run) };
    }
    return { run: claimed.run, done: claimed.done };
  }

  // ---------------------------------------------------------------------------------------------- poller

  /** Starts polling (idempotent). Its timers are unref'd: the poller never keeps the process alive by itself. */
  startPoller(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    this.logger?.info(
      { instance: this.instanceId, interval_s: this.config.poll_interval_seconds, lease_s: this.config.lease_seconds },
      "scheduler poller started",
    );
    // The poller is a loop, never a unit of work: whatever scope surrounds its start must not tag its occurrences.
    outsideTraceContext(() => this.scheduleTick(0));
  }

  private scheduleTick(delayMs: number): void {
    if (!this.polling) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.tick = this.pollOnce()
        .catch((err: unknown) => this.logger?.error({ err, instance: this.instanceId }, "scheduler poll failed"))
        .finally(() => {
          this.tick = undefined;
          this.scheduleTick(this.config.poll_interval_seconds * 1000);
        });
    }, delayMs);
    this.timer.unref();
  }

  /** Waits until every occurrence this instance is running has finished. */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight.values()].map((r) => r.done));
  }

  /** Stops polling; running occurrences go on. */
  async stopPoller(): Promise<void> {
    this.polling = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.tick;
  }

  /**
   * One poll: take over expired claims of crashed instances, then claim due occurrences (or record them as
   * skipped while the previous one still runs). Exposed for tests and for `antler scheduler run --once`.
   */
  pollOnce(): Promise<PollResult> {
    // Detached from the caller's scope, so every occurrence it claims or takes over starts a trace of its own.
    return outsideTraceContext(() => this.pollDetached());
  }

  private async pollDetached(): Promise<PollResult> {
    const result: PollResult = { claimed: [], skipped: [], takenOver: [] };
    const db = await this.db();
    await this.prepareClient();
    const now = this.now();
    const nowIso = now.toISOString();
    const free = () => this.config.max_concurrent_runs - this.inflight.size;

    if (free() > 0) {
      const expired = await db
        .selectFrom(TASKS_TABLE)
        .selectAll()
        .where("lease_owner", "is not", null)
        .where("lease_expires_at", "<=", nowIso)
        .orderBy("lease_expires_at")
        .limit(free())
        .execute();
      for (const task of expired) {
        if (this.closed || free() <= 0) break;
        const taken = await this.takeOver(task, now);
        if (taken) result.takenOver.push(taken.run.id);
      }
    }

    const due = await db
      .selectFrom(TASKS_TABLE)
      .selectAll()
      .where("state", "=", "active")
      .where("next_fire_at", "<=", nowIso)
      .orderBy("next_fire_at")
      .limit(Math.max(10, this.config.max_concurrent_runs * 4))
      .execute();
    for (const task of due) {
      if (this.closed) break;
      if (task.lease_owner !== null) {
        const skipped = await this.skipDue(task, now);
        if (skipped) result.skipped.push(skipped.id);
        continue;
      }
      if (free() <= 0) continue;
      const claimed = await this.claim(task, now, "schedule");
      if (claimed) result.claimed.push(claimed.run.id);
    }
    return result;
  }

  private nextAfter(task: ScheduledTask, scheduledFor: string, now: Date): string | null {
    if (task.kind !== "cron") return null;
    // Occurrences missed while every instance was down are coalesced: one fires, then the schedule resumes from now.
    const from = new Date(Math.max(new Date(scheduledFor).getTime(), now.getTime()));
    return nextCronFire(task.cron as string, task.timezone, from)?.toISOString() ?? null;
  }

  private leaseUntil(now: Date): string {
    return new Date(now.getTime() + this.config.lease_seconds * 1000).toISOString();
  }

  /**
   * A fresh `running` occurrence of `task` held by this instance, with its own thread (per policy). Its trace id is
   * the surrounding scope's (a manual trigger inside a gateway request) or, from the detached poller, a fresh one.
   */
  private newRun(task: ScheduledTask, o: { scheduledFor: string; trigger: RunTrigger; attempt: number; nowIso: string }): ScheduledRun {
    const id = newId("srun");
    return {
      id,
      task_id: task.id,
      owner_user_id: task.owner_user_id,
      scheduled_for: o.scheduledFor,
      trigger: o.trigger,
      attempt: o.attempt,
      occurrence_key: o.trigger === "schedule" ? `schedule:${o.scheduledFor}:${o.attempt}` : `manual:${id}`,
      status: "running",
      instance_id: this.instanceId,
      thread_id: task.thread_policy === "fixed" ? task.thread_id : randomUUID(),
      trace_id: ensureTraceId(),
      agent_run_id: null,
      error: null,
      started_at: o.nowIso,
      finished_at: null,
    };
  }

  /** The task columns that record this instance's claim on `run` (its lease and the task's "last run"). */
  private leaseFields(run: ScheduledRun, now: Date) {
    return {
      lease_owner: this.instanceId,
      lease_expires_at: this.leaseUntil(now),
      lease_run_id: run.id,
      last_run_id: run.id,
      last_status: "running" as const,
      last_trace_id: run.trace_id,
      last_error: null,
      updated_at: now.toISOString(),
    };
  }

  /** Wins the claim of one occurrence or returns null (another instance won, or the task changed). */
  private async claim(
    task: ScheduledTask,
    now: Date,
    trigger: RunTrigger,
  ): Promise<{ run: ScheduledRun; done: Promise<ScheduledRun> } | null> {
    const db = await this.db();
    const nowIso = now.toISOString();
    const scheduledFor = trigger === "schedule" ? (task.next_fire_at as string) : nowIso;
    const next = trigger === "schedule" ? this.nextAfter(task, scheduledFor, now) : task.next_fire_at;
    const run = this.newRun(task, { scheduledFor, trigger, attempt: 1, nowIso });
    const won = await inSequence(db, async (trx) => {
      let update = trx
        .updateTable(TASKS_TABLE)
        .set({ ...this.leaseFields(run, now), next_fire_at: next, last_fired_at: nowIso })
        .where("id", "=", task.id)
        .where("lease_owner", "is", null);
      if (trigger === "schedule") update = update.where("next_fire_at", "=", scheduledFor).where("state", "=", "active");
      if (changed(await update.executeTakeFirst()) !== 1) return false;
      await trx.insertInto(RUNS_TABLE).values(run).execute();
      return true;
    });
    if (!won) return null;
    this.logger?.info(
      { task: task.id, run: run.id, trace_id: run.trace_id, scheduled_for: scheduledFor, trigger },
      "scheduled occurrence claimed",
    );
    publishFiring({ task_id: task.id, trigger, result: "fired" });
    return { run, done: this.execute(task, run) };
  }

  /** The previous occurrence still holds the claim: move the schedule on and record this one as skipped. */
  private async skipDue(task: ScheduledTask, now: Date): Promise<ScheduledRun | null> {
    const db = await this.db();
    const scheduledFor = task.next_fire_at as string;
    const next = this.nextAfter(task, scheduledFor, now);
    const moved = await db
      .updateTable(TASKS_TABLE)
      .set({ next_fire_at: next, updated_at: now.toISOString() })
      .where("id", "=", task.id)
      .where("next_fire_at", "=", scheduledFor)
      .where("state", "=", "active")
      .where("lease_owner", "is not", null)
      .executeTakeFirst();
    if (changed(moved) !== 1) return null;
    return this.insertSkip(task, scheduledFor, "schedule", now);
  }

  private async insertSkip(task: ScheduledTask, scheduledFor: string, trigger: RunTrigger, now: Date): Promise<ScheduledRun> {
    const db = await this.db();
    const id = newId("srun");
    const run: ScheduledRun = {
      id,
      task_id: task.id,
      owner_user_id: task.owner_user_id,
      scheduled_for: scheduledFor,
      trigger,
      attempt: 1,
      occurrence_key: `skip:${id}`,
      status: "skipped",
      instance_id: this.instanceId,
      thread_id: null,
      trace_id: null,
      agent_run_id: null,
      error: `skipped: the previous occurrence (${task.lease_run_id ?? "unknown"}) is still running (overlap policy skip)`,
      started_at: now.toISOString(),
      finished_at: now.toISOString(),
    };
    await db.insertInto(RUNS_TABLE).values(run).execute();
    this.logger?.info(
      { task: task.id, run: run.id, running: task.lease_run_id, scheduled_for: scheduledFor },
      "scheduled occurrence skipped",
    );
    publishFiring({ task_id: task.id, trigger, result: "skipped" });
    return run;
  }

  /** Takes over an occurrence whose claim expired (its instance crashed or hung) as a new attempt. */
  private async takeOver(task: ScheduledTask, now: Date): Promise<{ run: ScheduledRun; done: Promise<ScheduledRun> } | null> {
    const db = await this.db();
    const nowIso = now.toISOString();
    if (task.lease_owner === this.instanceId && task.lease_run_id && this.inflight.has(task.lease_run_id)) {
      // Our own run is alive; only its renewals were late (a stalled event loop). Renew instead of running it twice.
      await this.renew(task.id, task.lease_run_id);
      return null;
    }
    const previous = task.lease_run_id
      ? await db.selectFrom(RUNS_TABLE).selectAll().where("id", "=", task.lease_run_id).executeTakeFirst()
      : undefined;
    const attempt = (previous?.attempt ?? 1) + 1;
    // Stored and shown over HTTP: no instance name here (by default it is the host name and pid); the takeover's
    // log line names the previous instance for operators.
    const interruption = "interrupted: the instance running it stopped renewing its lease (crashed, hung or shut down)";
    if (attempt > this.config.max_attempts) {
      const error = `gave up after ${attempt - 1} interrupted attempt(s); last: ${interruption}`;
      const released = await inSequence(db, async (trx) => {
        const result = await trx
          .updateTable(TASKS_TABLE)
          .set((eb) => ({
            lease_owner: null,
            lease_expires_at: null,
            lease_run_id: null,
            last_status: "failed",
            last_error: error,
            updated_at: nowIso,
            run_count: eb("run_count", "+", 1),
            ...(task.kind === "once" && previous?.trigger !== "manual" ? { state: "done" as const } : {}),
          }))
          .where("id", "=", task.id)
          .where("lease_run_id", "=", task.lease_run_id)
          .where("lease_expires_at", "=", task.lease_expires_at)
          .executeTakeFirst();
        if (changed(result) !== 1) return false;
        if (previous) {
          await trx
            .updateTable(RUNS_TABLE)
            .set({ status: "failed", error, finished_at: nowIso })
            .where("id", "=", previous.id)
            .where("status", "in", ["running", "interrupted"])
            .execute();
        }
        return true;
      });
      if (released)
        this.logger?.warn(
          { task: task.id, run: previous?.id, previous_instance: task.lease_owner, attempts: attempt - 1 },
          "scheduled occurrence failed: too many takeovers",
        );
      return null;
    }
    const run = this.newRun(task, {
      scheduledFor: previous?.scheduled_for ?? task.last_fired_at ?? nowIso,
      trigger: previous?.trigger ?? "schedule",
      attempt,
      nowIso,
    });
    const won = await inSequence(db, async (trx) => {
      const result = await trx
        .updateTable(TASKS_TABLE)
        .set(this.leaseFields(run, now))
        .where("id", "=", task.id)
        .where("lease_run_id", "=", task.lease_run_id)
        .where("lease_expires_at", "=", task.lease_expires_at)
        .executeTakeFirst();
      if (changed(result) !== 1) return false;
      if (previous) {
        await trx
          .updateTable(RUNS_TABLE)
          .set({ status: "interrupted", error: interruption, finished_at: nowIso })
          .where("id", "=", previous.id)
          .where("status", "=", "running")
          .execute();
      }
      await trx.insertInto(RUNS_TABLE).values(run).execute();
      return true;
    });
    if (!won) return null;
    this.logger?.warn(
      { task: task.id, run: run.id, previous: previous?.id, previous_instance: task.lease_owner, attempt, trace_id: run.trace_id },
      "scheduled occurrence taken over from an expired lease",
    );
    publishFiring({ task_id: task.id, trigger: run.trigger, result: "taken_over" });
    return { run, done: this.execute(task, run) };
  }

  // ---------------------------------------------------------------------------------------------- execution

  private execute(task: ScheduledTask, run: ScheduledRun): Promise<ScheduledRun> {
    const controller = new AbortController();
    const entry: InFlight = { controller, requeue: false, done: Promise.resolve(run) };
    entry.done = this.executeClaimed(task, run, entry).finally(() => this.inflight.delete(run.id));
    this.inflight.set(run.id, entry);
    return entry.done;
  }

  private async executeClaimed(task: ScheduledTask, run: ScheduledRun, entry: InFlight): Promise<ScheduledRun> {
    const { controller } = entry;
    const heartbeat = setInterval(
      () => {
        void this.renew(task.id, run.id).then((held) => {
          if (!held && !controller.signal.aborted) controller.abort(new Error("the lease was lost to another instance"));
        });
      },
      Math.max(50, (this.config.lease_seconds * 1000) / 3),
    );
    heartbeat.unref();
    const taskView = view(task);
    const context = {
      ...taskView.context,
      scheduled_task_id: task.id,
      non_interactive: true,
      user_id: task.owner_user_id,
    };
    let status: RunStatus = "succeeded";
    let error: string | null = null;
    let agentRunId: string | null = null;
    try {
      // Inherits a surrounding scope (a manual trigger inside a request; run.trace_id was taken from it), else
      // binds the occurrence's own id: the poller runs detached, so its occurrences never share a scope.
      const result = await ensureTraceContext(run.trace_id, () =>
        this.runner({
          task: taskView,
          run,
          traceId: run.trace_id as string,
          threadId: run.thread_id as string,
          context,
          signal: controller.signal,
        }),
      );
      agentRunId = result.agentRunId ?? null;
      if (controller.signal.aborted) throw controller.signal.reason ?? new Error("aborted");
    } catch (err) {
      status = controller.signal.aborted ? "interrupted" : "failed";
      const reason = controller.signal.aborted ? controller.signal.reason : err;
      error = ((reason as Error)?.message ?? String(reason)).slice(0, 4000);
    } finally {
      clearInterval(heartbeat);
    }
    return this.finish(task, run, { status, error, agentRunId, requeue: entry.requeue });
  }

  private async renew(taskId: string, runId: string): Promise<boolean> {
    try {
      const db = await this.db();
      const result = await db
        .updateTable(TASKS_TABLE)
        .set({ lease_expires_at: this.leaseUntil(this.now()) })
        .where("id", "=", taskId)
        .where("lease_run_id", "=", runId)
        .where("lease_owner", "=", this.instanceId)
        .executeTakeFirst();
      return changed(result) === 1;
    } catch (err) {
      // A database hiccup is not a lost lease; the next renewal tries again before expiry.
      this.logger?.warn({ err, task: taskId, run: runId }, "scheduler lease renewal failed");
      return true;
    }
  }

  private async finish(
    task: ScheduledTask,
    run: ScheduledRun,
    outcome: { status: RunStatus; error: string | null; agentRunId: string | null; requeue: boolean },
  ): Promise<ScheduledRun> {
    const nowIso = this.now().toISOString();
    const finished: ScheduledRun = {
      ...run,
      status: outcome.status,
      error: outcome.error,
      agent_run_id: outcome.agentRunId,
      finished_at: nowIso,
    };
    let database: Kysely<SchedulerTables>;
    try {
      database = await this.db();
    } catch {
      // Closed underneath: the lease expires and another instance takes the occurrence over.
      return finished;
    }
    await inSequence(database, async (trx) => {
      await trx
        .updateTable(RUNS_TABLE)
        .set({ status: finished.status, error: finished.error, agent_run_id: finished.agent_run_id, finished_at: nowIso })
        .where("id", "=", run.id)
        .where("status", "=", "running")
        .execute();
      if (outcome.requeue) {
        // Shutdown interrupted it: leave the claim in place but expired, so another instance retries it now.
        await trx
          .updateTable(TASKS_TABLE)
          .set({ lease_expires_at: nowIso, last_status: "interrupted", last_error: finished.error, updated_at: nowIso })
          .where("id", "=", task.id)
          .where("lease_run_id", "=", run.id)
          .execute();
        return;
      }
      await trx
        .updateTable(TASKS_TABLE)
        .set((eb) => ({
          lease_owner: null,
          lease_expires_at: null,
          lease_run_id: null,
          last_status: finished.status,
          last_error: finished.error,
          run_count: eb("run_count", "+", 1),
          updated_at: nowIso,
          ...(task.kind === "once" && run.trigger === "schedule" ? { state: "done" as const } : {}),
        }))
        .where("id", "=", task.id)
        .where("lease_run_id", "=", run.id)
        .execute();
    });
    const log = { task: task.id, run: run.id, trace_id: run.trace_id, status: finished.status, attempt: run.attempt };
    if (finished.status === "succeeded") this.logger?.info(log, "scheduled occurrence finished");
    else this.logger?.warn({ ...log, error: finished.error }, "scheduled occurrence did not succeed");
    return finished;
  }

  /**
   * Opens the client's stores (and runs their migrations) before the first claim. SQLite migrations hold the write
   * lock across awaits; run while this instance is writing claims, they would stall both connections of the process.
   */
  private prepareClient(): Promise<void> {
    if (!this.usesClient) return Promise.resolve();
    this.clientReady ??= (async () => {
      const { AntlerClient } = await import("@antler/plugin-runtime");
      this.client ??= new AntlerClient({ kernel: this.kernel });
      await this.client.listThreads({ limit: 1 });
    })();
    this.clientReady.catch(() => {
      this.clientReady = undefined;
    });
    return this.clientReady;
  }

  /** The normal run path: one `AntlerClient.stream` turn as the internal principal acting for the owner. */
  private async runThroughClient(occurrence: Occurrence): Promise<OccurrenceResult> {
    await this.prepareClient();
    if (!this.client) throw new AntlerError(ErrorCodes.KERNEL_STATE, "the scheduler is closed");
    const { INTERNAL_PRINCIPAL } = await import("@antler/plugin-runtime");
    let agentRunId: string | null = null;
    let answer = "";
    for await (const event of this.client.stream(occurrence.task.prompt, {
      threadId: occurrence.threadId,
      userId: occurrence.task.owner_user_id,
      model: occurrence.task.model ?? undefined,
      agent: occurrence.task.agent_name ?? undefined,
      context: occurrence.context,
      principal: INTERNAL_PRINCIPAL,
      // The role of whoever added the task, never the scheduler's own: its tools and models are that role's.
      userRole: occurrence.task.user_role ?? undefined,
      traceId: occurrence.traceId,
      signal: occurrence.signal,
      // A scheduled turn must not be refused because someone is chatting on its thread, nor cut them off:
      // it waits its turn behind the runs already there.
      multitaskStrategy: "enqueue",
    })) {
      if (event.type === "end") agentRunId = event.data.run_id;
      if (event.type === "values") answer = lastAnswer(event.data.messages) ?? answer;
    }
    const target = occurrence.task.deliver_to;
    if (target) {
      // Once per occurrence run: a retried delivery of the same run does not post twice.
      await (await this.channels()).push(occurrence.task.owner_user_id, target, answer, `schedule:${occurrence.run.id}`);
    }
    return { agentRunId };
  }

  /** The kernel's channels (`@antler/plugin-channels`), for `deliver_to`; a coded error when they are not configured. */
  private async channels() {
    const { CHANNELS } = await import("@antler/plugin-channels");
    const host = this.kernel.scope.tryResolve(CHANNELS);
    if (!host) {
      throw schedulerError(SchedulerErrorCodes.INVALID, "deliver_to needs @antler/plugin-channels, which is not configured", {
        where: "deliver_to",
        hint: "Add @antler/plugin-channels and a provider (such as @antler/plugin-channel-telegram) to plugins: in config.yaml.",
      });
    }
    return host;
  }

  /**
   * Stops polling, gives running occurrences `shutdown_grace_seconds` to finish, interrupts the rest (their claims
   * are handed back, so another instance retries them at once), and closes the client and database. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.stopPoller();
    const running = [...this.inflight.values()];
    if (running.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.config.shutdown_grace_seconds * 1000);
        timer.unref();
      });
      await Promise.race([Promise.allSettled(running.map((r) => r.done)), grace]);
      clearTimeout(timer);
      for (const r of this.inflight.values()) {
        r.requeue = true;
        r.controller.abort(new Error("the scheduler instance is shutting down"));
      }
      // A runner that ignores its abort signal is left behind: its lease simply expires and another instance
      // takes the occurrence over.
      const settle = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ABORT_SETTLE_MS);
        timer.unref();
      });
      await Promise.race([Promise.allSettled([...this.inflight.values()].map((r) => r.done)), settle]);
      clearTimeout(timer);
    }
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    this.clientReady = undefined;
    await client?.close();
    const database = await this.database?.catch(() => undefined);
    this.database = undefined;
    await database?.close();
  }
}

function view(row: ScheduledTask): ScheduledTaskView {
  let context: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(row.context) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) context = parsed as Record<string, unknown>;
  } catch {
    // A hand-edited row with bad JSON runs with no extra context rather than not at all.
  }
  let deliverTo: DeliverTo | null = null;
  try {
    deliverTo = row.deliver_to ? (JSON.parse(row.deliver_to) as DeliverTo) : null;
  } catch {
    // Bad JSON in a hand-edited row: the answer is not posted anywhere.
  }
  return { ...row, run_count: Number(row.run_count), context, deliver_to: deliverTo };
}

/** The text of the newest AI message with text, from a state snapshot's messages. */
function lastAnswer(messages: ReadonlyArray<{ type: string; content: string }>): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.type === "human") return undefined;
    if (message?.type === "ai" && message.content.trim() !== "") return message.content;
  }
  return undefined;
}

function notFound(id: string): AntlerError {
  return schedulerError(SchedulerErrorCodes.NOT_FOUND, `no scheduled task ${JSON.stringify(id)}`, {
    hint: "List tasks with `antler schedule list` (ids look like task_…).",
  });
}

/**
 * Runs a few statements one after another, deliberately without a transaction. Each statement is atomic on its own
 * and ordered so that a crash between two leaves a state the takeover path repairs. A transaction that stays open
 * across awaits would deadlock SQLite: better-sqlite3 waits for a lock synchronously, blocking the very event loop
 * the lock holder needs to commit (any second connection in the process: another scheduler, the client's stores).
 */
function inSequence<T>(db: Kysely<SchedulerTables>, fn: (db: Kysely<SchedulerTables>) => Promise<T>): Promise<T> {
  return fn(db);
}
