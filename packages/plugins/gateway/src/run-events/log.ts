import type { Logger } from "@antler/kernel";
import type { ObservedRun, RunObserver, StreamEvent } from "@antler/plugin-runtime";
import type { GatewayConfig } from "../config.js";
import { GatewayErrorCodes, HttpError } from "../errors.js";
import { applyValuesPatch, type ValuesMessage, type ValuesPatch, type ValuesState } from "../values-delta.js";
import { closedRunError, runErrorData } from "./frames.js";
import { type EventTail, isTerminal, type LoggedEvent, type PendingEvent, type RunEventStore } from "./store.js";
import { digestMessages, MessagesDigester, type RunStart, ValuesStreamEncoder } from "./values-stream.js";

/** A `values` event as the log stores it: a patch, and on a run's first one where it starts. */
interface StoredValues {
  patch: ValuesPatch;
  start?: RunStart;
}

/** One event held in memory; its JSON is written once, when first needed (the flush or a frame). */
class Entry implements PendingEvent {
  private text: string | undefined;
  constructor(
    readonly runId: string,
    readonly seq: number,
    readonly event: string,
    private data: unknown,
    readonly at: number,
  ) {}
  get json(): string {
    if (this.text === undefined) {
      this.text = JSON.stringify(this.data);
      this.data = undefined;
    }
    return this.text;
  }
}

/** A run of this instance while it is live: its newest events in memory, and who waits for more. */
class LiveRun {
  /** Contiguous, ascending: every event not yet written, and a few written ones for joiners close behind. */
  entries: Entry[] = [];
  lastSeq = 0;
  writtenSeq = 0;
  done = false;
  /** Its `values` events become patches; the thread as the run found it stays here for local joiners. */
  readonly values: ValuesStreamEncoder;
  startMessages: readonly ValuesMessage[] | undefined;
  private waiters = new Set<() => void>();
  constructor(
    readonly run: ObservedRun,
    digester: MessagesDigester,
  ) {
    const thread = `${run.userId}\u0000${run.threadId}`;
    this.values = new ValuesStreamEncoder({ digest: (messages) => digester.digest(thread, messages) });
  }

  /** Events after `seq` from memory, or null when memory no longer reaches back that far. */
  after(seq: number): Entry[] | null {
    const first = this.entries[0];
    if (!first) return seq >= this.lastSeq ? [] : null;
    if (first.seq > seq + 1) return null;
    return this.entries.slice(seq + 1 - first.seq);
  }

  /** Resolves at the next event (or the end), or when `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        this.waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** What `prepareJoin` decided before any byte is sent. */
export type JoinPlan = { kind: "stream" } | { kind: "caught-up" };

// Written events a live run keeps in memory, so a local joiner a little behind never reads the store.
const KEEP_WRITTEN = 64;
const BATCH = 500;
const READ_LIMIT = 200;
/** How long a joiner on another instance waits for news before it looks at the run's record again. */
const REMOTE_WAIT_MS = 1000;
const RETRY_MS = 250;
const END_WRITE_WAIT_MS = 5000;

/**
 * The run event log: observes every run of the gateway's client (whoever consumes it), numbers its events
 * (the metadata frame is 1), keeps them in memory while the run is live and writes them to the store in
 * batches, never on the run's path; the run's end waits for its last write. Joiners read from memory on the
 * instance that runs the run and from the store elsewhere.
 */
export class RunEventLog implements RunObserver {
  private readonly live = new Map<string, LiveRun>();
  /** Resumed runs about to start: the last seq their earlier part left in the store. */
  private readonly resumeAfter = new Map<string, number>();
  private readonly digester = new MessagesDigester();
  private pending: Entry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly flushed = new Set<(force?: boolean) => void>();
  private sweeper: NodeJS.Timeout | undefined;
  /** Finished runs' compactions under way (`store.compact`), off the run's path; `close` and `idle` wait for them. */
  private readonly compacting = new Set<Promise<void>>();
  private failures = 0;
  private closed = false;

