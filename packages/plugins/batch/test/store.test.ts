import type { AntlerDatabase } from "@antler/kernel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BatchErrorCodes, type BatchStore, type ClaimedItem, type ItemCompletion, validateSubmission } from "../src/index.js";
import { collect, memoryStore, sleep, submission } from "./fixtures.js";

const done = (item: ClaimedItem, overrides: Partial<ItemCompletion> = {}): ItemCompletion => ({
  batchId: item.batchId,
  key: item.key,
  leaseToken: item.leaseToken,
  state: "completed",
  result: `result of ${item.key}`,
  resultSha256: "x",
  error: null,
  verdict: null,
  acceptance: null,
  outcome: null,
  ...overrides,
});

describe("validateSubmission", () => {
  const base = { title: "t", subagent_type: "general-purpose" };

  it("names each offending item by index and key", () => {
    let error: unknown;
    try {
      validateSubmission(
        {
          ...base,
          items: [
            { key: "a", prompt: "ok" },
            { key: "a", prompt: "dup" },
            { key: "k".repeat(129), prompt: "long key" },
            { key: "", prompt: "empty key" },
            { key: "big", prompt: "p".repeat(100_001) },
            { key: "blank", prompt: "   " },
          ],
        },
        { maxItems: 100 },
      );
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: BatchErrorCodes.INVALID });
    const message = (error as Error).message;
    expect(message).toContain('items[1] (key "a"): duplicate key; items[0] already uses it');
    expect(message).toContain("items[2]");
    expect(message).toContain("key is 129 characters; the limit is 128");
    expect(message).toContain("items[3]: key is missing or empty");
    expect(message).toContain('items[4] (key "big"): prompt is 100,001 characters; the limit is 100,000');
    expect(message).toContain('items[5] (key "blank"): prompt is missing or empty');
  });

  it("accepts a 128-character key and a 100,000-character prompt", () => {
    const normalized = validateSubmission({ ...base, items: [{ key: "k".repeat(128), prompt: "p".repeat(100_000) }] }, { maxItems: 1 });
    expect(normalized.items).toHaveLength(1);
  });

  it("refuses an unknown subagent type with the list of available ones", () => {
    expect(() =>
      validateSubmission(
        { ...base, subagent_type: "nope", items: [{ key: "a", prompt: "p" }] },
        { maxItems: 5, subagentTypes: ["general-purpose", "bash"] },
      ),
    ).toThrow(/unknown subagent_type "nope"; available types: general-purpose, bash/);
  });

  it("refuses an empty batch and one over the item limit", () => {
    expect(() => validateSubmission({ ...base, items: [] }, { maxItems: 5 })).toThrow(/items is empty/);
    const six = Array.from({ length: 6 }, (_, i) => ({ key: `k${i}`, prompt: "p" }));
    expect(() => validateSubmission({ ...base, items: six }, { maxItems: 5 })).toThrow(/items has 6 entries; the limit is 5 per batch/);
  });

  it("trims and de-duplicates acceptance criteria and refuses more than 20", () => {
    const ok = validateSubmission(
      { ...base, items: [{ key: "a", prompt: "p", acceptance_criteria: [" file:/x exists ", "file:/x exists", ""] }] },
      { maxItems: 1 },
    );
    expect(ok.items[0]?.acceptanceCriteria).toEqual(["file:/x exists"]);
    const many = Array.from({ length: 21 }, (_, i) => `c${i}`);
    expect(() => validateSubmission({ ...base, items: [{ key: "a", prompt: "p", acceptance_criteria: many }] }, { maxItems: 1 })).toThrow(
      /21 acceptance criteria; the limit is 20/,
    );
  });

  it("refuses max_running_items that is not a positive integer", () => {
    expect(() => validateSubmission({ ...base, items: [{ key: "a", prompt: "p" }], max_running_items: 0 }, { maxItems: 1 })).toThrow(
      /max_running_items must be a positive integer/,
    );
  });
});

