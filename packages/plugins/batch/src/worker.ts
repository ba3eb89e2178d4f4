import { randomBytes } from "node:crypto";
import { channel } from "node:diagnostics_channel";
import { hostname } from "node:os";
import { ensureTraceContext, type Logger, outsideTraceContext, silentLogger } from "@antler/kernel";
import type { AdmissionRuntime, SubagentOutcome, SubagentRunner } from "@antler/plugin-subagents";
import { BatchStore, type ClaimedItem, type ItemCompletion, type ItemState } from "./store.js";

/** diagnostics_channel that receives a `BatchProgressEvent` for every item a worker finishes. */
export const BATCH_PROGRESS_CHANNEL = "antler:batch:progress";

export interface BatchProgressEvent {
  readonly type: "batch_item_finished" | "batch_item_discarded" | "batch_settled";
  readonly batch_id: string;
  readonly key?: string;
  readonly state?: ItemState;
  readonly verdict?: string | null;
  readonly attempts?: number;
  readonly duration_ms?: number;
  readonly worker_id: string;
  /** The trace id of the run that submitted the batch. */
  readonly trace_id: string;
}

/**
 * diagnostics_channel that receives a `BatchQueueEvent` after each claim round that claimed items, and (at most
 * once a second, only while someone listens) the queue depth: what a metrics plugin needs without a dependency.
 */
export const BATCH_QUEUE_CHANNEL = "antler:batch:queue";

export interface BatchQueueEvent {
  readonly worker_id: string;
  /** Items this round claimed, of which `taken_over` came from another worker's expired lease. */
  readonly claimed: number;
  readonly taken_over: number;
  /** Pending items across all batches, when this event carries a fresh count. */
  readonly queue_depth?: number;
}

export interface BatchWorkerOptions {
  readonly store: BatchStore;
  readonly runner: SubagentRunner;
  /** The process-wide admission runtime shared with `task`; without one, only `concurrency` limits this worker. */
  readonly admission?: AdmissionRuntime | undefined;
  /** Items in flight at once in this worker. */
  readonly concurrency: number;
  /** Most items claimed per round trip, and how far claims run ahead of execution. Default: max(8, concurrency). */
  readonly claimBatch?: number;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly maxAttempts: number;
  /** Idle wait between looks for work. */
  readonly pollMs: number;
  /** Completions are written in groups: at most this long after the first one waits (default 50 ms). */
  readonly flushMs?: number;
  readonly logger?: Logger;
  readonly workerId?: string;
  readonly onProgress?: (event: BatchProgressEvent) => void;
}

interface InFlight {
  readonly item: ClaimedItem;
  readonly controller: AbortController;
  readonly startedAt: number;
}

const progressChannel = channel(BATCH_PROGRESS_CHANNEL);
const queueChannel = channel(BATCH_QUEUE_CHANNEL);
const QUEUE_DEPTH_EVERY_MS = 1000;
const SETTLE_EVERY_MS = 250;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Runs batch items: claims leased items from the store, runs each through the subagent runner (inside the
 * admission runtime when there is one), renews leases by heartbeat, and records each result at most once.
 * Any number of workers, in any number of processes or machines, may share one database.
 */
export class BatchWorker {
  readonly workerId: string;
  private readonly options: BatchWorkerOptions;
  private readonly logger: Logger;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly liveByBatch = new Map<string, number>();
  private pending: Array<{ completion: ItemCompletion; item: ClaimedItem; durationMs: number }> = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private readonly stopController = new AbortController();
  private wake: AbortController = new AbortController();
  private stats = { claimed: 0, recorded: 0, discarded: 0, released: 0 };

  constructor(options: BatchWorkerOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger();
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  }

  get running(): boolean {
    return this.loop !== undefined && !this.stopController.signal.aborted;
  }

