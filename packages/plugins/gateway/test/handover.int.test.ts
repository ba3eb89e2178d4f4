import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type SseFrame, tempDir } from "./fixtures.js";
import { built, call, cleanups, gapsIn, scriptedModel, serve, until, writeConfig, writeToolPlugin } from "./process-fixtures.js";
import { readFrames } from "./run-stream-fixtures.js";

// A rolling restart must not lose runs: SIGTERM to a gateway hands its live runs over (`runs.on_shutdown`, default
// `hand_over`) instead of cancelling them. Two `antler serve` processes on one SQLite file, with a lease of 10 minutes:
// a run that B finishes within the test did not wait for A's lease to expire, so A released it on its way out.

const sqlite = ["storage:", "  backend: sqlite"];
type RunRecord = { status: string; attempt: number; trace_id: string };

async function startOnA(kind: "model" | "plain-tool", onShutdown?: "cancel") {
  const dir = tempDir("antler-handover-");
  const { ledger, stall } = writeToolPlugin(dir);
  const model = await scriptedModel(kind);
  cleanups.push(() => model.close());
  writeConfig(dir, model.url, sqlite, false, false, { lease_seconds: 600, ...(onShutdown ? { on_shutdown: onShutdown } : {}) });
  const a = await serve(dir);
  const b = await serve(dir);
  expect((await call(a.url, "/api/threads", { json: { thread_id: "t1" } })).status).toBe(201);
  if (kind !== "model") writeFileSync(stall, "");
  const started = await call(a.url, "/api/threads/t1/runs/stream", { json: { message: "please do it" } });
  expect(started.status).toBe(200);
  const onA: SseFrame[] = [];
  const readingA = readFrames(started, (frame) => onA.push(frame));
  await until("the run to reach its stall point on A", () =>
    kind === "model"
      ? model.requests.length >= 1
      : existsSync(ledger) && readFileSync(ledger, "utf8").includes(`charge order-7 ${a.child.pid}`),
  );
  const metadata = onA.find((f) => f.event === "metadata");
  if (!metadata) throw new Error("A's stream opened without a metadata frame");
  const runId = (metadata.data as { run_id: string }).run_id;
  const record = async () => (await (await call(b.url, `/api/threads/t1/runs/${runId}`, { method: "GET" })).json()) as RunRecord;
  return { a, b, model, ledger, onA, readingA, runId, record };
}

describe.skipIf(!built)("SIGTERM hands a gateway's live runs over to another instance", () => {
  it("during a model call: A's stream ends ANTLER_ERR_RUN_HANDED_OVER, A exits 0, B continues the run at once (attempt 2): 0 lost, 0 gaps", async () => {
    const { a, b, model, onA, readingA, runId, record } = await startOnA("model");
    // Past the event log's flush interval, so what A's client saw is what the database holds.
    await new Promise((r) => setTimeout(r, 400));
    const following = call(b.url, `/api/threads/t1/runs/${runId}/stream`, { method: "GET" }).then((r) => readFrames(r));

    expect(await a.stop()).toBe(0);
    await readingA;
    const last = onA.at(-1);
    expect(last?.event).toBe("error");
    expect(last?.data).toMatchObject({ code: "ANTLER_ERR_RUN_HANDED_OVER" });

    // The lease is 10 minutes: only A's hand-over lets B take the run over now.
    await until("B to finish the run", async () => (await record()).status === "success", 60_000).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await record())}\nB:\n${b.output.slice(-3000)}\nA:\n${a.output.slice(-3000)}`);
    });
    expect(await record()).toMatchObject({ status: "success", attempt: 2 });
    expect(model.requests).toHaveLength(2);

    // A follower on B from the start reads the whole run, A's part and B's, in order, ending with `end`.
    const whole = await following;
    expect(gapsIn(whole.frames)).toBe(0);
    expect(whole.frames.at(-1)?.event).toBe("end");
    expect(whole.frames.some((f) => f.event === "error")).toBe(false);
    const resumed = whole.frames.find((f) => f.event === "custom" && (f.data as { type?: string }).type === "run_resumed");
    expect(resumed?.data).toMatchObject({ run_id: runId, cause: "takeover", attempt: 2 });
    const state = (await (await call(b.url, "/api/threads/t1/state", { method: "GET" })).json()) as {
      messages: Array<{ type: string; content: unknown }>;
    };
    expect(state.messages.filter((m) => m.type === "human")).toHaveLength(1);
    expect(state.messages.at(-1)?.content).toBe("the answer after a takeover");
  }, 120_000);

  it("during a non-idempotent tool call: the call is not run twice; B tells the model it was interrupted and the run succeeds", async () => {
    // The tool on A never returns (its stall file stays): A shuts down in the middle of it.
    const { a, b, ledger, readingA, record } = await startOnA("plain-tool");
    // The tool ignores its run's abort, so something holds A open after it stopped: it exits anyway.
    expect(await a.stop()).toBe(0);
    expect(a.output).toContain("still holds the process open; exiting");
    await readingA;
    await until("B to finish the run", async () => (await record()).status === "success", 60_000).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await record())}\nB:\n${b.output.slice(-3000)}\nA:\n${a.output.slice(-3000)}`);
    });
    expect(await record()).toMatchObject({ status: "success", attempt: 2 });
    const lines = readFileSync(ledger, "utf8").trim().split("\n");
    expect(lines).toEqual([`charge order-7 ${a.child.pid}`]);
    const state = (await (await call(b.url, "/api/threads/t1/state", { method: "GET" })).json()) as {
      messages: Array<{ type: string; content: unknown }>;
    };
    const tool = state.messages.find((m) => m.type === "tool");
    expect(String(tool?.content)).toContain("interrupted");
  }, 120_000);

  it("with runs.on_shutdown: cancel, the run ends cancelled and nobody continues it", async () => {
    const { a, onA, readingA, record } = await startOnA("model", "cancel");
    expect(await a.stop()).toBe(0);
    await readingA;
    expect(onA.at(-1)?.data).toMatchObject({ code: "ANTLER_ERR_RUN_CANCELLED" });
    expect((await record()).status).toBe("cancelled");
  }, 120_000);
});
