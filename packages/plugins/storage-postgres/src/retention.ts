import { AntlerError, ErrorCodes } from "@antler/kernel";
import type { CheckpointHead, CheckpointTables } from "@antler/storage-kit";
import type { Checkpoint, CheckpointMetadata, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type pg from "pg";

/**
 * PostgresSaver's `checkpoints`, `checkpoint_blobs` and `checkpoint_writes`, read and pruned directly for
 * retention. A blob (one channel's value at one version) is shared by every checkpoint whose `channel_versions`
 * names that version, so a dropped checkpoint's blobs go only when no checkpoint left names them.
 */
export class PostgresCheckpointTables implements CheckpointTables {
  private readonly t: { checkpoints: string; blobs: string; writes: string };

  constructor(
    private readonly pool: pg.Pool,
    schema: string | undefined,
    /** The saver's serializer (PostgresSaver's `serde`), for `rewrite`. */
    private readonly serde: SerializerProtocol,
  ) {
    const q = `"${schema ?? "public"}"`;
    this.t = { checkpoints: `${q}.checkpoints`, blobs: `${q}.checkpoint_blobs`, writes: `${q}.checkpoint_writes` };
  }

  async threads(): Promise<string[]> {
    const { rows } = await this.pool.query<{ thread_id: string }>(
      `SELECT DISTINCT thread_id FROM ${this.t.checkpoints} ORDER BY thread_id`,
    );
    return rows.map((row) => row.thread_id);
  }

  async heads(threadId: string): Promise<CheckpointHead[]> {
    const { rows } = await this.pool.query<{
      ns: string;
      id: string;
      parent: string | null;
      source: string | null;
      run_id: string | null;
      bytes: string;
      writes: string;
      write_bytes: string;
    }>(
      `SELECT c.checkpoint_ns AS ns, c.checkpoint_id AS id, c.parent_checkpoint_id AS parent,
          c.metadata->>'source' AS source, c.metadata->>'run_id' AS run_id,
          pg_column_size(c.checkpoint) + pg_column_size(c.metadata) AS bytes, w.writes, w.write_bytes
        FROM ${this.t.checkpoints} c
        CROSS JOIN LATERAL (SELECT count(*) AS writes, coalesce(sum(octet_length(blob)), 0) AS write_bytes FROM ${this.t.writes}
          WHERE thread_id = c.thread_id AND checkpoint_ns = c.checkpoint_ns AND checkpoint_id = c.checkpoint_id) w
        WHERE c.thread_id = $1`,
      [threadId],
    );
    return rows.map((row) => ({
      ns: row.ns,
      id: row.id,
      parentId: row.parent,
      source: row.source ?? undefined,
      runId: row.run_id ?? undefined,
      writes: Number(row.writes),
      bytes: Number(row.bytes) + Number(row.write_bytes),
    }));
  }

  async remove(threadId: string, ns: string, drop: readonly string[], clearWrites: readonly string[]): Promise<number> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const writes = await client.query(
        `DELETE FROM ${this.t.writes} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3::text[])`,
        [threadId, ns, [...drop, ...clearWrites]],
      );
      if (drop.length > 0) {
        // The blobs the dropped checkpoints name that no other checkpoint of the namespace names. A writer's new
        // checkpoint only names versions of its parent (kept) or blobs it writes itself, so none of these.
        await client.query(
          `DELETE FROM ${this.t.blobs} b
            USING (SELECT DISTINCT v.key AS channel, v.value AS version
                     FROM ${this.t.checkpoints} d, jsonb_each_text(d.checkpoint->'channel_versions') v
                    WHERE d.thread_id = $1 AND d.checkpoint_ns = $2 AND d.checkpoint_id = ANY($3::text[])) gone
            WHERE b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = gone.channel AND b.version = gone.version
              AND NOT EXISTS (SELECT 1 FROM ${this.t.checkpoints} k
                               WHERE k.thread_id = $1 AND k.checkpoint_ns = $2 AND NOT (k.checkpoint_id = ANY($3::text[]))
                                 AND k.checkpoint->'channel_versions'->>b.channel = b.version)`,
          [threadId, ns, drop],
        );
        await client.query(
          `DELETE FROM ${this.t.checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3::text[])`,
          [threadId, ns, drop],
        );
      }
      await client.query("COMMIT");
      return writes.rowCount ?? 0;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async bytes(threadId: string): Promise<number> {
    const { rows } = await this.pool.query<{ bytes: string }>(
      `SELECT (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) FROM ${this.t.checkpoints} WHERE thread_id = $1)
            + (SELECT coalesce(sum(coalesce(octet_length(blob), 0)), 0) FROM ${this.t.blobs} WHERE thread_id = $1)
            + (SELECT coalesce(sum(octet_length(blob)), 0) FROM ${this.t.writes} WHERE thread_id = $1) AS bytes`,
      [threadId],
    );
    return Number(rows[0]?.bytes ?? 0);
  }

  /**
   * Replaces the stored checkpoint's channel values with `checkpoint`'s, in one transaction. PostgresSaver keeps
   * each value as a blob keyed by (channel, version) and shared by every checkpoint whose `channel_versions` names
   * that version; all of them hold the same value, so the blob is replaced in place and they all read the new
   * form (compaction hands the same list as a reference). Only blobs whose bytes change are written; the row's
   * parent, metadata and versions are left as they are. Answers how many checkpoints of the namespace share every
   * changed blob, i.e. now read the new values (1 when nothing changed).
   */
  async rewrite(
    threadId: string,
    ns: string,
    _parentId: string | null,
    checkpoint: Checkpoint,
    _metadata: CheckpointMetadata,
  ): Promise<number> {
    const serde = this.serde;
    const values = Object.entries((checkpoint.channel_values ?? {}) as Record<string, unknown>);
    const encoded = await Promise.all(values.map(async ([channel, value]) => ({ channel, value: await serde.dumpsTyped(value) })));
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      // The versions the stored row names (locked, so a concurrent write of the same id waits for this one).
      const row = await client.query<{ versions: Record<string, string> | null }>(
        `SELECT (SELECT jsonb_object_agg(key, value) FROM jsonb_each_text(checkpoint->'channel_versions')) AS versions
           FROM ${this.t.checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 FOR UPDATE`,
        [threadId, ns, checkpoint.id],
      );
      const versions = row.rows[0]?.versions;
      if (!versions) throw gone(threadId, ns, checkpoint.id, "it is no longer stored");
      const changedChannels: { channel: string; version: string }[] = [];
      for (const { channel, value } of encoded) {
        const version = versions[channel];
        if (version === undefined) throw gone(threadId, ns, checkpoint.id, `it names no version of channel ${channel}`);
        const [type, data] = value;
        const blob = Buffer.from(data);
        const changed = await client.query(
          `UPDATE ${this.t.blobs} SET type = $5, blob = $6
            WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4
              AND (type IS DISTINCT FROM $5 OR blob IS DISTINCT FROM $6)`,
          [threadId, ns, channel, version, type, blob],
        );
        if (changed.rowCount !== 0) {
          changedChannels.push({ channel, version });
          continue;
        }
        const present = await client.query(
          `SELECT 1 FROM ${this.t.blobs} WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4`,
          [threadId, ns, channel, version],
        );
        if (present.rowCount === 0) throw gone(threadId, ns, checkpoint.id, `the value of its channel ${channel} is not stored`);
      }
      let sharing = 1;
      if (changedChannels.length > 0) {
        const { rows } = await client.query<{ n: string }>(
          `SELECT count(*) AS n FROM ${this.t.checkpoints} c
            WHERE c.thread_id = $1 AND c.checkpoint_ns = $2
              AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[]) AS w(channel, version)
                               WHERE c.checkpoint->'channel_versions'->>w.channel IS DISTINCT FROM w.version)`,
          [threadId, ns, changedChannels.map((c) => c.channel), changedChannels.map((c) => c.version)],
        );
        sharing = Math.max(1, Number(rows[0]?.n ?? 1));
      }
      await client.query("COMMIT");
      return sharing;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** VACUUM ANALYZE of the three tables: space for new rows, and fresh planner statistics after a large prune. */
  async vacuum(): Promise<void> {
    for (const table of [this.t.checkpoints, this.t.blobs, this.t.writes]) await this.pool.query(`VACUUM (ANALYZE) ${table}`);
  }
}

/** A checkpoint (or the blob of one of its channels) that changed or went while it was being rewritten. */
function gone(threadId: string, ns: string, id: string, why: string): AntlerError {
  return new AntlerError(
    ErrorCodes.STORAGE_UNAVAILABLE,
    `cannot rewrite checkpoint ${id} of thread ${threadId}${ns ? ` (namespace ${ns})` : ""}: ${why}`,
    {
      where: "antler storage compact",
      hint: "Something else changed or deleted the thread while it was being compacted. Compact when no run is writing to it, then run it again.",
    },
  );
}
