import { inMergedRanges, type MessageLogRow, mergeRanges, type ThreadMessageLog } from "@antler/storage-kit";
import type Database from "better-sqlite3";

/** Ranges per statement: SQLite allows 32,766 parameters, and a few hundred keep each statement cheap to plan. */
const RANGES_PER_QUERY = 200;

/**
 * A thread's messages, each stored once, in the checkpoint file next to LangGraph's `checkpoints` and `writes`
 * tables (same handle, same WAL), so a message row is durable before the checkpoint that names it.
 */
export class SqliteMessageLog implements ThreadMessageLog {
  private readonly reads = new Map<number, Database.Statement>();
  private readonly insert: Database.Statement;
  private readonly last: Database.Statement;
  private readonly bytes: Database.Statement;
  private readonly drop: Database.Statement;
  private readonly seqs: Database.Statement;
  private readonly dropSeqs: (threadId: string, ns: string, seqs: readonly number[]) => void;
  private readonly insertAll: (threadId: string, ns: string, rows: readonly MessageLogRow[]) => void;

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
    this.bytes = db.prepare("SELECT coalesce(sum(length(data)), 0) AS bytes FROM antler_messages WHERE thread_id = ?");
    this.drop = db.prepare("DELETE FROM antler_messages WHERE thread_id = ?");
    this.seqs = db.prepare("SELECT seq FROM antler_messages WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY seq").pluck();
    const dropOne = db.prepare("DELETE FROM antler_messages WHERE thread_id = ? AND checkpoint_ns = ? AND seq = ?");
    this.dropSeqs = db.transaction((threadId: string, ns: string, seqs: readonly number[]) => {
      for (const seq of seqs) dropOne.run(threadId, ns, seq);
    });
    this.insertAll = db.transaction((threadId: string, ns: string, rows: readonly MessageLogRow[]) => {
      for (const row of rows) this.insert.run(threadId, ns, row.seq, row.type, row.data);
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
    const out: MessageLogRow[] = [];
    const step = RANGES_PER_QUERY * 2;
    for (let at = 0; at < ranges.length; at += step) {
      const chunk = ranges.slice(at, at + step);
      const rows = this.readStatement(chunk.length / 2).all(threadId, checkpointNs, ...chunk) as {
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
    const merged = mergeRanges(keep);
    const drop = (this.seqs.all(threadId, checkpointNs) as number[]).filter((seq) => !inMergedRanges(seq, merged));
    if (drop.length > 0) this.dropSeqs(threadId, checkpointNs, drop);
    return drop.length;
  }

  private readStatement(ranges: number): Database.Statement {
    let statement = this.reads.get(ranges);
    if (!statement) {
      const where = Array.from({ length: ranges }, () => "(seq >= ? AND seq < ?)").join(" OR ");
      statement = this.db.prepare(
        `SELECT seq, type, data FROM antler_messages WHERE thread_id = ? AND checkpoint_ns = ? AND (${where}) ORDER BY seq`,
      );
      if (this.reads.size < 64) this.reads.set(ranges, statement);
    }
    return statement;
  }
}