  constructor(
    readonly store: RunEventStore,
    private readonly config: GatewayConfig["run_events"],
    private readonly logger: Logger,
  ) {}

  // ---------------------------------------------------------------- writing (RunObserver)

  /** A paused run continues: its events go on from the last one stored, under the same run id. */
  async runResuming(run: ObservedRun): Promise<void> {
    const bounds = await this.store.bounds(run.runId);
    if (bounds) this.resumeAfter.set(run.runId, bounds.last);
  }

  runStarted(run: ObservedRun): void {
    const live = new LiveRun(run, this.digester);
    const after = this.resumeAfter.get(run.runId);
    if (after !== undefined) {
      this.resumeAfter.delete(run.runId);
      live.lastSeq = after;
      live.writtenSeq = after;
    }
    this.live.set(run.runId, live);
    this.push(live, "metadata", { run_id: run.runId, thread_id: run.threadId, trace_id: run.traceId });
  }

  runEvent(runId: string, event: StreamEvent): void {
    const live = this.live.get(runId);
    if (!live) return;
    if (event.type !== "values") {
      this.push(live, event.type, event.data);
      return;
    }
    // Stored once, as what changed: a run's rows cost what it added, whatever the thread's length.
    const { patch, start, startMessages } = live.values.encode(event.data);
    if (startMessages) live.startMessages = startMessages;
    this.push(live, "values", start ? { patch, start } : { patch });
  }

  async runEnded(runId: string, outcome: "success" | "error" | "cancelled", error: unknown): Promise<void> {
    const live = this.live.get(runId);
    if (!live) return;
    if (outcome !== "success") this.push(live, "error", runErrorData(error ?? closedRunError(), runId, live.run.traceId));
    live.done = true;
    live.wake();
    try {
      await this.written(live);
      if (live.lastSeq > this.config.max_events_per_run) {
        await this.store.trim(runId, live.lastSeq, this.config.max_events_per_run);
      }
      if (live.writtenSeq >= live.lastSeq) this.compact(runId);
    } finally {
      // Joiners still holding it finish from its memory or the store; new ones read the store.
      this.live.delete(runId);
    }
  }

  /** The run goes on elsewhere (this instance handed it over): what was pushed is written, with no closing event. */
  async runHandedOver(runId: string): Promise<void> {
    const live = this.live.get(runId);
    if (!live) return;
    live.done = true;
    live.wake();
    try {
      await this.written(live);
    } finally {
      this.live.delete(runId);
    }
  }

  /** Runs live on this instance (their events in memory); 0 once every run has ended. */
  get liveRuns(): number {
    return this.live.size;
  }

  /** Resolves when the finished runs' compactions started so far are done. */
  async idle(): Promise<void> {
    while (this.compacting.size > 0) await Promise.all(this.compacting);
  }

  /** Folds a finished run's rows into a few (a run's tokens would otherwise be a row each, kept for retention_hours). */
  private compact(runId: string): void {
    if (!this.store.compact || this.closed) return;
    const done: Promise<void> = this.store
      .compact(runId)
      .catch((err: unknown) =>
        this.logger.warn({ err, run_id: runId, store: this.store.kind }, "could not compact a run's events; they stay as written"),
      )
      .finally(() => this.compacting.delete(done));
    this.compacting.add(done);
  }

  /** The last sequence number handed out for a live run of this instance (0: not live here). */
  lastSeq(runId: string): number {
    return this.live.get(runId)?.lastSeq ?? 0;
  }

  private push(live: LiveRun, event: string, data: unknown): void {
    live.lastSeq += 1;
    const entry = new Entry(live.run.runId, live.lastSeq, event, data, Date.now());
    live.entries.push(entry);
    this.pending.push(entry);
    live.wake();
    this.schedule(live.done ? 0 : this.config.flush_interval_ms);
  }

