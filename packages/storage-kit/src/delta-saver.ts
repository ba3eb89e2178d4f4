import { AntlerError, ErrorCodes } from "@antler/kernel";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import type { MessageLogRow, ThreadMessageLog } from "./message-log.js";
import { MessageRowReviver, revivesLikeSerde } from "./message-revive.js";

/**
 * What a checkpoint stores in place of its message list: how many messages it has and which log rows they are,
 * as half-open `seq` ranges `[from, to, from, to, ...]`. An append-only thread is one range whatever its length,
 * so a checkpoint's size no longer grows with the thread.
 */
export interface MessagesRef {
  readonly __antler_messages: 1;
  readonly n: number;
  readonly r: readonly number[];
}

export function isMessagesRef(value: unknown): value is MessagesRef {
  return typeof value === "object" && value !== null && (value as { __antler_messages?: unknown }).__antler_messages === 1;
}

export interface DeltaCheckpointOptions {
  /** The list channel stored by reference. Default `messages`. */
  channel?: string;
  /** Threads whose current message list is kept decoded in memory (least recently used go first). Default 256. */
  cacheThreads?: number;
  /** ... and at most this many messages across them. Default 200,000. */
  cacheMessages?: number;
  /**
   * `delta` (default) stores each message once and checkpoints name them; `full` (`storage.checkpoint.mode: full`)
   * writes whole lists as the inner saver does, and only resolves what delta mode wrote, so a thread survives a
   * switch of mode either way.
   */
  write?: "delta" | "full";
}

/** A thread's message list at one checkpoint, decoded, with the log row of each message. */
interface ListView {
  readonly checkpointId: string;
  readonly items: readonly unknown[];
  /** `seqs[i]` is the log row of `items[i]`; null for a list read from a checkpoint that holds it whole (older data). */
  readonly seqs: readonly number[] | null;
}

interface CachedThread {
  view: ListView;
  /** The next free `seq`, once known. */
  nextSeq: number | undefined;
}

const MAX_APPEND_ATTEMPTS = 5;

/**
 * A checkpointer that stores each message of a thread once. It wraps a LangGraph saver (memory, SQLite,
 * PostgreSQL): every checkpoint it writes holds a `MessagesRef` instead of the message list, and the messages that
 * are new since the parent checkpoint go to the `ThreadMessageLog` first, so a checkpoint is never visible without
 * its messages. Reads give back the full list, so graphs, `getState`, history and time travel see what they always
 * saw; checkpoints written before (whole lists) are read as they are, and the next write stores their messages
 * once.
 *
 * The cost of a step is its new messages plus a pointer comparison over the list: the list a turn starts from is
 * kept decoded per thread, and a message already stored is recognised by identity (the graph carries the objects
 * this saver handed out). Reading a thread this process has not seen decodes its list once.
 */
export class DeltaCheckpointSaver extends BaseCheckpointSaver {
  readonly channel: string;
  private readonly cache = new Map<string, CachedThread>();
  private cachedMessages = 0;
  private readonly cacheThreads: number;
  private readonly cacheMessages: number;
  private readonly reviver = new MessageRowReviver();
  private readonly writeFull: boolean;

  constructor(
    readonly inner: BaseCheckpointSaver,
    readonly log: ThreadMessageLog,
    options: DeltaCheckpointOptions = {},
  ) {
    super(inner.serde);
    this.channel = options.channel ?? "messages";
    this.cacheThreads = options.cacheThreads ?? 256;
    this.cacheMessages = options.cacheMessages ?? 200_000;
    this.writeFull = options.write === "full";
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const tuple = await this.inner.getTuple(config);
    return tuple && this.resolve(tuple, true);
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    for await (const tuple of this.inner.list(config, options)) yield await this.resolve(tuple, false);
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const list = checkpoint.channel_values?.[this.channel];
    if (this.writeFull || !Array.isArray(list)) return this.inner.put(config, checkpoint, metadata, newVersions);
    const threadId = String(config.configurable?.thread_id ?? "");
    const ns = String(config.configurable?.checkpoint_ns ?? "");
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    const key = cacheKey(threadId, ns);
    const cached = this.touch(key);
    const base = cached?.view.checkpointId === parentId ? cached?.view : parentId ? await this.viewAt(threadId, ns, parentId) : undefined;

    const seqs = new Array<number>(list.length);
    const fresh = assignKnown(base, list, seqs);
    let nextSeq = this.cache.get(key)?.nextSeq;
    if (fresh.length > 0) {
      const first = await this.appendFresh(threadId, ns, list, fresh, nextSeq);
      for (let k = 0; k < fresh.length; k++) seqs[fresh[k] as number] = first + k;
      nextSeq = first + fresh.length;
    }
    const ref: MessagesRef = { __antler_messages: 1, n: list.length, r: toRanges(seqs) };
    const stored: Checkpoint = { ...checkpoint, channel_values: { ...checkpoint.channel_values, [this.channel]: ref } };
    const next = await this.inner.put(config, stored, metadata, newVersions);
    this.remember(key, { checkpointId: checkpoint.id, items: list.slice(), seqs }, nextSeq);
    return next;
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    return this.inner.putWrites(config, writes, taskId, taskPath);
  }

