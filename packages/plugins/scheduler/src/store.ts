import { randomUUID } from "node:crypto";
import type { AntlerDatabase, Migration } from "@antler/kernel";
import type { Kysely } from "kysely";

/** How a task fires: once at an instant, or on a cron expression in a timezone. */
export type TaskKind = "once" | "cron";
/** `active` tasks fire; `paused` ones wait for `resume`; a `once` task is `done` after its occurrence ends. */
export type TaskState = "active" | "paused" | "done";
/** `new`: a fresh thread per occurrence. `fixed`: every occurrence continues `thread_id`. */
export type ThreadPolicy = "new" | "fixed";
export type RunStatus = "running" | "succeeded" | "failed" | "skipped" | "interrupted";
export type RunTrigger = "schedule" | "manual";

/** Timestamps are ISO-8601 UTC text (`toISOString()`), so they compare as strings on SQLite and PostgreSQL alike. */
export type ScheduledTasksTable = {
  id: string;
  owner_user_id: string;
  name: string | null;
  kind: TaskKind;
  run_at: string | null;
  cron: string | null;
  timezone: string;
  prompt: string;
  thread_policy: ThreadPolicy;
  thread_id: string | null;
  model: string | null;
  /** A custom agent of the owner that runs each occurrence (its soul, model and tool groups). */
  agent_name: string | null;
  /** JSON object: extra runtime context given at creation (server-owned keys are refused then). */
  context: string;
  /**
   * The authorization role of the principal that added the task (the API key's `role`, or `userRole` in process);
   * every occurrence runs with it. Null (no role given, or a task stored before `004-task-role`): `default_role`.
   */
  user_role: string | null;
  state: TaskState;
  /** JSON `{ channel, chat, thread? }`: where each occurrence's answer is posted; null: nowhere. */
  deliver_to: string | null;
  overlap_policy: "skip";
  next_fire_at: string | null;
  /** The claim: which instance runs which occurrence, until when. Null when nothing runs. */
  lease_owner: string | null;
  lease_expires_at: string | null;
  lease_run_id: string | null;
  last_run_id: string | null;
  last_status: RunStatus | null;
  last_trace_id: string | null;
  last_error: string | null;
  last_fired_at: string | null;
  run_count: number;
  created_at: string;
  updated_at: string;
};

export type ScheduledRunsTable = {
  id: string;
  task_id: string;
  owner_user_id: string;
  /** The occurrence this run serves: its scheduled instant (manual triggers: the trigger time). */
  scheduled_for: string;
  trigger: RunTrigger;
  /** 1 for the first try; a takeover after a crashed instance is attempt 2, 3, ... */
  attempt: number;
  /**
   * Unique per task: `schedule:<scheduled_for>:<attempt>` for scheduled runs, so a second instance that somehow got
   * past the task-row claim still cannot record the same occurrence twice; `manual:<id>` / `skip:<id>` otherwise.
   */
  occurrence_key: string;
  status: RunStatus;
  instance_id: string;
  thread_id: string | null;
  trace_id: string | null;
  /** The kernel run id of the agent turn. */
  agent_run_id: string | null;
  error: string | null;
  started_at: string;
  finished_at: string | null;
};

export type SchedulerTables = {
  scheduler_tasks: ScheduledTasksTable;
  scheduler_runs: ScheduledRunsTable;
};

export type ScheduledTask = ScheduledTasksTable;
export type ScheduledRun = ScheduledRunsTable;

export const TASKS_TABLE = "scheduler_tasks";
export const RUNS_TABLE = "scheduler_runs";

/** The scheduler's tables, applied with the kernel's `runMigrations` (names are stable; never rename). */
export const schedulerMigrations: readonly Migration[] = [
  {
    name: "scheduler/001-tasks",
    async up(db) {
      await db.schema
        .createTable(TASKS_TABLE)
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("owner_user_id", "text", (c) => c.notNull())
        .addColumn("name", "text")
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("run_at", "text")
        .addColumn("cron", "text")
        .addColumn("timezone", "text", (c) => c.notNull())
        .addColumn("prompt", "text", (c) => c.notNull())
        .addColumn("thread_policy", "text", (c) => c.notNull())
        .addColumn("thread_id", "text")
        .addColumn("model", "text")
        .addColumn("context", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("overlap_policy", "text", (c) => c.notNull())
        .addColumn("next_fire_at", "text")
        .addColumn("lease_owner", "text")
        .addColumn("lease_expires_at", "text")
        .addColumn("lease_run_id", "text")
        .addColumn("last_run_id", "text")
        .addColumn("last_status", "text")
        .addColumn("last_trace_id", "text")
        .addColumn("last_error", "text")
        .addColumn("last_fired_at", "text")
        .addColumn("run_count", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("scheduler_tasks_due").on(TASKS_TABLE).columns(["state", "next_fire_at"]).execute();
      await db.schema.createIndex("scheduler_tasks_lease").on(TASKS_TABLE).columns(["lease_expires_at"]).execute();
      await db.schema.createIndex("scheduler_tasks_owner").on(TASKS_TABLE).columns(["owner_user_id", "created_at"]).execute();
    },
  },
  {
    name: "scheduler/002-runs",
    async up(db) {
      await db.schema
        .createTable(RUNS_TABLE)
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("task_id", "text", (c) => c.notNull())
        .addColumn("owner_user_id", "text", (c) => c.notNull())
        .addColumn("scheduled_for", "text", (c) => c.notNull())
        .addColumn("trigger", "text", (c) => c.notNull())
        .addColumn("attempt", "integer", (c) => c.notNull())
        .addColumn("occurrence_key", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("instance_id", "text", (c) => c.notNull())
        .addColumn("thread_id", "text")
        .addColumn("trace_id", "text")
        .addColumn("agent_run_id", "text")
        .addColumn("error", "text")
        .addColumn("started_at", "text", (c) => c.notNull())
        .addColumn("finished_at", "text")
        .execute();
      await db.schema.createIndex("scheduler_runs_occurrence").on(RUNS_TABLE).columns(["task_id", "occurrence_key"]).unique().execute();
      await db.schema.createIndex("scheduler_runs_task").on(RUNS_TABLE).columns(["task_id", "started_at"]).execute();
    },
  },
  {
    name: "scheduler/003-task-agent",
    async up(db) {
      await db.schema.alterTable(TASKS_TABLE).addColumn("agent_name", "text").execute();
    },
  },
  {
    name: "scheduler/004-task-role",
    async up(db) {
      // Nullable: tasks stored before it keep running with default_role, as they did.
      await db.schema.alterTable(TASKS_TABLE).addColumn("user_role", "text").execute();
    },
  },
  {
    name: "scheduler/005-deliver-to",
    async up(db) {
      await db.schema.alterTable(TASKS_TABLE).addColumn("deliver_to", "text").execute();
    },
  },
];

export function schedulerDb(database: AntlerDatabase): Kysely<SchedulerTables> {
  return database.db.withTables<SchedulerTables>() as unknown as Kysely<SchedulerTables>;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll("-", "")}`;
}

/** Rows changed by an UPDATE/DELETE, on both dialects. */
export function changed(result: { numUpdatedRows?: bigint; numDeletedRows?: bigint } | undefined): number {
  return Number(result?.numUpdatedRows ?? result?.numDeletedRows ?? 0n);
}
