// SSE load benchmark: what the run event log adds to a live stream. 200 concurrent run streams over loopback
// HTTP against two gateways in this process, identical but for `stream_bridge`: `none` (no event log: the
// gateway as it was before resumable streams) and `sql` (the default: every event written to Antler's
// SQLite file in batches) or, with BENCH_BRIDGE=redis, Redis Streams (ANTLER_TEST_REDIS_URL or
// redis://127.0.0.1:6379). Rounds interleave the two.
// Run after a build: `node --expose-gc bench/sse.bench.mjs` (BENCH_STREAMS, BENCH_ROUNDS, BENCH_BRIDGE,
// BENCH_STORAGE=memory|sqlite).
//
// Latency per event: each event is stamped (epoch ms) by a run observer registered before the gateway's own,
// so the stamp comes before the log sees the event; a real fetch reader in a separate process
// (bench/sse-load-client.mjs) notes when it has parsed the SSE frame with that id. The difference between the
// two gateways' latencies is what the log adds (its in-memory bookkeeping on the run's path, its batched
// writes competing for the event loop).
// Memory per open stream: the process's heap and RSS after GC with every stream of the round open (each run
// waits at its first model call until all are open), minus the same before the round, divided by the count.
//
// It never hangs: a round whose streams do not all open within BENCH_OPEN_TIMEOUT_MS is measured at the peak
// it reached (and says so), and the whole benchmark fails with a message after BENCH_TIMEOUT_MS.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { z } from "zod";
import { startGateway } from "../dist/index.js";

// BENCH_SMOKE=1: 10 streams, one round, let go over 200 ms, to check it still runs (the figures mean nothing).
const SMOKE = process.env.BENCH_SMOKE === "1";
const STREAMS = Number(process.env.BENCH_STREAMS ?? (SMOKE ? 10 : 200));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 3));
const BRIDGE = process.env.BENCH_BRIDGE ?? "sql";
const OPEN_TIMEOUT_MS = Number(process.env.BENCH_OPEN_TIMEOUT_MS ?? 60_000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 15 * 60_000);
// memory (default; as the gateway bench always ran): Antler's tables, and so the sql log, in an in-memory SQLite.
// sqlite: in a SQLite file (checkpoints stay in memory), fsyncs of the run records included.
const STORAGE = process.env.BENCH_STORAGE ?? "memory";
const REDIS_URL = process.env.ANTLER_TEST_REDIS_URL || "redis://127.0.0.1:6379";

const watchdog = setTimeout(() => {
  console.error(`sse.bench: no result after ${TIMEOUT_MS / 1000} s (BENCH_TIMEOUT_MS); giving up.`);
  process.exit(1);
}, TIMEOUT_MS);
watchdog.unref();

const now = () => performance.timeOrigin + performance.now();

// Each run's first model call waits at a gate until every stream of the round is open (or the open timeout
// passes); then the runs are let go one at a time over BENCH_SPREAD_MS (streams that are open together but
// busy at different moments, as real ones are; letting 200 go at the same instant measures only the queue
// behind them). Each calls the tool, then streams an answer of several deltas.
const SPREAD_MS = Number(process.env.BENCH_SPREAD_MS ?? (SMOKE ? 200 : 3000));
const held = [];
let holding = true;
const gate = () => (holding ? new Promise((resolve) => held.push(resolve)) : Promise.resolve());
async function letGo() {
  const step = SPREAD_MS / Math.max(1, held.length);
  holding = false;
  while (held.length > 0) {
    held.shift()();
    await new Promise((r) => setTimeout(r, step));
  }
}
const script = (messages) =>
  messages.at(-1)?.getType() === "tool"
    ? {
        text: "The sum is three, computed by the add tool, and that is the final answer for this run.",
        usage: { input_tokens: 20, output_tokens: 18 },
      }
    : gate().then(() => ({ toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 10, output_tokens: 3 } }));
const tools = definePlugin({
  name: "bench-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "add",
        description: "Adds.",
        schema: z.object({ a: z.number(), b: z.number() }),
        run: ({ a, b }) => String(a + b),
      }),
    );
  },
});

// Stamped by run id and SSE id (the metadata frame is 1, so the n-th event is n + 1).
const stamps = new Map();
const stamper = {
  seqs: new Map(),
  runStarted(run) {
    this.seqs.set(run.runId, 1);
  },
  runEvent(runId) {
    const seq = (this.seqs.get(runId) ?? 1) + 1;
    this.seqs.set(runId, seq);
    stamps.set(`${runId}:${seq}`, now());
  },
  runEnded(runId) {
    this.seqs.delete(runId);
  },
};

