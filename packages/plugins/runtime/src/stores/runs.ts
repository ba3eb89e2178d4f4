import { type AntlerDatabase, AntlerError, type Migration, redactSecrets } from "@antler/kernel";
import { type Kysely, sql } from "kysely";
import { RuntimeErrorCodes } from "../errors.js";
import { cancelQueuedRun, claimQueuedRuns, oldestQueuedWaitMs } from "./run-queue.js";
import { forgetRunToolCalls, type RunFence, type TakeoverRound, takeOverExpired, takeoverMigration } from "./run-takeover.js";
import type { RunsTable } from "./runs-table.js";

export const RUNS_TABLE = "antler_runs";

/**
 * `paused`: waiting for a person (an approval) with its interrupt stored; it holds no lease and no process, and
 * any instance may resume it. It keeps its thread busy for other runs until it resumes or is cancelled.
 */
export type RunStatus = "pending" | "running" | "paused" | "success" | "error" | "cancelled";

/** Statuses of a run that holds or waits for its thread: leased, renewed, swept and cancellable. */
const ACTIVE_STATUSES = ["pending", "running"] as const;

/**
 * What a run does when its thread is busy (LangGraph's names): `reject` fails at once with THREAD_BUSY,
 * `enqueue` waits its turn (first come, first served per thread), `interrupt` cancels the runs ahead of it and
 * then waits for them to end.
 */
export type MultitaskStrategy = "reject" | "enqueue" | "interrupt";

export type { RunsTable } from "./runs-table.js";

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
  {
    name: "runs/003-one-running-per-thread",
    async up(db: Kysely<unknown>) {
      const runs = db.withTables<{ antler_runs: RunsTable }>();
      // Before the index can exist, a thread may hold several running rows (the race this migration closes):
      // all but the newest are finished as errors, so the unique index can be built.
      const at = new Date().toISOString();
      await runs
        .updateTable(RUNS_TABLE)
        .set({ status: "error", error: "superseded: another run was running on the same thread when runs/003 was applied", updated_at: at })
        .where("status", "=", "running")
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom(`${RUNS_TABLE} as newer`)
              .select(sql<number>`1`.as("one"))
              .whereRef("newer.user_id", "=", `${RUNS_TABLE}.user_id`)
              .whereRef("newer.thread_id", "=", `${RUNS_TABLE}.thread_id`)
              .where("newer.status", "=", "running")
              .where((eb) =>
                eb.or([
                  eb("newer.created_at", ">", eb.ref(`${RUNS_TABLE}.created_at`)),
                  eb.and([
                    eb("newer.created_at", "=", eb.ref(`${RUNS_TABLE}.created_at`)),
                    eb("newer.run_id", ">", eb.ref(`${RUNS_TABLE}.run_id`)),
                  ]),
                ]),
              ),
          ),
        )
        .execute();
      // The arbiter between instances: of two runs promoted or started on one thread at once, the database
      // lets exactly one be running. Partial unique indexes exist in SQLite and PostgreSQL alike.
      await db.schema
        .createIndex("antler_runs_one_running")
        .on(RUNS_TABLE)
        .columns(["user_id", "thread_id"])
        .unique()
        .where(sql.ref("status"), "=", sql.lit("running"))
        .execute();
    },
  },
  {
    name: "runs/004-pauses",
    async up(db: Kysely<unknown>) {
      for (const column of ["interrupt", "resume_by"]) {
        await db.schema.alterTable(RUNS_TABLE).addColumn(column, "text").execute();
      }
      // Serves the expiry sweep: paused rows whose deadline is in the past.
      await db.schema.createIndex("antler_runs_resume_by").on(RUNS_TABLE).columns(["status", "resume_by"]).execute();
    },
  },
  {
    name: "runs/005-cost",
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable(RUNS_TABLE).addColumn("cost_usd", "double precision").execute();
      await db.schema.alterTable(RUNS_TABLE).addColumn("model_attempts", "text").execute();
      // Serves the budget check: one user's runs since the start of the day.
      await db.schema.createIndex("antler_runs_user_day").on(RUNS_TABLE).columns(["user_id", "created_at"]).execute();
    },
  },
  takeoverMigration,
  {
    name: "runs/007-start-input",
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable(RUNS_TABLE).addColumn("start_input", "text").execute();
    },
  },
];

