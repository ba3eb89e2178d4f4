// Per-turn overhead of skills (50 installed) and memory (middleware mode, 1,000 facts) as a user runs them: one
// turn (two model calls, one tool call) through AntlerClient on the default storage (SQLite tables and
// checkpointer), with `@antler/plugin-skills` and `@antler/plugin-memory` loaded from config, against the same
// client without them, interleaved in one run with the order rotating each round. Issue 14's target: ≤ 1.05× of
// the default pipeline. skills.bench.mjs measures the same middlewares on a bare pipeline with no checkpointer,
// where their share looks larger. Run after a build: node packages/plugins/skills/bench/skills-client.bench.mjs
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import memoryPlugin, { MEMORY } from "@antler/plugin-memory";
import { AntlerClient } from "@antler/plugin-runtime";
import { ToolMessage } from "@langchain/core/messages";
import { z } from "zod";
import skillsPlugin from "../dist/index.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BATCH = 10;
const TARGET = 1.05;
const USER = "bench";

const script = (messages) =>
  ToolMessage.isInstance(messages.at(-1))
    ? { text: "The answer is 3.", usage: { input_tokens: 20, output_tokens: 5 } }
    : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 10, output_tokens: 3 } };
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
  // 40 public skills and 10 custom ones for the benchmark user, half of them with allowed-tools.
  const write = (dir, name, i) => {
    mkdirSync(join(dir, name), { recursive: true });
    const policy = i % 2 === 0 ? "allowed-tools: [add, read_file]\n" : "";
    writeFileSync(
      join(dir, name, "SKILL.md"),
      `---\nname: ${name}\ndescription: Skill number ${i} for the benchmark, with a description of typical length that says when to use it.\n${policy}---\n\n# ${name}\n\n${"Step. ".repeat(200)}\n`,
    );
  };
  for (let i = 0; i < 40; i++) write(join(cwd, "skills", "public"), `public-skill-${i}`, i);
  for (let i = 0; i < 10; i++) write(join(cwd, ".antler", "users", USER, "skills", "custom"), `custom-skill-${i}`, i);
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
const topics = ["typescript", "kubernetes", "sourdough", "marathons", "lisbon", "invoices", "guitar", "roadmap"];
const store = await full.kernel.scope.resolve(MEMORY).store();
await store.insertFacts(
  { userId: USER, agentName: "" },
  Array.from({ length: 1000 }, (_, i) => ({
    content: `Works on ${topics[i % 8]} and ${topics[(i * 3) % 8]} item ${i}`,
    category: "context",
    confidence: 0.8,
    source: "bench",
  })),
);
// The control is a second client without skills and memory: its ratio is this machine's noise floor in this run.
const cases = [
  { name: "default pipeline (AntlerClient, SQLite)", client: baseline },
  { name: "control: default pipeline, second client", client: control },
  { name: "+ skills (50) + memory (1,000 facts)", client: full },
];

let n = 0;
async function msPerTurn(c, turns) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < turns; i++) {
    const reply = await c.chat("What is 1 + 2 in typescript?", { threadId: `pool-${n++ % 25}`, userId: USER });
    if (reply !== "The answer is 3.") throw new Error(`unexpected reply: ${reply}`);
  }
  const cpu = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) / turns, cpu: (cpu.user + cpu.system) / 1000 / turns };
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const c of cases) await msPerTurn(c.client, 20);
const samples = cases.map(() => []);
for (let r = 0; r < Math.ceil((TURNS * ROUNDS) / BATCH); r++)
  for (let k = 0; k < cases.length; k++) {
    const i = (r + k) % cases.length;
    samples[i].push(await msPerTurn(cases[i].client, BATCH));
  }
const walls = samples.map((s) => median(s.map((x) => x.wall)));
const cpus = samples.map((s) => median(s.map((x) => x.cpu)));
console.log("\nSkills + memory per turn through AntlerClient (default storage), median of batches of", BATCH);
console.log("| case | ms per turn | ratio | CPU ms per turn | CPU ratio |\n|---|---|---|---|---|");
for (const [i, c] of cases.entries())
  console.log(
    `| ${c.name} | ${walls[i].toFixed(2)} | ${(walls[i] / walls[0]).toFixed(3)}× | ${cpus[i].toFixed(2)} | ${(cpus[i] / cpus[0]).toFixed(3)}× |`,
  );
const ratio = walls[2] / walls[0];
console.log(
  `target skills + memory ≤ ${TARGET}×: ${ratio <= TARGET ? "met" : "NOT met"} (${ratio.toFixed(3)}×; CPU time ${(cpus[2] / cpus[0]).toFixed(3)}×)`,
);
for (const c of cases) await c.client.close();
for (const d of dirs) rmSync(d, { recursive: true, force: true });
