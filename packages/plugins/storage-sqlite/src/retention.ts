import type { CheckpointHead, CheckpointTables } from "@antler/storage-kit";
import type { Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type Database from "better-sqlite3";

/** LangGraph's SqliteSaver, with its tables created on demand for retention (its `setup` is protected). */
export class AntlerSqliteSaver extends SqliteSaver {
  ensureTables(): void {
    this.setup();
  }
}

interface HeadRow {
  ns: string;
  id: string;
  parent: string | null;
  metadata: Buffer | string | null;
  bytes: number;
  writes: number;
  write_bytes: number;
}

/** SqliteSaver's `checkpoints` and `writes` tables, read and pruned directly for retention. */
export class SqliteCheckpointTables implements CheckpointTables {
  private statements:
    | {
        heads: Database.Statement;
        threads: Database.Statement;
        bytes: Database.Statement;
        remove: (threadId: string, ns: string, drop: readonly string[], clear: readonly string[]) => number;
      }
    | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly saver: AntlerSqliteSaver,
  ) {}

  private prepared() {
    if (this.statements) return this.statements;
    this.saver.ensureTables();
    const db = this.db;
    const dropWrites = db.prepare("DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?");
    const dropCheckpoint = db.prepare("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?");
    this.statements = {
      heads: db.prepare(`SELECT c.checkpoint_ns AS ns, c.checkpoint_id AS id, c.parent_checkpoint_id AS parent, c.metadata,
          coalesce(length(c.checkpoint), 0) + coalesce(length(c.metadata), 0) AS bytes,
          count(w.idx) AS writes, coalesce(sum(length(w.value)), 0) AS write_bytes
        FROM checkpoints c LEFT JOIN writes w
          ON w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
        WHERE c.thread_id = ? GROUP BY c.checkpoint_ns, c.checkpoint_id`),
      threads: db.prepare("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id").pluck(),
      bytes: db.prepare(`SELECT
          (SELECT coalesce(sum(coalesce(length(checkpoint), 0) + coalesce(length(metadata), 0)), 0) FROM checkpoints WHERE thread_id = ?)
          + (SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?) AS bytes`),
      remove: db.transaction((threadId: string, ns: string, drop: readonly string[], clear: readonly string[]) => {
        let writes = 0;
        for (const id of [...drop, ...clear]) writes += dropWrites.run(threadId, ns, id).changes;
        for (const id of drop) dropCheckpoint.run(threadId, ns, id);
        return writes;
      }),
    };
    return this.statements;
  }

  async threads(): Promise<string[]> {
    return this.prepared().threads.all() as string[];
  }

  async heads(threadId: string): Promise<CheckpointHead[]> {
    return (this.prepared().heads.all(threadId) as HeadRow[]).map((row) => {
      const metadata = parseMetadata(row.metadata);
      return {
        ns: row.ns,
        id: row.id,
        parentId: row.parent,
        source: typeof metadata.source === "string" ? metadata.source : undefined,
        runId: typeof metadata.run_id === "string" ? metadata.run_id : undefined,
        writes: row.writes,
        bytes: row.bytes + row.write_bytes,
      };
    });
  }

  async remove(threadId: string, ns: string, drop: readonly string[], clearWrites: readonly string[]): Promise<number> {
    return this.prepared().remove(threadId, ns, drop, clearWrites);
  }

  async bytes(threadId: string): Promise<number> {
    return (this.prepared().bytes.get(threadId, threadId) as { bytes: number }).bytes;
  }

  /** SqliteSaver's put replaces the row with the same id (INSERT OR REPLACE), keeping its parent and writes. */
  async rewrite(
    threadId: string,
    ns: string,
    parentId: string | null,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<void> {
    await this.saver.put(
      { configurable: { thread_id: threadId, checkpoint_ns: ns, ...(parentId === null ? {} : { checkpoint_id: parentId }) } },
      checkpoint,
      metadata,
    );
  }
}

/** `metadata` as SqliteSaver stores it (JSON text); a row another program wrote unreadably counts as a plain step. */
function parseMetadata(value: Buffer | string | null): Record<string, unknown> {
  if (value === null) return {};
  try {
    const parsed: unknown = JSON.parse(typeof value === "string" ? value : value.toString("utf8"));
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
