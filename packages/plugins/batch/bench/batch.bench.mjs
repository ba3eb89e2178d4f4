// Batch throughput: 10,000 items run by a stub subagent that sleeps 10 ms (off the CPU), on SQLite in one
// process and on PostgreSQL with 1, 2 and 4 `antler worker` processes. Run with `pnpm bench` (after a build).
// PostgreSQL rows need ANTLER_TEST_PG_URL (e.g. postgres://postgres@127.0.0.1:5432/test) and are skipped without it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createKernel, silentLogger } from "@antler/kernel";
import postgresPlugin from "@antler/plugin-storage-postgres";
import sqlitePlugin from "@antler/plugin-storage-sqlite";
import { FifoAdmissionRuntime } from "@antler/plugin-subagents";
import pg from "pg";
import { BatchStore, BatchWorker, batchMigrations, validateSubmission } from "../dist/index.js";
import { SleepingStubRunner } from "../dist/testing/index.js";

// BENCH_SMOKE=1: 40 items, 1 and 4 workers, to check it still runs; there a row that does not complete every item exits 1.
const SMOKE = process.env.BENCH_SMOKE === "1";
const ITEMS = Number(process.env.BENCH_BATCH_ITEMS ?? (SMOKE ? 40 : 10_000));
const SLEEP_MS = 10;
const CONCURRENCY = Number(process.env.BENCH_BATCH_CONCURRENCY ?? 4);
const WORKER_COUNTS = SMOKE ? [1, 4] : [1, 2, 4];
const PG_URL = process.env.ANTLER_TEST_PG_URL?.trim() || undefined;

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../../../..");
const antlerBin = join(repo, "packages/kernel/bin/antler.js");
const batchDist = join(repo, "packages/plugins/batch/dist");
const subagentsDist = join(repo, "packages/plugins/subagents/dist/index.js");

const submission = validateSubmission(
  {
    title: "bench",
    subagent_type: "general-purpose",
    items: Array.from({ length: ITEMS }, (_, i) => ({ key: `item-${i}`, prompt: `benchmark item ${i}` })),
  },
  { maxItems: ITEMS },
);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Antler's tables with the batch migrations, opened as the batch plugin opens them: through a kernel's storage. */
async function openBatchDatabase(storage, { baseDir, schema }) {
  const kernel = await createKernel({
    config: { preset: "none", base_dir: baseDir, storage },
    plugins: [sqlitePlugin, postgresPlugin],
    discover: false,
    env: {},
    logger: silentLogger(),
  });
  const database = await kernel.openDatabase({ schema, migrations: batchMigrations });
  const close = async () => {
    await database.close();
    await kernel.close();
  };
  return { database, close };
}

async function waitUntilDone(store, batchId, pollMs) {
  for (;;) {
    const status = await store.status("bench", batchId);
    if (status.state !== "active") return status;
    await sleep(pollMs);
  }
}