  private schedule(delayMs: number): void {
    if (this.flushing || this.closed) return;
    if (this.timer) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushing = this.flush().finally(() => {
        this.flushing = undefined;
        if (this.pending.length > 0) this.schedule(this.failures > 0 ? RETRY_MS : 0);
      });
    }, delayMs);
  }

  /** Writes what is pending, oldest first; a failed batch goes back to the front and is retried. */
  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, BATCH);
      try {
        await this.store.append(batch);
      } catch (err) {
        this.pending.unshift(...batch);
        if (this.failures++ % 20 === 0) {
          this.logger.warn({ err, pending: this.pending.length, store: this.store.kind }, "could not write run events; retrying");
        }
        return;
      }
      this.failures = 0;
      const touched = new Set<LiveRun>();
      for (const entry of batch) {
        const live = this.live.get(entry.runId);
        if (!live) continue;
        live.writtenSeq = Math.max(live.writtenSeq, entry.seq);
        touched.add(live);
      }
      for (const live of touched) {
        // Keep what is unwritten and the last few written events; older ones are in the store.
        const cut = live.entries.findIndex((e) => e.seq > live.writtenSeq - KEEP_WRITTEN);
        if (cut > 0) live.entries = live.entries.slice(cut);
      }
      for (const notify of [...this.flushed]) notify();
    }
  }

  /** Resolves once everything the run produced is in the store, or after `END_WRITE_WAIT_MS` (the store is failing). */
  private written(live: LiveRun): Promise<void> {
    if (live.writtenSeq >= live.lastSeq) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const check = (force = false) => {
        if (force || live.writtenSeq >= live.lastSeq || this.closed) {
          clearTimeout(timer);
          this.flushed.delete(check);
          resolve();
        }
      };
      const timer = setTimeout(() => check(true), END_WRITE_WAIT_MS);
      this.flushed.add(check);
      this.schedule(0);
    });
  }

  // ---------------------------------------------------------------- retention

  /** Deletes events older than `retention_hours`; returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    const removed = await this.store.prune(new Date(now - this.config.retention_hours * 3_600_000));
    if (removed > 0) this.logger.info({ removed, store: this.store.kind }, "pruned run events past retention");
    return removed;
  }

  startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      this.sweep().catch((err: unknown) => this.logger.warn({ err }, "run event retention sweep failed; retrying at the next interval"));
    }, this.config.sweep_interval_seconds * 1000);
    this.sweeper.unref();
  }

  /** Writes what is pending (waiting at most `waitMs`), stops the sweeper and closes the store. */
  async close(waitMs = 5000): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    const deadline = Date.now() + waitMs;
    while ((this.pending.length > 0 || this.flushing) && Date.now() < deadline) {
      this.schedule(0);
      await (this.flushing ?? new Promise((resolve) => setTimeout(resolve, 10)));
      if (this.failures > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    this.closed = true;
    clearTimeout(this.timer);
    for (const notify of [...this.flushed]) notify();
    await this.idle();
    await this.store.close();
  }

  // ---------------------------------------------------------------- joining

  /**
   * Decides, before the response starts, whether a join after `afterSeq` can be served: a 410 when the events
   * it needs were pruned, a 400 for an id past the end of a finished run, "caught-up" when the client already
   * has everything of a finished run.
   */
  async prepareJoin(runId: string, afterSeq: number, active: boolean): Promise<JoinPlan> {
    const live = this.live.get(runId);
    if (live) {
      if (afterSeq > live.lastSeq) throw pastTheEnd(runId, afterSeq, live.lastSeq);
      return { kind: "stream" };
    }
    const bounds = await this.store.bounds(runId);
    if (!bounds) {
      // Not written yet (another instance's run that has just started) is fine; a finished run with nothing is not.
      if (active) return { kind: "stream" };
      throw expired(runId, "no events are kept for it (they passed the retention, or it ran where no event log was kept)");
    }
    if (bounds.first > afterSeq + 1) {
      throw expired(runId, `events ${afterSeq + 1}–${bounds.first - 1} were pruned (the log keeps ${bounds.first}–${bounds.last})`);
    }
    if (!active && afterSeq >= bounds.last) {
      if (afterSeq > bounds.last) throw pastTheEnd(runId, afterSeq, bounds.last);
      return { kind: "caught-up" };
    }
    return { kind: "stream" };
  }

  /**
   * `join`, with `values` frames as a joiner gets them: the first one a snapshot (`{"snapshot": state}`) of the
   * state after it, the rest patches as stored; with `full`, every one the whole state (the pre-delta form).
   * The snapshot starts from the thread as the run found it (memory while the run is live here, else the
   * thread's saved messages checked against the run's start digest) and folds the run's patches before it.
   */
  async *joinFrames(
    runId: string,
    afterSeq: number,
    isActive: () => Promise<boolean>,
    signal: AbortSignal,
    options: { threadMessages: ThreadMessages; full: boolean },
  ): AsyncGenerator<LoggedEvent> {
    let state: ValuesState | undefined;
    for await (const event of this.join(runId, afterSeq, isActive, signal)) {
      if (event.event !== "values" || event.seq === 0 || (state !== undefined && !options.full)) {
        yield event;
        continue;
      }
      const stored = JSON.parse(event.json) as StoredValues;
      if (state === undefined) {
        try {
          state = await this.stateBefore(runId, event.seq, stored, options.threadMessages);
        } catch (error) {
          if (!(error instanceof HttpError)) throw error;
          yield {
            seq: 0,
            event: "error",
            json: JSON.stringify({ code: error.code, message: error.message, hint: error.hint, run_id: runId }),
          };
          return;
        }
        state = applyValuesPatch(state, stored.patch);
        yield { seq: event.seq, event: "values", json: JSON.stringify(options.full ? state : { snapshot: state }) };
        continue;
      }
      state = applyValuesPatch(state, stored.patch);
      yield { seq: event.seq, event: "values", json: JSON.stringify(state) };
    }
  }

  /** The run's state just before its `values` event `seq`: where the run started, and every patch before `seq`. */
  private async stateBefore(runId: string, seq: number, stored: StoredValues, threadMessages: ThreadMessages): Promise<ValuesState> {
    if (stored.start) return { messages: await this.startMessages(runId, stored.start, threadMessages) };
    let state: ValuesState | undefined;
    let cursor = 0;
    while (cursor < seq - 1) {
      const live = this.live.get(runId);
      const page = live?.after(cursor) ?? (await this.store.read(runId, cursor, READ_LIMIT));
      if (page.length === 0 || page[0]?.seq !== cursor + 1) throw expired(runId, `events after ${cursor} are no longer kept`);
      for (const event of page) {
        if (event.seq >= seq) break;
        cursor = event.seq;
        if (event.event !== "values") continue;
        const earlier = JSON.parse(event.json) as StoredValues;
        if (earlier.start) state = { messages: await this.startMessages(runId, earlier.start, threadMessages) };
        if (!state) throw expired(runId, `its first values event is no longer kept`);
        state = applyValuesPatch(state, earlier.patch);
      }
      if (page.at(-1)?.seq !== cursor) break;
    }
    if (!state) throw expired(runId, `its first values event is no longer kept`);
    return state;
  }

  /** The thread's messages as the run found them. */
  private async startMessages(runId: string, start: RunStart, threadMessages: ThreadMessages): Promise<readonly ValuesMessage[]> {
    if (start.messages === 0) return [];
    const kept = this.live.get(runId)?.startMessages;
    if (kept?.length === start.messages) return kept;
    const saved = (await threadMessages()).slice(0, start.messages);
    if (saved.length !== start.messages || (start.digest !== undefined && digestMessages(saved) !== start.digest)) {
      throw expired(
        runId,
        "the thread's saved messages no longer begin the way the run found them (a summarization or a later run rewrote them), so no snapshot of the run can be built",
      );
    }
    return saved;
  }

  /**
   * The run's events after `afterSeq`, each exactly once and in order, until its `end` or `error` event. A run
   * of this instance is followed in memory; another instance's through the store (polling SQL, or XREAD BLOCK
   * on Redis), looking at its record (`isActive`) when nothing comes, so a run whose process died does not keep
   * the joiner waiting forever. A gap (events pruned while the joiner lagged) ends the stream with a coded
   * error frame instead of skipping events.
   */
  async *join(runId: string, afterSeq: number, isActive: () => Promise<boolean>, signal: AbortSignal): AsyncGenerator<LoggedEvent> {
    let cursor = afterSeq;
    let tail: EventTail | undefined;
    const stop = () => tail?.close();
    signal.addEventListener("abort", stop, { once: true });
    const gap = (found: number): LoggedEvent => ({
      seq: 0,
      event: "error",
      json: JSON.stringify({
        code: GatewayErrorCodes.RUN_EVENTS_EXPIRED,
        message: `events ${cursor + 1}–${found - 1} of run ${runId} were pruned before they could be sent`,
        hint: "Join again without Last-Event-ID if the run is still kept, or raise run_events.max_events_per_run.",
        run_id: runId,
      }),
    });
    try {
      while (!signal.aborted) {
        const live = this.live.get(runId);
        let events: LoggedEvent[] | null = live ? live.after(cursor) : null;
        if (live && events !== null && events.length === 0) {
          await live.changed(signal);
          continue;
        }
        if (events === null) {
          if (live) {
            // Memory starts after the cursor: the events in between were written before they left memory.
            events = await this.store.read(runId, cursor, READ_LIMIT);
            if (events.length === 0) {
              yield gap(live.entries[0]?.seq ?? live.lastSeq + 1);
              return;
            }
          } else {
            tail ??= this.store.tail(runId);
            events = await tail.next(cursor, READ_LIMIT, REMOTE_WAIT_MS);
          }
        }
        if (events.length === 0) {
          if (this.live.has(runId)) continue;
          if (await isActive()) continue;
          // Its record says it ended: whatever it wrote is in the store by now (the end waits for the write).
          events = await this.store.read(runId, cursor, READ_LIMIT);
          if (events.length === 0) {
            yield {
              seq: 0,
              event: "error",
              json: JSON.stringify({
                code: GatewayErrorCodes.RUN_EVENTS_INCOMPLETE,
                message: `run ${runId} ended without logging its last events (its process stopped, or the log could not be written)`,
                hint: "GET /api/threads/{id}/runs/{run_id} has its final status; GET /api/threads/{id}/state has the thread as it was left.",
                run_id: runId,
              }),
            };
            return;
          }
        }
        for (const event of events) {
          if (event.seq !== cursor + 1) {
            yield gap(event.seq);
            return;
          }
          cursor = event.seq;
          yield event;
          if (isTerminal(event.event)) return;
        }
      }
    } finally {
      signal.removeEventListener("abort", stop);
      tail?.close();
    }
  }
}

/** Where a join's first `values` frame starts: the thread's saved messages, read only when that is needed. */
export type ThreadMessages = () => Promise<readonly ValuesMessage[]>;

function expired(runId: string, why: string): HttpError {
  return new HttpError(
    410,
    GatewayErrorCodes.RUN_EVENTS_EXPIRED,
    `the events of run ${runId} cannot be replayed from there: ${why}`,
    "GET /api/threads/{id}/state has the thread's messages; run_events.retention_hours and max_events_per_run bound what is kept.",
    { run_id: runId },
  );
}

function pastTheEnd(runId: string, afterSeq: number, last: number): HttpError {
  return new HttpError(
    400,
    GatewayErrorCodes.INVALID_REQUEST,
    `Last-Event-ID ${afterSeq} is past the last event of run ${runId} (${last})`,
    "Send the id of the last event you received, or none to replay the run from the start.",
    { run_id: runId, last_event_id: afterSeq, last },
  );
}
