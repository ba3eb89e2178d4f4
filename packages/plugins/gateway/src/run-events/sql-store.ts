import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { AntlerDatabase, Migration } from "@antler/kernel";
import { type Kysely, sql } from "kysely";
import type { EventTail, LoggedEvent, PendingEvent, RunEventStore } from "./store.js";

export const RUN_EVENTS_TABLE = "antler_run_events";

/** `created_at` is ISO-8601 UTC text, as in the runs table; `data` is the event's JSON text. */
interface RunEventsTable {
  run_id: string;
  seq: number;
  event: string;
  data: string;
  created_at: string;
}

export const runEventMigrations: readonly Migration[] = [
  {
    name: "run-events/001-create",
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable(RUN_EVENTS_TABLE)
        .addColumn("run_id", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("event", "text", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("antler_run_events_pk", ["run_id", "seq"])
        .execute();
      // Serves the retention sweep.
      await db.schema.createIndex("antler_run_events_created").on(RUN_EVENTS_TABLE).column("created_at").execute();
    },
  },
];

// Rows per INSERT: 5 bound values each stays far below SQLite's and PostgreSQL's parameter limits, and a
// batch is written in slices with the event loop let through between them, so a large flush never stalls
// the live streams for long (better-sqlite3 writes synchronously).
const ROWS_PER_STATEMENT = 100;

/**
 * The SQL run event log on its own handle. On SQLite that handle commits without an fsync each time
 * (`synchronous = NORMAL`, safe in WAL mode: a crash loses at most the last commits, never the file): the log
 * is a replay buffer, and better-sqlite3 would otherwise block the event loop, and so every live stream, on
 * each batch's fsync. A power loss can cost a joiner the run's last events, which it is then told
 * (RUN_EVENTS_INCOMPLETE).
 */
export async function createSqlRunEventStore(database: AntlerDatabase, options: { pollMs: number }): Promise<RunEventStore> {
  if (database.dialect === "sqlite") await sql`PRAGMA synchronous = NORMAL`.execute(database.db);
  const db = database.db.withTables<{ antler_run_events: RunEventsTable }>();
  const read = async (runId: string, afterSeq: number, limit: number): Promise<LoggedEvent[]> => {
    const rows = await db
      .selectFrom(RUN_EVENTS_TABLE)
      .select(["seq", "event", "data"])
      .where("run_id", "=", runId)
      .where("seq", ">", afterSeq)
      .orderBy("seq", "asc")
      .limit(limit)
      .execute();
    return rows.map((row) => ({ seq: Number(row.seq), event: row.event, json: row.data }));
  };
  return {
    kind: "sql",
    async append(events) {
      for (let i = 0; i < events.length; i += ROWS_PER_STATEMENT) {
        if (i > 0) await yieldToLoop();
        const rows = events.slice(i, i + ROWS_PER_STATEMENT).map((e: PendingEvent) => ({
          run_id: e.runId,
          seq: e.seq,
          event: e.event,
          data: e.json,
          created_at: new Date(e.at).toISOString(),
        }));
        await db
          .insertInto(RUN_EVENTS_TABLE)
          .values(rows)
          .onConflict((oc) => oc.columns(["run_id", "seq"]).doNothing())
          .execute();
      }
    },
    read,
    async bounds(runId) {
      const row = await db
        .selectFrom(RUN_EVENTS_TABLE)
        .select([sql<number | null>`min(seq)`.as("first"), sql<number | null>`max(seq)`.as("last")])
        .where("run_id", "=", runId)
        .executeTakeFirst();
      if (!row || row.first === null || row.last === null) return null;
      return { first: Number(row.first), last: Number(row.last) };
    },
    tail(runId): EventTail {
      let closed = false;
      let wake: (() => void) | undefined;
      return {
        async next(afterSeq, limit, waitMs) {
          const deadline = Date.now() + waitMs;
          for (;;) {
            const events = await read(runId, afterSeq, limit);
            if (events.length > 0 || closed) return events;
            const left = deadline - Date.now();
            if (left <= 0) return [];
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, Math.min(left, options.pollMs));
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            wake = undefined;
          }
        },
        close() {
          closed = true;
          wake?.();
        },
      };
    },
    async trim(runId, lastSeq, keep) {
      if (lastSeq <= keep) return;
      await db
        .deleteFrom(RUN_EVENTS_TABLE)
        .where("run_id", "=", runId)
        .where("seq", "<=", lastSeq - keep)
        .execute();
    },
    async prune(before) {
      const result = await db.deleteFrom(RUN_EVENTS_TABLE).where("created_at", "<", before.toISOString()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    close: () => database.close(),
  };
}
