// Antler's gateway in a process of its own, as `antler serve` runs it embedded: SQLite storage (the default
// embedded setup: Antler's tables and checkpoints in a SQLite file under base_dir, run events in the sql log),
// the OpenAI provider pointed at the benchmark's loopback model (BENCH_MODEL_URL), an `add` tool, and the
// protocols plugin with every protocol on. No auth (loopback, one user). Started by server-process.mjs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { z } from "zod";
// The OpenAI provider plugin, built, from its sibling package (not a dependency of this package, to keep the
// lockfile as it is; it is the same @langchain/openai the LangGraph server's graph uses).
import openai from "../../openai/dist/index.js";
import protocols from "../dist/index.js";
import { serveStats } from "./server-process.mjs";

const tools = definePlugin({
  name: "bench-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "add",
        description: "Adds two numbers.",
        schema: z.object({ a: z.number(), b: z.number() }),
        run: ({ a, b }) => String(a + b),
      }),
    );
  },
});

const baseDir = mkdtempSync(join(tmpdir(), "antler-protocols-bench-"));
const client = await AntlerClient.create({
  config: {
    base_dir: baseDir,
    models: [{ name: "m", provider: "openai", model: "scripted-model", base_url: process.env.BENCH_MODEL_URL }],
    storage: { backend: "sqlite" },
    title: { enabled: false },
    logging: { level: "warn" },
  },
  plugins: [openai, tools, protocols],
  cwd: baseDir,
  env: {},
  discover: false,
});
const gateway = await startGateway({
  client,
  config: { port: 0, auth: { mode: "none" }, sse_keepalive_seconds: 60 },
});
serveStats(gateway.url, async () => {
  await gateway.close();
  await client.close();
  rmSync(baseDir, { recursive: true, force: true });
});
