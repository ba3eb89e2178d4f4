// Per-turn cost of the Guardrail middleware (one tool call and two model calls per turn), against the default
// pipeline measured in the same run (interleaved in small batches): RBAC + allowlist (in process), and RBAC + the
// HTTP provider asking a policy service on loopback (one POST per tool call). Run after a build:
//   node packages/plugins/guardrails/bench/guardrail.bench.mjs
// Machines here are noisy: read the ratio, not the absolute milliseconds.

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { silentLogger } from "@antler/kernel";
import { ScriptedChatModel } from "@antler/kernel/testing";
import { createAntlerAgent } from "@antler/plugin-runtime";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import {
  allowlistConfigSchema,
  allowlistProviderFactory,
  authorizationSectionSchema,
  guardrailMiddleware,
  httpProviderConfigSchema,
  httpProviderFactory,
  RolePolicy,
  rbacProvider,
} from "../dist/index.js";

// BENCH_SMOKE=1: a handful of turns per case, to check it still runs (the figures mean nothing).
const SMOKE = process.env.BENCH_SMOKE === "1";
const TURNS = Number(process.env.BENCH_TURNS ?? (SMOKE ? 10 : 150));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 5));
const WARMUP_TURNS = SMOKE ? 2 : 30;
const root = mkdtempSync(join(tmpdir(), "antler-guardrail-bench-"));

const policyServer = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"allow":true,"reasons":[]}');
  });
});
await new Promise((resolve) => policyServer.listen(0, "127.0.0.1", resolve));
const policyUrl = `http://127.0.0.1:${policyServer.address().port}/decide`;

const script = (messages) =>
  ToolMessage.isInstance(messages.at(-1))
    ? { text: "The answer is 3.", usage: { input_tokens: 20, output_tokens: 5 } }
    : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 10, output_tokens: 3 } };
const add = tool(({ a, b }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

const logger = silentLogger();
const context = { logger, where: "bench" };
const policy = new RolePolicy(
  authorizationSectionSchema.parse({ enabled: true, default_role: "user", roles: { user: { tool_groups: ["math"], models: ["*"] } } }),
);
const rbac = { provider: rbacProvider(policy, (name) => (name === "add" ? "math" : undefined)), failClosed: true };
const allowlist = {
  provider: allowlistProviderFactory.create(allowlistConfigSchema.parse({ denied_tools: ["bash"] }), context),
  failClosed: true,
};
const http = { provider: httpProviderFactory.create(httpProviderConfigSchema.parse({ url: policyUrl }), context), failClosed: true };
const guard = (providers) => [
  { spec: guardrailMiddleware({ providers, subagent: false, defaultRole: "user", logger }), placement: { after: "DanglingToolCall" } },
];

const agent = (extraMiddleware = []) =>
  createAntlerAgent({ model: new ScriptedChatModel(script), tools: [add], baseDir: root, extraMiddleware }).agent;
const cases = [
  { name: "default pipeline", agent: agent() },
  { name: "+ Guardrail (RBAC + allowlist)", agent: agent(guard([rbac, allowlist])) },
  { name: "+ Guardrail (RBAC + HTTP policy service on loopback)", agent: agent(guard([rbac, http])) },
];

let n = 0;
async function msPerTurn(a, turns) {
  const t0 = performance.now();
  for (let i = 0; i < turns; i++) {
    const thread = `pool-${n++ % 25}`;
    await a.invoke(
      { messages: [new HumanMessage("What is 1 + 2?")] },
      { configurable: { thread_id: thread }, context: { thread_id: thread, user_id: "bench", user_role: "user" } },
    );
  }
  return (performance.now() - t0) / turns;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const c of cases) await msPerTurn(c.agent, WARMUP_TURNS);
const samples = cases.map(() => []);
for (let r = 0; r < Math.ceil((TURNS * ROUNDS) / 10); r++)
  for (const [i, c] of cases.entries()) samples[i].push(await msPerTurn(c.agent, 10));
const medians = samples.map(median);
console.log("| case | ms per turn (median) | ratio |\n|---|---|---|");
for (const [i, c] of cases.entries()) console.log(`| ${c.name} | ${medians[i].toFixed(2)} | ${(medians[i] / medians[0]).toFixed(3)}× |`);
policyServer.closeAllConnections();
policyServer.close();
rmSync(root, { recursive: true, force: true });
