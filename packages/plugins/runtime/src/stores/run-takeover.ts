import type { Migration } from "@antler/kernel";
import { type Kysely, sql } from "kysely";
import { RuntimeErrorCodes } from "../errors.js";
import type { RunsTable } from "./runs-table.js";

const RUNS_TABLE = "antler_runs";
export const TOOL_CALLS_TABLE = "antler_run_tool_calls";

/**
 * Which attempt of a run an instance holds. Every write the holder makes to the run (its record's end or pause,
 * a checkpoint, the start of a non-idempotent tool call) is conditional on the record still naming this owner and
 * attempt, so an instance whose run was taken over (it stalled past its lease, or was cut off) can never write again.
 */
export interface RunFence {
  ownerId: string;
  attempt: number;
}

/** One non-idempotent tool call that started (written just before the tool runs). */
export interface ToolCallsTable {
  run_id: string;
  tool_call_id: string;
  tool: string;
  attempt: number;
  started_at: string;
}

type Db = Kysely<{ antler_runs: RunsTable; antler_run_tool_calls: ToolCallsTable }>;

export const takeoverMigration: Migration = {
  name: "runs/006-takeover",
  async up(db: Kysely<unknown>) {
    // Rows written before it are their first attempt.
    await db.schema
      .alterTable(RUNS_TABLE)
      .addColumn("attempt", "integer", (c) => c.notNull().defaultTo(1))
      .execute();
    await db.schema
      .createTable(TOOL_CALLS_TABLE)
      .addColumn("run_id", "text", (c) => c.notNull())
      .addColumn("tool_call_id", "text", (c) => c.notNull())
      .addColumn("tool", "text", (c) => c.notNull())
      .addColumn("attempt", "integer", (c) => c.notNull())
      .addColumn("started_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("antler_run_tool_calls_pk", ["run_id", "tool_call_id"])
      .execute();
  },
};

/** What one takeover round did. */
export interface TakeoverRound {
  /** Runs now held by the caller under a new attempt, to be continued from their last checkpoint. */
  claimed: Array<{ runId: string; userId: string; threadId: string; attempt: number; leaseExpiredAt: string }>;
  /** Runs that had used up `maxAttempts` and were finished as errors instead. */
  exhausted: string[];
}

/** The error text of a run stopped after `maxAttempts` (the code leads, so clients can match it). */
export function attemptsExhaustedError(attempts: number, leaseUntil: string): string {
  return `${RuntimeErrorCodes.RUN_ATTEMPTS_EXHAUSTED}: the process running this run stopped ${attempts} time(s) (last lease expired at ${leaseUntil}); it is not taken over again (runs.max_attempts is ${attempts}). Find what stops the process (look for the run id in its logs), then start the run again`;
}

/**
 * Takes over running runs whose lease has expired: each becomes the caller's under attempt + 1 and a fresh lease, or,
 * past `maxAttempts`, ends as an error. Every update re-checks the lease and attempt it read, so of two instances
 * taking over at once exactly one gets each run, and an owner that renewed in time keeps it.
 */
export async function takeOverExpired(
  db: Db,
  owner: { id: string; leaseMs: number },
  options: { maxAttempts: number; limit: number; now: Date },
): Promise<TakeoverRound> {
  const round: TakeoverRound = { claimed: [], exhausted: [] };
  if (options.limit <= 0) return round;
  const at = options.now.toISOString();
  const rows = await db
    .selectFrom(RUNS_TABLE)
    .select(["run_id", "user_id", "thread_id", "attempt", "lease_until"])
    .where("status", "=", "running")
    .where("lease_until", "<", at)
    .orderBy("lease_until", "asc")
    .limit(options.limit)
    .execute();
  for (const row of rows) {
    const attempt = Number(row.attempt ?? 1);
    const leaseUntil = row.lease_until as string;
    if (attempt >= options.maxAttempts) {
      const result = await db
        .updateTable(RUNS_TABLE)
        .set({
          status: "error",
          error: attemptsExhaustedError(attempt, leaseUntil),
          updated_at: at,
          owner_id: null,
          lease_until: null,
          start_input: null,
        })
        .where("run_id", "=", row.run_id)
        .where("status", "=", "running")
        .where("lease_until", "=", leaseUntil)
        .where("attempt", "=", attempt)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) {
        round.exhausted.push(row.run_id);
        await db.deleteFrom(TOOL_CALLS_TABLE).where("run_id", "=", row.run_id).execute();
      }
      continue;
    }
    const result = await db
      .updateTable(RUNS_TABLE)
      .set({
        owner_id: owner.id,
        attempt: attempt + 1,
        lease_until: new Date(options.now.getTime() + owner.leaseMs).toISOString(),
        updated_at: at,
      })
      .where("run_id", "=", row.run_id)
      .where("status", "=", "running")
      .where("lease_until", "=", leaseUntil)
      .where("attempt", "=", attempt)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) {
      round.claimed.push({
        runId: row.run_id,
        userId: row.user_id,
        threadId: row.thread_id,
        attempt: attempt + 1,
        leaseExpiredAt: leaseUntil,
      });
    }
  }
  return round;
}

