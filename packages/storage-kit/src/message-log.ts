/**
 * The contract behind delta checkpoints: a thread's messages stored once each, in the order they were first
 * written, numbered per thread and checkpoint namespace. A checkpoint names its message list as ranges of these
 * numbers instead of holding the messages (see `DeltaCheckpointSaver`).
 */

/** One stored message: its number in the thread's log and its bytes as the checkpointer's serializer wrote them. */
export interface MessageLogRow {
  readonly seq: number;
  readonly type: string;
  readonly data: Uint8Array | string;
}

/**
 * Where a checkpointer keeps the messages of its threads. Rows are only ever added (and dropped with their
 * thread): a checkpoint written at any time keeps resolving, whatever came after it. Backends implement it next to
 * their checkpoint tables; `@antler/kernel/testing`'s `runMessageLogConformance` is the suite they pass.
 */
export interface ThreadMessageLog {
  /** The highest `seq` stored for the thread and namespace, or -1 when none. */
  lastSeq(threadId: string, checkpointNs: string): Promise<number>;
  /**
   * Stores the rows, all or none. Answers false, writing nothing, when one of their `seq`s is already taken (another
   * process wrote to the thread meanwhile); the caller then asks `lastSeq` again and renumbers.
   */
  append(threadId: string, checkpointNs: string, rows: readonly MessageLogRow[]): Promise<boolean>;
  /** The rows whose `seq` lies in one of the half-open ranges `[ranges[0], ranges[1]), [ranges[2], ranges[3]), ...`, by `seq`. */
  read(threadId: string, checkpointNs: string, ranges: readonly number[]): Promise<MessageLogRow[]>;
  /** Bytes stored for the thread (every namespace): what the storage cost model and `antler storage` report. */
  size(threadId: string): Promise<number>;
  /** Drops every row of the thread, in every namespace. */
  deleteThread(threadId: string): Promise<void>;
  /**
   * Drops the thread's rows in `checkpointNs` whose `seq` lies in none of the half-open ranges `keep` (`[from, to,
   * from, to, ...]`, in any order) and answers how many it dropped. Retention calls it with what the kept
   * checkpoints name.
   */
  prune(threadId: string, checkpointNs: string, keep: readonly number[]): Promise<number>;
}

/** Half-open ranges in any order, overlapping or not, as sorted disjoint ones: `[5, 7, 0, 2, 1, 3]` → `[0, 3, 5, 7]`. */
export function mergeRanges(ranges: readonly number[]): number[] {
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i + 1 < ranges.length; i += 2) {
    const from = ranges[i] as number;
    const to = ranges[i + 1] as number;
    if (to > from) pairs.push([from, to]);
  }
  pairs.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [from, to] of pairs) {
    const last = out.length - 1;
    if (last > 0 && from <= (out[last] as number)) out[last] = Math.max(out[last] as number, to);
    else out.push(from, to);
  }
  return out;
}

/** True when `seq` lies in one of `merged`'s ranges (sorted and disjoint, as `mergeRanges` gives them). */
export function inMergedRanges(seq: number, merged: readonly number[]): boolean {
  let lo = 0;
  let hi = merged.length / 2;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((merged[mid * 2 + 1] as number) <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo < merged.length / 2 && (merged[lo * 2] as number) <= seq;
}

/** A `ThreadMessageLog` in process memory: `storage.backend: memory`, and tests. */
export class MemoryMessageLog implements ThreadMessageLog {
  private readonly threads = new Map<string, Map<string, MessageLogRow[]>>();

  private rows(threadId: string, checkpointNs: string): MessageLogRow[] {
    let byNs = this.threads.get(threadId);
    if (!byNs) {
      byNs = new Map();
      this.threads.set(threadId, byNs);
    }
    let rows = byNs.get(checkpointNs);
    if (!rows) {
      rows = [];
      byNs.set(checkpointNs, rows);
    }
    return rows;
  }

  async lastSeq(threadId: string, checkpointNs: string): Promise<number> {
    return this.rows(threadId, checkpointNs).at(-1)?.seq ?? -1;
  }

  async append(threadId: string, checkpointNs: string, rows: readonly MessageLogRow[]): Promise<boolean> {
    const stored = this.rows(threadId, checkpointNs);
    let last = stored.at(-1)?.seq ?? -1;
    // Rows are kept sorted by seq, and a writer always numbers past the last one it saw.
    for (const row of rows) {
      if (row.seq <= last) return false;
      last = row.seq;
    }
    for (const row of rows) stored.push({ seq: row.seq, type: row.type, data: row.data });
    return true;
  }

  async read(threadId: string, checkpointNs: string, ranges: readonly number[]): Promise<MessageLogRow[]> {
    const stored = this.threads.get(threadId)?.get(checkpointNs) ?? [];
    const out: MessageLogRow[] = [];
    for (let i = 0; i + 1 < ranges.length; i += 2) {
      const from = ranges[i] as number;
      const to = ranges[i + 1] as number;
      for (let at = lowerBound(stored, from); at < stored.length && (stored[at] as MessageLogRow).seq < to; at++) {
        out.push(stored[at] as MessageLogRow);
      }
    }
    return out;
  }

  async size(threadId: string): Promise<number> {
    let bytes = 0;
    for (const rows of this.threads.get(threadId)?.values() ?? []) for (const row of rows) bytes += row.data.length;
    return bytes;
  }

  async deleteThread(threadId: string): Promise<void> {
    this.threads.delete(threadId);
  }

  async prune(threadId: string, checkpointNs: string, keep: readonly number[]): Promise<number> {
    const rows = this.threads.get(threadId)?.get(checkpointNs);
    if (!rows) return 0;
    const merged = mergeRanges(keep);
    const kept = rows.filter((row) => inMergedRanges(row.seq, merged));
    const dropped = rows.length - kept.length;
    rows.splice(0, rows.length, ...kept);
    return dropped;
  }
}

function lowerBound(rows: readonly MessageLogRow[], seq: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((rows[mid] as MessageLogRow).seq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