describe("BatchStore on SQLite", () => {
  let store: BatchStore;
  let database: AntlerDatabase;
  beforeEach(async () => {
    ({ store, database } = await memoryStore());
  });
  afterEach(async () => {
    await database.close();
  });

  it("reports another user's batch as not found for status, cancel and export", async () => {
    const batch = await store.createBatch("alice", submission(3), { traceId: "t1" });
    await expect(store.status("mallory", batch.id)).rejects.toMatchObject({ code: BatchErrorCodes.NOT_FOUND });
    await expect(store.cancel("mallory", batch.id)).rejects.toMatchObject({ code: BatchErrorCodes.NOT_FOUND });
    await expect(store.exportItems("mallory", batch.id).next()).rejects.toMatchObject({ code: BatchErrorCodes.NOT_FOUND });
    // The refused cancel changed nothing.
    expect((await store.status("alice", batch.id)).counts.pending).toBe(3);
    expect(await store.listBatches("mallory")).toEqual([]);
    expect((await store.listBatches("alice")).map((b) => b.id)).toEqual([batch.id]);
  });

  it("claims items in submission order and never hands the same item to two workers", async () => {
    const batch = await store.createBatch("alice", submission(10), { traceId: "t1" });
    const a = await store.claim({ workerId: "A", limit: 4, leaseMs: 60_000, maxAttempts: 3 });
    const b = await store.claim({ workerId: "B", limit: 10, leaseMs: 60_000, maxAttempts: 3 });
    expect(a.map((i) => i.key)).toEqual(["item-0000", "item-0001", "item-0002", "item-0003"]);
    expect(b).toHaveLength(6);
    expect(new Set([...a, ...b].map((i) => i.key)).size).toBe(10);
    expect(a[0]?.batch).toMatchObject({ ownerId: "alice", traceId: "t1", subagentType: "general-purpose" });
    expect((await store.status("alice", batch.id)).counts.running).toBe(10);
    expect(await store.claim({ workerId: "C", limit: 10, leaseMs: 60_000, maxAttempts: 3 })).toEqual([]);
  });

  it("re-claims an expired lease and discards the late result of the worker that lost it", async () => {
    const batch = await store.createBatch("alice", submission(1), { traceId: "t1" });
    const [first] = await store.claim({ workerId: "A", limit: 1, leaseMs: 50, maxAttempts: 3 });
    await sleep(80);
    const [second] = await store.claim({ workerId: "B", limit: 1, leaseMs: 60_000, maxAttempts: 3 });
    expect(second?.key).toBe(first?.key);
    expect(second?.attempts).toBe(2);
    // A takeover is marked as one (metrics count them); a fresh claim is not.
    expect(first?.takenOver).toBeUndefined();
    expect(second?.takenOver).toBe(true);
    const late = await store.complete([done(first as ClaimedItem, { result: "late" })]);
    expect(late.size).toBe(0);
    const recorded = await store.complete([done(second as ClaimedItem, { result: "fresh" })]);
    expect(recorded.size).toBe(1);
    // Completing twice with the same lease records nothing the second time.
    expect((await store.complete([done(second as ClaimedItem, { result: "again" })])).size).toBe(0);
    const [exported] = await collect(store.exportItems("alice", batch.id));
    expect(exported).toMatchObject({ state: "completed", result: "fresh", attempts: 2 });
  });

  it("counts the queue depth as the pending items of every batch", async () => {
    expect(await store.queueDepth()).toBe(0);
    await store.createBatch("alice", submission(3), { traceId: "t1" });
    await store.createBatch("bob", submission(2), { traceId: "t2" });
    expect(await store.queueDepth()).toBe(5);
    await store.claim({ workerId: "A", limit: 2, leaseMs: 60_000, maxAttempts: 3 });
    expect(await store.queueDepth()).toBe(3);
  });

  it("keeps a lease alive by heartbeat and drops cancelled items from it", async () => {
    const batch = await store.createBatch("alice", submission(2), { traceId: "t1" });
    const claimed = await store.claim({ workerId: "A", limit: 2, leaseMs: 100, maxAttempts: 3 });
    // The renewal is long, so a slow machine cannot let it run out before B looks; the wait below only has to
    // outlast the original 100 ms lease, and a slow machine only makes it longer.
    expect((await store.heartbeat("A", 60_000)).size).toBe(2);
    await sleep(150);
    // Past the original expiry, but the heartbeat renewed it.
    expect(await store.claim({ workerId: "B", limit: 2, leaseMs: 100, maxAttempts: 3 })).toEqual([]);
    const { cancelledItems } = await store.cancel("alice", batch.id);
    expect(cancelledItems).toBe(2);
    expect((await store.heartbeat("A", 100)).size).toBe(0);
    expect((await store.complete(claimed.map((c) => done(c)))).size).toBe(0);
    const status = await store.status("alice", batch.id);
    expect(status.state).toBe("cancelled");
    expect(status.counts.cancelled).toBe(2);
  });

  it("fails an item whose lease expired max_attempts times instead of claiming it forever", async () => {
    const batch = await store.createBatch("alice", submission(1), { traceId: "t1" });
    for (let attempt = 1; attempt <= 2; attempt++) {
      expect(await store.claim({ workerId: `W${attempt}`, limit: 1, leaseMs: 20, maxAttempts: 2 })).toHaveLength(1);
      await sleep(40);
    }
    expect(await store.claim({ workerId: "W3", limit: 1, leaseMs: 20, maxAttempts: 2 })).toEqual([]);
    expect(await store.reapExhausted(2)).toBe(1);
    const [item] = await collect(store.exportItems("alice", batch.id));
    expect(item).toMatchObject({ state: "failed", attempts: 2 });
    expect(item?.error).toMatch(/lease expired 2 times/);
  });

  it("caps running items across workers at max_running_items", async () => {
    await store.createBatch("alice", submission(10, { maxRunningItems: 3 }), { traceId: "t1" });
    const a = await store.claim({ workerId: "A", limit: 2, leaseMs: 60_000, maxAttempts: 3 });
    const b = await store.claim({ workerId: "B", limit: 5, leaseMs: 60_000, maxAttempts: 3 });
    expect(a).toHaveLength(2);
    expect(b).toHaveLength(1);
    await store.complete(a.map((c) => done(c)));
    expect(await store.claim({ workerId: "B", limit: 5, leaseMs: 60_000, maxAttempts: 3 })).toHaveLength(2);
  });

  it("caps one worker's share of a batch at max_live_items", async () => {
    await store.createBatch("alice", submission(10, { maxLiveItems: 2 }), { traceId: "t1" });
    const first = await store.claim({ workerId: "A", limit: 5, leaseMs: 60_000, maxAttempts: 3 });
    expect(first).toHaveLength(2);
    const localLive = new Map([[first[0]?.batchId as string, 2]]);
    expect(await store.claim({ workerId: "A", limit: 5, leaseMs: 60_000, maxAttempts: 3, localLive })).toEqual([]);
  });

  it("counts execution states and acceptance verdicts separately", async () => {
    const batch = await store.createBatch("alice", submission(4), { traceId: "t1" });
    const [a, b, c] = await store.claim({ workerId: "A", limit: 3, leaseMs: 60_000, maxAttempts: 3 });
    await store.complete([
      done(a as ClaimedItem, { verdict: "UNMET" }),
      done(b as ClaimedItem, { verdict: "MET" }),
      done(c as ClaimedItem, { state: "failed", result: null, error: "boom" }),
    ]);
    const status = await store.status("alice", batch.id);
    expect(status.counts).toEqual({ pending: 1, running: 0, completed: 2, failed: 1, cancelled: 0, timed_out: 0 });
    expect(status.verdicts).toEqual({ MET: 1, UNMET: 1, UNVERIFIED: 0, none: 2 });
    expect(status.done).toBe(3);
    expect(status.state).toBe("active");
  });

  it("marks a batch completed once every item is terminal, and stops offering it to workers", async () => {
    const batch = await store.createBatch("alice", submission(2), { traceId: "t1" });
    const items = await store.claim({ workerId: "A", limit: 2, leaseMs: 60_000, maxAttempts: 3 });
    await store.complete(items.map((i) => done(i)));
    expect(await store.settle([batch.id])).toEqual([batch.id]);
    expect((await store.status("alice", batch.id)).state).toBe("completed");
    expect((await store.getBatch("alice", batch.id)).state).toBe("completed");
  });

  it("hands released items back without counting the attempt", async () => {
    const batch = await store.createBatch("alice", submission(1), { traceId: "t1" });
    const [item] = await store.claim({ workerId: "A", limit: 1, leaseMs: 60_000, maxAttempts: 3 });
    expect(await store.release([item as ClaimedItem])).toBe(1);
    const [again] = await store.claim({ workerId: "B", limit: 1, leaseMs: 60_000, maxAttempts: 3 });
    expect(again?.attempts).toBe(1);
    expect((await store.status("alice", batch.id)).counts.running).toBe(1);
  });
});
