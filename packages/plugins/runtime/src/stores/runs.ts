import { type AntlerDatabase, type Migration, redactSecrets } from "@antler/kernel";
import { type Kysely, sql } from "kysely";

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
  /** The client instance that runs it (null: written before runs/002, or by a client without leases). */
  owner_id: string | null;
  /** Until when the owner vouches for the run; a running row past it is an orphan. Null: never swept. */
  lease_until: string | null;
  /** When a cancel was asked for from an instance that does not hold the run; the owner honours it. */
  cancel_requested_at: string | null;
}

// Rows that are running when runs/002 is applied have no owner that renews them. They get one grace lease,
// long enough for a run on a not-yet-upgraded instance to finish during a rolling upgrade; after it they are
// swept like any orphan instead of staying "running" forever.
const LEGACY_RUNNING_GRACE_MS = 60 * 60 * 1000;

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
  {
    name: "runs/002-leases",
    async up(db: Kysely<unknown>) {
      // One column per statement: SQLite's ALTER TABLE adds a single column.
      for (const column of ["owner_id", "lease_until", "cancel_requested_at"]) {
        await db.schema.alterTable(RUNS_TABLE).addColumn(column, "text").execute();
      }
      // Serves the orphan sweep: running rows whose lease is in the past.
      await db.schema.createIndex("antler_runs_lease").on(RUNS_TABLE).columns(["status", "lease_until"]).execute();
      await db
        .withTables<{ antler_runs: RunsTable }>()
        .updateTable(RUNS_TABLE)
        .set({ lease_until: new Date(Date.now() + LEGACY_RUNNING_GRACE_MS).toISOString() })
        .where("status", "=", "running")
        .execute();
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
  /**
   * The instance that runs it and how long its first lease lasts. Without it the row has no lease and is
   * never swept (nothing could tell a live run from a dead one).
   */
  owner?: { id: string; leaseMs: number };
}

/** What a heartbeat learns about the owner's runs. */
export interface LeaseRenewal {
  /** Still running, and someone asked (from another instance) to cancel them. */
  cancelRequested: string[];
  /**
   * No longer running in the record (swept after a missed lease, cancelled as an orphan) or gone (thread
   * deleted); the owner should stop them, since nothing it does will be recorded.
   */
  ended: Array<{ run_id: string; status: RunStatus | "deleted" }>;
}

const ORPHAN_ERROR_TEXT = ["the process running this run stopped (lease expired at ", "); start the run again"] as const;

/** The error text of a run whose owner stopped renewing its lease. */
export function orphanedRunError(leaseUntil: string): string {
  return `${ORPHAN_ERROR_TEXT[0]}${leaseUntil}${ORPHAN_ERROR_TEXT[1]}`;
}

/**
 * Run records: one row per run, written when it starts and updated when it ends. Like threads, every read
 * takes the owner, so another user's run behaves exactly like a missing one.
 */
export interface RunStore {
  create(input: CreateRunInput): Promise<RunRecord>;
  /** Sets the final status (and error text, redacted); a run already finished keeps its first outcome. */
  finish(runId: string, status: Exclude<RunStatus, "running">, error?: string | null): Promise<void>;
  /**
   * One run. A running row whose lease has expired is first finished as an error (see `sweepExpired`), so a
   * reader never sees a dead process's run as running; `sweep: false` reads the row as it is.
   */
  get(userId: string, runId: string, options?: { sweep?: boolean }): Promise<RunRecord | null>;
  /** Newest first; expired running rows among them are swept first, as in `get`. */
  list(userId: string, threadId: string, options?: { limit?: number; offset?: number }): Promise<RunRecord[]>;
  /** Deletes a thread's run records; returns how many. */
  deleteThread(userId: string, threadId: string): Promise<number>;
  /**
   * Extends the lease of the owner's runs that are still running, and reports which of them have a cancel
   * request and which are no longer running in the record.
   */
  renewLeases(ownerId: string, runIds: readonly string[], leaseMs: number): Promise<LeaseRenewal>;
  /** Records a cancel request on a running run (the first request's time is kept); false if it is not running. */
  requestCancel(runId: string): Promise<boolean>;
  /**
   * Finishes running rows whose lease has expired (all of them, or only `runIds`) as `error` with
   * `orphanedRunError`, or as `cancelled`; returns the ids this call finished. The update re-checks status and
   * lease in its WHERE, so of two concurrent sweepers only one changes a row, and a lease renewed in time is
   * never swept.
   */
  sweepExpired(options?: { runIds?: readonly string[]; as?: "error" | "cancelled" }): Promise<string[]>;
}

// Bound parameters per statement stay far below SQLite's and PostgreSQL's limits.
const ID_CHUNK = 500;

export function createRunStore(database: AntlerDatabase, options: { now?: () => Date } = {}): RunStore {
  const db = database.db.withTables<{ antler_runs: RunsTable }>();
  const now = options.now ?? (() => new Date());
  const sweepExpired: RunStore["sweepExpired"] = async (sweepOptions = {}) => {
    const at = now().toISOString();
    const as = sweepOptions.as ?? "error";
    const groups = sweepOptions.runIds === undefined ? [undefined] : chunks(sweepOptions.runIds);
    const swept: string[] = [];
    for (const ids of groups) {
      // Look first (read-only, served by antler_runs_lease), write only when there is something to finish.
      let candidates = db.selectFrom(RUNS_TABLE).select("run_id").where("status", "=", "running").where("lease_until", "<", at);
      if (ids) candidates = candidates.where("run_id", "in", ids);
      const found = (await candidates.limit(ID_CHUNK).execute()).map((row) => row.run_id);
      if (found.length === 0) continue;
      const rows = await db
        .updateTable(RUNS_TABLE)
        .set({
          status: as,
          // Built in SQL so each row names its own lease, in the same statement that checks it.
          error:
            as === "error"
              ? sql<string>`cast(${ORPHAN_ERROR_TEXT[0]} as text) || lease_until || cast(${ORPHAN_ERROR_TEXT[1]} as text)`
              : null,
          updated_at: at,
        })
        .where("run_id", "in", found)
        .where("status", "=", "running")
        .where("lease_until", "<", at)
        .returning("run_id")
        .execute();
      swept.push(...rows.map((row) => row.run_id));
    }
    return swept;
  };

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
        owner_id: input.owner?.id ?? null,
        lease_until: input.owner ? new Date(now().getTime() + input.owner.leaseMs).toISOString() : null,
        cancel_requested_at: null,
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
    async get(userId, runId, getOptions = {}) {
      const read = () => db.selectFrom(RUNS_TABLE).selectAll().where("user_id", "=", userId).where("run_id", "=", runId).executeTakeFirst();
      let row = await read();
      if (row && getOptions.sweep !== false && isExpired(row, now())) {
        await sweepExpired({ runIds: [row.run_id] });
        row = await read();
      }
      return row ? toRecord(row) : null;
    },
    async list(userId, threadId, listOptions = {}) {
      const limit = Math.min(1000, Math.max(1, Math.trunc(listOptions.limit ?? 50)));
      const offset = Math.max(0, Math.trunc(listOptions.offset ?? 0));
      const read = () =>
        db
          .selectFrom(RUNS_TABLE)
          .selectAll()
          .where("user_id", "=", userId)
          .where("thread_id", "=", threadId)
          .orderBy("created_at", "desc")
          .orderBy("run_id", "desc")
          .limit(limit)
          .offset(offset)
          .execute();
      let rows = await read();
      const at = now();
      const expired = rows.filter((row) => isExpired(row, at)).map((row) => row.run_id);
      // Reads stay read-only unless there is an orphan to finish, so listing never takes SQLite's write lock.
      if (expired.length > 0) {
        await sweepExpired({ runIds: expired });
        rows = await read();
      }
      return rows.map(toRecord);
    },
    async deleteThread(userId, threadId) {
      const result = await db.deleteFrom(RUNS_TABLE).where("user_id", "=", userId).where("thread_id", "=", threadId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async renewLeases(ownerId, runIds, leaseMs) {
      const renewal: LeaseRenewal = { cancelRequested: [], ended: [] };
      const leaseUntil = new Date(now().getTime() + leaseMs).toISOString();
      for (const ids of chunks(runIds)) {
        // Conditional on running: a row already swept or cancelled stays as it is, and the owner hears of it below.
        await db
          .updateTable(RUNS_TABLE)
          .set({ lease_until: leaseUntil })
          .where("owner_id", "=", ownerId)
          .where("status", "=", "running")
          .where("run_id", "in", ids)
          .execute();
        const rows = await db
          .selectFrom(RUNS_TABLE)
          .select(["run_id", "status", "cancel_requested_at"])
          .where("run_id", "in", ids)
          .execute();
        const seen = new Set<string>();
        for (const row of rows) {
          seen.add(row.run_id);
          if (row.status !== "running") renewal.ended.push({ run_id: row.run_id, status: row.status as RunStatus });
          else if (row.cancel_requested_at !== null) renewal.cancelRequested.push(row.run_id);
        }
        for (const id of ids) if (!seen.has(id)) renewal.ended.push({ run_id: id, status: "deleted" });
      }
      return renewal;
    },
    async requestCancel(runId) {
      const at = now().toISOString();
      const result = await db
        .updateTable(RUNS_TABLE)
        .set({ cancel_requested_at: sql<string>`coalesce(cancel_requested_at, ${at})` })
        .where("run_id", "=", runId)
        .where("status", "=", "running")
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    sweepExpired,
  };
}

function isExpired(row: Pick<RunsTable, "status" | "lease_until">, at: Date): boolean {
  return row.status === "running" && row.lease_until !== null && row.lease_until < at.toISOString();
}

function chunks(ids: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) out.push(ids.slice(i, i + ID_CHUNK));
  return out;
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
