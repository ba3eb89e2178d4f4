// Protocol stream latency: each protocol's per-event latency against Antler's native SSE stream, in one run.
// STREAMS (200) concurrent streams per round, one protocol at a time, rounds interleaved (forward in even rounds,
// reversed in odd ones, so a drift in the machine's load falls on every protocol alike), against one Antler
// gateway in a child process (SQLite storage, OpenAI provider, the protocols plugin),
// the loopback model in this process, the streams opened and read by load-client.mjs in a third process.
//
// Latency of an event: the model server stamps each text token with the moment it writes it (epoch ms); the
// client notes when it has parsed the protocol's text-delta event that carries it. Each run calls the `add` tool
// (held at the model until all of the round's streams are open, then let go over SPREAD_MS), then streams 16
// stamped tokens. Percentiles are over every token of every round; the ratio is the protocol's over native's.
//
// Run after a build: `pnpm bench` (this package) or `node bench/stream-latency.bench.mjs`. Env: BENCH_STREAMS,
// BENCH_ROUNDS, BENCH_SPREAD_MS, BENCH_PROTOCOLS (comma list of native,ai-sdk,langgraph,ag-ui; default: native
// and every protocol the built plugin serves). BENCH_SMOKE=1: 10 streams, one round, no warm-up (seconds; the figures mean nothing).
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startBenchModel, whenWaiting } from "./bench-model.mjs";
import { median, pct, runLoadClient } from "./run-load-client.mjs";
import { startServerProcess } from "./server-process.mjs";

const SMOKE = process.env.BENCH_SMOKE === "1";
const STREAMS = Number(process.env.BENCH_STREAMS ?? (SMOKE ? 10 : 200));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 2));
const SPREAD_MS = Number(process.env.BENCH_SPREAD_MS ?? (SMOKE ? 200 : 3000));
const OPEN_TIMEOUT_MS = Number(process.env.BENCH_OPEN_TIMEOUT_MS ?? 120_000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 10 * 60_000);
const TARGET_P99 = 1.05;
const TOKENS = 16;

const watchdog = setTimeout(() => {
  console.error(`stream-latency.bench: no result after ${TIMEOUT_MS / 1000} s (BENCH_TIMEOUT_MS); giving up.`);
  process.exit(1);
}, TIMEOUT_MS);
watchdog.unref();

const model = await startBenchModel({ tokens: TOKENS, tool: false });
const antler = await startServerProcess(fileURLToPath(new URL("./antler-server.mjs", import.meta.url)), { BENCH_MODEL_URL: model.url });

/** Whether the gateway serves a protocol's route: anything but a 404 from an empty POST. */
async function serves(path) {
  const response = await fetch(`${antler.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  await response.body?.cancel();
  return response.status !== 404;
}
const available = {
  native: true,
  "ai-sdk": await serves("/ai-sdk/chat"),
  langgraph: await serves("/langgraph/threads"),
  "ag-ui": await serves("/ag-ui"),
};
const wanted = process.env.BENCH_PROTOCOLS?.split(",").map((p) => p.trim()) ?? Object.keys(available).filter((p) => available[p]);
for (const p of wanted) if (!available[p]) throw new Error(`BENCH_PROTOCOLS names ${p}, which the built gateway does not serve (404)`);
const missing = Object.keys(available).filter((p) => !available[p]);

let tags = 0;
async function round(protocol, streams, latencies) {
  model.hold();
  const result = runLoadClient({
    mode: "latency",
    protocol,
    url: antler.url,
    streams,
    tokens: TOKENS,
    tag: `${protocol}-${process.pid}-${++tags}`,
  });
  const open = await whenWaiting(model, streams, OPEN_TIMEOUT_MS, result);
  await model.release(SPREAD_MS);
  const { pairs, problems, resets } = await result;
  if (resets > 0) console.error(`  note: ${protocol}: ${resets} connection resets (retried once)`);
  if (problems.length > 0) console.error(`  note: ${protocol}: ${problems.length} streams fell short, e.g. ${problems[0]}`);
  if (open < streams) console.error(`  note: ${protocol}: only ${open} of ${streams} streams were open at once`);
  for (const [stamp, at] of pairs) latencies.push(at - stamp);
  return pairs.length;
}

try {
  const started = performance.now();
  // Warm-up (JIT, the agent, sockets); smoke mode skips it, its rounds run the same code.
  if (!SMOKE) for (const protocol of wanted) await round(protocol, Math.min(10, STREAMS), []);
  const results = wanted.map((protocol) => ({ protocol, latencies: [], events: 0, p99s: [] }));
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? results : [...results].reverse();
    for (const result of order) {
      const latencies = [];
      result.events += await round(result.protocol, STREAMS, latencies);
      result.latencies.push(...latencies);
      result.p99s.push(pct(latencies, 99));
    }
  }
  const native = results.find((r) => r.protocol === "native");
  const f = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");
  console.log(
    `\nProtocol stream latency: ${STREAMS} concurrent streams x ${ROUNDS} interleaved rounds (runs let go over ${SPREAD_MS} ms), ` +
      `Antler gateway in its own process (SQLite storage), loopback OpenAI-compatible model, load client in its own process, Node ${process.version}`,
  );
  console.log(
    "| stream | token events | latency p50 (ms) | latency p99 (ms) | median of round p99s (ms) | p50 vs native | p99 vs native | target p99 |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    const p50 = pct(r.latencies, 50);
    const p99 = pct(r.latencies, 99);
    const isNative = r === native;
    const ratio99 = p99 / pct(native.latencies, 99);
    console.log(
      `| ${isNative ? "native SSE (/api/threads/{id}/runs/stream)" : r.protocol} | ${r.events} | ${f(p50)} | ${f(p99)} | ${f(median(r.p99s))} | ` +
        `${isNative ? "1" : `${f(p50 / pct(native.latencies, 50))}x`} | ${isNative ? "1" : `${f(ratio99)}x`} | ` +
        `${isNative ? "" : `<= ${TARGET_P99}x ${ratio99 <= TARGET_P99 ? "met" : "MISSED"}`} |`,
    );
  }
  if (missing.length > 0) console.log(`Not measured (the built gateway has no route yet): ${missing.join(", ")}.`);
  console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
  const expected = STREAMS * ROUNDS * TOKENS;
  for (const r of results)
    if (r.events !== expected) throw new Error(`${r.protocol}: ${r.events} token events, expected ${expected}; some streams failed`);
} finally {
  await antler.close();
  await model.close();
}