  /** Items leased by this worker right now. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  get counters(): Readonly<{ claimed: number; recorded: number; discarded: number; released: number }> {
    return { ...this.stats };
  }

  /** Starts claiming in the background. */
  start(): void {
    if (this.loop) return;
    // The loop is long-lived and often started lazily from a tool call inside some run's trace scope; detached,
    // each item binds its own batch's id instead of inheriting the scope that happened to start the worker.
    outsideTraceContext(() => {
      this.heartbeatTimer = setInterval(() => void this.beat(), this.options.heartbeatMs);
      this.heartbeatTimer.unref();
      this.loop = this.run().catch((error: unknown) => {
        this.logger.error({ err: error, worker_id: this.workerId }, "batch worker loop failed");
      });
    });
    this.logger.debug({ worker_id: this.workerId, concurrency: this.options.concurrency }, "batch worker started");
  }

  /** Looks for work now instead of waiting out the idle poll (after a submission in this process). */
  poke(): void {
    this.options.store.invalidateCandidates();
    this.wake.abort();
  }

  /**
   * Runs until no claimable item is left (and nothing is in flight), then stops. For `antler worker --drain`
   * and one-shot jobs.
   */
  async drain(): Promise<void> {
    this.start();
    for (;;) {
      await sleep(this.options.pollMs, this.stopController.signal);
      if (this.stopController.signal.aborted) break;
      if (this.inFlight.size === 0 && this.idleRounds >= 2) break;
    }
    await this.stop();
  }

  private idleRounds = 0;

  /**
   * Stops claiming and waits up to `graceMs` for items in flight; items still running after that are aborted
   * and handed back (pending again, the attempt not counted), so another worker picks them up at once.
   */
  async stop(graceMs = 30_000): Promise<void> {
    this.stopController.abort();
    this.wake.abort();
    this.releaseSlot();
    await this.loop;
    // Claimed but never started: hand back at once.
    const queued = this.ready.splice(0).filter((f) => this.inFlight.has(BatchStore.leaseId(f.item)));
    if (queued.length > 0) {
      this.stats.released += await this.options.store.release(queued.map((f) => f.item)).catch(() => 0);
      for (const f of queued) this.forget(f.item);
    }
    const deadline = Date.now() + graceMs;
    while (this.inFlight.size > 0 && Date.now() < deadline) await sleep(20);
    const leftovers = [...this.inFlight.values()];
    for (const f of leftovers) f.controller.abort(new Error("worker stopping"));
    if (leftovers.length > 0) {
      const released = await this.options.store
        .release(leftovers.map((f) => ({ batchId: f.item.batchId, key: f.item.key, leaseToken: f.item.leaseToken })))
        .catch(() => 0);
      this.stats.released += released;
      for (const f of leftovers) this.forget(f.item);
    }
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    await this.flush();
  }

  private async run(): Promise<void> {
    const { store, concurrency } = this.options;
    // Claims run ahead of execution, so a slot that frees finds an item already leased locally instead of
    // waiting for a database round trip (a durable commit costs milliseconds).
    const claimBatch = this.options.claimBatch ?? Math.max(8, concurrency);
    let lastReap = 0;
    // Expired leases are rare (a worker died); look for them on the heartbeat's beat, and whenever idle.
    let lastExpiredLook = 0;
    const expiredEvery = Math.min(this.options.heartbeatMs, this.options.leaseMs / 4);
    while (!this.stopController.signal.aborted) {
      // Keep between one and two claim batches leased ahead: a claim waits for a durable commit, and on a busy
      // database that wait must not drain the queue.
      const room = concurrency + 2 * claimBatch - this.inFlight.size;
      if (this.ready.length > claimBatch || room <= 0) {
        await this.waitForSlot();
        continue;
      }
      const backoff = this.admissionBackoffUntil - Date.now();
      if (backoff > 0) {
        await sleep(backoff, this.stopController.signal);
        continue;
      }
      let claimed: ClaimedItem[] = [];
      try {
        if (Date.now() - lastReap > this.options.heartbeatMs) {
          lastReap = Date.now();
          const reaped = await store.reapExhausted(this.options.maxAttempts);
          if (reaped > 0) this.logger.warn({ worker_id: this.workerId, items: reaped }, "batch items failed after repeated lease loss");
        }
        const started = Date.now();
        const includeExpired = this.idleRounds > 0 || started - lastExpiredLook >= expiredEvery;
        if (includeExpired) lastExpiredLook = started;
        claimed = await store.claim({
          workerId: this.workerId,
          limit: Math.min(room, claimBatch),
          leaseMs: this.options.leaseMs,
          maxAttempts: this.options.maxAttempts,
          localLive: this.liveByBatch,
          includeExpired,
        });
      } catch (error) {
        this.logger.error({ err: error, worker_id: this.workerId }, "claiming batch items failed; retrying");
        await sleep(this.options.pollMs, this.stopController.signal);
        continue;
      }
      if (queueChannel.hasSubscribers) this.observeQueue(claimed);
      if (claimed.length === 0) {
        this.idleRounds += 1;
        if (this.unsettled.size > 0 && this.pending.length === 0) await this.settle();
        // poke() and stop() both abort `wake`, so one signal ends the idle wait.
        this.wake = new AbortController();
        if (this.stopController.signal.aborted) break;
        await sleep(this.options.pollMs, this.wake.signal);
        continue;
      }
      this.idleRounds = 0;
      this.stats.claimed += claimed.length;
      for (const item of claimed) this.dispatch(item);
      this.pump();
    }
  }