/**
 * What a paused run waits on: LangGraph's interrupt (its id and value, as the graph raised it) and what resuming
 * needs that the record's redacted kwargs do not keep (the run's context).
 */
export interface PausedInterrupt {
  /** LangGraph's interrupt id. */
  id: string;
  /** The interrupt's value; `kind` names who handles it (`approval`), `on_timeout` is the resume value at expiry. */
  value: { kind?: string; expires_at?: string; on_timeout?: unknown } & Record<string, unknown>;
}

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
  /** A paused run's pending interrupt (`value` is what the stream's `run_paused` event showed); null otherwise. */
  interrupt: PausedInterrupt | null;
  /** A paused run's deadline (ISO-8601), or null. */
  resume_by: string | null;
  /** USD its model calls cost, subagents included (models with `pricing:`); null until it ends, or when none is priced. */
  cost_usd: number | null;
  /** Attempts of the model calls that needed more than one (retries, fallbacks), in order. */
  model_attempts: Array<Record<string, unknown>>;
  /** 1, plus one for each time another instance took the run over after its process stopped. */
  attempt: number;
}

/** What a paused run's record keeps for whoever resumes it (never shown over the API). */
export interface PauseRecord {
  interrupt: PausedInterrupt;
  /** The run's context as it ran (the kwargs copy is redacted). */
  context: Record<string, unknown>;
}

/** What a run's end adds to its record besides the status. */
export interface RunEndFacts {
  costUsd?: number | null;
  modelAttempts?: ReadonlyArray<Record<string, unknown>>;
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
  /** `pending`: queued behind the thread's other runs until `promote` starts it. Default `running`. */
  status?: "pending" | "running";
  /** Created strictly after this time (ISO-8601): the newest run ahead of it on its thread, so the queue keeps order. */
  after?: string;
}

/** Why a run could not start on its thread: the run that holds it (or, with none running, the first queued one). */
export interface ThreadHolder {
  run_id: string;
  status: "pending" | "running" | "paused";
}

/** What one `promote` attempt found. */
export type PromoteResult =
  | { kind: "started" }
  | { kind: "waiting" }
  /** Someone asked to cancel it while it waited (from any instance), or its record ended or went away. */
  | { kind: "stop"; reason: string };