async function sqliteRow() {
  const dir = mkdtempSync(join(tmpdir(), "antler-batch-bench-"));
  const { database, close } = await openBatchDatabase({ backend: "sqlite" }, { baseDir: dir });
  const store = new BatchStore(database);
  const admission = new FifoAdmissionRuntime({ maxRunning: CONCURRENCY, maxQueued: 1000 });
  const worker = new BatchWorker({
    store,
    runner: new SleepingStubRunner({ sleepMs: SLEEP_MS }),
    admission,
    concurrency: CONCURRENCY,
    claimBatch: 16,
    leaseMs: 60_000,
    heartbeatMs: 5_000,
    maxAttempts: 3,
    pollMs: 50,
    logger: silentLogger(),
  });
  worker.start();
  try {
    const t0 = performance.now();
    const batch = await store.createBatch("bench", submission, { traceId: "bench" });
    const submitMs = performance.now() - t0;
    worker.poke();
    const status = await waitUntilDone(store, batch.id, 250);
    const wallMs = performance.now() - t0;
    return { backend: "SQLite (in process)", workers: 1, submitMs, wallMs, status, load: loadavg()[0] };
  } finally {
    await worker.stop(1000);
    await admission.close();
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function workerConfig(dir, schema) {
  const file = join(dir, "config.yaml");
  writeFileSync(
    file,
    JSON.stringify({
      logging: { level: "warn" },
      storage: { backend: "postgres", postgres_url: PG_URL, postgres_schema: schema },
      plugins: [
        { path: subagentsDist, config: { runtime: { max_running: CONCURRENCY, max_queued: 1000 } } },
        {
          path: join(batchDist, "index.js"),
          config: { worker: { concurrency: CONCURRENCY, claim_batch: 16, poll_ms: 50, embedded: false } },
        },
        { path: join(batchDist, "testing/stub-plugin.js"), config: { sleep_ms: SLEEP_MS } },
      ],
    }),
  );
  return file;
}

function startWorker(config) {
  const child = spawn(process.execPath, [antlerBin, "worker", "--config", config], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (c) => {
    out += c;
  });
  child.stderr.on("data", (c) => {
    out += c;
  });
  const exited = new Promise((r) => child.once("exit", (code) => r(code)));
  const ready = new Promise((r, reject) => {
    child.stdout.on("data", () => /worker \S+ ready/.test(out) && r());
    exited.then((code) => reject(new Error(`worker exited (${code}) before ready:\n${out}`)));
  });
  return { child, ready, exited };
}

async function postgresRow(workers) {
  const schema = `batch_bench_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema "${schema}"`);
  const dir = mkdtempSync(join(tmpdir(), "antler-batch-bench-"));
  const { database, close } = await openBatchDatabase({ backend: "postgres", postgres_url: PG_URL }, { baseDir: dir, schema });
  const store = new BatchStore(database);
  const config = workerConfig(dir, schema);
  const procs = Array.from({ length: workers }, () => startWorker(config));
  try {
    await Promise.all(procs.map((p) => p.ready));
    const t0 = performance.now();
    const batch = await store.createBatch("bench", submission, { traceId: "bench" });
    const submitMs = performance.now() - t0;
    const status = await waitUntilDone(store, batch.id, 250);
    const wallMs = performance.now() - t0;
    return { backend: "PostgreSQL", workers, submitMs, wallMs, status, load: loadavg()[0] };
  } finally {
    for (const p of procs) p.child.kill("SIGTERM");
    await Promise.all(procs.map((p) => p.exited));
    await close();
    await admin.query(`drop schema "${schema}" cascade`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

function format(row, baseline) {
  const perSec = (ITEMS / row.wallMs) * 1000;
  const slots = row.workers * CONCURRENCY;
  // Slot time each item took beyond the stub's own 10 ms: claiming, admission, recording, polling gaps.
  const overhead = (row.wallMs * slots) / ITEMS - SLEEP_MS;
  const ratio = baseline ? `${(perSec / ((ITEMS / baseline.wallMs) * 1000)).toFixed(2)}×` : "—";
  const ok = row.status.counts.completed === ITEMS ? "" : ` (!) ${JSON.stringify(row.status.counts)}`;
  return `| ${row.backend.padEnd(20)} | ${String(row.workers).padStart(7)} | ${String(slots).padStart(5)} | ${(row.submitMs / 1000).toFixed(2).padStart(8)} | ${(row.wallMs / 1000).toFixed(2).padStart(7)} | ${perSec.toFixed(0).padStart(7)} | ${ratio.padStart(11)} | ${overhead.toFixed(2).padStart(16)} | ${row.load.toFixed(1).padStart(6)} |${ok}`;
}

console.log(
  `\nBatch throughput: ${ITEMS.toLocaleString("en-US")} items, stub subagent sleeping ${SLEEP_MS} ms, ${CONCURRENCY} items in flight per worker`,
);
const rows = [];
rows.push(await sqliteRow());
if (!PG_URL) {
  console.log("PostgreSQL rows skipped: ANTLER_TEST_PG_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test).");
} else {
  for (const n of WORKER_COUNTS) rows.push(await postgresRow(n));
}
console.log("| backend              | workers | slots | submit s |  wall s | items/s | vs 1 worker | overhead ms/item | load1m |");
console.log("|----------------------|---------|-------|----------|---------|---------|-------------|------------------|--------|");
const pgOne = rows.find((r) => r.backend === "PostgreSQL" && r.workers === 1);
for (const row of rows) console.log(format(row, row.backend === "PostgreSQL" ? pgOne : undefined));
if (SMOKE && rows.some((row) => row.status.counts.completed !== ITEMS)) process.exitCode = 1;
console.log(
  `\nwall = submit + run until every item is recorded; overhead = wall × slots / items − 10 ms (slot time not spent in the stub); load1m = the machine's 1-minute load average after the row (${cpus().length} CPUs): a busy machine slows every row.`,
);
const pgFour = rows.find((r) => r.backend === "PostgreSQL" && r.workers === 4);
if (pgOne && pgFour) {
  const ratio = pgOne.wallMs / pgFour.wallMs;
  console.log(`Target: ≥ 3× items/s with 4 PostgreSQL workers vs 1: ${ratio >= 3 ? "met" : "NOT met"} (${ratio.toFixed(2)}×)`);
}
