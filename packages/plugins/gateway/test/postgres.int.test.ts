import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { expect, it } from "vitest";
import { BOB_KEY, collectSse, startTestGateway } from "./fixtures.js";

describeWithPostgres("gateway on PostgreSQL storage", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_gateway" });

  it("streams a run, records it with its trace id, and scopes the thread per user", async () => {
    const gw = await startTestGateway({
      kernelConfig: { storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name } },
      script: [{ text: "stored in postgres" }],
    });
    expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: "pg-thread" } })).status).toBe(201);
    const response = await gw.call("/api/threads/pg-thread/runs/stream", {
      method: "POST",
      json: { message: "hi" },
      headers: { "X-Trace-Id": "pg-trace" },
    });
    const frames = await collectSse(response);
    expect(frames.at(-1)).toMatchObject({ event: "end", data: { trace_id: "pg-trace" } });
    const runs = (await (await gw.call("/api/threads/pg-thread/runs")).json()) as { runs: Array<{ status: string; trace_id: string }> };
    expect(runs.runs).toEqual([expect.objectContaining({ status: "success", trace_id: "pg-trace" })]);
    const state = (await (await gw.call("/api/threads/pg-thread/state")).json()) as { messages: Array<{ content: string }> };
    expect(state.messages.map((m) => m.content)).toEqual(["hi", "stored in postgres"]);
    expect((await gw.call("/api/threads/pg-thread/state", { key: BOB_KEY })).status).toBe(404);
  });
});
