import type { Script } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { readSse, startTestGateway, type TestGateway } from "./fixtures.js";

// LangGraph's multitask vocabulary on one busy thread: 30 runs start at once, and no accepted run's reply may
// be missing from the thread afterwards.

const RUNS = 30;

/** Answers "reply to <prompt>" after a pause long enough for the 30 requests to overlap. */
const echo = (delayMs: number): Script => ({
  respond: (messages) => ({ text: `reply to ${String(messages.at(-1)?.content)}`, delayMs }),
});

interface Outcome {
  prompt: string;
  status: number;
  body: { output?: string; run_id?: string; error?: { code: string; message: string; details?: Record<string, unknown> } };
}

async function fireConcurrently(gateway: TestGateway, threadId: string, strategy: string | undefined): Promise<Outcome[]> {
  expect((await gateway.call("/api/threads", { method: "POST", json: { thread_id: threadId } })).status).toBe(201);
  return Promise.all(
    Array.from({ length: RUNS }, async (_, i) => {
      const prompt = `prompt ${i}`;
      const response = await gateway.call(`/api/threads/${threadId}/runs/wait`, {
        method: "POST",
        json: { message: prompt, ...(strategy === undefined ? {} : { multitask_strategy: strategy }) },
      });
      return { prompt, status: response.status, body: (await response.json()) as Outcome["body"] };
    }),
  );
}

async function threadMessages(gateway: TestGateway, threadId: string) {
  const state = (await (await gateway.call(`/api/threads/${threadId}/state?messages_limit=all`)).json()) as {
    messages: Array<{ type: string; content: string }>;
  };
  return state.messages;
}

async function runStatuses(gateway: TestGateway, threadId: string): Promise<string[]> {
  const body = (await (await gateway.call(`/api/threads/${threadId}/runs?limit=100`)).json()) as { runs: Array<{ status: string }> };
  return body.runs.map((run) => run.status);
}

describe("multitask_strategy on a busy thread (HTTP)", () => {
  it("reject (the default): one run is accepted, every other gets a coded 409 naming the thread and the running run", async () => {
    const gateway = await startTestGateway({ script: echo(500) });
    const outcomes = await fireConcurrently(gateway, "busy-reject", undefined);
    const accepted = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status !== 200);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(accepted.length + refused.length).toBe(RUNS);
    const runIds = new Set(accepted.map((o) => o.body.run_id));
    for (const o of refused) {
      expect(o.status).toBe(409);
      expect(o.body.error?.code).toBe("ANTLER_ERR_THREAD_BUSY");
      expect(o.body.error?.message).toContain("busy-reject");
      expect(o.body.error?.details?.thread_id).toBe("busy-reject");
      expect(runIds.has(o.body.error?.details?.running_run_id as string)).toBe(true);
    }
    const messages = await threadMessages(gateway, "busy-reject");
    const replies = messages.filter((m) => m.type === "ai").map((m) => m.content);
    expect(replies.sort()).toEqual(accepted.map((o) => `reply to ${o.prompt}`).sort());
    expect(messages.filter((m) => m.type === "human")).toHaveLength(accepted.length);
  });

  it("enqueue: all 30 runs succeed one after another and all 30 replies are in the thread", async () => {
    const gateway = await startTestGateway({ script: echo(20) });
    const outcomes = await fireConcurrently(gateway, "busy-enqueue", "enqueue");
    expect(outcomes.map((o) => o.status)).toEqual(Array(RUNS).fill(200));
    const replies = (await threadMessages(gateway, "busy-enqueue")).filter((m) => m.type === "ai").map((m) => m.content);
    expect(replies.sort()).toEqual(outcomes.map((o) => `reply to ${o.prompt}`).sort());
    expect(await runStatuses(gateway, "busy-enqueue")).toEqual(Array(RUNS).fill("success"));
  });

  it("interrupt: each run cancels the one in progress; the interrupted end cancelled and every finished run's reply is kept", async () => {
    const gateway = await startTestGateway({ script: echo(300) });
    const outcomes = await fireConcurrently(gateway, "busy-interrupt", "interrupt");
    const accepted = outcomes.filter((o) => o.status === 200);
    const interrupted = outcomes.filter((o) => o.status !== 200);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    for (const o of interrupted) {
      expect(o.status).toBe(409);
      expect(o.body.error?.code).toBe("ANTLER_ERR_RUN_CANCELLED");
    }
    const replies = (await threadMessages(gateway, "busy-interrupt")).filter((m) => m.type === "ai").map((m) => m.content);
    expect(replies.sort()).toEqual(accepted.map((o) => `reply to ${o.prompt}`).sort());
    const statuses = await runStatuses(gateway, "busy-interrupt");
    expect(statuses.filter((s) => s === "success")).toHaveLength(accepted.length);
    expect(statuses.filter((s) => s === "cancelled")).toHaveLength(interrupted.length);
  });

  it("a stream refused on a busy thread answers 409 before any SSE frame", async () => {
    const gateway = await startTestGateway({ script: echo(2000) });
    expect((await gateway.call("/api/threads", { method: "POST", json: { thread_id: "busy-stream" } })).status).toBe(201);
    const first = await gateway.call("/api/threads/busy-stream/runs/stream", { method: "POST", json: { message: "one" } });
    expect(first.status).toBe(200);
    const frames = readSse(first);
    const metadata = await frames.next();
    const runId = (metadata.value as { data: { run_id: string } }).data.run_id;
    const second = await gateway.call("/api/threads/busy-stream/runs/stream", { method: "POST", json: { message: "two" } });
    expect(second.status).toBe(409);
    const body = (await second.json()) as { error: { code: string; details: Record<string, unknown> } };
    expect(body.error.code).toBe("ANTLER_ERR_THREAD_BUSY");
    expect(body.error.details.running_run_id).toBe(runId);
    await frames.return(undefined);
  });

  it("an unknown multitask_strategy is a 400 naming the field", async () => {
    const gateway = await startTestGateway();
    expect((await gateway.call("/api/threads", { method: "POST", json: { thread_id: "t" } })).status).toBe(201);
    const response = await gateway.call("/api/threads/t/runs/wait", {
      method: "POST",
      json: { message: "hi", multitask_strategy: "rollback" },
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("multitask_strategy");
  });
});