/** What a heartbeat learns about the owner's runs. */
export interface LeaseRenewal {
  /** Still running, and someone asked (from another instance) to cancel them. */
  cancelRequested: string[];
  /**
   * No longer running in the record (swept after a missed lease, cancelled as an orphan) or gone (thread
   * deleted); the owner should stop them, since nothing it does will be recorded.
   */
  ended: Array<{ run_id: string; status: RunStatus | "deleted" | "taken_over" }>;
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
  /**
   * Writes the run's record. A `running` row is refused by the database (unique partial index) while the
   * thread has another running row; that is thrown as THREAD_BUSY naming the holder. Use `startExclusive`
   * for the `reject` strategy: it also clears dead holders and respects queued runs.
   */
  create(input: CreateRunInput): Promise<RunRecord>;
  /**
   * Starts the run only if its thread is free: no running row, and no queued run with a live lease. Expired
   * holders are swept first. Two instances racing here cannot both start: the database's unique index admits
   * one running row per thread. Throws THREAD_BUSY naming the holder otherwise.
   */
  startExclusive(input: CreateRunInput): Promise<RunRecord>;
  /**
   * Moves a queued run to running when it is its turn: nothing running on the thread and no live queued run
   * created before it. Race-free across instances through the same unique index.
   */
  promote(run: Pick<RunRecord, "run_id" | "user_id" | "thread_id" | "created_at">, leaseMs?: number): Promise<PromoteResult>;
  /** The thread's pending and running runs, oldest first (expired ones swept first). */
  listActive(userId: string, threadId: string): Promise<RunRecord[]>;
  /** Sets the final status (and error text, redacted); a run already finished keeps its first outcome. */
  finish(
    runId: string,
    status: Exclude<RunStatus, "running" | "pending">,
    error?: string | null,
    facts?: RunEndFacts,
    fence?: RunFence,
  ): Promise<void>;
  /** USD the user's runs created at or after `since` (ISO-8601) cost, as their records say. */
  costSince(userId: string, since: string): Promise<number>;
  /**
   * One run. A queued row whose lease has expired is first finished as an error (see `sweepExpired`); a running
   * one stays running until another instance takes it over (`takeOver`). `sweep: false` reads the row as it is.
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
  /**
   * The owner stops running the run without ending it (shutting down): its lease expires now, so another instance
   * takes it over at its next heartbeat. Fenced: false when the run is no longer the owner's running run.
   */
  releaseLease(runId: string, fence: RunFence): Promise<boolean>;
  /** Records a cancel request on a pending or running run (the first request's time is kept); false if it has ended. */
  requestCancel(runId: string): Promise<boolean>;
  /**
   * Finishes rows whose lease has expired (all of them, or only `runIds`) as `error` with `orphanedRunError`
   * (queued rows only: a running one is taken over instead), or as `cancelled` (queued and running); returns the
   * ids this call finished. The update re-checks status and
   * lease in its WHERE, so of two concurrent sweepers only one changes a row, and a lease renewed in time is
   * never swept.
   */
  sweepExpired(options?: { runIds?: readonly string[]; as?: "error" | "cancelled" }): Promise<string[]>;
  /**
   * Running → paused: stores the interrupt (and the context to resume with), drops owner and lease. False when the
   * run is no longer running (cancelled meanwhile).
   */
  /** `facts`: what the part of the run before the pause cost; a run's parts add up in its record. */
  pause(runId: string, pause: PauseRecord, resumeBy: string | null, facts?: RunEndFacts, fence?: RunFence): Promise<boolean>;
  /**
   * Takes over running runs whose lease expired (at most `limit`): each is the caller's under the next attempt, or
   * past `maxAttempts` ends as an error (RUN_ATTEMPTS_EXHAUSTED). Of racing instances, one gets each run.
   */
  takeOver(owner: { id: string; leaseMs: number }, options: { maxAttempts: number; limit: number }): Promise<TakeoverRound>;
  /** Runs waiting in the queue (pending), across users: the operators' gauge. */
  countPending(): Promise<number>;
  /** How long the oldest pending run has waited, in ms (0: none waits). */
  oldestPendingWaitMs(): Promise<number>;
  /**
   * Claims up to `limit` queued runs (`enqueue`d: pending with no owner) that may start now, oldest first and in
   * each thread's order, as running under `owner`'s lease, attempt 1. Of executors claiming at once, one gets each run.
   */
  claimQueued(owner: { id: string; leaseMs: number }, limit: number): Promise<RunRecord[]>;
  /** Ends a queued run that no executor has claimed as `cancelled`; false when it is not (any more) queued. */
  cancelQueued(runId: string): Promise<boolean>;
  /**
   * Paused → running under `owner`, only if it is still paused (and, with `interruptId`, still waits on that
   * interrupt): of two instances resuming at once, exactly one gets the run. Returns what the pause kept, or null.
   */
  claimPaused(runId: string, owner: { id: string; leaseMs: number }, interruptId?: string): Promise<PauseRecord | null>;
  /** Paused runs whose deadline has passed (oldest deadline first), at most `limit`. */
  listExpiredPauses(limit?: number): Promise<RunRecord[]>;
  /** How many runs are paused, across users (the operators' gauge). */
  countPaused(): Promise<number>;
  /** Paused runs of every thread of the user, or of all users (operators), newest first. */
  listPaused(options?: { userId?: string; threadId?: string; limit?: number }): Promise<RunRecord[]>;
  /** Runs in one status across threads (the user's, or every user's), most recently updated first: operators' lists. */
  listByStatus(status: RunStatus, options?: { userId?: string; limit?: number }): Promise<RunRecord[]>;
  /**
   * The run's input and context as they were given, unredacted, while it is pending or running (null after it ended
   * or paused, or for a row written before runs/007): what a queued or taken-over run starts from. Never for display.
   */
  startInput(runId: string): Promise<RunStartInput | null>;
}

/** A run's input as given (see `RunStore.startInput`). */
export interface RunStartInput {
  input: unknown;
  context: Record<string, unknown>;
}

// Bound parameters per statement stay far below SQLite's and PostgreSQL's limits.
const ID_CHUNK = 500;

/**
 * The columns a run's end (or pause) writes from its facts: its cost is added to what earlier parts of the run (before
 * a pause) cost; its attempts replace the record's when it has any.
 */
