import type { AntlerDatabase } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { afterEach, beforeEach, expect, it } from "vitest";
import { BatchErrorCodes, type BatchStore, type ClaimedItem } from "../src/index.js";
import { collect, postgresStore, sleep, submission } from "./fixtures.js";

describeWithPostgres("BatchStore on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "batch_store" });
  let store: BatchStore;
  let database: AntlerDatabase;
  beforeEach(async () => {
    ({ store, database } = await postgresStore(url, schema.name));
  });
  afterEach(async () => {
    await database.close();
  });

  it("reports another user's batch as not found for status and cancel", async () => {
    const batch = await store.createBatch("alice", submission(2), { traceId: "t1" });
    await expect(store.status("mallory", batch.id)).rejects.toMatchObject({ code: BatchErrorCodes.NOT_FOUND });
    await expect(store.cancel("mallory", batch.id)).rejects.toMatchObject({ code: BatchErrorCodes.NOT_FOUND });
    expect((await store.status("alice", batch.id)).counts.pending).toBe(2);
  });

  it("gives every item to exactly one of many concurrent claimers (FOR UPDATE SKIP LOCKED)", async () => {
    await store.createBatch("alice", submission(400), { traceId: "t1" });
    const claims = await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        const mine: ClaimedItem[] = [];
        for (;;) {
          const got = await store.claim({ workerId: `W${w}`, limit: 7, leaseMs: 60_000, maxAttempts: 3 });
          if (got.length === 0) return mine;
          mine.push(...got);
        }
      }),
    );
    const keys = claims.flat().map((c) => c.key);
    expect(keys).toHaveLength(400);
    expect(new Set(keys).size).toBe(400);
    // More than one claimer got work: the rows were shared out, not serialised onto one worker.
    expect(claims.filter((c) => c.length > 0).length).toBeGreaterThan(1);
  });

  it("re-claims an expired lease and discards the late result of the worker that lost it", async () => {
    const batch = await store.createBatch("alice", submission(1), { traceId: "t1" });
    const [first] = await store.claim({ workerId: "A", limit: 1, leaseMs: 50, maxAttempts: 3 });
    await sleep(100);
    const [second] = await store.claim({ workerId: "B", limit: 1, leaseMs: 60_000, maxAttempts: 3 });
    expect(second?.attempts).toBe(2);
    const completion = (item: ClaimedItem, result: string) => ({
      batchId: item.batchId,
      key: item.key,
      leaseToken: item.leaseToken,
      state: "completed" as const,
      result,
      resultSha256: null,
      error: null,
      verdict: null,
      acceptance: null,
      outcome: { n: 1 },
    });
    expect((await store.complete([completion(first as ClaimedItem, "late")])).size).toBe(0);
    expect((await store.complete([completion(second as ClaimedItem, "fresh"), completion(first as ClaimedItem, "late")])).size).toBe(1);
    const [item] = await collect(store.exportItems("alice", batch.id));
    expect(item).toMatchObject({ state: "completed", result: "fresh", attempts: 2, outcome: { n: 1 } });
  });

  it("holds max_running_items across concurrent claimers", async () => {
    const batch = await store.createBatch("alice", submission(50, { maxRunningItems: 5 }), { traceId: "t1" });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, w) => store.claim({ workerId: `W${w}`, limit: 4, leaseMs: 60_000, maxAttempts: 3 })),
    );
    expect(results.flat()).toHaveLength(5);
    expect((await store.status("alice", batch.id)).counts.running).toBe(5);
  });
});