  override async deleteThread(threadId: string): Promise<void> {
    await this.inner.deleteThread(threadId);
    await this.log.deleteThread(threadId);
    const prefix = cacheKey(threadId, "");
    for (const key of [...this.cache.keys()]) if (key.startsWith(prefix)) this.forget(key);
  }

  override getDeltaChannelHistory(options: Parameters<BaseCheckpointSaver["getDeltaChannelHistory"]>[0]) {
    return this.inner.getDeltaChannelHistory(options);
  }

  override getNextVersion(current: number | undefined): number {
    return this.inner.getNextVersion(current);
  }

  /** Drops every decoded list kept in memory (tests, and a process that wants its memory back). */
  clearCache(): void {
    this.cache.clear();
    this.cachedMessages = 0;
  }

  private async resolve(tuple: CheckpointTuple, remember: boolean): Promise<CheckpointTuple> {
    const values = tuple.checkpoint.channel_values as Record<string, unknown> | undefined;
    const value = values?.[this.channel];
    const threadId = String(tuple.config.configurable?.thread_id ?? "");
    const ns = String(tuple.config.configurable?.checkpoint_ns ?? "");
    const checkpointId = tuple.checkpoint.id;
    let view: ListView;
    if (isMessagesRef(value)) view = await this.viewOfRef(threadId, ns, checkpointId, value);
    else if (Array.isArray(value)) view = { checkpointId, items: value, seqs: null };
    else return tuple;
    // Full-mode writes never need a whole list's seqs, so only views of references are worth keeping then.
    if (remember && (view.seqs || !this.writeFull)) this.remember(cacheKey(threadId, ns), view);
    (values as Record<string, unknown>)[this.channel] = view.items.slice();
    return tuple;
  }

  /** The list of a checkpoint that is not the cached one: the base for a write whose parent this process has not seen. */
  private async viewAt(threadId: string, ns: string, checkpointId: string): Promise<ListView | undefined> {
    const tuple = await this.inner.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId } });
    const value = (tuple?.checkpoint.channel_values as Record<string, unknown> | undefined)?.[this.channel];
    if (isMessagesRef(value)) return this.viewOfRef(threadId, ns, checkpointId, value);
    return undefined;
  }

  private async viewOfRef(threadId: string, ns: string, checkpointId: string, ref: MessagesRef): Promise<ListView> {
    const cached = this.cache.get(cacheKey(threadId, ns))?.view;
    if (cached?.checkpointId === checkpointId && cached.seqs) return cached;
    const known = new Map<number, unknown>();
    if (cached?.seqs) for (let i = 0; i < cached.seqs.length; i++) known.set(cached.seqs[i] as number, cached.items[i]);
    const seqs = fromRanges(ref.r);
    const missing: number[] = [];
    for (const seq of seqs) if (!known.has(seq)) missing.push(seq);
    if (missing.length > 0) {
      const rows = await this.log.read(threadId, ns, toRanges(dedupeSorted(missing)));
      const decoded = await this.decode(rows);
      for (let i = 0; i < rows.length; i++) known.set((rows[i] as MessageLogRow).seq, decoded[i]);
    }
    const items = new Array<unknown>(seqs.length);
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i] as number;
      if (!known.has(seq)) {
        throw new AntlerError(
          ErrorCodes.STORAGE_UNAVAILABLE,
          `checkpoint ${checkpointId} of thread ${threadId} names message ${seq}, which its log does not hold`,
          {
            where: "storage.checkpoint",
            hint: "The thread's message log was changed or pruned outside Antler. Restore it from a backup, or delete the thread.",
          },
        );
      }
      items[i] = known.get(seq);
    }
    if (items.length !== ref.n) {
      throw new AntlerError(
        ErrorCodes.STORAGE_UNAVAILABLE,
        `checkpoint ${checkpointId} of thread ${threadId} names ${ref.n} messages but its ranges hold ${items.length}`,
        {
          where: "storage.checkpoint",
          hint: "The checkpoint was written by another program. Delete the thread or restore it from a backup.",
        },
      );
    }
    return { checkpointId, items, seqs };
  }

  /** The rows' messages: plain message rows built directly (`MessageRowReviver`), the rest by the serializer. */
  private async decode(rows: readonly MessageLogRow[]): Promise<unknown[]> {
    if (!revivesLikeSerde(this.serde)) return this.decodeBySerde(rows);
    const out = new Array<unknown>(rows.length);
    const rest: number[] = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as MessageLogRow;
      const message =
        row.type === "json" ? this.reviver.revive(typeof row.data === "string" ? row.data : decoder.decode(row.data)) : undefined;
      if (message === undefined) rest.push(i);
      else out[i] = message;
    }
    if (rest.length > 0) {
      const decoded = await this.decodeBySerde(rest.map((i) => rows[i] as MessageLogRow));
      for (let k = 0; k < rest.length; k++) out[rest[k] as number] = decoded[k];
    }
    return out;
  }

  private async decodeBySerde(rows: readonly MessageLogRow[]): Promise<unknown[]> {
    if (rows.length === 0) return [];
    if (rows.every((row) => row.type === "json")) {
      // One parse (and one reviver pass) for the batch instead of one per message.
      const text = `[${rows.map((row) => (typeof row.data === "string" ? row.data : decoder.decode(row.data))).join(",")}]`;
      return (await this.serde.loadsTyped("json", text)) as unknown[];
    }
    return Promise.all(rows.map((row) => this.serde.loadsTyped(row.type, row.data)));
  }

  /** Stores the new messages under consecutive `seq`s and returns the first; renumbers if another writer got there first. */
  private async appendFresh(
    threadId: string,
    ns: string,
    list: readonly unknown[],
    fresh: readonly number[],
    nextSeq: number | undefined,
  ): Promise<number> {
    const encoded = await Promise.all(fresh.map((i) => this.serde.dumpsTyped(list[i])));
    let first = nextSeq ?? (await this.log.lastSeq(threadId, ns)) + 1;
    for (let attempt = 1; ; attempt++) {
      const rows = encoded.map(([type, data], k) => ({ seq: first + k, type, data }));
      if (await this.log.append(threadId, ns, rows)) return first;
      if (attempt >= MAX_APPEND_ATTEMPTS) {
        throw new AntlerError(
          ErrorCodes.STORAGE_UNAVAILABLE,
          `could not store thread ${threadId}'s new messages: other writers kept taking their numbers`,
          {
            where: "storage.checkpoint",
            hint: "Another process writes to the same thread at the same time. Run one turn per thread at a time (the default multitask strategy does).",
          },
        );
      }
      first = (await this.log.lastSeq(threadId, ns)) + 1;
    }
  }

  private touch(key: string): CachedThread | undefined {
    const entry = this.cache.get(key);
    if (entry) {
      this.cache.delete(key);
      this.cache.set(key, entry);
    }
    return entry;
  }

  /** Keeps `view` as the thread's current list (and `nextSeq`, or the one already known), evicting the least recently used. */
  private remember(key: string, view: ListView, nextSeq?: number): void {
    const known = this.cache.get(key)?.nextSeq;
    this.forget(key);
    this.cache.set(key, { view, nextSeq: nextSeq ?? known });
    this.cachedMessages += view.items.length;
    for (const [oldest] of this.cache) {
      if (this.cache.size <= this.cacheThreads && this.cachedMessages <= this.cacheMessages) break;
      if (oldest === key) break;
      this.forget(oldest);
    }
  }

  private forget(key: string): void {
    const entry = this.cache.get(key);
    if (!entry) return;
    this.cachedMessages -= entry.view.items.length;
    this.cache.delete(key);
  }
}