/** Whether `fence` still holds the run: running, owned by it, at its attempt. */
export async function fenceHolds(db: Db, runId: string, fence: RunFence): Promise<boolean> {
  const row = await db.selectFrom(RUNS_TABLE).select(["status", "owner_id", "attempt"]).where("run_id", "=", runId).executeTakeFirst();
  return row?.status === "running" && row.owner_id === fence.ownerId && Number(row.attempt) === fence.attempt;
}

/**
 * Notes that a non-idempotent tool call is about to run, in one statement conditional on the fence. `start`: run
 * it; `interrupted`: an earlier attempt of this run already started it (and died before its result was saved), so
 * it must not run again; `fenced`: the caller no longer holds the run.
 */
export async function startToolCall(
  db: Db,
  input: { runId: string; toolCallId: string; tool: string; fence: RunFence; now: Date },
): Promise<"start" | "interrupted" | "fenced"> {
  const { runId, toolCallId, tool, fence } = input;
  const earlier = await db
    .selectFrom(TOOL_CALLS_TABLE)
    .select("attempt")
    .where("run_id", "=", runId)
    .where("tool_call_id", "=", toolCallId)
    .executeTakeFirst();
  if (earlier) return "interrupted";
  try {
    const result = await db
      .insertInto(TOOL_CALLS_TABLE)
      .columns(["run_id", "tool_call_id", "tool", "attempt", "started_at"])
      .expression((eb) =>
        eb
          .selectFrom(RUNS_TABLE)
          .select([
            sql<string>`${runId}`.as("run_id"),
            sql<string>`${toolCallId}`.as("tool_call_id"),
            sql<string>`${tool}`.as("tool"),
            sql<number>`${fence.attempt}`.as("attempt"),
            sql<string>`${input.now.toISOString()}`.as("started_at"),
          ])
          .where("run_id", "=", runId)
          .where("status", "=", "running")
          .where("owner_id", "=", fence.ownerId)
          .where("attempt", "=", fence.attempt),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0 ? "start" : "fenced";
  } catch (error) {
    // Two tasks of one attempt never share a call id; a duplicate is an earlier attempt's row seen late.
    if (isUnique(error)) return "interrupted";
    throw error;
  }
}

/** Forgets a started call that did not run to a result (it paused for an interrupt): its resume runs it. */
export async function forgetToolCall(db: Db, runId: string, toolCallId: string): Promise<void> {
  await db.deleteFrom(TOOL_CALLS_TABLE).where("run_id", "=", runId).where("tool_call_id", "=", toolCallId).execute();
}

/** Drops a finished run's started-call notes (a finished run is never taken over). */
export async function forgetRunToolCalls(db: Db, runId: string): Promise<void> {
  await db.deleteFrom(TOOL_CALLS_TABLE).where("run_id", "=", runId).execute();
}

function isUnique(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || /UNIQUE constraint failed|duplicate key value/i.test(error.message);
}