  private admissionBackoffUntil = 0;
  private queueDepthAt = 0;

  /** Publishes the round's claims at once and, off the claim path, a fresh queue depth at most once a second. */
  private observeQueue(claimed: readonly ClaimedItem[]): void {
    const base = { worker_id: this.workerId, claimed: claimed.length, taken_over: claimed.filter((c) => c.takenOver).length };
    if (claimed.length > 0) queueChannel.publish(base satisfies BatchQueueEvent);
    if (Date.now() - this.queueDepthAt < QUEUE_DEPTH_EVERY_MS) return;
    this.queueDepthAt = Date.now();
    this.options.store.queueDepth().then(
      (depth) =>
        queueChannel.publish({ worker_id: this.workerId, claimed: 0, taken_over: 0, queue_depth: depth } satisfies BatchQueueEvent),
      () => undefined,
    );
  }

  /** Claimed items waiting for an execution slot, in claim order. */
  private readonly ready: InFlight[] = [];
  private executing = 0;

  private pump(): void {
    while (this.executing < this.options.concurrency && this.ready.length > 0 && !this.stopController.signal.aborted) {
      const flight = this.ready.shift() as InFlight;
      // Lease lost while it waited (batch cancelled): forget() already dropped it.
      if (!this.inFlight.has(BatchStore.leaseId(flight.item))) continue;
      this.executing += 1;
      void ensureTraceContext(flight.item.batch.traceId, () => this.execute(flight)).finally(() => {
        this.executing -= 1;
        this.pump();
        this.releaseSlot();
      });
    }
  }

  private slotWaiters: Array<() => void> = [];

  private waitForSlot(): Promise<void> {
    // stop() wakes every waiter through releaseSlot, so no abort listener piles up per wait.
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  private releaseSlot(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const w of waiters) w();
  }

  private dispatch(item: ClaimedItem): void {
    const id = BatchStore.leaseId(item);
    const controller = new AbortController();
    const flight: InFlight = { item, controller, startedAt: Date.now() };
    this.inFlight.set(id, flight);
    this.liveByBatch.set(item.batchId, (this.liveByBatch.get(item.batchId) ?? 0) + 1);
    this.ready.push(flight);
  }

