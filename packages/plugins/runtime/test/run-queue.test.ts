import { isAntlerError } from "@antler/kernel";
import { describe, expect, it } from "vitest";
import type { AntlerClient } from "../src/client/client.js";
import { RuntimeErrorCodes } from "../src/errors.js";
import { tempDir } from "./fixtures.js";
import { echoClient } from "./multitask-fixtures.js";

// Runs as queued work: `enqueue` records a run pending with no owner; an executor (`executeQueued`) in this client or
// another on the same SQLite file claims and runs it.

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const storageOn = (_dir: string) => ({ backend: "sqlite" as const });

async function statusOf(client: AntlerClient, threadId: string, runId: string): Promise<string> {
  return (await client.getRun(threadId, runId)).status;
}

describe("queued runs", () => {
  it("an enqueued run waits pending with no executor, is listed, and runs once an executor starts", async () => {
    const dir = tempDir();
    const client = await echoClient(dir, storageOn(dir), 0);
    const record = await client.enqueue("hello", { threadId: "t1", metadata: { source: "test" } });
    expect(record).toMatchObject({ status: "pending", thread_id: "t1", attempt: 1 });
    expect(record.kwargs).toMatchObject({ input: "hello", metadata: { source: "test" }, multitask_strategy: "reject" });
    expect((await client.listRunsByStatus("pending")).map((r) => r.run_id)).toEqual([record.run_id]);
    expect(await client.countPendingRuns()).toBe(1);
    const stop = await client.executeQueued();
    try {
      await until("the queued run to succeed", async () => (await statusOf(client, "t1", record.run_id)) === "success");
    } finally {
      await stop();
    }
    const thread = await client.getThread("t1");
    expect(thread.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hello"],
      ["ai", "reply to hello"],
    ]);
    const done = await client.getRun("t1", record.run_id);
    expect(done).toMatchObject({ status: "success", trace_id: record.trace_id, attempt: 1 });
    expect(await client.countPendingRuns()).toBe(0);
  });

  it("a queued run starts from its input as given, while its record keeps the redacted copy", async () => {
    const dir = tempDir();
    const client = await echoClient(dir, storageOn(dir), 0);
    const record = await client.enqueue("my password is Tr0ub4dor&3", { threadId: "t1" });
    expect(JSON.stringify(record.kwargs)).not.toContain("Tr0ub4dor");
    const stop = await client.executeQueued();
    try {
      await until("the queued run to succeed", async () => (await statusOf(client, "t1", record.run_id)) === "success");
    } finally {
      await stop();
    }
    const thread = await client.getThread("t1");
    expect(thread.messages.map((m) => m.content)).toEqual(["my password is Tr0ub4dor&3", "reply to my password is Tr0ub4dor&3"]);
    expect(JSON.stringify((await client.getRun("t1", record.run_id)).kwargs)).not.toContain("Tr0ub4dor");
  });

  it("an executor in another client on the same file runs the queued run, its events reaching that client's observers", async () => {
    const dir = tempDir();
    const accepting = await echoClient(dir, storageOn(dir), 0);
    const executing = await echoClient(dir, storageOn(dir), 0);
    const seen: string[] = [];
    executing.observeRuns({
      runStarted: (run) => seen.push(`started ${run.runId} ${run.traceId}`),
      runEvent: (_runId, event) => seen.push(event.type),
      runEnded: (runId, outcome) => {
        seen.push(`ended ${runId} ${outcome}`);
      },
    });
    const stop = await executing.executeQueued({ pollMs: 20 });
    try {
      const record = await accepting.enqueue("from elsewhere", { threadId: "t1" });
      await until("the run to succeed", async () => (await statusOf(accepting, "t1", record.run_id)) === "success");
      expect(seen[0]).toBe(`started ${record.run_id} ${record.trace_id}`);
      expect(seen).toContain("end");
      expect(seen.at(-1)).toBe(`ended ${record.run_id} success`);
    } finally {
      await stop();
    }
  });

  it("keeps each thread's order: two runs queued on one thread run one after the other, the first first", async () => {
    const dir = tempDir();
    const client = await echoClient(dir, storageOn(dir), 30);
    const first = await client.enqueue("one", { threadId: "t1" });
    const second = await client.enqueue("two", { threadId: "t1", multitaskStrategy: "enqueue" });
    const stop = await client.executeQueued();
    try {
      await until("both runs to succeed", async () => (await statusOf(client, "t1", second.run_id)) === "success");
    } finally {
      await stop();
    }
    expect(await statusOf(client, "t1", first.run_id)).toBe("success");
    const messages = (await client.getThread("t1")).messages.map((m) => m.content);
    expect(messages).toEqual(["one", "reply to one", "two", "reply to two"]);
  });

  it("refuses a queued run on a busy thread with THREAD_BUSY under the default strategy, before recording it", async () => {
    const dir = tempDir();
    const client = await echoClient(dir, storageOn(dir), 0);
    const first = await client.enqueue("one", { threadId: "t1" });
    const refused = await client.enqueue("two", { threadId: "t1" }).catch((error: unknown) => error);
    expect(isAntlerError(refused, RuntimeErrorCodes.THREAD_BUSY)).toBe(true);
    expect((await client.listRuns("t1")).map((r) => r.run_id)).toEqual([first.run_id]);
  });

  it("refuses a model the caller may not use before anything is recorded", async () => {
    const dir = tempDir();
    const client = await echoClient(dir, storageOn(dir), 0);
    const refused = await client.enqueue("hi", { threadId: "t1", model: "no-such-model" }).catch((error: unknown) => error);
    expect(isAntlerError(refused)).toBe(true);
    expect(await client.countPendingRuns()).toBe(0);
  });

  it("cancelling a queued run that no executor has claimed ends it cancelled at once, and no executor runs it", async () => {
    const dir = tempDir();
    const client = await echoClient(dir, storageOn(dir), 0);
    const record = await client.enqueue("never", { threadId: "t1" });
    expect(await client.cancelRun("t1", record.run_id)).toMatchObject({ status: "cancelled" });
    const stop = await client.executeQueued({ pollMs: 20 });
    await new Promise((r) => setTimeout(r, 100));
    await stop();
    expect(await statusOf(client, "t1", record.run_id)).toBe("cancelled");
    expect((await client.getThread("t1")).messages).toEqual([]);
  });

  it("refuses a second executor on one client with a coded error", async () => {
    const dir = tempDir();
    const client = await echoClient(dir, storageOn(dir), 0);
    const stop = await client.executeQueued();
    try {
      const refused = await client.executeQueued().catch((error: unknown) => error);
      expect(isAntlerError(refused, RuntimeErrorCodes.STATE_CONFLICT)).toBe(true);
    } finally {
      await stop();
    }
  });
});
