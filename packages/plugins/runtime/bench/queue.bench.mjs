// Runs as queued work (issue 29): what the queue adds, and how it scales with executors.
// 1. Latency from accepting a run to its first model call: `enqueue` (the executor in the same client is woken at
//    once) against `stream` (started in-process), interleaved, on SQLite and on PostgreSQL. Targets: the queue adds
//    ≤ 5 ms p50 on SQLite, ≤ 15 ms on PostgreSQL.
// 2. Throughput on PostgreSQL with a 20 ms scripted model: N runs queued on N threads and drained by 1, then by 4
//    executor processes (each a client running one run at a time, woken by a 50 ms poll), runs/s from the first
//    enqueue to the last success. Target: 4 executors ≥ 3.8× of 1. The processes share the machine's cores, so the
//    CPU each run takes caps the ratio on a machine with fewer free cores than executors.
// Run after a build: `node bench/queue.bench.mjs` (BENCH_RUNS, default 40 per latency series; BENCH_DRAIN, default 80).
// ANTLER_TEST_PG_URL enables the PostgreSQL parts; BENCH_SMOKE=1 runs every part with a few runs.
import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import pg from "pg";
import { AntlerClient } from "../dist/index.js";

const smoke = process.env.BENCH_SMOKE === "1";
const RUNS = smoke ? 3 : Number(process.env.BENCH_RUNS ?? 40);
const DRAIN = smoke ? 8 : Number(process.env.BENCH_DRAIN ?? 80);
const pgUrl = process.env.ANTLER_TEST_PG_URL?.trim();
const dir = process.env.BENCH_DIR ?? mkdtempSync(join(tmpdir(), "antler-bench-queue-"));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A client whose scripted model notes when each call arrives (by the run's message) and answers after `delayMs`. */
async function benchClient(storage, { delayMs = 0, maxActiveRuns, calls } = {}) {
  return AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage,
      title: { enabled: false },
      logging: { level: "error" },
    },
    plugins: [
      scriptedModelsPlugin({
        m: {
          respond: (messages) => {
            calls?.set(String(messages.at(-1)?.content), performance.now());
            return { text: "ok", delayMs, id: randomUUID() };
          },
        },
      }),
    ],
    cwd: dir,
    env: {},
    discover: false,
    ...(maxActiveRuns ? { maxActiveRuns } : {}),
  });
}

async function until(check) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 2));
}

async function latency(label, storage) {
  const calls = new Map();
  const client = await benchClient(storage, { calls });
  const stop = await client.executeQueued();
  const direct = [];
  const queued = [];
  try {
    // Warm-up: the first run of a process builds the agent.
    await client.chat("warm up", { threadId: "warm" });
    for (let i = 0; i < RUNS; i++) {
      const a = `direct ${i}`;
      let start = performance.now();
      for await (const _ of client.stream(a, { threadId: `d${i}` })) {
        // drained to the end, so the next run starts on a quiet client
      }
      direct.push(calls.get(a) - start);
      const b = `queued ${i}`;
      start = performance.now();
      const record = await client.enqueue(b, { threadId: `q${i}` });
      await until(async () => calls.has(b));
      queued.push(calls.get(b) - start);
      await until(async () => (await client.getRun(`q${i}`, record.run_id)).status === "success");
    }
  } finally {
    await stop();
    await client.close();
  }
  const added = median(queued) - median(direct);
  console.log(
    `${label}: accept → first model call p50 in-process ${median(direct).toFixed(2)} ms, queued ${median(queued).toFixed(2)} ms: the queue adds ${added.toFixed(2)} ms`,
  );
}

/** Executor processes: each a client that runs one queued run at a time until its stdin closes. */
async function startExecutors(storage, count) {
  const children = [];
  for (let i = 0; i < count; i++) {
    const child = fork(fileURLToPath(import.meta.url), ["--executor"], {
      // A small pool each: one run at a time needs few connections, and the database's connection limit is shared.
      env: { ...process.env, BENCH_EXECUTOR_STORAGE: JSON.stringify({ ...storage, postgres: { pool: { max: 3 } } }), BENCH_DIR: dir },
      stdio: ["pipe", "inherit", "inherit", "ipc"],
    });
    await new Promise((resolve, reject) => {
      child.once("message", resolve);
      child.once("exit", (code) => reject(new Error(`executor exited with ${code}`)));
    });
    children.push(child);
  }
  return children;
}

async function drain(storage, executors) {
  const seeder = await benchClient(storage);
  const children = await startExecutors(storage, executors);
  const ids = [];
  const start = performance.now();
  for (let i = 0; i < DRAIN; i++)
    ids.push([`x${executors}-${i}`, (await seeder.enqueue(`run ${i}`, { threadId: `x${executors}-${i}` })).run_id]);
  // Polled gently (every 20 ms), so the watching takes little of the cores the executors need.
  const busy = async () =>
    (await seeder.countPendingRuns()) > 0 || (await seeder.listRunsByStatus("running", { allUsers: true, limit: 1 })).length > 0;
  while (await busy()) await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - start) / 1000;
  for (const [thread, run] of ids)
    if ((await seeder.getRun(thread, run)).status !== "success")
      throw new Error(`run ${run} did not succeed: ${JSON.stringify(await seeder.getRun(thread, run))}`);
  for (const child of children) {
    child.stdin.end();
    await new Promise((resolve) => child.once("exit", resolve));
  }
  await seeder.close();
  return DRAIN / seconds;
}

if (process.argv.includes("--executor")) {
  const client = await benchClient(JSON.parse(process.env.BENCH_EXECUTOR_STORAGE), { delayMs: 20, maxActiveRuns: 1 });
  // Built before the clock starts: the first run of a process builds the agent.
  await client.chat("warm up", { threadId: `warm-${randomUUID()}` });
  const stop = await client.executeQueued({ pollMs: 50 });
  process.send("ready");
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once("end", resolve));
  await stop();
  await client.close();
  process.exit(0);
}

try {
  await latency("SQLite", { backend: "sqlite" });
  if (!pgUrl) {
    console.log("PostgreSQL: skipped (ANTLER_TEST_PG_URL is not set)");
  } else {
    const schema = `bench_queue_${process.pid}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    try {
      const storage = { backend: "postgres", postgres_url: pgUrl, postgres_schema: schema };
      await latency("PostgreSQL", storage);
      const one = await drain(storage, 1);
      const four = await drain(storage, 4);
      console.log(
        `PostgreSQL, 20 ms model, ${DRAIN} queued runs, one run at a time per executor process: 1 executor ${one.toFixed(1)} runs/s, 4 executors ${four.toFixed(1)} runs/s: ${(four / one).toFixed(2)}×`,
      );
    } finally {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
