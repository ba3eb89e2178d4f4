// Per-turn overhead of the skills middleware with 50 installed skills (public and custom), against the default
// pipeline measured in the same run (interleaved in small batches). Run after a build:
//   node packages/plugins/skills/bench/skills.bench.mjs
// Machines here are noisy: read the ratio, not the absolute milliseconds.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ScriptedChatModel } from "@antler/kernel/testing";
import { createAntlerAgent } from "@antler/plugin-runtime";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { SkillCatalog } from "../dist/index.js";
import { skillsMiddleware } from "../dist/middleware.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 150);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const root = mkdtempSync(join(tmpdir(), "antler-skills-bench-"));
const baseDir = join(root, "data");
const publicDir = join(root, "skills", "public");

// 40 public skills and 10 custom ones for the benchmark user, half of them with allowed-tools.
const write = (dir, name, i) => {
  mkdirSync(join(dir, name), { recursive: true });
  const policy = i % 2 === 0 ? "allowed-tools: [add, read_file]\n" : "";
  writeFileSync(
    join(dir, name, "SKILL.md"),
    `---\nname: ${name}\ndescription: Skill number ${i} for the benchmark, with a description of typical length that says when to use it.\n${policy}---\n\n# ${name}\n\n${"Step. ".repeat(200)}\n`,
  );
};
for (let i = 0; i < 40; i++) write(publicDir, `public-skill-${i}`, i);
for (let i = 0; i < 10; i++) write(join(baseDir, "users", "bench", "skills", "custom"), `custom-skill-${i}`, i);
const catalog = new SkillCatalog({ publicDir, baseDir });
if (catalog.view("bench").enabled.length !== 50) throw new Error("expected 50 skills");

const script = (messages) =>
  ToolMessage.isInstance(messages.at(-1))
    ? { text: "The answer is 3.", usage: { input_tokens: 20, output_tokens: 5 } }
    : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 10, output_tokens: 3 } };
const add = tool(({ a, b }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

const agent = (extraMiddleware = []) =>
  createAntlerAgent({ model: new ScriptedChatModel(script), tools: [add], baseDir, extraMiddleware }).agent;
const cases = [
  { name: "default pipeline", agent: agent() },
  {
    name: "default pipeline + skills (50 installed)",
    agent: agent([{ spec: skillsMiddleware({ catalog, deferred: false }), plugin: "@antler/plugin-skills" }]),
  },
];

let n = 0;
async function msPerTurn(a, turns) {
  const t0 = performance.now();
  for (let i = 0; i < turns; i++) {
    const thread = `pool-${n++ % 25}`;
    await a.invoke(
      { messages: [new HumanMessage("What is 1 + 2?")] },
      { configurable: { thread_id: thread }, context: { thread_id: thread, user_id: "bench" } },
    );
  }
  return (performance.now() - t0) / turns;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const c of cases) await msPerTurn(c.agent, 30);
const samples = cases.map(() => []);
for (let r = 0; r < Math.ceil((TURNS * ROUNDS) / 10); r++)
  for (const [i, c] of cases.entries()) samples[i].push(await msPerTurn(c.agent, 10));
const [base, skills] = samples.map(median);
console.log("| case | ms per turn (median) | ratio |\n|---|---|---|");
console.log(`| ${cases[0].name} | ${base.toFixed(2)} | 1.00× |`);
console.log(`| ${cases[1].name} | ${skills.toFixed(2)} | ${(skills / base).toFixed(3)}× |`);
rmSync(root, { recursive: true, force: true });
