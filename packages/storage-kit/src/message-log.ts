/**
 * The contract behind delta checkpoints: a thread's messages stored once each, in the order they were first
 * written, numbered per thread and checkpoint namespace. A checkpoint names its message list as ranges of these
 * numbers instead of holding the messages (see `DeltaCheckpointSaver`).
 */

/**
 * One stored message: its number in the thread's log and its bytes as the checkpointer's serializer wrote them
 * (a string is well-formed Unicode, as JSON text is; a store may keep it as UTF-8).
 */
export interface MessageLogRow {
  readonly seq: number;
  readonly type: string;
  readonly data: Uint8Array | string;
}

/**
 * Where a checkpointer keeps the messages of its threads. Rows are only ever added, and dropped with their thread
 * or by `prune` (which retention calls with the rows its kept checkpoints name): a checkpoint keeps resolving as
 * long as its rows are kept. Backends implement it next to their checkpoint tables;
 * `@antler/storage-kit/testing`'s `runMessageLogConformance` is the suite they pass.
 *
 * Ranges are half-open `seq` intervals flattened as `[from, to, from, to, ...]`; they may come in any order and
 * overlap, and a row matches when it lies in at least one of them.
 */
export interface ThreadMessageLog {
  /** The highest `seq` stored for the thread and namespace, or -1 when none. */
  lastSeq(threadId: string, checkpointNs: string): Promise<number>;
  /**
   * Stores the rows, all or none. Answers false, writing nothing, when one of their `seq`s is already taken (another
   * process wrote to the thread meanwhile); the caller then asks `lastSeq` again and renumbers.
   */
  append(threadId: string, checkpointNs: string, rows: readonly MessageLogRow[]): Promise<boolean>;
  /**
   * The rows whose `seq` lies in one of the half-open ranges `[ranges[0], ranges[1]), [ranges[2], ranges[3]), ...`,
   * each once, by `seq`. `data` comes back as it was stored: a string as a string, bytes as bytes.
   */
  read(threadId: string, checkpointNs: string, ranges: readonly number[]): Promise<MessageLogRow[]>;
  /** Bytes stored for the thread (every namespace; a string counts its UTF-8 bytes): what `antler storage` reports. */
  size(threadId: string): Promise<number>;
  /** Drops every row of the thread, in every namespace. */
  deleteThread(threadId: string): Promise<void>;
  /**
   * Drops the rows of the thread and namespace whose `seq` lies in none of the `keep` ranges (same form as `read`'s),
   * and answers how many it dropped. `keep: []` drops all of them. Retention calls it with the rows that the
   * checkpoints it keeps still name.
   */
  prune(threadId: string, checkpointNs: string, keep: readonly number[]): Promise<number>;
}

/**
 * `ranges` sorted by start, overlapping and touching ones merged, empty ones dropped: `[5, 7, 0, 2, 1, 3]` →
 * `[0, 3, 5, 7]`. Throws on an odd length or a bound that is not an integer, so a bad range never reaches SQL.
 */