  private async execute(flight: InFlight): Promise<void> {
    const { item, controller } = flight;
    const { runner, admission } = this.options;
    const request = (signal: AbortSignal) =>
      runner.run({
        prompt: item.prompt,
        subagentType: item.batch.subagentType,
        description: `${item.batch.title} [${item.key}]`,
        acceptanceCriteria: item.acceptanceCriteria.length > 0 ? item.acceptanceCriteria : undefined,
        userId: item.batch.ownerId,
        userRole: item.batch.userRole ?? undefined,
        threadId: item.batch.threadId ?? item.batchId,
        signal,
        traceId: item.batch.traceId,
      });
    let outcome: SubagentOutcome;
    try {
      outcome = admission
        ? await admission.submit(
            (signal) => {
              // The runtime aborts its jobs when it closes; fold that into the item's own signal.
              if (signal.aborted) controller.abort(signal.reason);
              else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
              return request(controller.signal);
            },
            { signal: controller.signal, label: `batch ${item.batchId} [${item.key}]` },
          )
        : await request(controller.signal);
    } catch (error) {
      if (controller.signal.aborted) {
        // Lease lost (cancelled, or re-claimed elsewhere) or the worker is stopping: nothing to record here.
        this.forget(item);
        return;
      }
      if (admission && isAdmissionRejection(error)) {
        // The process-wide queue is full (busy with `task` calls): hand the item back, and claim nothing more
        // for a poll interval.
        this.admissionBackoffUntil = Date.now() + this.options.pollMs;
        await this.options.store.release([item]).catch(() => 0);
        this.stats.released += 1;
        this.forget(item);
        await sleep(this.options.pollMs);
        return;
      }
      outcome = {
        status: "failed",
        error: `the subagent runner threw: ${error instanceof Error ? error.message : String(error)}`,
        result: "",
        resultSha256: "",
        receipts: [],
        durationMs: Date.now() - flight.startedAt,
      };
    }
    if (controller.signal.aborted && outcome.status === "cancelled") {
      this.forget(item);
      return;
    }
    this.enqueueCompletion(item, outcome, Date.now() - flight.startedAt);
  }

  private forget(item: ClaimedItem): void {
    const id = BatchStore.leaseId(item);
    if (!this.inFlight.delete(id)) return;
    const live = (this.liveByBatch.get(item.batchId) ?? 1) - 1;
    if (live <= 0) this.liveByBatch.delete(item.batchId);
    else this.liveByBatch.set(item.batchId, live);
    this.releaseSlot();
  }

