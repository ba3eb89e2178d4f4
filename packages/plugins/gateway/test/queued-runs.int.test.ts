import { spawnSync } from "node:child_process";
import {
  antlerBinPath,
  describeWithPostgres,
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
  usePostgresSchema,
} from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { type SseFrame, tempDir } from "./fixtures.js";
import { built, call, cleanups, gapsIn, KEY, serve, startWorker, until, writeConfig, writeToolPlugin } from "./process-fixtures.js";
import { readFrames } from "./run-stream-fixtures.js";

// Runs as queued work at the process boundary: an `antler serve` with `runs.execute: false` executes no run; it queues
// each one in the database and streams it from the run event log, while `antler worker` processes execute them.

/** The loopback model: answers "answer to <message>" after `delayMs`; with `stallFirst`, its first call never answers. */
function countingModel(options: { delayMs?: number; stallFirst?: boolean } = {}): Promise<OpenAICompatibleServer> {
  return startOpenAICompatibleServer({
    handler: async (body, index) => {
      if (options.stallFirst && index === 0) await new Promise(() => {});
      const last = body.messages.at(-1) as { content?: unknown };
      return { text: `answer to ${String(last.content)}`, ...(options.delayMs ? { delayMs: options.delayMs } : {}) };
    },
  });
}

async function queueingGateway(storage: string[], model: OpenAICompatibleServer) {
  const dir = tempDir("antler-queued-");
  writeToolPlugin(dir);
  writeConfig(dir, model.url, storage, true, false, { execute: false });
  const gateway = await serve(dir);
  return { dir, gateway };
}

type RunRecord = { run_id: string; status: string; attempt: number; trace_id: string };

const sqlite = ["storage:", "  backend: sqlite"];

