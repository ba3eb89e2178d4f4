import { randomUUID } from "node:crypto";
import type { AntlerDatabase, Migration } from "@antler/kernel";
import type { Kysely, RawBuilder, sql as SqlTag } from "kysely";

/** `running` until the remote job ends; then `completed`, `failed` or `cancelled` (terminal, never changed again). */
export type BackgroundTaskStatus = "running" | "completed" | "failed" | "cancelled";
/** The notification run of a finished task: launched at most once (`launched` is written before it starts). */
export type NotifyState = "none" | "pending" | "launched" | "done" | "failed";

export const TERMINAL_TASK_STATUSES: readonly BackgroundTaskStatus[] = ["completed", "failed", "cancelled"];

/** Timestamps are ISO-8601 UTC text, so they compare as strings on SQLite and PostgreSQL alike. */
export type BackgroundTasksTable = {
  id: string;
  owner_user_id: string;
  thread_id: string;
  server: string;
  /** The start tool's name on the server. */
  remote_tool: string;
  /** The tool name the model called (`<server>_<tool>`), shown as the task's name. */
  task_name: string;
  status: BackgroundTaskStatus;
  /** The server's job handle. Private: never in a view, a tool result, an API response or a log line. */
  remote_handle: string;
  /** 0/1: the user or the model asked to cancel; the service makes the remote call. */
  cancel_requested: number;
  cancel_requested_at: string | null;
  /** When the remote cancel call succeeded. */
  cancel_sent_at: string | null;
  result_summary: string | null;
  error: string | null;
  /** The trace of the run whose tool call started the task. */
  trace_id: string;
  notify_state: NotifyState;
  notify_trace_id: string | null;
  notify_run_id: string | null;
  /** Consecutive failed remote calls (reset by a successful one); drives the backoff. */
  failures: number;
  lease_owner: string | null;
  lease_expires_at: string | null;
  next_poll_at: string;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
};

export type BackgroundTaskRow = BackgroundTasksTable;
export type McpTaskTables = { mcp_background_tasks: BackgroundTasksTable };

export const BACKGROUND_TASKS_TABLE = "mcp_background_tasks";

