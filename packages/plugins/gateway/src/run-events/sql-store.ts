import { setImmediate as yieldToLoop } from "node:timers/promises";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { AntlerDatabase, Migration } from "@antler/kernel";
import { type Generated, type Insertable, type Kysely, sql } from "kysely";
import type { EventTail, LoggedEvent, PendingEvent, RunEventStore } from "./store.js";

export const RUN_EVENTS_TABLE = "antler_run_events";

/**
 * One row holds `event_count` consecutive events of a run from `seq` on. A live run's events are written one per
 * row (`event_count` 1: `event` and `data`, the event's JSON text); once the run ended they are folded into
 * blocks of up to `MAX_BLOCK` (`event` `*` or `*z`, `data` one `<event> <json>` line per event, deflated with `*z`): a few rows per run
 * instead of one per token. `created_at` is ISO-8601 UTC text, as in the runs table (a block's: its last event's).
 */
interface RunEventsTable {
  run_id: string;
  seq: number;
  event_count: Generated<number>;
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
  {
    name: "run-events/002-blocks",
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable(RUN_EVENTS_TABLE)
        .addColumn("event_count", "integer", (c) => c.notNull().defaultTo(1))
        .execute();
    },
  },
];

/** Most events one block row holds: a join's read of a page parses at most this many beyond the page. */
export const MAX_BLOCK = 256;
/** A block row's `event`: its `data` as text lines, or those lines deflated and base64-encoded. */
const BLOCK_TEXT = "*";
const BLOCK_DEFLATED = "*z";

/**
 * A block's `data`: one `<event> <json>` line per event (JSON.stringify never writes a raw newline), deflated
 * when that saves a quarter or more (a run's events repeat its ids and keys: a short run's 2.6 KB become 0.9 KB).
 */
function encodeBlock(events: readonly { event: string; data: string }[]): { event: string; data: string } | null {
  for (const e of events) if (!/^[^\s]+$/.test(e.event) || e.data.includes("\n")) return null;
  const text = events.map((e) => `${e.event} ${e.data}`).join("\n");
  const deflated = deflateRawSync(text).toString("base64");
  return deflated.length <= text.length * 0.75 ? { event: BLOCK_DEFLATED, data: deflated } : { event: BLOCK_TEXT, data: text };
}

type SingleRow = Pick<RunEventsTable, "seq" | "event" | "data" | "created_at">;
type BlockRow = Insertable<RunEventsTable> & { seq: number; event_count: number };

/** Consecutive single-event rows (ascending) as blocks of 2 to MAX_BLOCK events; a lone row stays as it is. */
export function foldIntoBlocks(runId: string, rows: readonly SingleRow[]): BlockRow[] {
  const blocks: BlockRow[] = [];
  let block: SingleRow[] = [];
  const close = () => {
    const first = block[0];
    const last = block.at(-1);
    const encoded = block.length > 1 ? encodeBlock(block) : null;
    if (encoded !== null && first && last) {
      blocks.push({ run_id: runId, seq: Number(first.seq), event_count: block.length, ...encoded, created_at: last.created_at });
    }
    block = [];
  };
  for (const row of rows) {
    const previous = block.at(-1);
    if (previous && (Number(row.seq) !== Number(previous.seq) + 1 || block.length === MAX_BLOCK)) close();
    block.push(row);
  }
  close();
  return blocks;
}

export function decodeBlock(firstSeq: number, event: string, data: string): LoggedEvent[] {
  const text = event === BLOCK_DEFLATED ? inflateRawSync(Buffer.from(data, "base64")).toString("utf8") : data;
  return text.split("\n").map((line, i) => {
    const space = line.indexOf(" ");
    return { seq: firstSeq + i, event: line.slice(0, space), json: line.slice(space + 1) };
  });
}

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
    // A block that starts at or before afterSeq may still hold later events; none starts MAX_BLOCK before it.
    const rows = await db
      .selectFrom(RUN_EVENTS_TABLE)
      .select(["seq", "event_count", "event", "data"])
      .where("run_id", "=", runId)
      .where("seq", ">", afterSeq - MAX_BLOCK)
      .where(sql<boolean>`seq + event_count - 1 > ${afterSeq}`)
      .orderBy("seq", "asc")
      .limit(limit)
      .execute();
    const events: LoggedEvent[] = [];
    // While `compact` folds a run, its block and the single rows it replaces are both there for a moment: an
    // event is taken once, from whichever row came first.
    let covered = afterSeq;
    for (const row of rows) {
      const seq = Number(row.seq);
      if (Number(row.event_count) === 1) {
        if (seq > covered) events.push({ seq, event: row.event, json: row.data });
      } else for (const e of decodeBlock(seq, row.event, row.data)) if (e.seq > covered) events.push(e);
      covered = Math.max(covered, seq + Number(row.event_count) - 1);
      if (events.length >= limit) break;
    }
    return events.slice(0, limit);
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
        .select([sql<number | null>`min(seq)`.as("first"), sql<number | null>`max(seq + event_count - 1)`.as("last")])
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
        .where(sql<boolean>`seq + event_count - 1 <= ${lastSeq - keep}`)
        .execute();
    },
    async prune(before) {
      // One statement (a read first would make SQLite's write fail with SQLITE_BUSY_SNAPSHOT next to another writer).
      const deleted = await db
        .deleteFrom(RUN_EVENTS_TABLE)
        .where("created_at", "<", before.toISOString())
        .returning("event_count")
        .execute();
      return deleted.reduce((sum, row) => sum + Number(row.event_count), 0);
    },
    async compact(runId) {
      const rows = await db
        .selectFrom(RUN_EVENTS_TABLE)
        .select(["seq", "event", "data", "created_at"])
        .where("run_id", "=", runId)
        .where("event_count", "=", 1)
        .orderBy("seq", "asc")
        .execute();
      const blocks = foldIntoBlocks(runId, rows);
      if (blocks.length === 0) return;
      // No transaction: on SQLite this handle shares the file with the client's, and a transaction held across
      // awaits deadlocks against the other handle's synchronous busy wait (SQLITE_BUSY after busy_timeout). Each
      // block is two single statements instead: the block takes its first row's place (a sweep or trim that
      // removed that row meanwhile wins, and nothing is put back), then the rows it covers go; a read in between
      // sees each event once (see `read`).
      for (const block of blocks) {
        const updated = await db
          .updateTable(RUN_EVENTS_TABLE)
          .set({ event_count: block.event_count, event: block.event, data: block.data, created_at: block.created_at })
          .where("run_id", "=", runId)
          .where("seq", "=", block.seq)
          .where("event_count", "=", 1)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) !== 1) continue;
        await db
          .deleteFrom(RUN_EVENTS_TABLE)
          .where("run_id", "=", runId)
          .where("event_count", "=", 1)
          .where("seq", ">", block.seq)
          .where("seq", "<", block.seq + block.event_count)
          .execute();
      }
    },
    close: () => database.close(),
  };
}
