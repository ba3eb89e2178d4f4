import type { AntlerDatabase } from "@antler/kernel";
import { type Kysely, sql } from "kysely";
import type { RunsTable } from "./runs-table.js";

const RUNS_TABLE = "antler_runs";

type Db = Kysely<{ antler_runs: RunsTable }>;

/**
 * Queued runs (pending, no owner: `AntlerClient.enqueue`) that may start now, oldest first: not cancelled, and no run
 * of their thread ahead of them (running, paused, or pending and created earlier), so a thread's runs keep their order.
 */
function startable(db: Db, limit: number) {
  return db
    .selectFrom(`${RUNS_TABLE} as queued`)
    .select("queued.run_id")
    .where("queued.status", "=", "pending")
    .where("queued.owner_id", "is", null)
    .where("queued.cancel_requested_at", "is", null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom(`${RUNS_TABLE} as other`)
            .select(sql<number>`1`.as("one"))
            .whereRef("other.user_id", "=", "queued.user_id")
            .whereRef("other.thread_id", "=", "queued.thread_id")
            .whereRef("other.run_id", "!=", "queued.run_id")
            .where((eb) =>
              eb.or([
                eb("other.status", "in", ["running", "paused"]),
                eb.and([
                  eb("other.status", "=", "pending"),
                  eb.or([
                    eb("other.created_at", "<", eb.ref("queued.created_at")),
                    eb.and([eb("other.created_at", "=", eb.ref("queued.created_at")), eb("other.run_id", "<", eb.ref("queued.run_id"))]),
                  ]),
                ]),
              ]),
            ),
        ),
      ),
    )
    .orderBy("queued.created_at", "asc")
    .orderBy("queued.run_id", "asc")
    .limit(limit);
}

/**
 * Claims up to `limit` queued runs for `owner`: each becomes running under its first lease, in one step that no other
 * executor can share: one conditional UPDATE of the rows a subquery chooses. On PostgreSQL the subquery locks them
 * `FOR UPDATE SKIP LOCKED`, so executors claiming at once take different runs and never wait for each other; SQLite
 * serialises writers, so the statement alone is enough. The one-running-run-per-thread index stays the arbiter against a run started on the thread
 * meanwhile (a conflict claims nothing this round). Returns the claimed rows.
 */
export async function claimQueuedRuns(
  db: Db,
  dialect: AntlerDatabase["dialect"],
  owner: { id: string; leaseMs: number },
  options: { limit: number; now: Date },
): Promise<RunsTable[]> {
  if (options.limit <= 0) return [];
  const at = options.now.toISOString();
  const set = {
    status: "running",
    owner_id: owner.id,
    lease_until: new Date(options.now.getTime() + owner.leaseMs).toISOString(),
    updated_at: at,
  };
  try {
    // On PostgreSQL the chosen rows are locked FOR UPDATE SKIP LOCKED in the same statement that claims them: one
    // round trip, and executors claiming at once skip each other's rows instead of waiting on them.
    const chosen = dialect === "postgres" ? startable(db, options.limit).forUpdate().skipLocked() : startable(db, options.limit);
    return await db
      .updateTable(RUNS_TABLE)
      .set(set)
      .where("run_id", "in", chosen)
      .where("status", "=", "pending")
      .where("owner_id", "is", null)
      .returningAll()
      .execute();
  } catch (error) {
    if (isUnique(error)) return [];
    throw error;
  }
}

/** Ends a queued run nobody executes yet as `cancelled`; false when it is not (any more) queued and unowned. */
export async function cancelQueuedRun(db: Db, runId: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable(RUNS_TABLE)
    .set({ status: "cancelled", updated_at: now.toISOString(), start_input: null })
    .where("run_id", "=", runId)
    .where("status", "=", "pending")
    .where("owner_id", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** How long the oldest queued run has waited, in ms (0 when none waits): the operators' gauge next to the depth. */
export async function oldestQueuedWaitMs(db: Db, now: Date): Promise<number> {
  const row = await db
    .selectFrom(RUNS_TABLE)
    .select((eb) => eb.fn.min("created_at").as("oldest"))
    .where("status", "=", "pending")
    .executeTakeFirst();
  const oldest = row?.oldest ? Date.parse(String(row.oldest)) : Number.NaN;
  return Number.isNaN(oldest) ? 0 : Math.max(0, now.getTime() - oldest);
}

function isUnique(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || /UNIQUE constraint failed|duplicate key value/i.test(error.message);
}
