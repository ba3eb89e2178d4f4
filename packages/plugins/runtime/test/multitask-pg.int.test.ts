import { isAntlerError } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { expect, it } from "vitest";
import { tempDir } from "./fixtures.js";
import { echoClient, settle } from "./multitask-fixtures.js";
import type { StorageConfigInput } from "./storage.js";

describeWithPostgres("multitask strategies across two instances on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_multitask" });
  it("of 30 runs started at once through two clients on one thread, exactly one runs and 29 get THREAD_BUSY", async () => {
    const storage: StorageConfigInput = { backend: "postgres", postgres_url: url, postgres_schema: schema.name };
    const a = await echoClient(tempDir(), storage, 1500);
    const b = await echoClient(tempDir(), storage, 1500);
    await a.createThread({ threadId: "shared" });
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) => settle((i % 2 === 0 ? a : b).invoke(`prompt ${i}`, { threadId: "shared" }))),
    );
    const accepted = outcomes.filter((o) => o.value);
    const refused = outcomes.filter((o) => o.error);
    expect(accepted).toHaveLength(1);
    for (const o of refused) expect(isAntlerError(o.error, "ANTLER_ERR_THREAD_BUSY")).toBe(true);
    const replies = (await b.getThread("shared")).messages.filter((m) => m.type === "ai").map((m) => m.content);
    expect(replies).toEqual([accepted[0]?.value?.output]);
  });

  it("runs enqueued through two clients on one thread all run, one at a time, and every reply is in the thread", async () => {
    const storage: StorageConfigInput = { backend: "postgres", postgres_url: url, postgres_schema: schema.name };
    const a = await echoClient(tempDir(), storage, 50);
    const b = await echoClient(tempDir(), storage, 50);
    await a.createThread({ threadId: "queue" });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? a : b).invoke(`prompt ${i}`, { threadId: "queue", multitaskStrategy: "enqueue" }),
      ),
    );
    const replies = (await a.getThread("queue")).messages.filter((m) => m.type === "ai").map((m) => m.content);
    expect(replies.sort()).toEqual(results.map((r) => r.output).sort());
    expect(replies).toHaveLength(10);
    // One at a time: each run saw every reply of the runs before it, so the thread alternates human, ai.
    expect((await a.getThread("queue")).messages.map((m) => m.type)).toEqual(Array(10).fill(["human", "ai"]).flat());
  });
});