const dirs = [];
async function setUp(mode, bridge) {
  const baseDir = mkdtempSync(join(tmpdir(), `antler-sse-bench-${mode}-`));
  dirs.push(baseDir);
  const client = await AntlerClient.create({
    config: {
      base_dir: baseDir,
      models: [{ name: "m", provider: "scripted" }],
      // The same for both gateways; the sql log writes where Antler's tables are.
      storage: STORAGE === "sqlite" ? { backend: "sqlite", checkpointer: "memory" } : { backend: "memory" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [scriptedModelsPlugin({ m: script }), tools],
    cwd: baseDir,
    env: {},
    discover: false,
  });
  client.observeRuns(stamper);
  const gateway = await startGateway({
    client,
    config: { port: 0, auth: { mode: "none" }, sse_keepalive_seconds: 60, stream_bridge: bridge },
  });
  const threads = [];
  for (let i = 0; i < STREAMS; i++) threads.push((await client.createThread({ threadId: `bench-${i}` })).thread_id);
  return { mode, client, gateway, threads };
}

const redisBridge = { type: "redis", redis_url: REDIS_URL, key_prefix: `antler-bench-${process.pid}:` };
const modes = [
  await setUp("log off (stream_bridge none)", "none"),
  await setUp(`log on (stream_bridge ${BRIDGE})`, BRIDGE === "redis" ? redisBridge : "sql"),
];

const settle = async () => {
  for (let i = 0; i < 3; i++) {
    global.gc?.();
    await new Promise((r) => setTimeout(r, 30));
  }
};
const memory = () => ({ heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss });

/**
 * Waits until all `target` runs of `client` are live (they hold at the gate), then measures memory and opens
 * the gate. Gives up waiting after OPEN_TIMEOUT_MS or when the round's streams have all ended, measuring at
 * the highest count reached; it never waits for something that can no longer happen.
 */
async function whenAllOpen(client, target, ended) {
  const deadline = performance.now() + OPEN_TIMEOUT_MS;
  let peak = 0;
  let over = false;
  ended.then(() => {
    over = true;
  });
  while (client.activeRuns < target && !over && performance.now() < deadline) {
    peak = Math.max(peak, client.activeRuns);
    await new Promise((r) => setTimeout(r, 10));
  }
  const open = Math.max(peak, client.activeRuns);
  await settle();
  return { open, ...memory() };
}

const loadClient = fileURLToPath(new URL("./sse-load-client.mjs", import.meta.url));
/** Opens one stream per thread from a child process; resolves with every event's latency once all ended. */
function httpStreams(url, threadIds, latencies) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [loadClient, url, ...threadIds], { maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`load client failed: ${stderr || error.message}`));
      let events = 0;
      for (const { runId, arrivals } of JSON.parse(stdout)) {
        for (const [seq, at] of arrivals) {
          const key = `${runId}:${seq}`;
          const stamped = stamps.get(key);
          if (stamped === undefined) continue; // the metadata frame is not an event of the run
          latencies.push(at - stamped);
          stamps.delete(key);
          events += 1;
        }
      }
      resolve(events);
    });
  });
}

async function round(setup, latencies, threads = setup.threads) {
  await settle();
  const before = memory();
  const started = performance.now();
  holding = true;
  const runs = httpStreams(setup.gateway.url, threads, latencies);
  runs.catch(() => undefined);
  const open = await whenAllOpen(setup.client, threads.length, runs);
  await letGo();
  const events = await runs;
  if (open.open < threads.length) {
    console.error(`  note: ${setup.mode}: only ${open.open} of ${threads.length} streams were open at once; memory is per open stream`);
  }
  return {
    seconds: (performance.now() - started) / 1000,
    events,
    heapPerStream: (open.heap - before.heap) / Math.max(1, open.open),
    rssPerStream: (open.rss - before.rss) / Math.max(1, open.open),
  };
}

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

try {
  // Warm up both gateways (agent build, JIT, sockets, the log's statements) before measuring.
  for (const setup of modes) await round(setup, [], setup.threads.slice(0, 10));

  const results = modes.map((setup) => ({ setup, lat: [], rounds: [] }));
  for (let r = 0; r < ROUNDS; r++) {
    for (const result of r % 2 === 0 ? results : [...results].reverse()) {
      result.rounds.push(await round(result.setup, result.lat));
    }
  }

  const median = (xs) => pct(xs, 50);
  const rows = results.map(({ setup, lat, rounds }) => ({
    mode: setup.mode,
    events: rounds.reduce((a, r) => a + r.events, 0),
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    heap: median(rounds.map((r) => r.heapPerStream)) / 1024,
    rss: median(rounds.map((r) => r.rssPerStream)) / 1024,
    wall: median(rounds.map((r) => r.seconds)),
  }));
  const f = (n, d = 3) => n.toFixed(d);
  console.log(
    `\nSSE load: ${STREAMS} concurrent streams x ${ROUNDS} rounds (let go over ${SPREAD_MS} ms), loopback, scripted model, storage ${STORAGE}, Node ${process.version}`,
  );
  console.log(
    "| gateway | events measured | event latency p50 (ms) | event latency p99 (ms) | heap per open stream (KiB) | RSS per open stream (KiB) | round wall time (s) |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(`| ${r.mode} | ${r.events} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.heap, 1)} | ${f(r.rss, 1)} | ${f(r.wall, 2)} |`);
  }
  const [off, on] = rows;
  console.log(
    `| added by the event log | | ${f(on.p50 - off.p50)} | ${f(on.p99 - off.p99)} | ${f(on.heap - off.heap, 1)} | ${f(on.rss - off.rss, 1)} | |`,
  );
  if (on.events !== off.events || off.events === 0) {
    throw new Error(`the two gateways delivered different numbers of events (${off.events} and ${on.events}); some streams failed`);
  }
} finally {
  for (const { gateway, client } of modes) {
    await gateway.close();
    await client.close();
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
