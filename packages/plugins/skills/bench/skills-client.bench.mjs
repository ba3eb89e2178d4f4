// Per-turn overhead of skills (50 installed) and memory (middleware mode, 1,000 facts) as a user runs them: one
// turn (two model calls, one tool call) through AntlerClient on the default storage (SQLite tables and
// checkpointer), with `@antler/plugin-skills` and `@antler/plugin-memory` loaded from config, against the same
// client without them, interleaved in one run with the order rotating each round. Issue 14's target: ≤ 1.05× of
// the default pipeline. skills.bench.mjs measures the same middlewares on a bare pipeline with no checkpointer,
// where their share looks larger. Run after a build: node packages/plugins/skills/bench/skills-client.bench.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import memoryPlugin, { MEMORY } from "@antler/plugin-memory";
import { AntlerClient } from "@antler/plugin-runtime";
import { z } from "zod";
import skillsPlugin from "../dist/index.js";
import { benchFacts, printRatios, sampleRotating, script, writeBenchSkills } from "./fixtures.mjs";

// BENCH_SMOKE=1: a few turns per case, to check it still runs (the figures mean nothing).
const SMOKE = process.env.BENCH_SMOKE === "1";
const TURNS = Number(process.env.BENCH_TURNS ?? (SMOKE ? 4 : 300));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 5));
const BATCH = SMOKE ? 2 : 10;
const WARMUP_TURNS = SMOKE ? 2 : 20;
const TARGET = 1.05;
const USER = "bench";

const tools = definePlugin({
  name: "bench-tools",
  version: "0.1.0",
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

const dirs = [];
/** A client in its own folder: default storage (SQLite), title off, the scripted model; `extra` plugins and config. */
async function client(extra, config = {}) {
  const cwd = mkdtempSync(join(tmpdir(), "antler-skills-client-bench-"));
  dirs.push(cwd);
  writeBenchSkills(join(cwd, "skills", "public"), join(cwd, ".antler", "users", USER, "skills", "custom"));
  return AntlerClient.create({
    config: {
      models: [
        { name: "m", provider: "scripted" },
        { name: "extractor", provider: "scripted" },
      ],
      default_model: "m",
      title: { enabled: false },
      logging: { level: "warn" },
      ...config,
    },
    // The extraction model finds nothing to remember: queued extractions, flushed at close, change no facts.
    plugins: [scriptedModelsPlugin({ m: script, extractor: () => ({ text: '{"facts":[]}' }) }), tools, ...extra],
    cwd,
    env: {},
    discover: false,
  });
}

const baseline = await client([]);
const control = await client([]);
// Extraction is debounced for longer than the benchmark runs, so it stays queued (off the turn, as in production).
const full = await client([skillsPlugin, memoryPlugin], { memory: { debounce_ms: 3_600_000, model: "extractor" } });
const store = await full.kernel.scope.resolve(MEMORY).store();
await store.insertFacts({ userId: USER, agentName: "" }, benchFacts());
// The control is a second client without skills and memory: its ratio is this machine's noise floor in this run.
const cases = [
  { name: "default pipeline (AntlerClient, SQLite)", client: baseline },
  { name: "control: default pipeline, second client", client: control },
  { name: "+ skills (50) + memory (1,000 facts)", client: full },
];

// Every batch is one new thread of BATCH turns, so every batch of every case does the same work: with threads
// shared across batches, histories (and so a turn's checkpoint cost) would grow through the run.
let thread = 0;
async function msPerTurn(c, turns) {
  const threadId = `bench-${thread++}`;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < turns; i++) {
    const reply = await c.chat("What is 1 + 2 in typescript?", { threadId, userId: USER });
    if (reply !== "The answer is 3.") throw new Error(`unexpected reply: ${reply}`);
  }
  const cpu = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) / turns, cpu: (cpu.user + cpu.system) / 1000 / turns };
}
for (const c of cases) await msPerTurn(c.client, WARMUP_TURNS);
const results = await sampleRotating(cases, Math.ceil((TURNS * ROUNDS) / BATCH), (c) => msPerTurn(c.client, BATCH));
console.log("\nSkills + memory per turn through AntlerClient (default storage), median of batches of", BATCH);
printRatios(cases, results, { target: TARGET, measured: 2 });
for (const c of cases) await c.client.close();
for (const d of dirs) rmSync(d, { recursive: true, force: true });