  private enqueueCompletion(item: ClaimedItem, outcome: SubagentOutcome, durationMs: number): void {
    const state: ItemCompletion["state"] = outcome.status;
    const completion: ItemCompletion = {
      batchId: item.batchId,
      key: item.key,
      leaseToken: item.leaseToken,
      state,
      result: outcome.result,
      resultSha256: outcome.resultSha256 || null,
      error: outcome.error ?? null,
      verdict: outcome.acceptance?.verdict ?? null,
      acceptance: outcome.acceptance ?? null,
      outcome: {
        model: outcome.model ?? null,
        usage: outcome.usage ?? null,
        stop_reason: outcome.stopReason ?? null,
        duration_ms: outcome.durationMs,
        checkpoint_thread_id: outcome.checkpointThreadId ?? null,
        receipts: outcome.receipts,
      },
    };
    this.pending.push({ completion, item, durationMs });
    // The slot frees now: the result waits in memory (still under lease) for the group write.
    this.forgetSlotOnly(item);
    const flushMs = this.options.flushMs ?? 50;
    if (this.pending.length >= Math.max(32, this.options.concurrency * 2)) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), flushMs);
  }

  /** Frees the concurrency slot but keeps the lease in `inFlight` bookkeeping until the result is written. */
  private forgetSlotOnly(item: ClaimedItem): void {
    const id = BatchStore.leaseId(item);
    const flight = this.inFlight.get(id);
    if (!flight) return;
    this.inFlight.delete(id);
    this.awaitingWrite.set(id, flight);
    const live = (this.liveByBatch.get(item.batchId) ?? 1) - 1;
    if (live <= 0) this.liveByBatch.delete(item.batchId);
    else this.liveByBatch.set(item.batchId, live);
    this.releaseSlot();
  }

  private readonly awaitingWrite = new Map<string, InFlight>();

  /** Writes buffered results; serialised so groups never overlap. */
  flush(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    this.flushing = this.flushing.then(() => this.flushNow());
    return this.flushing;
  }

  private async flushNow(): Promise<void> {
    const group = this.pending;
    this.pending = [];
    if (group.length === 0) return;
    let recorded: Set<string>;
    try {
      recorded = await this.options.store.complete(group.map((g) => g.completion));
    } catch (error) {
      // Keep the results and try again: the leases are still ours until they expire, and heartbeats keep them.
      this.logger.error({ err: error, worker_id: this.workerId, items: group.length }, "recording batch results failed; retrying");
      this.pending.unshift(...group);
      this.flushTimer ??= setTimeout(() => void this.flush(), this.options.pollMs);
      return;
    }
    for (const { completion, item, durationMs } of group) {
      const id = BatchStore.leaseId(item);
      this.awaitingWrite.delete(id);
      const kept = recorded.has(id);
      if (kept) this.stats.recorded += 1;
      else this.stats.discarded += 1;
      const event: BatchProgressEvent = {
        type: kept ? "batch_item_finished" : "batch_item_discarded",
        batch_id: item.batchId,
        key: item.key,
        state: completion.state,
        verdict: completion.verdict,
        attempts: item.attempts,
        duration_ms: durationMs,
        worker_id: this.workerId,
        trace_id: item.batch.traceId,
      };
      if (kept) this.logger.debug(event, "batch item finished");
      else this.logger.warn(event, "batch item result discarded: the lease was lost (cancelled or re-claimed after expiry)");
      this.publish(event);
    }
    for (const { item } of group) this.unsettled.set(item.batchId, item.batch.traceId);
    // Marking finished batches scans their open items; once per quarter second is plenty while busy.
    if (this.inFlight.size === 0 || Date.now() - this.lastSettle >= SETTLE_EVERY_MS) await this.settle();
  }

  /** Batch id → trace id of batches this worker recorded results for since the last settle. */
  private readonly unsettled = new Map<string, string>();
  private lastSettle = 0;

  private async settle(): Promise<void> {
    if (this.unsettled.size === 0) return;
    const batches = new Map(this.unsettled);
    this.unsettled.clear();
    this.lastSettle = Date.now();
    try {
      const settled = await this.options.store.settle(batches.keys());
      for (const batchId of settled) {
        const event: BatchProgressEvent = {
          type: "batch_settled",
          batch_id: batchId,
          worker_id: this.workerId,
          trace_id: batches.get(batchId) ?? "-",
        };
        this.logger.info(event, "batch finished: every item reached a terminal state");
        this.publish(event);
      }
    } catch (error) {
      for (const [id, trace] of batches) this.unsettled.set(id, trace);
      this.logger.warn({ err: error }, "marking finished batches failed; the next flush retries");
    }
  }

  private publish(event: BatchProgressEvent): void {
    try {
      this.options.onProgress?.(event);
    } catch (error) {
      this.logger.warn({ err: error }, "batch progress listener threw");
    }
    if (progressChannel.hasSubscribers) progressChannel.publish(event);
  }

  /** Renews leases; aborts items whose lease is gone (batch cancelled, or expired and taken by another worker). */
  private async beat(): Promise<void> {
    if (this.inFlight.size === 0 && this.awaitingWrite.size === 0) return;
    // A claim is committed before its flight is stamped, so every flight stamped before this instant is visible
    // to the heartbeat query below; only later ones are too new to judge.
    const beatStartedAt = Date.now();
    let held: Set<string>;
    try {
      held = await this.options.store.heartbeat(this.workerId, this.options.leaseMs);
    } catch (error) {
      this.logger.warn({ err: error, worker_id: this.workerId }, "batch lease heartbeat failed; retrying at the next beat");
      return;
    }
    for (const [id, flight] of this.inFlight) {
      if (flight.startedAt >= beatStartedAt) continue;
      if (held.has(id)) continue;
      this.logger.info(
        { worker_id: this.workerId, batch_id: flight.item.batchId, key: flight.item.key, trace_id: flight.item.batch.traceId },
        "batch item lease lost (cancelled or re-claimed); aborting its subagent",
      );
      flight.controller.abort(new Error("batch item lease lost"));
      this.forget(flight.item);
    }
  }
}

/** The admission runtime refused the job (queue full, or closing): the item never started. */
function isAdmissionRejection(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { reason?: unknown; details?: { reason?: unknown } };
  const reason = e.reason ?? e.details?.reason;
  return reason === "queue_full" || reason === "closed";
}
