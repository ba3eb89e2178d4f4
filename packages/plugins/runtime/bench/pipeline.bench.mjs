// Agent-runtime benchmarks, each against a baseline measured in the same run (interleaved). Run `pnpm bench`
// after a build. Machines here are noisy: read the ratios, not the absolute milliseconds.
//   (a) per-turn overhead of the full default pipeline vs bare createAgent (same scripted model and tools)
//   (b) throughput of 200 concurrent runs against a model that waits 20 ms, vs bare createAgent
//   (c) memory per idle thread (memory checkpointer), Antler vs bare, each in its own process, three of each
//   (d) per-turn cost with 0, 10 and 30 no-op plugin middlewares using node-style hooks
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { ScriptedChatModel } from "@antler/kernel/testing";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";
import { createAntlerAgent } from "../dist/index.js";

// BENCH_SMOKE=1: every section with a handful of turns, runs and threads, to check it still runs (the figures mean
// nothing).
const SMOKE = process.env.BENCH_SMOKE === "1";
const TURNS = Number(process.env.BENCH_TURNS ?? (SMOKE ? 10 : 150));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 5));
const WARMUP_TURNS = SMOKE ? 2 : 30;
const CONCURRENT_RUNS = SMOKE ? 20 : 200;
const THROUGHPUT_ROUNDS = SMOKE ? 2 : 6;
const HEAP_PROCESSES = SMOKE ? 1 : 3;
const baseDir = mkdtempSync(join(tmpdir(), "antler-bench-"));

// One tool call, then a final answer: two model calls and one tool call per turn, whatever came before.
const script =
  (delayMs = 0) =>
  (messages) => {
    const last = messages.at(-1);
    return ToolMessage.isInstance(last)
      ? { text: "The answer is 3.", delayMs, usage: { input_tokens: 20, output_tokens: 5 } }
      : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], delayMs, usage: { input_tokens: 10, output_tokens: 3 } };
  };
const add = tool(({ a, b }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

// Per-turn figures follow reference/pipeline-notes.md: no checkpointer (each turn starts from its own input,
// so history growth does not swamp the comparison), thread ids cycling through a pool of 25.
// Throughput (b) uses a fresh thread per run; memory (c) runs in bench/heap-per-thread.mjs.
function bare(delayMs) {
  return createAgent({ model: new ScriptedChatModel(script(delayMs)), tools: [add] }).withConfig({ recursionLimit: 1000 });
}
function antler(delayMs, extraMiddleware = []) {
  return createAntlerAgent({ model: new ScriptedChatModel(script(delayMs)), tools: [add], baseDir, extraMiddleware }).agent;
}
const noopNodeMiddleware = (n) =>
  Array.from({ length: n }, (_, i) => ({
    spec: { name: `noop-${i}`, beforeModel: () => undefined, afterModel: () => undefined },
    plugin: `bench-${i}`,
  }));

const POOL = 25;
let threadCounter = 0;
async function turn(agent, fresh = false) {
  const thread = fresh ? `fresh-${threadCounter++}` : `pool-${threadCounter++ % POOL}`;
  await agent.invoke(
    { messages: [new HumanMessage("What is 1 + 2?")] },
    { configurable: { thread_id: thread }, context: { thread_id: thread, user_id: "bench" } },
  );
}
async function msPerTurn(agent, turns) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < turns; i++) await turn(agent);
  const cpu = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) / turns, cpu: (cpu.user + cpu.system) / 1000 / turns };
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Interleaves the candidates in small batches (noise hits all alike; the order rotates so none always runs
 * right after another) and returns each one's median ms/turn, wall clock and this process's CPU time.
 */
async function compare(cases) {
  for (const c of cases) await msPerTurn(c.agent, WARMUP_TURNS); // warm-up
  const samples = cases.map(() => []);
  const batch = 5;
  for (let r = 0; r < Math.ceil((TURNS * ROUNDS) / batch); r++)
    for (let k = 0; k < cases.length; k++) {
      const i = (r + k) % cases.length;
      samples[i].push(await msPerTurn(cases[i].agent, batch));
    }
  return cases.map((c, i) => ({
    name: c.name,
    ms: median(samples[i].map((s) => s.wall)),
    cpu: median(samples[i].map((s) => s.cpu)),
  }));
}

function table(title, rows, baseline) {
  console.log(`\n${title}`);
  console.log(`| case | ${rows[0].unit.padStart(10)} | vs ${baseline} |`);
  console.log("|---|---:|---:|");
  const base = rows.find((r) => r.name === baseline).value;
  for (const r of rows)
    console.log(
      `| ${r.name} | ${r.value.toFixed(3).padStart(10)} | ${(r.lowerIsBetter === false ? base / r.value : r.value / base).toFixed(2)}× |`,
    );
}