const decoder = new TextDecoder();

function cacheKey(threadId: string, ns: string): string {
  return `${threadId}\u0000${ns}`;
}

/**
 * Fills `seqs` for the items of `list` that `base` already stored (recognised by identity) and returns the indexes
 * of the others. The usual step only appends, so the prefix check settles it without a map.
 */
function assignKnown(base: ListView | undefined, list: readonly unknown[], seqs: number[]): number[] {
  const fresh: number[] = [];
  const baseSeqs = base?.seqs;
  if (!base || !baseSeqs) {
    for (let i = 0; i < list.length; i++) fresh.push(i);
    return fresh;
  }
  const prev = base.items;
  let prefix = prev.length <= list.length;
  for (let i = 0; prefix && i < prev.length; i++) if (list[i] !== prev[i]) prefix = false;
  if (prefix) {
    for (let i = 0; i < prev.length; i++) seqs[i] = baseSeqs[i] as number;
    for (let i = prev.length; i < list.length; i++) fresh.push(i);
    return fresh;
  }
  const seqOf = new Map<unknown, number>();
  for (let i = 0; i < prev.length; i++) seqOf.set(prev[i], baseSeqs[i] as number);
  for (let i = 0; i < list.length; i++) {
    const seq = seqOf.get(list[i]);
    if (seq === undefined) fresh.push(i);
    else seqs[i] = seq;
  }
  return fresh;
}

/** `[3, 4, 5, 9, 10]` → `[3, 6, 9, 11]`. */
export function toRanges(seqs: readonly number[]): number[] {
  const ranges: number[] = [];
  for (let i = 0; i < seqs.length; ) {
    const from = seqs[i] as number;
    let to = from + 1;
    i++;
    while (i < seqs.length && seqs[i] === to) {
      to++;
      i++;
    }
    ranges.push(from, to);
  }
  return ranges;
}

export function fromRanges(ranges: readonly number[]): number[] {
  const seqs: number[] = [];
  for (let i = 0; i + 1 < ranges.length; i += 2) for (let seq = ranges[i] as number; seq < (ranges[i + 1] as number); seq++) seqs.push(seq);
  return seqs;
}

function dedupeSorted(seqs: number[]): number[] {
  seqs.sort((a, b) => a - b);
  const out: number[] = [];
  for (const seq of seqs) if (out.at(-1) !== seq) out.push(seq);
  return out;
}
