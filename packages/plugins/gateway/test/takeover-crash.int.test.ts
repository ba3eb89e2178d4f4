import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AntlerServe, describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { type SseFrame, tempDir } from "./fixtures.js";
import {
  built,
  type Case,
  call,
  cleanups,
  gapsIn,
  scriptedModel,
  serve,
  startWorker,
  type Tally,
  until,
  writeConfig,
  writeToolPlugin,
} from "./process-fixtures.js";
import { readFrames } from "./run-stream-fixtures.js";

// The must-show of durable runs at the process boundary: two `antler serve` processes on one database; a run
// started on A is followed through B; A is killed with SIGKILL in the middle of the run (during a model call, an
// idempotent tool call, a non-idempotent one); B takes it over and finishes it. Each case counts lost runs,
// duplicated executions of the non-idempotent tool, and gaps in the stream B serves (all must be 0).

async function crashDuringRun(kind: Case, storage: string[], options: { worker?: boolean } = {}): Promise<Tally> {
  const dir = tempDir("antler-takeover-");
  const { ledger, stall } = writeToolPlugin(dir, kind === "two-tools");
  const model = await scriptedModel(kind);
  cleanups.push(() => model.close());
  writeConfig(dir, model.url, storage, options.worker === true);
  const a = await serve(dir);
  // With a worker, it is the only other instance when A dies, so it is the one that takes the run over; the
  // gateway the client then follows the run through starts after that.
  const worker = options.worker ? await startWorker(dir) : undefined;
  const b = worker ? undefined : await serve(dir);
  expect((await call(a.url, "/api/threads", { json: { thread_id: "t1" } })).status).toBe(201);
  if (kind !== "model") writeFileSync(stall, "");

  // The client starts the run on A and reads A's stream until A dies.
  const started = await call(a.url, "/api/threads/t1/runs/stream", { json: { message: "please do it", on_disconnect: "continue" } });
  expect(started.status).toBe(200);
  const onA: SseFrame[] = [];
  const readingA = readFrames(started, (frame) => onA.push(frame));
  await until("the run to reach its stall point on A", () =>
    kind === "model"
      ? model.requests.length >= 1
      : existsSync(ledger) &&
        readFileSync(ledger, "utf8").includes(`${kind === "idempotent-tool" ? "lookup" : "charge"} order-7 ${a.child.pid}`),
  ).catch((err: Error) => {
    throw new Error(`${err.message}\nframes on A: ${JSON.stringify(onA).slice(0, 3000)}\nA's output:\n${a.output.slice(-3000)}`);
  });
  const metadata = onA.find((f) => f.event === "metadata");
  if (!metadata) throw new Error("A's stream opened without a metadata frame");
  const runId = (metadata.data as { run_id: string }).run_id;
  // Past the event log's flush interval, so what A's client saw is what the database holds.
  await new Promise((r) => setTimeout(r, 400));
  const seenOnA = Number(onA.at(-1)?.id);

  // A follower on B from the start, and the same client reconnecting to B after its last id from A.
  const follow = (gateway: AntlerServe) =>
    call(gateway.url, `/api/threads/t1/runs/${runId}/stream`, { method: "GET" }).then((r) => readFrames(r));
  const following = b ? follow(b) : undefined;
  a.child.kill("SIGKILL");
  await readingA;
  rmSync(stall, { force: true });
  if (worker) await until("the worker to take the run over", () => worker.output().includes("took over a run whose process stopped"));
  const survivor = b ?? (await serve(dir));
  const fromStart = following ?? follow(survivor);
  const resumed = await call(survivor.url, `/api/threads/t1/runs/${runId}/stream`, {
    method: "GET",
    headers: { "last-event-id": String(seenOnA) },
  });
  expect(resumed.status).toBe(200);
  const afterA = await readFrames(resumed);
  const whole = await fromStart;

  // The stream's end comes just before the record's; a run still running after 10 s counts as lost.
  type Record = { status: string; attempt: number; trace_id: string };
  const readRecord = async () => (await (await call(survivor.url, `/api/threads/t1/runs/${runId}`, { method: "GET" })).json()) as Record;
  let record = await readRecord();
  for (let i = 0; i < 200 && record.status === "running"; i++) {
    await new Promise((r) => setTimeout(r, 50));
    record = await readRecord();
  }
  if (process.env.TAKEOVER_DEBUG)
    console.log(
      JSON.stringify({ seenOnA, afterA, whole: whole.frames.map((f) => [f.id, f.event, JSON.stringify(f.data).slice(0, 200)]) }, null, 1),
      "\nB OUTPUT\n",
      survivor.output,
      "\nA OUTPUT\n",
      a.output,
    );
  const resumedEvent = afterA.frames.find((f) => f.event === "custom" && (f.data as { type?: string }).type === "run_resumed");
  expect(resumedEvent?.data).toMatchObject({ run_id: runId, cause: "takeover", attempt: 2, trace_id: record.trace_id });
  expect(afterA.frames.at(-1)?.event).toBe("end");
  expect(whole.frames.at(-1)?.event).toBe("end");
  expect(record.attempt).toBe(2);

  const state = (await (await call(survivor.url, "/api/threads/t1/state", { method: "GET" })).json()) as {
    messages: Array<{ type: string; content: unknown; status?: string }>;
  };
  const messages = state.messages;
  const ledgerLines = existsSync(ledger) ? readFileSync(ledger, "utf8").trim().split("\n").filter(Boolean) : [];
  if (kind === "model") {
    // A's model call was lost with A; B asked again with the same history (the human message once).
    expect(model.requests).toHaveLength(2);
    expect(messages.filter((m) => m.type === "human")).toHaveLength(1);
    expect(messages.at(-1)?.content).toBe("the answer after a takeover");
  } else if (kind === "idempotent-tool") {
    // Started on A, retried on B (it is idempotent), and the model saw its result once.
    expect(ledgerLines.map((l) => l.split(" ")[2])[0]).toBe(String(a.child.pid));
    expect(ledgerLines).toHaveLength(2);
    expect(messages.filter((m) => m.type === "tool").map((m) => m.content)).toEqual(["lookup result for order-7"]);
    expect(messages.at(-1)?.content).toBe("final: lookup result for order-7");
  } else if (kind === "two-tools") {
    // One turn, two calls: lookup finished on A (its result was kept) and is not run again; charge was in flight.
    expect(ledgerLines).toEqual([`lookup order-7 ${a.child.pid}`, `charge order-7 ${a.child.pid}`]);
    const tools = messages.filter((m) => m.type === "tool");
    expect(tools.map((m) => String(m.content).slice(0, 32))).toEqual(["lookup result for order-7", "The call to charge was interrupt"]);
  } else {
    // Started on A only; B told the model it was interrupted and not retried.
    const tool = messages.find((m) => m.type === "tool");
    expect(tool?.status).toBe("error");
    expect(String(tool?.content)).toContain("was not retried because charge is not declared idempotent");
    expect(String(messages.at(-1)?.content)).toContain("final: The call to charge was interrupted");
  }
  // One model call per step, and only the one lost with A asked again: the takeover repeats no finished step.
  expect(model.requests).toHaveLength(2);
  // Operators see it on the instance that took over: one takeover, and how long the run waited for it.
  const metrics = await (await call(survivor.url, "/metrics", { method: "GET" })).text();
  expect(metrics).toMatch(worker ? /^antler_run_takeovers_total 0$/m : /^antler_run_takeovers_total 1$/m);
  if (!worker) expect(metrics).toMatch(/^antler_run_queue_wait_seconds_count\{via="takeover"\} 1$/m);
  expect(metrics).toMatch(/^antler_runs_pending 0$/m);
  await survivor.stop();
  return {
    lostRuns: record.status === "success" ? 0 : 1,
    duplicatedPlainToolRuns: Math.max(0, ledgerLines.filter((l) => l.startsWith("charge ")).length - 1),
    streamGaps: gapsIn(whole.frames) + gapsIn(afterA.frames, seenOnA),
  };
}

