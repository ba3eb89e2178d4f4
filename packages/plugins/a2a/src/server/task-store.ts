import type { AntlerDatabase, Migration } from "@antler/kernel";
import type { Kysely } from "kysely";

/**
 * One A2A task: which Antler run on which thread (its contextId) serves it, for which user. A follow-up message on
 * an `input-required` task starts a new run on the same thread, so `run_id` is the task's latest run. Everything
 * else a task shows (state, artifacts) is read from the run record and the thread, so any instance can answer.
 */
export interface A2ATaskRow {
  task_id: string;
  user_id: string;
  /** The thread id. */
  context_id: string;
  run_id: string;
  /** The custom agent (skill) the task runs; null for the lead agent. */
  agent: string | null;
  trace_id: string;
  created_at: string;
  updated_at: string;
}

export type A2ATables = { a2a_tasks: A2ATaskRow };

export const A2A_TASKS_TABLE = "a2a_tasks";

/** One webhook of one task (`CreateTaskPushNotificationConfig`); `token` signs every delivery. */
export interface A2APushConfigRow {
  config_id: string;
  task_id: string;
  user_id: string;
  url: string;
  /** The client's token, or one the server made (answered in the created config): the HMAC key of deliveries. */
  token: string;
  auth_scheme: string | null;
  auth_credentials: string | null;
  created_at: string;
}

export const A2A_PUSH_CONFIGS_TABLE = "a2a_push_configs";

type PushTables = { a2a_push_configs: A2APushConfigRow };

const a2aPushMigration: Migration = {
  name: "a2a/002-push-configs",
  async up(db) {
    await db.schema
      .createTable(A2A_PUSH_CONFIGS_TABLE)
      .ifNotExists()
      .addColumn("task_id", "text", (c) => c.notNull())
      .addColumn("config_id", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("token", "text", (c) => c.notNull())
      .addColumn("auth_scheme", "text")
      .addColumn("auth_credentials", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("a2a_push_configs_pk", ["task_id", "config_id"])
      .execute();
  },
};

/** Applied with the kernel's `openDatabase({ migrations })`; names are stable, never rename. */
export const a2aMigrations: readonly Migration[] = [
  {
    name: "a2a/001-tasks",
    async up(db) {
      await db.schema
        .createTable(A2A_TASKS_TABLE)
        .ifNotExists()
        .addColumn("task_id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("context_id", "text", (c) => c.notNull())
        .addColumn("run_id", "text", (c) => c.notNull())
        .addColumn("agent", "text")
        .addColumn("trace_id", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("a2a_tasks_user_context").ifNotExists().on(A2A_TASKS_TABLE).columns(["user_id", "context_id"]).execute();
    },
  },
  a2aPushMigration,
];

/** The task mapping in the kernel's SQL store (SQLite or PostgreSQL), opened on first use. */
export class A2ATaskStore {
  private database: Promise<AntlerDatabase> | undefined;

  constructor(private readonly open: () => Promise<AntlerDatabase>) {}

  private async db(): Promise<Kysely<A2ATables>> {
    this.database ??= this.open();
    this.database.catch(() => {
      this.database = undefined;
    });
    return (await this.database).db as unknown as Kysely<A2ATables>;
  }

  /** The user's task, or undefined (also for another user's task: never tell them apart). */
  async get(userId: string, taskId: string): Promise<A2ATaskRow | undefined> {
    const db = await this.db();
    return db.selectFrom(A2A_TASKS_TABLE).selectAll().where("task_id", "=", taskId).where("user_id", "=", userId).executeTakeFirst();
  }

  async insert(row: Omit<A2ATaskRow, "created_at" | "updated_at">): Promise<void> {
    const now = new Date().toISOString();
    const db = await this.db();
    await db
      .insertInto(A2A_TASKS_TABLE)
      .values({ ...row, created_at: now, updated_at: now })
      .execute();
  }

  /** Points the task at its newest run (a follow-up on an `input-required` task). */
  async setRun(userId: string, taskId: string, runId: string, traceId: string): Promise<void> {
    const db = await this.db();
    await db
      .updateTable(A2A_TASKS_TABLE)
      .set({ run_id: runId, trace_id: traceId, updated_at: new Date().toISOString() })
      .where("task_id", "=", taskId)
      .where("user_id", "=", userId)
      .execute();
  }

  async close(): Promise<void> {
    const database = await this.database?.catch(() => undefined);
    this.database = undefined;
    await database?.close();
  }
}

/** The webhooks of tasks, in the same SQL store as the tasks. */
export class A2APushConfigStore {
  private database: Promise<AntlerDatabase> | undefined;

  constructor(private readonly open: () => Promise<AntlerDatabase>) {}

  private async db(): Promise<Kysely<PushTables>> {
    this.database ??= this.open();
    this.database.catch(() => {
      this.database = undefined;
    });
    return (await this.database).db as unknown as Kysely<PushTables>;
  }

  async list(taskId: string): Promise<A2APushConfigRow[]> {
    const db = await this.db();
    return db
      .selectFrom(A2A_PUSH_CONFIGS_TABLE)
      .selectAll()
      .where("task_id", "=", taskId)
      .orderBy("created_at")
      .orderBy("config_id")
      .execute();
  }

  /** Inserts or replaces (same task and id) one config. */
  async put(row: Omit<A2APushConfigRow, "created_at">): Promise<void> {
    const db = await this.db();
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom(A2A_PUSH_CONFIGS_TABLE).where("task_id", "=", row.task_id).where("config_id", "=", row.config_id).execute();
      await trx
        .insertInto(A2A_PUSH_CONFIGS_TABLE)
        .values({ ...row, created_at: new Date().toISOString() })
        .execute();
    });
  }

  async delete(taskId: string, configId: string): Promise<number> {
    const db = await this.db();
    const result = await db
      .deleteFrom(A2A_PUSH_CONFIGS_TABLE)
      .where("task_id", "=", taskId)
      .where("config_id", "=", configId)
      .executeTakeFirst();
    return Number(result.numDeletedRows ?? 0);
  }

  async close(): Promise<void> {
    const database = await this.database?.catch(() => undefined);
    this.database = undefined;
    await database?.close();
  }
}