/** Applied with the kernel's migrations (names are stable; never rename). */
export const mcpTaskMigrations: readonly Migration[] = [
  {
    name: "mcp/001-background-tasks",
    async up(db) {
      await db.schema
        .createTable(BACKGROUND_TASKS_TABLE)
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("owner_user_id", "text", (c) => c.notNull())
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("server", "text", (c) => c.notNull())
        .addColumn("remote_tool", "text", (c) => c.notNull())
        .addColumn("task_name", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("remote_handle", "text", (c) => c.notNull())
        .addColumn("cancel_requested", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("cancel_requested_at", "text")
        .addColumn("cancel_sent_at", "text")
        .addColumn("result_summary", "text")
        .addColumn("error", "text")
        .addColumn("trace_id", "text", (c) => c.notNull())
        .addColumn("notify_state", "text", (c) => c.notNull())
        .addColumn("notify_trace_id", "text")
        .addColumn("notify_run_id", "text")
        .addColumn("failures", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("lease_owner", "text")
        .addColumn("lease_expires_at", "text")
        .addColumn("next_poll_at", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("finished_at", "text")
        .execute();
      await db.schema
        .createIndex("mcp_background_tasks_thread")
        .on(BACKGROUND_TASKS_TABLE)
        .columns(["owner_user_id", "thread_id", "created_at"])
        .execute();
      await db.schema.createIndex("mcp_background_tasks_due").on(BACKGROUND_TASKS_TABLE).columns(["next_poll_at"]).execute();
    },
  },
];

/** A task as the model, the API and the state see it: bounded local fields, never the remote handle or the lease. */
export interface BackgroundTaskView {
  readonly task_id: string;
  readonly task_name: string;
  readonly server: string;
  readonly status: BackgroundTaskStatus;
  readonly cancel_requested: boolean;
  readonly result_summary: string | null;
  readonly error: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly finished_at: string | null;
}

export function viewTask(row: BackgroundTaskRow): BackgroundTaskView {
  return {
    task_id: row.id,
    task_name: row.task_name,
    server: row.server,
    status: row.status,
    cancel_requested: Number(row.cancel_requested) === 1,
    result_summary: row.result_summary,
    error: row.error,
    created_at: row.created_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
  };
}

export function newTaskId(): string {
  return `bgt_${randomUUID().replaceAll("-", "")}`;
}

function changed(result: { numUpdatedRows?: bigint } | undefined): number {
  return Number(result?.numUpdatedRows ?? 0n);
}

/**
 * The durable tasks over the kernel's SQL layer. The owner-scoped reads are the user-facing side; claim, renew,
 * update and release are the service's side, and every write there is conditional on holding the lease.
 */
export class BackgroundTaskStore {
  private readonly db: Kysely<McpTaskTables>;

  /** The store over an open database; kysely's `sql` loads here, with the database, not with the plugin entry. */
  static async open(database: AntlerDatabase): Promise<BackgroundTaskStore> {
    return new BackgroundTaskStore(database, (await import("kysely")).sql);
  }

  constructor(
    readonly database: AntlerDatabase,
    private readonly sql: typeof SqlTag,
  ) {
    this.db = database.db.withTables<McpTaskTables>() as unknown as Kysely<McpTaskTables>;
  }

  /**
   * The database clock as ISO-8601 UTC text (the format of `toISOString()`), `plusMs` ahead. Leases are written
   * and compared on this one clock, so instances whose own clocks disagree still never hold one task at once.
   */
  dbNow(plusMs = 0): RawBuilder<string> {
    if (this.database.dialect === "postgres") {
      return this
        .sql<string>`to_char((clock_timestamp() + cast(${plusMs} as double precision) * interval '1 millisecond') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    }
    return this.sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${`${plusMs / 1000} seconds`})`;
  }

  async insert(row: BackgroundTaskRow): Promise<void> {
    await this.db.insertInto(BACKGROUND_TASKS_TABLE).values(row).execute();
  }

  /** A thread's tasks, oldest first. */
  async listForThread(
    owner: string,
    threadId: string,
    options: { activeOnly?: boolean; limit?: number } = {},
  ): Promise<BackgroundTaskRow[]> {
    let query = this.db.selectFrom(BACKGROUND_TASKS_TABLE).selectAll().where("owner_user_id", "=", owner).where("thread_id", "=", threadId);
    if (options.activeOnly) query = query.where("status", "=", "running");
    return query
      .orderBy("created_at")
      .orderBy("id")
      .limit(options.limit ?? 200)
      .execute();
  }

  async get(owner: string, threadId: string, id: string): Promise<BackgroundTaskRow | undefined> {
    return this.db
      .selectFrom(BACKGROUND_TASKS_TABLE)
      .selectAll()
      .where("id", "=", id)
      .where("owner_user_id", "=", owner)
      .where("thread_id", "=", threadId)
      .executeTakeFirst();
  }

  /** Any task by id, for the service and tests (not owner-scoped). */
  async byId(id: string): Promise<BackgroundTaskRow | undefined> {
    return this.db.selectFrom(BACKGROUND_TASKS_TABLE).selectAll().where("id", "=", id).executeTakeFirst();
  }

  /** Records a cancel request; true when this call recorded it (false: already requested, or no longer running). */
  async requestCancel(id: string, nowIso: string): Promise<boolean> {
    const result = await this.db
      .updateTable(BACKGROUND_TASKS_TABLE)
      .set({ cancel_requested: 1, cancel_requested_at: nowIso, updated_at: nowIso, next_poll_at: nowIso })
      .where("id", "=", id)
      .where("status", "=", "running")
      .where("cancel_requested", "=", 0)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /**
   * Ids of tasks with work to do (running, or finished with a notification to launch), due by `nowIso`, whose lease
   * is free or expired on the database clock.
   */
  async due(nowIso: string, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom(BACKGROUND_TASKS_TABLE)
      .select("id")
      .where((eb) => eb.or([eb("status", "=", "running"), eb("notify_state", "=", "pending")]))
      .where("next_poll_at", "<=", nowIso)
      .where((eb) => eb.or([eb("lease_owner", "is", null), eb("lease_expires_at", "<=", this.dbNow())]))
      .orderBy("next_poll_at")
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * Takes the lease of one task: a single conditional UPDATE that only one instance can win (the lease must be
   * free or expired at the moment of writing). Returns the claimed row, or undefined when another instance won.
   */
  async claim(id: string, instanceId: string, leaseMs: number): Promise<BackgroundTaskRow | undefined> {
    const result = await this.db
      .updateTable(BACKGROUND_TASKS_TABLE)
      .set({ lease_owner: instanceId, lease_expires_at: this.dbNow(leaseMs) })
      .where("id", "=", id)
      .where((eb) => eb.or([eb("lease_owner", "is", null), eb("lease_expires_at", "<=", this.dbNow())]))
      .where((eb) => eb.or([eb("status", "=", "running"), eb("notify_state", "=", "pending")]))
      .executeTakeFirst();
    if (changed(result) !== 1) return undefined;
    const row = await this.byId(id);
    return row?.lease_owner === instanceId ? row : undefined;
  }

  async renew(id: string, instanceId: string, leaseMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable(BACKGROUND_TASKS_TABLE)
      .set({ lease_expires_at: this.dbNow(leaseMs) })
      .where("id", "=", id)
      .where("lease_owner", "=", instanceId)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** Writes fields while this instance still holds the lease; false when it was lost (nothing is written then). */
  async update(id: string, instanceId: string, fields: Partial<BackgroundTaskRow>): Promise<boolean> {
    const result = await this.db
      .updateTable(BACKGROUND_TASKS_TABLE)
      .set(fields)
      .where("id", "=", id)
      .where("lease_owner", "=", instanceId)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** Marks the notification launched, at most once per task; true when this call won the mark. */
  async markNotifyLaunched(id: string, instanceId: string, traceId: string, nowIso: string): Promise<boolean> {
    const result = await this.db
      .updateTable(BACKGROUND_TASKS_TABLE)
      .set({ notify_state: "launched", notify_trace_id: traceId, updated_at: nowIso })
      .where("id", "=", id)
      .where("lease_owner", "=", instanceId)
      .where("notify_state", "=", "pending")
      .executeTakeFirst();
    return changed(result) === 1;
  }

  async setNotifyOutcome(id: string, state: "done" | "failed", runId: string | null): Promise<void> {
    await this.db
      .updateTable(BACKGROUND_TASKS_TABLE)
      .set({ notify_state: state, notify_run_id: runId })
      .where("id", "=", id)
      .where("notify_state", "=", "launched")
      .execute();
  }

  /** Hands the lease back and sets the next poll time. */
  async release(id: string, instanceId: string, nextPollAt: string): Promise<void> {
    await this.db
      .updateTable(BACKGROUND_TASKS_TABLE)
      .set({ lease_owner: null, lease_expires_at: null, next_poll_at: nextPollAt })
      .where("id", "=", id)
      .where("lease_owner", "=", instanceId)
      .execute();
  }
}
