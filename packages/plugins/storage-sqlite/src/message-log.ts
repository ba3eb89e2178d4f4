import { complementRanges, type MessageLogRow, normalizeRanges, type ThreadMessageLog } from "@antler/storage-kit";
import type Database from "better-sqlite3";

/** Ranges per statement: SQLite allows 32,766 parameters, and a few hundred keep each statement cheap to plan. */
const RANGES_PER_QUERY = 200;

/**
 * A thread's messages, each stored once, in the checkpoint file next to LangGraph's `checkpoints` and `writes`
 * tables (same handle, same WAL), so a message row is durable before the checkpoint that names it.
 */
export class SqliteMessageLog implements ThreadMessageLog {
  private readonly reads = new Map<number, Database.Statement>();
  private readonly deletes = new Map<number, Database.Statement>();
  private readonly insert: Database.Statement;
  private readonly last: Database.Statement;
  private readonly bytes: Database.Statement;
  private readonly drop: Database.Statement;
  private readonly insertAll: (threadId: string, ns: string, rows: readonly MessageLogRow[]) => void;
  private readonly deleteAll: (threadId: string, ns: string, gaps: readonly number[]) => number;

  constructor(private readonly db: Database.Database) {
    db.exec(`CREATE TABLE IF NOT EXISTS antler_messages (
      thread_id TEXT NOT NULL,
      checkpoint_ns TEXT NOT NULL DEFAULT '',
      seq INTEGER NOT NULL,
      type TEXT NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY (thread_id, checkpoint_ns, seq)
    )`);
    this.insert = db.prepare("INSERT INTO antler_messages (thread_id, checkpoint_ns, seq, type, data) VALUES (?, ?, ?, ?, ?)");
    this.last = db.prepare("SELECT max(seq) AS seq FROM antler_messages WHERE thread_id = ? AND checkpoint_ns = ?");
    // A string is stored as TEXT, whose length() counts characters; as a BLOB it counts its UTF-8 bytes.
    this.bytes = db.prepare("SELECT coalesce(sum(length(CAST(data AS BLOB))), 0) AS bytes FROM antler_messages WHERE thread_id = ?");
    this.drop = db.prepare("DELETE FROM antler_messages WHERE thread_id = ?");
    this.insertAll = db.transaction((threadId: string, ns: string, rows: readonly MessageLogRow[]) => {
      for (const row of rows) this.insert.run(threadId, ns, row.seq, row.type, row.data);
    });
    this.deleteAll = db.transaction((threadId: string, ns: string, gaps: readonly number[]) => {
      let dropped = 0;
      for (let at = 0; at < gaps.length; at += RANGES_PER_QUERY * 2) {
        const chunk = gaps.slice(at, at + RANGES_PER_QUERY * 2);
        dropped += this.statementFor(this.deletes, "DELETE FROM antler_messages", chunk.length / 2).run(threadId, ns, ...chunk).changes;
      }
      return dropped;
    });
  }

  async lastSeq(threadId: string, checkpointNs: string): Promise<number> {
    const row = this.last.get(threadId, checkpointNs) as { seq: number | null } | undefined;
    return row?.seq ?? -1;
  }

  async append(threadId: string, checkpointNs: string, rows: readonly MessageLogRow[]): Promise<boolean> {
    try {
      this.insertAll(threadId, checkpointNs, rows);
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") return false;
      throw error;
    }
  }

  async read(threadId: string, checkpointNs: string, ranges: readonly number[]): Promise<MessageLogRow[]> {
    // Sorted and disjoint, the chunks' results concatenate in seq order with no row twice.
    const wanted = normalizeRanges(ranges);
    const out: MessageLogRow[] = [];
    const step = RANGES_PER_QUERY * 2;
    for (let at = 0; at < wanted.length; at += step) {
      const chunk = wanted.slice(at, at + step);
      const rows = this.statementFor(this.reads, "SELECT seq, type, data FROM antler_messages", chunk.length / 2, "ORDER BY seq").all(
        threadId,
        checkpointNs,
        ...chunk,
      ) as {
        seq: number;
        type: string;
        data: Buffer;
      }[];
      for (const row of rows) out.push(row);
    }
    return out;
  }

  async size(threadId: string): Promise<number> {
    return (this.bytes.get(threadId) as { bytes: number }).bytes;
  }

  async deleteThread(threadId: string): Promise<void> {
    this.drop.run(threadId);
  }

  async prune(threadId: string, checkpointNs: string, keep: readonly number[]): Promise<number> {
    // Deleting the gaps between kept ranges (not "NOT in keep") lets each chunk stand alone and use the key.
    return this.deleteAll(threadId, checkpointNs, complementRanges(keep));
  }

  /** `<head> WHERE thread_id = ? AND checkpoint_ns = ? AND (<ranges>) <tail>`, prepared once per range count. */
  private statementFor(cache: Map<number, Database.Statement>, head: string, ranges: number, tail = ""): Database.Statement {
    let statement = cache.get(ranges);
    if (!statement) {
      const where = Array.from({ length: ranges }, () => "(seq >= ? AND seq < ?)").join(" OR ");
      statement = this.db.prepare(`${head} WHERE thread_id = ? AND checkpoint_ns = ? AND (${where}) ${tail}`);
      if (cache.size < 64) cache.set(ranges, statement);
    }
    return statement;
  }
}