const sqlite = ["storage:", "  backend: sqlite"];

describe.skipIf(!built)("a run outlives its process: kill -9 mid-run, another `antler serve` on the same SQLite file finishes it", () => {
  for (const kind of ["model", "idempotent-tool", "plain-tool", "two-tools"] as const) {
    const during = {
      model: "a model call",
      "idempotent-tool": "an idempotent tool call",
      "plain-tool": "a non-idempotent tool call",
      "two-tools": "a turn of two calls, one done and one (non-idempotent) in flight",
    }[kind];
    it(`during ${during}: 0 lost runs, 0 duplicated non-idempotent calls, 0 stream gaps`, async () => {
      const tally = await crashDuringRun(kind, sqlite);
      expect(tally).toEqual({ lostRuns: 0, duplicatedPlainToolRuns: 0, streamGaps: 0 });
    }, 90_000);
  }
});

describe.skipIf(!built)("`antler worker` takes over the runs of a stopped gateway", () => {
  it("SQLite: kill -9 the gateway during a non-idempotent tool call; the worker finishes the run, a second gateway streams it: 0 lost, 0 duplicated, 0 gaps", async () => {
    const tally = await crashDuringRun("plain-tool", sqlite, { worker: true });
    expect(tally).toEqual({ lostRuns: 0, duplicatedPlainToolRuns: 0, streamGaps: 0 });
  }, 120_000);
});