function endFactsSet(facts: RunEndFacts) {
  const attempts = facts.modelAttempts?.length ? redactSecrets(JSON.stringify(facts.modelAttempts)) : null;
  return {
    ...(typeof facts.costUsd === "number" ? { cost_usd: sql<number>`coalesce(cost_usd, 0) + ${facts.costUsd}` } : {}),
    ...(attempts !== null ? { model_attempts: attempts } : {}),
  };
}

export function createRunStore(database: AntlerDatabase, options: { now?: () => Date } = {}): RunStore {
  const db = database.db.withTables<{ antler_runs: RunsTable }>();
  const now = options.now ?? (() => new Date());
  const sweepExpired: RunStore["sweepExpired"] = async (sweepOptions = {}) => {
    const at = now().toISOString();
    const as = sweepOptions.as ?? "error";
    // A running orphan is continued by whoever takes it over; only a cancel finishes it here.
    const statuses: string[] = as === "error" ? ["pending"] : [...ACTIVE_STATUSES];
    const groups = sweepOptions.runIds === undefined ? [undefined] : chunks(sweepOptions.runIds);
    const swept: string[] = [];
    for (const ids of groups) {
      // Look first (read-only, served by antler_runs_lease), write only when there is something to finish.
      let candidates = db.selectFrom(RUNS_TABLE).select("run_id").where("status", "in", statuses).where("lease_until", "<", at);
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
          start_input: null,
        })
        .where("run_id", "in", found)
        .where("status", "in", statuses)
        .where("lease_until", "<", at)
        .returning("run_id")
        .execute();
      swept.push(...rows.map((row) => row.run_id));
    }
    return swept;
  };
  // Dead holders (an instance that stopped renewing) must not keep a thread busy forever.
  const sweepThread = async (userId: string, threadId: string) => {
    const at = now().toISOString();
    const expired = await db
      .selectFrom(RUNS_TABLE)
      .select("run_id")
      .where("user_id", "=", userId)
      .where("thread_id", "=", threadId)
      .where("status", "=", "pending")
      .where("lease_until", "<", at)
      .execute();
    if (expired.length > 0) await sweepExpired({ runIds: expired.map((row) => row.run_id) });
  };
  const activeRows = (userId: string, threadId: string) =>
    db
      .selectFrom(RUNS_TABLE)
      .selectAll()
      .where("user_id", "=", userId)
      .where("thread_id", "=", threadId)
      .where("status", "in", ACTIVE_STATUSES)
      .orderBy("created_at", "asc")
      .orderBy("run_id", "asc")
      .execute();
  const holder = async (userId: string, threadId: string): Promise<ThreadHolder | null> => {
    const rows = await activeRows(userId, threadId);
    const row = rows.find((r) => r.status === "running") ?? rows[0];
    return row ? { run_id: row.run_id, status: row.status as ThreadHolder["status"] } : null;
  };
  const insert = async (input: CreateRunInput): Promise<RunRecord> => {
    // Strictly after `after` (the thread's newest run), so runs queued within one millisecond keep their order.
    const floor = input.after ? Date.parse(input.after) + 1 : Number.NEGATIVE_INFINITY;
    const at = new Date(Math.max(now().getTime(), floor)).toISOString();
    const row: RunsTable = {
      run_id: input.runId,
      thread_id: input.threadId,
      user_id: input.userId,
      status: input.status ?? "running",
      trace_id: input.traceId,
      model: input.model,
      kwargs: encodeKwargs(input.kwargs),
      error: null,
      created_at: at,
      updated_at: at,
      owner_id: input.owner?.id ?? null,
      lease_until: input.owner ? new Date(now().getTime() + input.owner.leaseMs).toISOString() : null,
      cancel_requested_at: null,
      interrupt: null,
      resume_by: null,
      cost_usd: null,
      model_attempts: null,
      attempt: 1,
      start_input: encodeStartInput(input.kwargs),
    };
    try {
      await db.insertInto(RUNS_TABLE).values(row).execute();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw threadBusyError(input.threadId, await holder(input.userId, input.threadId));
    }
    return toRecord(row);
  };

  const pausedRow = (userId: string, threadId: string) =>
    db
      .selectFrom(RUNS_TABLE)
      .select("run_id")
      .where("user_id", "=", userId)
      .where("thread_id", "=", threadId)
      .where("status", "=", "paused")
      .executeTakeFirst();

  return {
    create: insert,
    async startExclusive(input) {
      await sweepThread(input.userId, input.threadId);
      const queued = (await activeRows(input.userId, input.threadId)).find((row) => row.status === "pending");
      if (queued) throw threadBusyError(input.threadId, await holder(input.userId, input.threadId));
      const paused = await pausedRow(input.userId, input.threadId);
      if (paused) throw threadBusyError(input.threadId, { run_id: paused.run_id, status: "paused" });
      return insert({ ...input, status: "running" });
    },
    async promote(run, leaseMs) {
      await sweepThread(run.user_id, run.thread_id);
      const at = now().toISOString();
      let started = false;
      try {
        const result = await db
          .updateTable(RUNS_TABLE)
          .set({
            status: "running",
            updated_at: at,
            ...(leaseMs === undefined ? {} : { lease_until: new Date(now().getTime() + leaseMs).toISOString() }),
          })
          .where("run_id", "=", run.run_id)
          .where("status", "=", "pending")
          .where("cancel_requested_at", "is", null)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom(`${RUNS_TABLE} as other`)
                  .select(sql<number>`1`.as("one"))
                  .where("other.user_id", "=", run.user_id)
                  .where("other.thread_id", "=", run.thread_id)
                  .where("other.run_id", "!=", run.run_id)
                  .where((eb) =>
                    eb.or([
                      eb("other.status", "=", "running"),
                      // A paused run keeps the thread until it resumes or is cancelled.
                      eb("other.status", "=", "paused"),
                      // First come, first served: a live queued run created before this one goes first.
                      eb.and([
                        eb("other.status", "=", "pending"),
                        eb.or([
                          eb("other.created_at", "<", run.created_at),
                          eb.and([eb("other.created_at", "=", run.created_at), eb("other.run_id", "<", run.run_id)]),
                        ]),
                      ]),
                    ]),
                  ),
              ),
            ),
          )
          .executeTakeFirst();
        started = Number(result.numUpdatedRows) > 0;
      } catch (error) {
        // Another instance promoted or started a run on this thread in the same instant: the index kept one.
        if (!isUniqueViolation(error)) throw error;
      }
      if (started) return { kind: "started" };
      const own = await db
        .selectFrom(RUNS_TABLE)
        .select(["status", "cancel_requested_at"])
        .where("run_id", "=", run.run_id)
        .executeTakeFirst();
      if (!own) return { kind: "stop", reason: "its run record is gone (thread deleted)" };
      if (own.status !== "pending") return { kind: "stop", reason: `its run record ended as ${own.status} while it waited` };
      if (own.cancel_requested_at !== null) return { kind: "stop", reason: "cancelled by request while it waited its turn" };
      return { kind: "waiting" };
    },
    async listActive(userId, threadId) {
      await sweepThread(userId, threadId);
      return (await activeRows(userId, threadId)).map(toRecord);
    },
    async finish(runId, status, error = null, facts = {}, fence) {
      let query = db
        .updateTable(RUNS_TABLE)
        .set({
          status,
          error: error === null ? null : redactSecrets(error),
          updated_at: now().toISOString(),
          interrupt: null,
          resume_by: null,
          start_input: null,
          ...endFactsSet(facts),
        })
        .where("run_id", "=", runId)
        .where("status", "in", [...ACTIVE_STATUSES, "paused"]);
      if (fence) query = query.where("owner_id", "=", fence.ownerId).where("attempt", "=", fence.attempt);
      const result = await query.executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) await forgetRunToolCalls(database.db as never, runId);
    },
    async costSince(userId, since) {
      const row = await db
        .selectFrom(RUNS_TABLE)
        .select(sql<number | string | null>`sum(cost_usd)`.as("total"))
        .where("user_id", "=", userId)
        .where("created_at", ">=", since)
        .executeTakeFirst();
      return Number(row?.total ?? 0);
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
          .where("status", "in", ACTIVE_STATUSES)
          .where("run_id", "in", ids)
          .execute();
        const rows = await db
          .selectFrom(RUNS_TABLE)
          .select(["run_id", "status", "cancel_requested_at", "owner_id"])
          .where("run_id", "in", ids)
          .execute();
        const seen = new Set<string>();
        for (const row of rows) {
          seen.add(row.run_id);
          if (!isActive(row.status)) renewal.ended.push({ run_id: row.run_id, status: row.status as RunStatus });
          else if (row.owner_id !== ownerId) renewal.ended.push({ run_id: row.run_id, status: "taken_over" });
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
        .where("status", "in", ACTIVE_STATUSES)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    sweepExpired,
    async pause(runId, pause, resumeBy, facts = {}, fence) {
      let query = db
        .updateTable(RUNS_TABLE)
        .set({
          ...endFactsSet(facts),
          status: "paused",
          interrupt: JSON.stringify(pause),
          resume_by: resumeBy,
          owner_id: null,
          lease_until: null,
          cancel_requested_at: null,
          start_input: null,
          updated_at: now().toISOString(),
        })
        .where("run_id", "=", runId)
        .where("status", "=", "running");
      if (fence) query = query.where("owner_id", "=", fence.ownerId).where("attempt", "=", fence.attempt);
      const result = await query.executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    takeOver: (owner, takeOptions) => takeOverExpired(database.db as never, owner, { ...takeOptions, now: now() }),
    async countPending() {
      const row = await db
        .selectFrom(RUNS_TABLE)
        .select((eb) => eb.fn.countAll<number | string | bigint>().as("n"))
        .where("status", "=", "pending")
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    oldestPendingWaitMs: () => oldestQueuedWaitMs(database.db as never, now()),
    async claimQueued(owner, limit) {
      return (await claimQueuedRuns(database.db as never, database.dialect, owner, { limit, now: now() })).map(toRecord);
    },
    cancelQueued: (runId) => cancelQueuedRun(database.db as never, runId, now()),
    async claimPaused(runId, owner, interruptId) {
      const row = await db.selectFrom(RUNS_TABLE).select(["interrupt", "status"]).where("run_id", "=", runId).executeTakeFirst();
      if (row?.status !== "paused" || !row.interrupt) return null;
      const pause = decodePause(row.interrupt);
      if (!pause || (interruptId !== undefined && pause.interrupt.id !== interruptId)) return null;
      // Conditional on the very interrupt read above: a second claimer (or a resume after a newer pause) changes nothing.
      const result = await db
        .updateTable(RUNS_TABLE)
        .set({
          status: "running",
          owner_id: owner.id,
          lease_until: new Date(now().getTime() + owner.leaseMs).toISOString(),
          interrupt: null,
          resume_by: null,
          updated_at: now().toISOString(),
        })
        .where("run_id", "=", runId)
        .where("status", "=", "paused")
        .where("interrupt", "=", row.interrupt)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0 ? pause : null;
    },
    async listExpiredPauses(limit = 50) {
      const rows = await db
        .selectFrom(RUNS_TABLE)
        .selectAll()
        .where("status", "=", "paused")
        .where("resume_by", "<", now().toISOString())
        .orderBy("resume_by", "asc")
        .limit(limit)
        .execute();
      return rows.map(toRecord);
    },
    async countPaused() {
      const row = await db
        .selectFrom(RUNS_TABLE)
        .select((eb) => eb.fn.countAll<number | string | bigint>().as("n"))
        .where("status", "=", "paused")
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async listByStatus(status, listOptions = {}) {
      let query = db.selectFrom(RUNS_TABLE).selectAll().where("status", "=", status);
      if (listOptions.userId !== undefined) query = query.where("user_id", "=", listOptions.userId);
      const rows = await query
        .orderBy("updated_at", "desc")
        .limit(Math.min(1000, Math.max(1, Math.trunc(listOptions.limit ?? 100))))
        .execute();
      return rows.map(toRecord);
    },
    async releaseLease(runId, fence) {
      const result = await db
        .updateTable(RUNS_TABLE)
        // A millisecond in the past: takeover looks for leases strictly before its own now.
        .set({ lease_until: new Date(now().getTime() - 1).toISOString(), updated_at: now().toISOString() })
        .where("run_id", "=", runId)
        .where("status", "=", "running")
        .where("owner_id", "=", fence.ownerId)
        .where("attempt", "=", fence.attempt)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async startInput(runId) {
      const row = await db.selectFrom(RUNS_TABLE).select("start_input").where("run_id", "=", runId).executeTakeFirst();
      return row?.start_input ? decodeStartInput(row.start_input) : null;
    },
    async listPaused(listOptions = {}) {
      let query = db.selectFrom(RUNS_TABLE).selectAll().where("status", "=", "paused");
      if (listOptions.userId !== undefined) query = query.where("user_id", "=", listOptions.userId);
      if (listOptions.threadId !== undefined) query = query.where("thread_id", "=", listOptions.threadId);
      const rows = await query
        .orderBy("updated_at", "desc")
        .limit(Math.min(1000, Math.max(1, Math.trunc(listOptions.limit ?? 100))))
        .execute();
      return rows.map(toRecord);
    },
  };
}

function decodePause(text: string): PauseRecord | null {
  try {
    const parsed = JSON.parse(text) as PauseRecord;
    return parsed && typeof parsed === "object" && parsed.interrupt && typeof parsed.interrupt.id === "string" ? parsed : null;
  } catch {
    return null;
  }
}

function isExpired(row: Pick<RunsTable, "status" | "lease_until">, at: Date): boolean {
  return isActive(row.status) && row.lease_until !== null && row.lease_until < at.toISOString();
}

function isActive(status: string): boolean {
  return (ACTIVE_STATUSES as readonly string[]).includes(status);
}

/** SQLite's and PostgreSQL's unique-constraint failures, whichever driver raised them. */
function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || /UNIQUE constraint failed|duplicate key value/i.test(error.message);
}

/** The coded refusal of a run on a busy thread (strategy `reject`). */
export function threadBusyError(threadId: string, held: ThreadHolder | null): AntlerError {
  const state = held?.status === "running" ? "running" : held?.status === "paused" ? "paused for approval" : "queued";
  const by = held ? `run ${held.run_id} is ${state} on it` : "another run holds it";
  return new AntlerError(RuntimeErrorCodes.THREAD_BUSY, `thread ${JSON.stringify(threadId)} is busy: ${by}`, {
    hint: 'Wait for that run to end (a paused run: resume it with POST /api/threads/{id}/runs/{run_id}/resume), cancel it (POST /api/threads/{id}/runs/{run_id}/cancel), or send multitask_strategy "enqueue" to queue behind it or "interrupt" to cancel it and run.',
    details: { thread_id: threadId, running_run_id: held?.run_id ?? null, holder_status: held?.status ?? null },
  });
}

function chunks(ids: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) out.push(ids.slice(i, i + ID_CHUNK));
  return out;
}

function encodeKwargs(kwargs: Record<string, unknown>): string {
  try {
    // Prose mode: the input is what a person wrote, where "my password is ..." is a secret like any other.
    return JSON.stringify(redactSecrets(kwargs, { prose: true }));
  } catch {
    return JSON.stringify({ unserialisable: true });
  }
}

/**
 * The unredacted copy of what the run starts from. The thread's checkpoint will hold the same message as soon as the
 * run reaches the model, so this keeps no secret longer than the thread does; it only bridges the gap before that
 * (a queued run, or a run whose process stopped before its first checkpoint), which the redacted kwargs cannot.
 */
function encodeStartInput(kwargs: Record<string, unknown>): string | null {
  try {
    const context = kwargs.context && typeof kwargs.context === "object" ? kwargs.context : {};
    return JSON.stringify({ input: kwargs.input ?? null, context });
  } catch {
    return null;
  }
}

function decodeStartInput(text: string): RunStartInput | null {
  try {
    const parsed = JSON.parse(text) as Partial<RunStartInput>;
    const context = parsed.context && typeof parsed.context === "object" ? parsed.context : {};
    return { input: parsed.input ?? null, context };
  } catch {
    return null;
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
    interrupt: row.interrupt ? (decodePause(row.interrupt)?.interrupt ?? null) : null,
    resume_by: row.resume_by ?? null,
    cost_usd: row.cost_usd === null || row.cost_usd === undefined ? null : Number(row.cost_usd),
    model_attempts: parseAttempts(row.model_attempts),
    attempt: Number(row.attempt ?? 1),
  };
}

function parseAttempts(text: string | null | undefined): Array<Record<string, unknown>> {
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as Array<Record<string, unknown>>) : [];
  } catch {
    return [];
  }
}
