// SSE load benchmark: 200 concurrent streams over loopback HTTP against the embedded client, in one run.
// Run `pnpm bench` (or, after `npx tsc -b packages/plugins/gateway`, `node --expose-gc bench/sse.bench.mjs`).
//
// Added latency per event: each StreamEvent is stamped (epoch ms) when the client's generator hands it out;
// the consumer notes when it arrives: embedded, in the for-await body; HTTP, when a real fetch reader in a
// separate process (bench/sse-load-client.mjs) has parsed the SSE frame. Both modes run the same scripted
// model, concurrency and threads, interleaved round by round, so the difference is what the HTTP path
// (framing, socket, fetch, parsing) adds. The load generator is its own process because a fetch reader in
// the server's process only gets its socket reads when the agents' promise chains yield, which would charge
// the benchmark's own client to the gateway.
// Memory per open stream: the server process's heap and RSS after GC with all streams open (the model holds
// each run in a timer), minus the same figure before they opened, divided by the stream count.
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

const STREAMS = Number(process.env.BENCH_STREAMS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const HOLD_MS = Number(process.env.BENCH_HOLD_MS ?? 1500);
const baseDir = mkdtempSync(join(tmpdir(), "antler-sse-bench-"));

// A tool call (held HOLD_MS so every stream is open at once), then a streamed answer of several deltas.
const script = (messages) =>
  messages.at(-1)?.getType() === "tool"
    ? {
        text: "The sum is three, computed by the add tool, and that is the final answer for this run.",
        usage: { input_tokens: 20, output_tokens: 18 },
      }
    : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], delayMs: HOLD_MS, usage: { input_tokens: 10, output_tokens: 3 } };
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

const client = await AntlerClient.create({
  config: {
    base_dir: baseDir,
    models: [{ name: "m", provider: "scripted" }],
    storage: { backend: "memory" },
    title: { enabled: false },
    logging: { level: "warn" },
  },
  plugins: [scriptedModelsPlugin({ m: script }), tools],
  cwd: baseDir,
  env: {},
  discover: false,
});

// Stamp every event as the client's generator hands it out, keyed by run id and sequence (the SSE `id:`).
const stamps = new Map();
const original = client.stream.bind(client);
client.stream = async function* stamped(message, options) {
  let seq = 0;
  for await (const event of original(message, options)) {
    seq += 1;
    stamps.set(`${options.runId}:${seq}`, performance.timeOrigin + performance.now());
    yield event;
  }
};

const gateway = await startGateway({ client, config: { port: 0, auth: { mode: "none" }, sse_keepalive_seconds: 60 } });
const threads = [];
for (let i = 0; i < STREAMS; i++) threads.push((await client.createThread({ threadId: `bench-${i}` })).thread_id);

const settle = async () => {
  for (let i = 0; i < 3; i++) {
    global.gc?.();
    await new Promise((r) => setTimeout(r, 30));
  }
};
const memory = () => ({ heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss });

async function whenAllOpen() {
  while (client.activeRuns < STREAMS) await new Promise((r) => setTimeout(r, 10));
  await settle();
  return memory();
}

let runCounter = 0;
async function embeddedStream(threadId, latencies) {
  const runId = `emb-${++runCounter}`;
  let seq = 0;
  for await (const _event of client.stream("add 1 and 2", { threadId, runId })) {
    seq += 1;
    latencies.push(performance.timeOrigin + performance.now() - stamps.get(`${runId}:${seq}`));
    stamps.delete(`${runId}:${seq}`);
  }
  return seq;
}

const loadClient = fileURLToPath(new URL("./sse-load-client.mjs", import.meta.url));
/** Opens one stream per thread from a child process; resolves with every event's latency once all ended. */
function httpStreams(threadIds, latencies) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [loadClient, gateway.url, ...threadIds], { maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`load client failed: ${stderr || error.message}`));
      let events = 0;
      for (const { runId, arrivals } of JSON.parse(stdout)) {
        for (const [seq, at] of arrivals) {
          const key = `${runId}:${seq}`;
          latencies.push(at - stamps.get(key));
          stamps.delete(key);
          events += 1;
        }
      }
      resolve([events]);
    });
  });
}

async function round(mode, latencies) {
  await settle();
  const before = memory();
  const started = performance.now();
  const runs = mode === "embedded" ? Promise.all(threads.map((t) => embeddedStream(t, latencies))) : httpStreams(threads, latencies);
  const open = await whenAllOpen();
  const counts = await runs;
  return {
    seconds: (performance.now() - started) / 1000,
    events: counts.reduce((a, b) => a + b, 0),
    heapPerStream: (open.heap - before.heap) / STREAMS,
    rssPerStream: (open.rss - before.rss) / STREAMS,
  };
}

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

// Warm up both paths (agent build, JIT, sockets) before measuring.
for (const t of threads.slice(0, 10)) await embeddedStream(t, []);
await httpStreams(threads.slice(0, 10), []);

const results = { embedded: { lat: [], rounds: [] }, http: { lat: [], rounds: [] } };
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of r % 2 === 0 ? ["embedded", "http"] : ["http", "embedded"]) {
    results[mode].rounds.push(await round(mode, results[mode].lat));
  }
}

const median = (xs) => pct(xs, 50);
const row = (mode) => {
  const { lat, rounds } = results[mode];
  return {
    mode,
    streams: STREAMS,
    events: rounds.reduce((a, r) => a + r.events, 0),
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    heap: median(rounds.map((r) => r.heapPerStream)) / 1024,
    rss: median(rounds.map((r) => r.rssPerStream)) / 1024,
    wall: median(rounds.map((r) => r.seconds)),
  };
};
const rows = [row("embedded"), row("http")];
const f = (n, d = 3) => n.toFixed(d);
console.log(
  `\nSSE load: ${STREAMS} concurrent streams x ${ROUNDS} rounds, loopback, scripted model (hold ${HOLD_MS} ms), Node ${process.version}`,
);
console.log(
  "| mode | concurrent streams | events measured | event latency p50 (ms) | event latency p99 (ms) | heap per open stream (KiB) | RSS per open stream (KiB) | round wall time (s) |",
);
console.log("|---|---|---|---|---|---|---|---|");
for (const r of rows)
  console.log(
    `| ${r.mode} | ${r.streams} | ${r.events} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.heap, 1)} | ${f(r.rss, 1)} | ${f(r.wall, 2)} |`,
  );
const [emb, http] = rows;
console.log(
  `| added by HTTP/SSE | | | ${f(http.p50 - emb.p50)} | ${f(http.p99 - emb.p99)} | ${f(http.heap - emb.heap, 1)} | ${f(http.rss - emb.rss, 1)} | |`,
);

await gateway.close();
await client.close();
rmSync(baseDir, { recursive: true, force: true });