describeWithPostgres("a run outlives its process on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { scope: "each" });
  for (const kind of ["model", "idempotent-tool", "plain-tool"] as const) {
    it.skipIf(!built)(
      `PostgreSQL, kill -9 during a ${kind}: 0 lost runs, 0 duplicated non-idempotent calls, 0 stream gaps`,
      async () => {
        const tally = await crashDuringRun(kind, [
          "storage:",
          "  backend: postgres",
          `  postgres_url: ${url}`,
          `  postgres_schema: ${schema.name}`,
        ]);
        expect(tally).toEqual({ lostRuns: 0, duplicatedPlainToolRuns: 0, streamGaps: 0 });
      },
      90_000,
    );
  }
  it.skipIf(!built)(
    "PostgreSQL, two gateways and one antler worker: kill -9 during a model call; the worker finishes it: 0 lost, 0 duplicated, 0 gaps",
    async () => {
      const storage = ["storage:", "  backend: postgres", `  postgres_url: ${url}`, `  postgres_schema: ${schema.name}`];
      const tally = await crashDuringRun("model", storage, { worker: true });
      expect(tally).toEqual({ lostRuns: 0, duplicatedPlainToolRuns: 0, streamGaps: 0 });
    },
    120_000,
  );
});

describe.skipIf(!built)("a pause outlives its process", () => {
  it("SQLite: kill -9 the instance a run paused on for approval; the approval sent to the other instance runs the tool once and the run succeeds", async () => {
    const dir = tempDir("antler-takeover-pause-");
    const { ledger } = writeToolPlugin(dir);
    const model = await scriptedModel("plain-tool");
    cleanups.push(() => model.close());
    writeConfig(dir, model.url, sqlite, false, true);
    const a = await serve(dir);
    const b = await serve(dir);
    expect((await call(a.url, "/api/threads", { json: { thread_id: "t1" } })).status).toBe(201);
    const paused = (await (await call(a.url, "/api/threads/t1/runs/wait", { json: { message: "charge it" } })).json()) as {
      run_id: string;
      status: string;
    };
    expect(paused.status).toBe("paused");
    a.child.kill("SIGKILL");
    const resumed = await call(b.url, `/api/threads/t1/runs/${paused.run_id}/resume`, { json: { decision: "approve" } });
    expect(resumed.status).toBe(200);
    const done = (await resumed.json()) as { run_id: string; status: string; output: string };
    expect(done).toMatchObject({ run_id: paused.run_id, status: "success", output: "final: charge result for order-7" });
    // Ran once, on B; no run was lost, and a pause is not a takeover.
    const lines = readFileSync(ledger, "utf8").trim().split("\n");
    expect(lines).toEqual([`charge order-7 ${b.child.pid}`]);
    const record = (await (await call(b.url, `/api/threads/t1/runs/${paused.run_id}`, { method: "GET" })).json()) as {
      status: string;
      attempt: number;
    };
    expect(record).toMatchObject({ status: "success", attempt: 1 });
    await b.stop();
  }, 90_000);
});
