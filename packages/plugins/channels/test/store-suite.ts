// The channel journal and bindings on a storage backend (SQLite here, PostgreSQL in store.pg.int.test.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kernel, KernelConfigInput } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ChannelStore, channelMigrations, type InboundMessage } from "../src/index.js";

export function channelStoreSuite(storage: () => KernelConfigInput["storage"]): void {
  let dir: string;
  let kernel: Kernel;
  let now = new Date("2026-06-01T12:00:00.000Z");
  let store: ChannelStore;

  const message = (eventId: string): InboundMessage => ({
    eventId,
    chat: { id: "c1", kind: "direct" },
    sender: { id: "u1" },
    text: "hello",
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "antler-channel-store-"));
    kernel = await createTestKernel({ builtins: true, config: { base_dir: dir, storage: storage() }, cwd: dir });
    store = new ChannelStore(
      () => kernel.openDatabase({ migrations: channelMigrations }),
      () => now,
    );
  });

  afterEach(async () => {
    await store?.close();
    await kernel?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("channel store", () => {
    it("journals an event once: a repeat of its id is reported as not fresh", async () => {
      expect(await store.record("p", message("e1"), "t1")).toBe(true);
      expect(await store.record("p", message("e1"), "t2")).toBe(false);
      expect((await store.event("p", "e1"))?.trace_id).toBe("t1");
    });

    it("lets one claimer take an event, and another only after the lease ran out", async () => {
      await store.record("p", message("e2"), "t");
      expect(await store.claim("p:e2", "a", 1000)).toBeDefined();
      expect(await store.claim("p:e2", "b", 1000)).toBeUndefined();
      now = new Date(now.getTime() + 2000);
      const taken = await store.claim("p:e2", "b", 1000);
      expect(taken?.lease_owner).toBe("b");
      expect(taken?.attempts).toBe(2);
      await store.finish("p:e2", "answered");
      expect(await store.claim("p:e2", "c", 1000)).toBeUndefined();
    });

    it("redeems a connect code once, before it expires, for its own provider only", async () => {
      const { code } = await store.issueConnectCode("p", "alice", 60_000);
      expect(await store.redeemConnectCode("other", code, "u9")).toBeUndefined();
      expect(await store.redeemConnectCode("p", ` ${code.toLowerCase().replace("-", " ")} `, "u9")).toBe("alice");
      expect(await store.redeemConnectCode("p", code, "u10")).toBeUndefined();
      const late = await store.issueConnectCode("p", "bob", 1000);
      now = new Date(now.getTime() + 5000);
      expect(await store.redeemConnectCode("p", late.code, "u11")).toBeUndefined();
      expect((await store.binding("p", "u9"))?.user_id).toBe("alice");
    });

    it("prunes handled events and old outbox entries, and keeps open ones", async () => {
      await store.record("p", message("old-done"), "t");
      await store.finish("p:old-done", "answered");
      await store.outboxPut("p:old-done#final:0", "m1");
      await store.record("p", message("old-open"), "t");
      now = new Date(now.getTime() + 10 * 86_400_000);
      await store.record("p", message("new-done"), "t");
      await store.finish("p:new-done", "answered");
      const removed = await store.prune(new Date(now.getTime() - 86_400_000));
      expect(removed).toBeGreaterThanOrEqual(1);
      expect(await store.event("p", "old-done")).toBeUndefined();
      expect(await store.outboxGet("p:old-done#final:0")).toBeUndefined();
      expect((await store.event("p", "old-open"))?.status).toBe("received");
      expect(await store.event("p", "new-done")).toBeDefined();
    });
  });
}
