import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { expect, it } from "vitest";
import { tempDir } from "./fixtures.js";
import { echoClient } from "./multitask-fixtures.js";
import type { StorageConfigInput } from "./storage.js";

describeWithPostgres("queued runs on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_queue" });

  it("a run queued through one client wakes an executor in another at once (NOTIFY), not at its next poll", async () => {
    const storage: StorageConfigInput = { backend: "postgres", postgres_url: url, postgres_schema: schema.name };
    const accepting = await echoClient(tempDir(), storage, 0);
    const executing = await echoClient(tempDir(), storage, 0);
    // A poll this long never comes within the test: only the notification can start the run.
    const stop = await executing.executeQueued({ pollMs: 600_000 });
    // Past the executor's first look (which finds nothing), so it is asleep when the run is queued.
    await new Promise((r) => setTimeout(r, 500));
    try {
      const record = await accepting.enqueue("wake up", { threadId: "t1" });
      const deadline = Date.now() + 20_000;
      let status = record.status as string;
      while (status !== "success" && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        status = (await accepting.getRun("t1", record.run_id)).status;
      }
      expect(status).toBe("success");
      expect((await accepting.getThread("t1")).messages.map((m) => m.content)).toEqual(["wake up", "reply to wake up"]);
    } finally {
      await stop();
    }
  });

  it("two executors claiming at once take different runs: 20 queued runs each run once", async () => {
    const storage: StorageConfigInput = { backend: "postgres", postgres_url: url, postgres_schema: schema.name };
    const accepting = await echoClient(tempDir(), storage, 0);
    const records = [];
    for (let i = 0; i < 20; i++) records.push(await accepting.enqueue(`m${i}`, { threadId: `c${i}` }));
    const a = await echoClient(tempDir(), storage, 20);
    const b = await echoClient(tempDir(), storage, 20);
    const started = new Map<string, number>();
    for (const c of [a, b]) {
      c.observeRuns({
        runStarted: (run) => started.set(run.runId, (started.get(run.runId) ?? 0) + 1),
        runEvent() {},
        runEnded() {},
      });
    }
    const stops = [await a.executeQueued({ pollMs: 20 }), await b.executeQueued({ pollMs: 20 })];
    try {
      const deadline = Date.now() + 30_000;
      while ((await accepting.countPendingRuns()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      for (const [i, record] of records.entries()) {
        while ((await accepting.getRun(`c${i}`, record.run_id)).status === "running") await new Promise((r) => setTimeout(r, 25));
        expect((await accepting.getRun(`c${i}`, record.run_id)).status).toBe("success");
      }
    } finally {
      for (const stop of stops) await stop();
    }
    expect([...started.keys()].sort()).toEqual(records.map((r) => r.run_id).sort());
    expect([...started.values()].every((n) => n === 1)).toBe(true);
  });
});
