import { complementRanges, type MessageLogRow, normalizeRanges, type ThreadMessageLog } from "@antler/storage-kit";
import type pg from "pg";

/** The table, next to LangGraph's `checkpoints`, `checkpoint_blobs` and `checkpoint_writes` in the same schema. */
export const MESSAGES_TABLE = "antler_messages";

/**
 * Rows per INSERT: each takes 4 parameters (plus the thread and namespace once), and PostgreSQL allows 65,535 per
 * statement. A turn appends a handful; only the first delta write of a long whole-list thread comes near this.
 */
const ROWS_PER_INSERT = 8_000;

const UNIQUE_VIOLATION = "23505";

function tableName(schema: string | undefined): string {
  // The schema name is checked to be a plain identifier (assertSchemaName) before it reaches here.
  return `"${schema ?? "public"}".${MESSAGES_TABLE}`;
}

/** The DDL of the message log, idempotent; run under the checkpointer's set-up lock. */
export function messageLogDdl(schema: string | undefined): string {
  return `CREATE TABLE IF NOT EXISTS ${tableName(schema)} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    data BYTEA NOT NULL,
    is_text BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (thread_id, checkpoint_ns, seq)
  )`;
}

/**
 * A thread's messages, each stored once, in PostgreSQL next to the checkpoint tables. Every method is one
 * statement on the pool (a batch larger than one INSERT takes a transaction of several), so a row is committed
 * before the checkpoint that names it is written, and two processes appending to one thread race on the primary
 * key: the loser gets `false` and renumbers.
 */
export class PostgresMessageLog implements ThreadMessageLog {
  private readonly table: string;

  constructor(
    private readonly pool: pg.Pool,
    options: { schema?: string | undefined } = {},
  ) {
    this.table = tableName(options.schema);
  }

  async lastSeq(threadId: string, checkpointNs: string): Promise<number> {
    const result = await this.pool.query<{ seq: number | null }>(
      `SELECT max(seq) AS seq FROM ${this.table} WHERE thread_id = $1 AND checkpoint_ns = $2`,
      [threadId, checkpointNs],
    );
    return result.rows[0]?.seq ?? -1;
  }

  async append(threadId: string, checkpointNs: string, rows: readonly MessageLogRow[]): Promise<boolean> {
    if (rows.length === 0) return true;
    try {
      if (rows.length <= ROWS_PER_INSERT) {
        await this.pool.query(this.insertSql(rows.length), insertParams(threadId, checkpointNs, rows));
        return true;
      }
      const client = await this.pool.connect();
      try {
        await client.query("BEGIN");
        for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
          const chunk = rows.slice(at, at + ROWS_PER_INSERT);
          await client.query(this.insertSql(chunk.length), insertParams(threadId, checkpointNs, chunk));
        }
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) return false;
      throw error;
    }
  }

  async read(threadId: string, checkpointNs: string, ranges: readonly number[]): Promise<MessageLogRow[]> {
    const wanted = normalizeRanges(ranges);
    if (wanted.length === 0) return [];
    // One index range scan per (disjoint) range, joined from the small list of ranges.
    const result = await this.pool.query<{ seq: number; type: string; data: Buffer; is_text: boolean }>(
      `SELECT m.seq, m.type, m.data, m.is_text
         FROM unnest($3::bigint[], $4::bigint[]) AS r(lo, hi)
         JOIN ${this.table} m ON m.thread_id = $1 AND m.checkpoint_ns = $2 AND m.seq >= r.lo AND m.seq < r.hi
        ORDER BY m.seq`,
      [threadId, checkpointNs, ...bounds(wanted)],
    );
    return result.rows.map((row) => ({ seq: row.seq, type: row.type, data: row.is_text ? row.data.toString("utf8") : row.data }));
  }

  async size(threadId: string): Promise<number> {
    const result = await this.pool.query<{ bytes: string }>(
      `SELECT coalesce(sum(octet_length(data)), 0)::text AS bytes FROM ${this.table} WHERE thread_id = $1`,
      [threadId],
    );
    return Number(result.rows[0]?.bytes ?? 0);
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE thread_id = $1`, [threadId]);
  }

  async prune(threadId: string, checkpointNs: string, keep: readonly number[]): Promise<number> {
    // Deleting the gaps between kept ranges turns "not in keep" into a few index range scans.
    const gaps = complementRanges(keep);
    const result = await this.pool.query(
      `DELETE FROM ${this.table} m
        USING unnest($3::bigint[], $4::bigint[]) AS r(lo, hi)
        WHERE m.thread_id = $1 AND m.checkpoint_ns = $2 AND m.seq >= r.lo AND m.seq < r.hi`,
      [threadId, checkpointNs, ...bounds(gaps)],
    );
    return result.rowCount ?? 0;
  }

  private insertSql(rows: number): string {
    const values = Array.from({ length: rows }, (_, i) => `($1, $2, $${3 + i * 4}, $${4 + i * 4}, $${5 + i * 4}, $${6 + i * 4})`);
    return `INSERT INTO ${this.table} (thread_id, checkpoint_ns, seq, type, data, is_text) VALUES ${values.join(", ")}`;
  }
}

function insertParams(threadId: string, checkpointNs: string, rows: readonly MessageLogRow[]): unknown[] {
  const params: unknown[] = [threadId, checkpointNs];
  for (const row of rows) {
    const isText = typeof row.data === "string";
    // Buffers go to the server as binary parameters, with no hex or escape encoding on the way.
    params.push(row.seq, row.type, isText ? Buffer.from(row.data as string, "utf8") : row.data, isText);
  }
  return params;
}

/** Normalized ranges as the two arrays of their lower and upper bounds. */
function bounds(ranges: readonly number[]): [number[], number[]] {
  const lo: number[] = [];
  const hi: number[] = [];
  for (let i = 0; i < ranges.length; i += 2) {
    lo.push(ranges[i] as number);
    hi.push(ranges[i + 1] as number);
  }
  return [lo, hi];
}
