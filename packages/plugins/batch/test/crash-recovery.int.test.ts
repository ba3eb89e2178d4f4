import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AntlerDatabase } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { afterEach, expect, it } from "vitest";
import type { BatchStore } from "../src/index.js";
import { collect, postgresStore, sleep, submission } from "./fixtures.js";
import { distMissing, startWorker, type WorkerProcess, writeWorkerConfig } from "./processes.js";

interface Execution {
  event: "start" | "end" | "aborted";
  description: string;
  pid: number;
  t: number;
}

const missing = distMissing();

describeWithPostgres("crash recovery across worker processes", (url) => {
  const schema = usePostgresSchema(url, { prefix: "batch_crash" });
  const workers: WorkerProcess[] = [];
  let database: AntlerDatabase | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    for (const w of workers.splice(0)) {
      if (w.child.exitCode === null && w.child.signalCode === null) {
        w.child.kill("SIGKILL");
        await w.exited;
      }
    }
    await database?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(missing !== undefined)(
    `a worker SIGKILLed in the middle of a 200-item batch loses nothing: another worker finishes it and every item completes exactly once${missing ? ` (skipped: ${missing})` : ""}`,
    async () => {
      dir = mkdtempSync(join(tmpdir(), "antler-batch-crash-"));
      const executionsFile = join(dir, "executions.jsonl");
      const config = writeWorkerConfig({
        dir,
        postgresUrl: url,
        schema: schema.name,
        concurrency: 4,
        sleepMs: 60,
        // Heartbeats every 0.5 s; a 5 s lease lets a worker stall for seconds on a loaded machine before the other
        // may take its items over (a takeover of a live worker's item would run it twice at once).
        leaseSeconds: 5,
        heartbeatSeconds: 0.5,
        executionsFile,
      });
      const victim = startWorker(config, ["--worker-id", "victim"]);
      const survivor = startWorker(config, ["--worker-id", "survivor"]);
      workers.push(victim, survivor);
      await Promise.all([victim.ready, survivor.ready]);

      let store: BatchStore;
      ({ store, database } = await postgresStore(url, schema.name));
      const batch = await store.createBatch("alice", submission(200, { title: "crash" }), { traceId: "trace-crash" });

      // Kill the victim mid-batch, while it holds leases on items it is running.
      for (;;) {
        const status = await store.status("alice", batch.id);
        if (status.done >= 50) break;
        await sleep(10);
      }
      const killedAt = Date.now();
      victim.child.kill("SIGKILL");
      expect(await victim.exited).toBeNull();
      expect(victim.child.signalCode).toBe("SIGKILL");

      const deadline = Date.now() + 60_000;
      let status = await store.status("alice", batch.id);
      while (status.state === "active" && Date.now() < deadline) {
        await sleep(50);
        status = await store.status("alice", batch.id);
      }
      expect(status.state).toBe("completed");
      expect(status.counts).toEqual({ pending: 0, running: 0, completed: 200, failed: 0, cancelled: 0, timed_out: 0 });

      // Every item has one recorded result, from its last lease.
      const items = await collect(store.exportItems("alice", batch.id));
      expect(items).toHaveLength(200);
      expect(new Set(items.map((i) => i.key)).size).toBe(200);
      expect(items.every((i) => i.state === "completed" && i.result === `stub answer to: prompt ${i.seq}`)).toBe(true);

      const executions = readFileSync(executionsFile, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Execution);
      const victimPid = victim.child.pid;
      const byKey = new Map<string, Execution[]>();
      for (const e of executions) byKey.set(e.description, [...(byKey.get(e.description) ?? []), e]);
      expect(byKey.size).toBe(200);

      // The kill really interrupted work: the victim had started items it never finished.
      const interrupted = [...byKey.values()].filter(
        (list) =>
          list.some((e) => e.pid === victimPid && e.event === "start") && !list.some((e) => e.pid === victimPid && e.event !== "start"),
      );
      expect(interrupted.length).toBeGreaterThan(0);
      expect(items.filter((i) => i.attempts > 1).length).toBeGreaterThanOrEqual(interrupted.length);
      for (const list of interrupted) {
        // ...and the survivor ran each of those again, after the kill.
        expect(list.some((e) => e.pid !== victimPid && e.event === "end" && e.t >= killedAt)).toBe(true);
      }
      // Re-runs are bounded by what the victim had started when it died: its 4 running items plus the results it
      // had finished but not yet written (one group, written every 50 ms: a handful at this rate; 16 leaves room
      // for a stalled machine). Items it had only leased ahead ran once, on the survivor.
      const rerun = [...byKey.values()].filter((list) => list.filter((e) => e.event === "start").length > 1);
      expect(rerun.length).toBeLessThanOrEqual(4 + 16);
      // An item was never run by two workers at once: its executions never overlap in time.
      for (const list of byKey.values()) {
        const runs = list
          .filter((e) => e.event === "start")
          .map((s) => ({ start: s.t, end: list.find((e) => e.pid === s.pid && e.event !== "start" && e.t >= s.t)?.t ?? killedAt }));
        runs.sort((a, b) => a.start - b.start);
        for (let i = 1; i < runs.length; i++) expect(runs[i]?.start).toBeGreaterThanOrEqual(runs[i - 1]?.end as number);
      }

      survivor.child.kill("SIGTERM");
      expect(await survivor.exited).toBe(0);
      expect(survivor.output()).toMatch(/worker survivor stopped: \d+ recorded/);
    },
  );
});