describe.skipIf(!built)("runs.execute false: the gateway queues runs, antler worker executes them", () => {
  it("SQLite: with no worker the run stays pending and is listed; a worker started later runs it and the gateway streams it whole", async () => {
    const model = await countingModel();
    cleanups.push(() => model.close());
    const { dir, gateway } = await queueingGateway(sqlite, model);
    expect((await call(gateway.url, "/api/threads", { json: { thread_id: "t1" } })).status).toBe(201);

    const started = await call(gateway.url, "/api/threads/t1/runs/stream", { json: { message: "hello" } });
    expect(started.status).toBe(200);
    const runId = started.headers.get("x-run-id") as string;
    const frames: SseFrame[] = [];
    const reading = readFrames(started, (frame) => frames.push(frame));

    // Nobody executes it: pending, listed by the API, by `antler runs list --status pending`, and in /metrics.
    await new Promise((r) => setTimeout(r, 600));
    const pending = (await (await call(gateway.url, `/api/threads/t1/runs/${runId}`, { method: "GET" })).json()) as RunRecord;
    expect(pending.status).toBe("pending");
    expect(model.requests).toHaveLength(0);
    const listed = spawnSync(
      process.execPath,
      [antlerBinPath(), "runs", "list", "--status", "pending", "--all-users", "--config", "config.yaml"],
      {
        cwd: dir,
        env: { ...process.env, ANTLER_CONFIG: "", ALICE_KEY: KEY, ANTLER_LOG_LEVEL: "warn" },
        encoding: "utf8",
      },
    );
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain(runId);
    const metrics = await (await call(gateway.url, "/metrics", { method: "GET" })).text();
    expect(metrics).toMatch(/^antler_runs_pending 1$/m);
    expect(metrics).toMatch(/^antler_runs_oldest_pending_seconds [0-9.]+$/m);

    const worker = await startWorker(dir);
    const { frames: all } = await reading;
    expect(all.map((f) => f.event)).toEqual(expect.arrayContaining(["metadata", "values", "end"]));
    expect(all[0]).toMatchObject({ id: "1", event: "metadata", data: { run_id: runId, thread_id: "t1", trace_id: pending.trace_id } });
    expect(all.at(-1)?.event).toBe("end");
    expect(gapsIn(all)).toBe(0);
    expect(frames).toHaveLength(all.length);
    // Executed once, by the worker: the gateway made no model call of its own.
    expect(model.requests).toHaveLength(1);
    const done = (await (await call(gateway.url, `/api/threads/t1/runs/${runId}`, { method: "GET" })).json()) as RunRecord;
    expect(done).toMatchObject({ status: "success", attempt: 1, trace_id: pending.trace_id });
    const state = (await (await call(gateway.url, "/api/threads/t1/state", { method: "GET" })).json()) as {
      messages: Array<{ type: string; content: unknown }>;
    };
    expect(state.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hello"],
      ["ai", "answer to hello"],
    ]);
    // `runs/wait` on the same gateway: queued, executed by the worker, answered with the run's result.
    const waited = await call(gateway.url, "/api/threads/t1/runs/wait", { json: { message: "again" } });
    expect(waited.status).toBe(200);
    expect(await waited.json()).toMatchObject({ status: "success", output: "answer to again", thread_id: "t1" });
    expect(worker.output()).not.toMatch(/error/i);
    await gateway.stop();
  }, 120_000);

  it("SQLite: kill -9 the worker during the model call; a second worker takes the run over and the gateway's stream goes on with no gap", async () => {
    const model = await countingModel({ stallFirst: true });
    cleanups.push(() => model.close());
    const { dir, gateway } = await queueingGateway(sqlite, model);
    expect((await call(gateway.url, "/api/threads", { json: { thread_id: "t1" } })).status).toBe(201);
    const first = await startWorker(dir);
    const started = await call(gateway.url, "/api/threads/t1/runs/stream", { json: { message: "hello", on_disconnect: "continue" } });
    const runId = started.headers.get("x-run-id") as string;
    const reading = readFrames(started);
    await until("the worker's model call", () => model.requests.length >= 1);
    first.child.kill("SIGKILL");
    await startWorker(dir);
    const { frames } = await reading;
    expect(gapsIn(frames)).toBe(0);
    expect(frames.at(-1)?.event).toBe("end");
    const resumed = frames.find((f) => f.event === "custom" && (f.data as { type?: string }).type === "run_resumed");
    expect(resumed?.data).toMatchObject({ run_id: runId, cause: "takeover", attempt: 2 });
    const done = (await (await call(gateway.url, `/api/threads/t1/runs/${runId}`, { method: "GET" })).json()) as RunRecord;
    expect(done).toMatchObject({ status: "success", attempt: 2 });
    expect(model.requests).toHaveLength(2);
    await gateway.stop();
  }, 120_000);
});

describeWithPostgres("runs.execute false on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { scope: "each" });
  it.skipIf(!built)(
    "two workers on one database never run one queued run twice: each of 12 runs makes exactly one model call",
    async () => {
      const model = await countingModel({ delayMs: 50 });
      cleanups.push(() => model.close());
      const storage = ["storage:", "  backend: postgres", `  postgres_url: ${url}`, `  postgres_schema: ${schema.name}`];
      const { dir, gateway } = await queueingGateway(storage, model);
      const workers = [await startWorker(dir), await startWorker(dir)];
      const runs = Array.from({ length: 12 }, (_, i) => `t${i}`);
      for (const thread of runs) expect((await call(gateway.url, "/api/threads", { json: { thread_id: thread } })).status).toBe(201);
      const results = await Promise.all(
        runs.map(async (thread) => {
          const response = await call(gateway.url, `/api/threads/${thread}/runs/wait`, { json: { message: `m-${thread}` } });
          return (await response.json()) as { status: string; output: string };
        }),
      );
      expect(results.map((r) => r.output)).toEqual(runs.map((t) => `answer to m-${t}`));
      const asked = model.requests
        .map((r) => String((r.body as { messages: Array<{ content?: unknown }> }).messages.at(-1)?.content))
        .sort();
      expect(asked).toEqual(runs.map((t) => `m-${t}`).sort());
      for (const worker of workers) expect(worker.output()).not.toMatch(/took over/);
      await gateway.stop();
    },
    120_000,
  );
});