// (a)
const a = await compare([
  { name: "bare createAgent", agent: bare(0) },
  { name: "Antler default pipeline", agent: antler(0) },
]);
table(
  "(a) per-turn overhead, 1 tool call + 2 model calls per turn (median ms/turn)",
  a.map((r) => ({ name: r.name, value: r.ms, unit: "ms/turn" })),
  "bare createAgent",
);
const ratioA = a[1].ms / a[0].ms;
console.log(`target ≤ 1.10×: ${ratioA <= 1.1 ? "met" : "NOT met"} (${ratioA.toFixed(2)}×)`);
// Other processes on the machine stretch wall-clock time; this process's CPU time per turn is less disturbed.
console.log(
  `same turns in CPU time: bare ${a[0].cpu.toFixed(3)} ms, Antler ${a[1].cpu.toFixed(3)} ms (${(a[1].cpu / a[0].cpu).toFixed(2)}×)`,
);

// (d)
const d = await compare([
  { name: "0 plugin middlewares", agent: antler(0) },
  { name: "10 plugin middlewares (node hooks)", agent: antler(0, noopNodeMiddleware(10)) },
  { name: "30 plugin middlewares (node hooks)", agent: antler(0, noopNodeMiddleware(30)) },
]);
table(
  "(d) per-turn cost with no-op node-style plugin middlewares (median ms/turn)",
  d.map((r) => ({ name: r.name, value: r.ms, unit: "ms/turn" })),
  "0 plugin middlewares",
);
const ratioD = d[2].ms / d[0].ms;
console.log(`target 30 ≤ 1.1× of 0: ${ratioD <= 1.1 ? "met" : "NOT met"} (${ratioD.toFixed(2)}×)`);

// (b)
async function throughput(agent, runs) {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: runs }, () => turn(agent, true)));
  return runs / ((performance.now() - t0) / 1000);
}
const bareSlow = bare(20);
const antlerSlow = antler(20);
// Warm-up to steady state (both sides' code compiled by the JIT): early rounds are slower by a third.
for (let r = 0; r < (SMOKE ? 1 : 2); r++) {
  await throughput(bareSlow, CONCURRENT_RUNS);
  await throughput(antlerSlow, CONCURRENT_RUNS);
}
const tb = [];
const ta = [];
for (let r = 0; r < THROUGHPUT_ROUNDS; r++) {
  // Alternating which side goes first.
  if (r % 2 === 0) {
    tb.push(await throughput(bareSlow, CONCURRENT_RUNS));
    ta.push(await throughput(antlerSlow, CONCURRENT_RUNS));
  } else {
    ta.push(await throughput(antlerSlow, CONCURRENT_RUNS));
    tb.push(await throughput(bareSlow, CONCURRENT_RUNS));
  }
}
table(
  `(b) ${CONCURRENT_RUNS} concurrent runs on new threads, model waits 20 ms per call (median runs/s; higher is better)`,
  [
    { name: "bare createAgent", value: median(tb), unit: "runs/s" },
    { name: "Antler default pipeline", value: median(ta), unit: "runs/s" },
  ],
  "bare createAgent",
);
const ratioB = median(ta) / median(tb);
console.log(`target ≥ 0.90×: ${ratioB >= 0.9 ? "met" : "NOT met"} (${ratioB.toFixed(2)}×)`);

// (c)
const heapOf = (kind) =>
  JSON.parse(
    execFileSync(process.execPath, ["--expose-gc", fileURLToPath(new URL("./heap-per-thread.mjs", import.meta.url)), kind], {
      encoding: "utf8",
    }).trim(),
  );
// Three processes per side (one in a smoke run), alternating; the median of each side.
const heapRuns = { bare: [], full: [] };
for (let r = 0; r < HEAP_PROCESSES; r++) for (const kind of ["bare", "full"]) heapRuns[kind].push(heapOf(kind));
const heapMedian = (runs) => runs.map((x) => x.kib_per_thread).sort((x, y) => x - y)[Math.floor(runs.length / 2)];
const heapBare = { kib_per_thread: heapMedian(heapRuns.bare), threads: heapRuns.bare[0].threads };
const heapAntler = { kib_per_thread: heapMedian(heapRuns.full) };
table(
  `(c) memory per idle thread after one turn, memory checkpointer, ${heapBare.threads} threads, each side in its own process (KiB/thread, heap + array buffers)`,
  [
    { name: "bare createAgent", value: heapBare.kib_per_thread, unit: "KiB" },
    { name: "Antler default pipeline", value: heapAntler.kib_per_thread, unit: "KiB" },
  ],
  "bare createAgent",
);
const ratioC = heapAntler.kib_per_thread / heapBare.kib_per_thread;
console.log(`target ≤ 1.10×: ${ratioC <= 1.1 ? "met" : "NOT met"} (${ratioC.toFixed(2)}×)`);
rmSync(baseDir, { recursive: true, force: true });
