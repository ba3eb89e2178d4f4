import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AntlerDatabase, ensureTraceContext, getCurrentTraceId, type Logger } from "@antler/kernel";
import { captureLogs } from "@antler/kernel/testing";
import { FifoAdmissionRuntime, type SubagentOutcome, type SubagentRequest, type SubagentRunner } from "@antler/plugin-subagents";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BatchProgressEvent, type BatchStore, BatchWorker, type BatchWorkerOptions } from "../src/index.js";
import { SleepingStubRunner } from "../src/testing/index.js";
import { collect, memoryStore, sleep, submission } from "./fixtures.js";

describe("BatchWorker", () => {
  let store: BatchStore;
  let database: AntlerDatabase;
  const workers: BatchWorker[] = [];
  beforeEach(async () => {
    ({ store, database } = await memoryStore());
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(1000)));
    await database.close();
  });

  function worker(options: Partial<BatchWorkerOptions> & { runner: SubagentRunner }): BatchWorker {
    const w = new BatchWorker({ store, concurrency: 8, leaseMs: 5000, heartbeatMs: 200, maxAttempts: 3, pollMs: 20, ...options });
    workers.push(w);
    return w;
  }

  async function waitFor(batchId: string, predicate: (s: Awaited<ReturnType<BatchStore["status"]>>) => boolean, ms = 10_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const status = await store.status("alice", batchId);
      if (predicate(status)) return status;
      if (Date.now() > deadline) throw new Error(`timed out waiting; last status ${JSON.stringify(status.counts)}`);
      await sleep(20);
    }
  }

  it("runs every item once, records its result, and reports progress stamped with the batch's trace id", async () => {
    const file = join(tmpdir(), `batch-exec-${process.pid}-${Date.now()}.jsonl`);
    const runner = new SleepingStubRunner({ sleepMs: 10, executionsFile: file });
    const events: BatchProgressEvent[] = [];
    const logs = captureLogs({ level: "debug" });
    const batch = await store.createBatch("alice", submission(60), { traceId: "trace-abc" });
    worker({ runner, onProgress: (e) => events.push(e), logger: logs.logger as Logger }).start();
    const status = await waitFor(batch.id, (s) => s.state === "completed");
    expect(status.counts.completed).toBe(60);
    expect(runner.started).toBe(60);
    const starts = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; description: string })
      .filter((l) => l.event === "start");
    expect(new Set(starts.map((s) => s.description)).size).toBe(60);
    rmSync(file, { force: true });
    const finished = events.filter((e) => e.type === "batch_item_finished");
    expect(finished).toHaveLength(60);
    expect(finished.every((e) => e.trace_id === "trace-abc")).toBe(true);
    expect(events.some((e) => e.type === "batch_settled")).toBe(true);
    // Item log lines carry the submitting run's trace id (pino mixin from the ambient trace context).
    const lines = logs.lines.filter((l) => l.msg === "batch item finished");
    expect(lines.length).toBe(60);
    expect(lines.every((l) => l.trace_id === "trace-abc")).toBe(true);
    const exported = await collect(store.exportItems("alice", batch.id));
    expect(exported.map((e) => e.key)).toEqual(submission(60).items.map((i) => i.key));
    expect(exported[0]).toMatchObject({ state: "completed", result: "stub answer to: prompt 0", attempts: 1, trace_id: "trace-abc" });
  });

  it("runs each item on its batch's trace id even when the worker was started inside another trace scope", async () => {
    const seen: Array<string | null> = [];
    const runner: SubagentRunner = {
      types: () => ["general-purpose"],
      async run(): Promise<SubagentOutcome> {
        seen.push(getCurrentTraceId());
        return { status: "completed", result: "ok", resultSha256: "", receipts: [], durationMs: 0 };
      },
    };
    const logs = captureLogs({ level: "debug" });
    const batch = await store.createBatch("alice", submission(3), { traceId: "batch-trace" });
    ensureTraceContext("starter-scope", () => worker({ runner, logger: logs.logger as Logger }).start());
    await waitFor(batch.id, (s) => s.state === "completed");
    expect(seen).toEqual(["batch-trace", "batch-trace", "batch-trace"]);
    const itemLines = logs.lines.filter((l) => l.msg === "batch item finished");
    expect(itemLines.map((l) => l.trace_id)).toEqual(["batch-trace", "batch-trace", "batch-trace"]);
  });

  it("never runs more items at once than the admission runtime allows", async () => {
    let live = 0;
    let peak = 0;
    const runner: SubagentRunner = {
      types: () => ["general-purpose"],
      async run(_request: SubagentRequest): Promise<SubagentOutcome> {
        live += 1;
        peak = Math.max(peak, live);
        await sleep(5);
        live -= 1;
        return { status: "completed", result: "ok", resultSha256: "", receipts: [], durationMs: 5 };
      },
    };
    const admission = new FifoAdmissionRuntime({ maxRunning: 2, maxQueued: 100 });
    const batch = await store.createBatch("alice", submission(30), { traceId: "t" });
    worker({ runner, admission, concurrency: 6 }).start();
    await waitFor(batch.id, (s) => s.state === "completed");
    expect(peak).toBe(2);
    await admission.close();
  });

  it("aborts running items when the batch is cancelled and records nothing for them", async () => {
    const runner = new SleepingStubRunner({ sleepMs: 5_000 });
    const batch = await store.createBatch("alice", submission(20), { traceId: "t" });
    const w = worker({ runner, concurrency: 4, claimBatch: 4 });
    w.start();
    // Four run; up to two claim batches (8) more are leased ahead, waiting for a slot.
    await waitFor(batch.id, (s) => s.counts.running === 12 && runner.started === 4);
    await store.cancel("alice", batch.id);
    const deadline = Date.now() + 3000;
    while (w.inFlightCount > 0 && Date.now() < deadline) await sleep(20);
    expect(w.inFlightCount).toBe(0);
    const status = await store.status("alice", batch.id);
    expect(status.counts).toMatchObject({ cancelled: 20, completed: 0, running: 0, pending: 0 });
    expect(runner.started).toBe(4);
  });

  it("hands items back when the shared admission queue is full (busy with task calls), and runs them once there is room", async () => {
    const admission = new FifoAdmissionRuntime({ maxRunning: 1, maxQueued: 0 });
    // A `task` call holds the only slot for a while.
    let releaseTask: () => void = () => {};
    const task = admission.submit(() => new Promise<void>((resolve) => (releaseTask = resolve)));
    const runner = new SleepingStubRunner({ sleepMs: 1 });
    const batch = await store.createBatch("alice", submission(4), { traceId: "t" });
    const w = worker({ runner, admission, concurrency: 2 });
    w.start();
    await sleep(150);
    expect(runner.started).toBe(0);
    expect(w.counters.released).toBeGreaterThan(0);
    releaseTask();
    await task;
    const status = await waitFor(batch.id, (s) => s.state === "completed");
    expect(status.counts.completed).toBe(4);
    // Rejected submissions never counted as attempts.
    expect((await collect(store.exportItems("alice", batch.id))).every((i) => i.attempts === 1)).toBe(true);
    await admission.close();
  });

  it("records a runner that throws as a failed item instead of crashing the worker", async () => {
    const runner: SubagentRunner = {
      types: () => ["general-purpose"],
      run: async (request) => {
        if (request.prompt === "prompt 1") throw new Error("kaboom");
        return { status: "completed", result: "ok", resultSha256: "", receipts: [], durationMs: 1 };
      },
    };
    const batch = await store.createBatch("alice", submission(3), { traceId: "t" });
    worker({ runner }).start();
    const status = await waitFor(batch.id, (s) => s.state === "completed");
    expect(status.counts).toMatchObject({ completed: 2, failed: 1 });
    const failed = (await collect(store.exportItems("alice", batch.id))).find((i) => i.state === "failed");
    expect(failed?.error).toMatch(/the subagent runner threw: kaboom/);
  });

  it("hands unfinished items back when it stops, so another worker runs them at once", async () => {
    const slow = new SleepingStubRunner({ sleepMs: 10_000 });
    const batch = await store.createBatch("alice", submission(3), { traceId: "t" });
    const first = worker({ runner: slow, concurrency: 3 });
    first.start();
    await waitFor(batch.id, (s) => s.counts.running === 3);
    await first.stop(50);
    expect((await store.status("alice", batch.id)).counts.pending).toBe(3);
    worker({ runner: new SleepingStubRunner({ sleepMs: 1 }) }).start();
    const status = await waitFor(batch.id, (s) => s.state === "completed");
    expect(status.counts.completed).toBe(3);
    expect((await collect(store.exportItems("alice", batch.id))).every((i) => i.attempts === 1)).toBe(true);
  });
});