export function normalizeRanges(ranges: readonly number[]): number[] {
  if (ranges.length % 2 !== 0) throw new RangeError(`message log ranges must come in [from, to) pairs, got ${ranges.length} bounds`);
  const pairs: [number, number][] = [];
  for (let i = 0; i < ranges.length; i += 2) {
    const from = ranges[i] as number;
    const to = ranges[i + 1] as number;
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) {
      throw new RangeError(`message log range [${from}, ${to}) has a bound that is not an integer`);
    }
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

/**
 * The gaps between normalized `keep` ranges, as ranges: what `prune` drops. The first starts at
 * `Number.MIN_SAFE_INTEGER` and the last ends at `Number.MAX_SAFE_INTEGER`, so every `seq` outside `keep` is in one.
 */
export function complementRanges(keep: readonly number[]): number[] {
  const kept = normalizeRanges(keep);
  const out: number[] = [];
  let from = Number.MIN_SAFE_INTEGER;
  for (let i = 0; i < kept.length; i += 2) {
    if ((kept[i] as number) > from) out.push(from, kept[i] as number);
    from = kept[i + 1] as number;
  }
  if (from < Number.MAX_SAFE_INTEGER) out.push(from, Number.MAX_SAFE_INTEGER);
  return out;
}

/** Bytes a row's data takes: its length, or a string's UTF-8 length. */
export function dataBytes(data: Uint8Array | string): number {
  return typeof data === "string" ? utf8.encode(data).length : data.length;
}

const utf8 = new TextEncoder();

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
    return this.threads.get(threadId)?.get(checkpointNs)?.at(-1)?.seq ?? -1;
  }

  async append(threadId: string, checkpointNs: string, rows: readonly MessageLogRow[]): Promise<boolean> {
    const stored = this.rows(threadId, checkpointNs);
    const seqs = new Set<number>();
    for (const row of rows) {
      if (!Number.isSafeInteger(row.seq)) throw new RangeError(`message log seq ${row.seq} is not an integer`);
      if (seqs.has(row.seq)) return false;
      seqs.add(row.seq);
      const at = lowerBound(stored, row.seq);
      if (at < stored.length && (stored[at] as MessageLogRow).seq === row.seq) return false;
    }
    // Rows are kept sorted by seq; a writer numbers past the last one it saw, so this is a push.
    let sorted = true;
    for (const row of rows) {
      if (stored.length > 0 && (stored.at(-1) as MessageLogRow).seq > row.seq) sorted = false;
      stored.push({ seq: row.seq, type: row.type, data: row.data });
    }
    if (!sorted) stored.sort((a, b) => a.seq - b.seq);
    return true;
  }

  async read(threadId: string, checkpointNs: string, ranges: readonly number[]): Promise<MessageLogRow[]> {
    const wanted = normalizeRanges(ranges);
    const stored = this.threads.get(threadId)?.get(checkpointNs) ?? [];
    const out: MessageLogRow[] = [];
    for (let i = 0; i + 1 < wanted.length; i += 2) {
      const from = wanted[i] as number;
      const to = wanted[i + 1] as number;
      for (let at = lowerBound(stored, from); at < stored.length && (stored[at] as MessageLogRow).seq < to; at++) {
        out.push(stored[at] as MessageLogRow);
      }
    }
    return out;
  }

  async size(threadId: string): Promise<number> {
    let bytes = 0;
    for (const rows of this.threads.get(threadId)?.values() ?? []) for (const row of rows) bytes += dataBytes(row.data);
    return bytes;
  }

  async deleteThread(threadId: string): Promise<void> {
    this.threads.delete(threadId);
  }

  async prune(threadId: string, checkpointNs: string, keep: readonly number[]): Promise<number> {
    const kept = normalizeRanges(keep);
    const byNs = this.threads.get(threadId);
    const stored = byNs?.get(checkpointNs);
    if (!byNs || !stored) return 0;
    const left = stored.filter((row) => inNormalizedRanges(row.seq, kept));
    const dropped = stored.length - left.length;
    if (left.length > 0) byNs.set(checkpointNs, left);
    else byNs.delete(checkpointNs);
    if (byNs.size === 0) this.threads.delete(threadId);
    return dropped;
  }
}

/** The index (even) of the last normalized range starting at or before `seq`, or -1. */
function upperBoundStart(ranges: readonly number[], seq: number): number {
  let lo = 0;
  let hi = ranges.length / 2;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ranges[mid * 2] as number) <= seq) lo = mid + 1;
    else hi = mid;
  }
  return (lo - 1) * 2;
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

/** True when `seq` lies in one of `ranges` (normalized: sorted and disjoint, as `normalizeRanges` gives them). */
export function inNormalizedRanges(seq: number, ranges: readonly number[]): boolean {
  const at = upperBoundStart(ranges, seq);
  return at >= 0 && seq < (ranges[at + 1] as number);
}
