import { AntlerError, ErrorCodes } from "@antler/kernel";
import type { BaseCheckpointSaver, Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { isMessagesRef, type MessagesRef, toRanges } from "./delta-saver.js";
import { type MessageLogRow, normalizeRanges, type ThreadMessageLog } from "./message-log.js";

/** `storage.checkpoint.keep`: what a thread keeps of its checkpoints. */
export interface RetentionPolicy {
  /** The newest checkpoints kept in each namespace of a thread (the newest is always among them). */
  readonly last: number;
  /** Also keep the last checkpoint of every turn, so time travel to any earlier turn keeps working. */
  readonly turns: boolean;
}

export const DEFAULT_RETENTION: RetentionPolicy = Object.freeze({ last: 20, turns: true });

/** One stored checkpoint as retention sees it: where it sits in the thread, never its values. */
export interface CheckpointHead {
  readonly ns: string;
  readonly id: string;
  readonly parentId: string | null;
  /** `metadata.source`: `input` starts a turn, `update` and `fork` are made outside one, `loop` is a step. */
  readonly source: string | undefined;
  /** `metadata.run_id`, when the run put one there. */
  readonly runId: string | undefined;
  /** Pending writes stored against it. */
  readonly writes: number;
  /** Bytes of its row, its writes and (PostgreSQL) the blobs only it names, for reports. */
  readonly bytes: number;
}

/**
 * What a backend gives retention: its checkpoint tables read and pruned directly, since LangGraph savers can only
 * delete a whole thread. `@antler/plugin-storage-sqlite` and `-postgres` implement it next to their savers.
 */
export interface CheckpointTables {
  /** Every thread that has checkpoints. */
  threads(): Promise<string[]>;
  /** Every checkpoint of the thread, in every namespace. */
  heads(threadId: string): Promise<CheckpointHead[]>;
  /**
   * In one transaction: deletes the checkpoints `drop` of the thread's namespace `ns` with their pending writes
   * (and whatever else only they use), and the pending writes of `clearWrites`. Answers how many writes went.
   */
  remove(threadId: string, ns: string, drop: readonly string[], clearWrites: readonly string[]): Promise<number>;
  /** Bytes the thread's checkpoints, writes and blobs take (not its message log). */
  bytes(threadId: string): Promise<number>;
  /**
   * Replaces a stored checkpoint's values in place (compaction); absent when the backend cannot. May answer how
   * many checkpoints now read the new values, when the backend shares values between checkpoints (PostgreSQL's
   * blobs); otherwise it counts as one.
   */
  rewrite?(
    threadId: string,
    ns: string,
    parentId: string | null,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<number | undefined> | Promise<void>;
}

/** What one thread's retention or compaction did (or, with `dryRun`, would do). */
export interface RetentionReport {
  readonly threadId: string;
  readonly dryRun: boolean;
  readonly checkpointsBefore: number;
  readonly checkpointsAfter: number;
  /** Checkpoints that held their message list whole and now (would) name it in the message log. */
  readonly rewritten: number;
  readonly writesDropped: number;
  readonly messagesDropped: number;
  readonly bytesBefore: number;
  /** With `dryRun`, an estimate: the bytes before less the dropped checkpoints' rows and writes. */
  readonly bytesAfter: number;
}

export interface RetentionRunOptions {
  /** Report only; change nothing. */
  dryRun?: boolean;
  /**
   * Called after each change is durable (`append`: a checkpoint's messages stored, `rewrite`: a checkpoint
   * rewritten, `remove`: a namespace's checkpoints dropped, `prune`: its unused messages dropped). Tests stop a
   * process here.
   */
  onStep?: (step: "append" | "rewrite" | "remove" | "prune") => void | Promise<void>;
}

// A checkpoint whose child starts one of these ends a turn (or a state edit made between turns).
const TURN_STARTS = new Set(["input", "update", "fork"]);
// Messages of a namespace at or above this seq are never dropped (see `pruneMessages`).
const NO_END = Number.MAX_SAFE_INTEGER;

/**
 * Which checkpoints of ONE namespace a policy keeps: the `last` newest, and with `turns` every checkpoint that ends a
 * turn (it has no child, or a child starts a new run). Checkpoint ids are time-ordered, so newest means largest id.
 * Pending writes of a kept checkpoint that has a child are dropped too: its step finished, and the child holds
 * what the writes produced.
 */
export function planRetention(
  heads: readonly CheckpointHead[],
  policy: RetentionPolicy,
): { keep: CheckpointHead[]; drop: CheckpointHead[]; clearWrites: CheckpointHead[] } {
  const newestFirst = [...heads].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const children = new Map<string, CheckpointHead[]>();
  for (const head of heads) {
    if (head.parentId === null) continue;
    const list = children.get(head.parentId) ?? [];
    list.push(head);
    children.set(head.parentId, list);
  }
  const endsTurn = (head: CheckpointHead) => {
    const kids = children.get(head.id);
    if (!kids) return true;
    return kids.some(
      (kid) => TURN_STARTS.has(kid.source ?? "") || (kid.runId !== undefined && head.runId !== undefined && kid.runId !== head.runId),
    );
  };
  const keep: CheckpointHead[] = [];
  const drop: CheckpointHead[] = [];
  for (const [rank, head] of newestFirst.entries()) {
    if (rank < Math.max(1, policy.last) || (policy.turns && endsTurn(head))) keep.push(head);
    else drop.push(head);
  }
  const clearWrites = keep.filter((head) => head.writes > 0 && children.has(head.id));
  return { keep, drop, clearWrites };
}

/**
 * Applies a retention policy to threads of one checkpointer, and compacts older data: the engine behind the
 * background pruning after each run and `antler storage compact`. `saver` is the backend's own saver (never the
 * delta wrapper: retention reads checkpoints as stored), `log` the message log when the backend has one.
 *
 * Every step leaves the thread readable if the process dies after it: messages are stored before a checkpoint
 * names them, a checkpoint is rewritten in one statement or transaction, checkpoints go in one transaction per
 * namespace, and a message goes only once no checkpoint left names it.
 */
export class CheckpointRetention {
  readonly channel: string;

  constructor(
    private readonly options: {
      tables: CheckpointTables;
      saver: BaseCheckpointSaver;
      log?: ThreadMessageLog | undefined;
      policy: RetentionPolicy;
      /** The list channel delta checkpoints store by reference. Default `messages`. */
      channel?: string;
      /**
       * `storage.checkpoint.mode`. In `full` mode compaction leaves whole lists as they are (the operator chose
       * LangGraph's own format) and only prunes. Default `delta`.
       */
      mode?: "delta" | "full" | undefined;
    },
  ) {
    this.channel = options.channel ?? "messages";
  }

  get policy(): RetentionPolicy {
    return this.options.policy;
  }

  threads(): Promise<string[]> {
    return this.options.tables.threads();
  }

  /** Bytes the thread takes: checkpoints, writes, blobs and its message log. */
  async size(threadId: string): Promise<number> {
    const { tables, log } = this.options;
    return (await tables.bytes(threadId)) + (log ? await log.size(threadId) : 0);
  }

  /**
   * Drops what the policy does not keep, then the messages no kept checkpoint names. The messages are looked at
   * only when a dropped checkpoint named one its namespace's newest does not (an append-only thread never does),
   * unless `scan` asks for a full look (compaction: also finds rows a crash left behind).
   */
  async prune(threadId: string, options: RetentionRunOptions & { scan?: boolean } = {}): Promise<RetentionReport> {
    const { tables, log } = this.options;
    const dryRun = options.dryRun ?? false;
    const bytesBefore = await this.size(threadId);
    const heads = await tables.heads(threadId);
    let after = 0;
    let writesDropped = 0;
    let messagesDropped = 0;
    let droppedBytes = 0;
    for (const [ns, nsHeads] of groupByNs(heads)) {
      const plan = planRetention(nsHeads, this.options.policy);
      after += plan.keep.length;
      droppedBytes += plan.drop.reduce((sum, head) => sum + head.bytes, 0);
      if (dryRun) {
        writesDropped += [...plan.drop, ...plan.clearWrites].reduce((sum, head) => sum + head.writes, 0);
        continue;
      }
      // Read before anything goes: what the dropped checkpoints and the newest named.
      const dropped = log ? await this.refsOf(threadId, ns, plan.drop) : [];
      const newest = plan.keep[0];
      const newestRef = log && newest ? (await this.refsOf(threadId, ns, [newest]))[0] : undefined;
      if (plan.drop.length > 0 || plan.clearWrites.length > 0) {
        writesDropped += await tables.remove(
          threadId,
          ns,
          plan.drop.map((head) => head.id),
          plan.clearWrites.map((head) => head.id),
        );
        await options.onStep?.("remove");
      }
      if (log && (options.scan || namesOthers(dropped, newestRef))) {
        messagesDropped += await this.pruneMessages(log, threadId, ns, [...dropped, ...(newestRef ? [newestRef] : [])]);
        await options.onStep?.("prune");
      }
    }
    const bytesAfter = dryRun ? Math.max(0, bytesBefore - droppedBytes) : await this.size(threadId);
    return {
      threadId,
      dryRun,
      checkpointsBefore: heads.length,
      checkpointsAfter: after,
      rewritten: 0,
      writesDropped,
      messagesDropped,
      bytesBefore,
      bytesAfter,
    };
  }

  /**
   * `antler storage compact` for one thread: stores the messages of checkpoints that hold their list whole (written
   * in `full` mode or before delta checkpoints) once each in the message log and rewrites those checkpoints to name
   * them, then prunes with a full look at the log. Without a message log, with a backend that cannot rewrite, or
   * in `full` mode, it only prunes.
   */
  async compact(threadId: string, options: RetentionRunOptions = {}): Promise<RetentionReport> {
    const bytesBefore = await this.size(threadId);
    const rewritten = await this.rewriteWholeLists(threadId, options);
    const pruned = await this.prune(threadId, { ...options, scan: true });
    return { ...pruned, rewritten, bytesBefore };
  }

  private async rewriteWholeLists(threadId: string, options: RetentionRunOptions): Promise<number> {
    const { tables, log, saver, mode } = this.options;
    if (!log || !tables.rewrite || mode === "full") return 0;
    let rewritten = 0;
    for (const [ns, nsHeads] of groupByNs(await tables.heads(threadId))) {
      // Each distinct message (by its stored bytes) gets one row; rows a crashed earlier compaction stored are reused.
      let known: Map<string, number> | undefined;
      let nextSeq = 0;
      for (const head of [...nsHeads].sort((a, b) => (a.id < b.id ? -1 : 1))) {
        const tuple = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: head.id } });
        const values = tuple?.checkpoint.channel_values as Record<string, unknown> | undefined;
        const list = values?.[this.channel];
        if (!tuple || !Array.isArray(list)) continue;
        if (options.dryRun) {
          rewritten++;
          continue;
        }
        if (!known) {
          const last = await log.lastSeq(threadId, ns);
          known = new Map();
          for (const row of await log.read(threadId, ns, [0, last + 1])) known.set(rowKey(row.type, row.data), row.seq);
          nextSeq = last + 1;
        }
        const seqs: number[] = [];
        const fresh: MessageLogRow[] = [];
        for (const item of list) {
          const [type, data] = await saver.serde.dumpsTyped(item);
          const key = rowKey(type, data);
          let seq = known.get(key);
          if (seq === undefined) {
            seq = nextSeq + fresh.length;
            fresh.push({ seq, type, data });
            known.set(key, seq);
          }
          seqs.push(seq);
        }
        if (fresh.length > 0) {
          if (!(await log.append(threadId, ns, fresh))) {
            throw new AntlerError(ErrorCodes.STORAGE_UNAVAILABLE, `thread ${threadId} got new messages while it was being compacted`, {
              where: "antler storage compact",
              hint: "Compact when no run is writing to the thread (stop the gateway or workers, or pick another thread), then run it again.",
            });
          }
          nextSeq += fresh.length;
          await options.onStep?.("append");
        }
        const ref: MessagesRef = { __antler_messages: 1, n: list.length, r: toRanges(seqs) };
        const checkpoint = { ...tuple.checkpoint, channel_values: { ...values, [this.channel]: ref } } as Checkpoint;
        const shared = await tables.rewrite(threadId, ns, head.parentId, checkpoint, tuple.metadata ?? ({} as CheckpointMetadata));
        rewritten += typeof shared === "number" ? shared : 1;
        await options.onStep?.("rewrite");
      }
    }
    return rewritten;
  }

  /**
   * Drops the namespace's messages no remaining checkpoint names. Rows above every seq the checkpoints read
   * before the drop named are kept: a writer stores a step's messages before the checkpoint naming them, so rows
   * past that point may belong to a checkpoint not written yet. The highest such row is kept too, so seqs are
   * never handed out twice.
   */
  private async pruneMessages(log: ThreadMessageLog, threadId: string, ns: string, seen: readonly (MessagesRef | null)[]): Promise<number> {
    const remaining = (await this.options.tables.heads(threadId)).filter((head) => head.ns === ns);
    const kept = await this.refsOf(threadId, ns, remaining);
    let highest = -1;
    const keep: number[] = [];
    for (const ref of [...seen, ...kept]) {
      if (!ref) continue;
      for (let i = 1; i < ref.r.length; i += 2) highest = Math.max(highest, (ref.r[i] as number) - 1);
    }
    for (const ref of kept) if (ref) keep.push(...ref.r);
    keep.push(Math.max(0, highest), NO_END);
    return log.prune(threadId, ns, keep);
  }

  /** The message reference each checkpoint holds (null for a whole list or none), read as stored. */
  private async refsOf(threadId: string, ns: string, heads: readonly CheckpointHead[]): Promise<(MessagesRef | null)[]> {
    const out: (MessagesRef | null)[] = [];
    for (const head of heads) {
      const tuple = await this.options.saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: head.id } });
      const value = (tuple?.checkpoint.channel_values as Record<string, unknown> | undefined)?.[this.channel];
      out.push(isMessagesRef(value) ? value : null);
    }
    return out;
  }
}

