import type { Kysely } from "kysely";
import { redactSecrets } from "../config/redact.js";
import type { AntlerDatabase } from "./database.js";
import type { Migration } from "./migrations.js";

export const RUNS_TABLE = "antler_runs";

export type RunStatus = "running" | "success" | "error" | "cancelled";

/** Timestamps are ISO-8601 UTC text and kwargs is JSON text, as in the threads table. */
export interface RunsTable {
  run_id: string;
  thread_id: string;
  user_id: string;
  status: string;
  trace_id: string;
  model: string;
  kwargs: string;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export const runRecordMigrations: readonly Migration[] = [
  {
    name: "runs/001-create",
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable(RUNS_TABLE)
        .addColumn("run_id", "text", (c) => c.primaryKey())
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("trace_id", "text", (c) => c.notNull())
        .addColumn("model", "text", (c) => c.notNull())
        .addColumn("kwargs", "text", (c) => c.notNull().defaultTo("{}"))
        .addColumn("error", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      // Serves list(): one user's thread's runs, newest first.
      await db.schema.createIndex("antler_runs_thread").on(RUNS_TABLE).columns(["user_id", "thread_id", "created_at"]).execute();
    },
  },
];

export interface RunRecord {
  run_id: string;
  thread_id: string;
  user_id: string;
  status: RunStatus;
  /** The request-level trace id the run was stamped with. */
  trace_id: string;
  model: string;
  /** What the run was asked to do, secrets redacted. */
  kwargs: Record<string, unknown>;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface CreateRunInput {
  runId: string;
  threadId: string;
  userId: string;
  traceId: string;
  model: string;
  /** Redacted (API keys, tokens, passwords, URL credentials) before it is stored. */
  kwargs: Record<string, unknown>;
}

/**
 * Run records: one row per run, written when it starts and updated when it ends. Like threads, every read
 * takes the owner, so another user's run behaves exactly like a missing one.
 */
export interface RunStore {
  create(input: CreateRunInput): Promise<RunRecord>;
  /** Sets the final status (and error text, redacted); a run already finished keeps its first outcome. */
  finish(runId: string, status: Exclude<RunStatus, "running">, error?: string | null): Promise<void>;
  get(userId: string, runId: string): Promise<RunRecord | null>;
  /** Newest first. */
  list(userId: string, threadId: string, options?: { limit?: number; offset?: number }): Promise<RunRecord[]>;
  /** Deletes a thread's run records; returns how many. */
  deleteThread(userId: string, threadId: string): Promise<number>;
}

export function createRunStore(database: AntlerDatabase, options: { now?: () => Date } = {}): RunStore {
  const db = database.db.withTables<{ antler_runs: RunsTable }>();
  const now = options.now ?? (() => new Date());
  return {
    async create(input) {
      const at = now().toISOString();
      const row: RunsTable = {
        run_id: input.runId,
        thread_id: input.threadId,
        user_id: input.userId,
        status: "running",
        trace_id: input.traceId,
        model: input.model,
        kwargs: encodeKwargs(input.kwargs),
        error: null,
        created_at: at,
        updated_at: at,
      };
      await db.insertInto(RUNS_TABLE).values(row).execute();
      return toRecord(row);
    },
    async finish(runId, status, error = null) {
      await db
        .updateTable(RUNS_TABLE)
        .set({ status, error: error === null ? null : redactSecrets(error), updated_at: now().toISOString() })
        .where("run_id", "=", runId)
        .where("status", "=", "running")
        .execute();
    },
    async get(userId, runId) {
      const row = await db.selectFrom(RUNS_TABLE).selectAll().where("user_id", "=", userId).where("run_id", "=", runId).executeTakeFirst();
      return row ? toRecord(row) : null;
    },
    async list(userId, threadId, listOptions = {}) {
      const limit = Math.min(1000, Math.max(1, Math.trunc(listOptions.limit ?? 50)));
      const offset = Math.max(0, Math.trunc(listOptions.offset ?? 0));
      const rows = await db
        .selectFrom(RUNS_TABLE)
        .selectAll()
        .where("user_id", "=", userId)
        .where("thread_id", "=", threadId)
        .orderBy("created_at", "desc")
        .orderBy("run_id", "desc")
        .limit(limit)
        .offset(offset)
        .execute();
      return rows.map(toRecord);
    },
    async deleteThread(userId, threadId) {
      const result = await db.deleteFrom(RUNS_TABLE).where("user_id", "=", userId).where("thread_id", "=", threadId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function encodeKwargs(kwargs: Record<string, unknown>): string {
  try {
    return JSON.stringify(redactSecrets(kwargs));
  } catch {
    return JSON.stringify({ unserialisable: true });
  }
}

function toRecord(row: RunsTable): RunRecord {
  let kwargs: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(row.kwargs);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) kwargs = parsed as Record<string, unknown>;
  } catch {
    // A hand-edited row with bad JSON still lists.
  }
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    user_id: row.user_id,
    status: row.status as RunStatus,
    trace_id: row.trace_id,
    model: row.model,
    kwargs,
    error: row.error,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
