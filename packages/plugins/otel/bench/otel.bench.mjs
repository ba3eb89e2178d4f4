// OpenTelemetry overhead: the same scripted turn (two model calls, one tool call) through AntlerClient with and
// without @antler/plugin-otel, interleaved in one run so machine noise hits both alike. Spans go over OTLP/HTTP to
// a loopback receiver that reads and discards them. Run `pnpm bench` after a build; read the ratio.

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { ToolMessage } from "@langchain/core/messages";
import { z } from "zod";
import { otelPlugin } from "../dist/index.js";

// BENCH_SMOKE=1: a few turns per case, to check it still runs (the figures mean nothing).
const SMOKE = process.env.BENCH_SMOKE === "1";
const TURNS = Number(process.env.BENCH_TURNS ?? (SMOKE ? 4 : 60));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 5));
const BATCH = SMOKE ? 2 : 10;
const WARMUP_TURNS = SMOKE ? 2 : 20;
const TARGET = 1.05;

let exported = 0;
const receiver = createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    exported += 1;
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const endpoint = `http://127.0.0.1:${receiver.address().port}/v1/traces`;

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
async function client(extra) {
  const cwd = mkdtempSync(join(tmpdir(), "antler-otel-bench-"));
  dirs.push(cwd);
  return AntlerClient.create({
    config: {
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "memory" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [scriptedModelsPlugin({ m: script }), tools, ...extra],
    cwd,
    env: {},
    discover: false,
  });
}

// The control is a second client without the plugin: its ratio is the noise floor of this machine and run.
const cases = [
  { name: "without otel", client: await client([]) },
  { name: "control: without otel, second client", client: await client([]) },
  {
    name: "with otel (every span exported)",
    client: await client([
      { plugin: otelPlugin(), config: { endpoint, export_delay_ms: 200, ...JSON.parse(process.env.BENCH_OTEL ?? "{}") } },
    ]),
  },
];

const POOL = 20;
let counter = 0;
async function msPerTurn(c, turns) {
  const t0 = performance.now();
  for (let i = 0; i < turns; i++) await c.chat("What is 1 + 2?", { threadId: `pool-${counter++ % POOL}` });
  return (performance.now() - t0) / turns;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const c of cases) await msPerTurn(c.client, WARMUP_TURNS); // warm-up: agents built, JIT warm
const samples = cases.map(() => []);
// The order rotates every round, so no case always runs first (or right after another's garbage).
for (let r = 0; r < Math.ceil((TURNS * ROUNDS) / BATCH); r++) {
  for (let k = 0; k < cases.length; k++) {
    const i = (r + k) % cases.length;
    samples[i].push(await msPerTurn(cases[i].client, BATCH));
  }
}
const rows = cases.map((c, i) => ({ name: c.name, ms: median(samples[i]) }));

console.log("\nOpenTelemetry overhead, 2 model calls + 1 tool call per turn through AntlerClient (median ms/turn)");
console.log("| case | ms/turn | vs without |");
console.log("|---|---:|---:|");
for (const r of rows) console.log(`| ${r.name} | ${r.ms.toFixed(3)} | ${(r.ms / rows[0].ms).toFixed(3)}× |`);
const ratio = rows[2].ms / rows[0].ms;
for (const c of cases) await c.client.close();
console.log(`spans exported in ${exported} OTLP requests`);
console.log(`target ≤ ${TARGET}×: ${ratio <= TARGET ? "met" : "NOT met"} (${ratio.toFixed(3)}×)`);
await new Promise((resolve) => receiver.close(resolve));
for (const d of dirs) rmSync(d, { recursive: true, force: true });
