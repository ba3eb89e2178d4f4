import { isAntlerError } from "@antler/kernel";
import { describe, expect, it } from "vitest";
import { tempDir } from "./fixtures.js";
import { echoClient, settle } from "./multitask-fixtures.js";

// The multitask policy of AntlerClient runs on one thread. Two clients on one database stand for two gateway
// instances: they meet only through the run records.

describe("AntlerClient multitask strategies", () => {
  it("rejects a second run on a busy thread by default with THREAD_BUSY naming the running run", async () => {
    const client = await echoClient(tempDir(), { backend: "sqlite" }, 400);
    await client.createThread({ threadId: "t1" });
    const first = client.invoke("one", { threadId: "t1" });
    await expect.poll(async () => (await client.listRuns("t1")).length).toBe(1);
    const [running] = await client.listRuns("t1");
    const second = await settle(client.invoke("two", { threadId: "t1" }));
    expect(isAntlerError(second.error, "ANTLER_ERR_THREAD_BUSY")).toBe(true);
    expect((second.error as { details: Record<string, unknown> }).details).toMatchObject({
      thread_id: "t1",
      running_run_id: running?.run_id,
    });
    expect((await first).output).toBe("reply to one");
  });

  it("enqueue runs each waiting run after the one before, on the updated thread", async () => {
    const client = await echoClient(tempDir(), { backend: "sqlite" }, 50);
    await client.createThread({ threadId: "t2" });
    const pending = [];
    for (const text of ["a", "b", "c"]) {
      // The next starts once this one is recorded (running or queued), so the order of arrival is a, b, c.
      let admitted: () => void = () => {};
      const recorded = new Promise<void>((resolve) => {
        admitted = resolve;
      });
      pending.push(client.invoke(text, { threadId: "t2", multitaskStrategy: "enqueue", onAdmitted: () => admitted() }));
      await recorded;
    }
    const results = await Promise.all(pending);
    expect(results.map((r) => r.output)).toEqual(["reply to a", "reply to b", "reply to c"]);
    // The last run saw both earlier turns: it ran on the thread the others had updated.
    expect(results[2]?.values.messages.map((m) => m.content)).toEqual(["a", "reply to a", "b", "reply to b", "c", "reply to c"]);
  });

  it("interrupt cancels the running run, records it cancelled, then runs", async () => {
    const client = await echoClient(tempDir(), { backend: "sqlite" }, 300);
    await client.createThread({ threadId: "t3" });
    const first = settle(client.invoke("one", { threadId: "t3" }));
    await expect.poll(async () => (await client.listRuns("t3")).length).toBe(1);
    const second = await client.invoke("two", { threadId: "t3", multitaskStrategy: "interrupt" });
    expect(second.output).toBe("reply to two");
    expect(isAntlerError((await first).error, "ANTLER_ERR_RUN_CANCELLED")).toBe(true);
    const statuses = (await client.listRuns("t3")).map((r) => [r.kwargs.input, r.status]);
    expect(statuses.sort()).toEqual([
      ["one", "cancelled"],
      ["two", "success"],
    ]);
  });
});
