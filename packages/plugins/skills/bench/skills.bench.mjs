// Per-turn overhead of the skills middleware with 50 installed skills (public and custom), and of skills plus memory
// (middleware mode: relevant facts injected each turn, extraction queued after it), against the default pipeline
// measured in the same run (interleaved in small batches, the order rotating each round). Target (issue 14):
// skills + memory ≤ 1.05×. Run after a build:
//   node packages/plugins/skills/bench/skills.bench.mjs
// Machines here are noisy: read the ratio, not the absolute milliseconds.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createTestKernel, ScriptedChatModel, scriptedModelsPlugin } from "@antler/kernel/testing";
import { MemoryService, memoryMiddleware, memorySectionSchema } from "@antler/plugin-memory";
import { createAntlerAgent } from "@antler/plugin-runtime";
import sqlitePlugin from "@antler/plugin-storage-sqlite";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { SkillCatalog, skillsSectionSchema } from "../dist/index.js";
import { skillsMiddleware } from "../dist/middleware.js";
import { benchFacts, printRatios, sampleRotating, script, writeBenchSkills } from "./fixtures.mjs";

// BENCH_SMOKE=1: a few turns per case, to check it still runs (the figures mean nothing).
const SMOKE = process.env.BENCH_SMOKE === "1";
const TURNS = Number(process.env.BENCH_TURNS ?? (SMOKE ? 10 : 150));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 5));
const WARMUP_TURNS = SMOKE ? 2 : 30;
const root = mkdtempSync(join(tmpdir(), "antler-skills-bench-"));
const baseDir = join(root, "data");
const publicDir = join(root, "skills", "public");

writeBenchSkills(publicDir, join(baseDir, "users", "bench", "skills", "custom"));
const catalog = new SkillCatalog({ publicDir, baseDir });
// As the plugin builds it from a default `skills:` section.
const recheckMs = skillsSectionSchema.parse({}).recheck_ms;
if (catalog.view("bench").enabled.length !== 50) throw new Error("expected 50 skills");

const add = tool(({ a, b }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

// Memory on SQLite with 1,000 facts for the benchmark user. The extraction model answers "no facts"; the debounce is
// longer than the benchmark, so extractions stay queued (off the turn's path, as in production) until close.
// BENCH_NO_INJECT=1 turns injection off, to tell the lookup's share from the extraction queue's.
const kernel = await createTestKernel({
  plugins: [sqlitePlugin, scriptedModelsPlugin({ extractor: { respond: () => ({ text: '{"facts":[]}' }) } })],
  config: { base_dir: baseDir, storage: { backend: "sqlite" }, models: [{ name: "extractor", provider: "scripted" }] },
  cwd: root,
});
const memory = new MemoryService({
  kernel,
  config: memorySectionSchema.parse({ debounce_ms: 3_600_000, injection_enabled: process.env.BENCH_NO_INJECT !== "1" }),
  logger: kernel.logger,
});
const store = await memory.store();
await store.insertFacts({ userId: "bench", agentName: "" }, benchFacts());

// The scripted model records every call it gets; a provider keeps nothing, so each batch drops the records (kept,
// they would grow the heap through the run and tax whichever case is running when a collection comes).
const models = [];
const agent = (extraMiddleware = []) => {
  const model = new ScriptedChatModel(script);
  models.push(model);
  return createAntlerAgent({ model, tools: [add], baseDir, extraMiddleware }).agent;
};
const cases = [
  { name: "default pipeline", agent: agent() },
  {
    name: "default pipeline + skills (50 installed)",
    agent: agent([{ spec: skillsMiddleware({ catalog, deferred: false, recheckMs }), plugin: "@antler/plugin-skills" }]),
  },
  {
    name: "default pipeline + skills (50) + memory (1,000 facts)",
    agent: agent([
      { spec: skillsMiddleware({ catalog, deferred: false, recheckMs }), plugin: "@antler/plugin-skills" },
      { spec: memoryMiddleware(memory, kernel.logger), plugin: "@antler/plugin-memory" },
    ]),
  },
];

let n = 0;
async function msPerTurn(a, turns) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < turns; i++) {
    const thread = `pool-${n++ % 25}`;
    await a.invoke(
      { messages: [new HumanMessage("What is 1 + 2 in typescript?")] },
      { configurable: { thread_id: thread }, context: { thread_id: thread, user_id: "bench" } },
    );
  }
  const wall = (performance.now() - t0) / turns;
  const cpu = process.cpuUsage(c0);
  for (const model of models) model.calls.length = 0;
  return { wall, cpu: (cpu.user + cpu.system) / 1000 / turns };
}
for (const c of cases) await msPerTurn(c.agent, WARMUP_TURNS);
const results = await sampleRotating(cases, Math.ceil((TURNS * ROUNDS) / 10), (c) => msPerTurn(c.agent, 10));
printRatios(cases, results, { target: 1.05, measured: 2 });
await memory.close();
await kernel.close();
rmSync(root, { recursive: true, force: true });