function groupByNs(heads: readonly CheckpointHead[]): Map<string, CheckpointHead[]> {
  const byNs = new Map<string, CheckpointHead[]>();
  for (const head of heads) {
    const list = byNs.get(head.ns) ?? [];
    list.push(head);
    byNs.set(head.ns, list);
  }
  return byNs;
}

/** True when a dropped checkpoint named a message the newest one does not: only then can rows have become unused. */
function namesOthers(dropped: readonly (MessagesRef | null)[], newest: MessagesRef | null | undefined): boolean {
  // Merged ranges are disjoint and maximal, so a range the newest covers lies inside one of them.
  const merged = normalizeRanges(newest?.r ?? []);
  for (const ref of dropped) {
    if (!ref) continue;
    for (let i = 0; i + 1 < ref.r.length; i += 2) {
      const from = ref.r[i] as number;
      const to = ref.r[i + 1] as number;
      if (to > from && !withinOne(merged, from, to - 1)) return true;
    }
  }
  return false;
}

/** True when seqs `a` ≤ `b` both lie in one range of `merged`. */
function withinOne(merged: readonly number[], a: number, b: number): boolean {
  for (let i = 0; i + 1 < merged.length; i += 2) {
    if (a >= (merged[i] as number) && a < (merged[i + 1] as number)) return b < (merged[i + 1] as number);
  }
  return false;
}

const decoder = new TextDecoder();

function rowKey(type: string, data: Uint8Array | string): string {
  return `${type}\u0000${typeof data === "string" ? data : decoder.decode(data)}`;
}
