// The graph LangGraph's own server serves: `createAgent` from `langchain` (the version Antler's runtime builds
// on) with the same `add` tool and LangChain's ChatOpenAI pointed at the benchmark's loopback model. langchain
// and @langchain/openai are not dependencies of this package; they are loaded, built, from the sibling packages
// that depend on them (runtime, openai), which share this package's @langchain/core.
import { realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";

const plugins = join(dirname(fileURLToPath(import.meta.url)), "../..");
const entry = (pkgDir, file) => pathToFileURL(join(realpathSync(join(plugins, pkgDir)), file)).href;
const { createAgent, tool } = await import(entry("runtime/node_modules/langchain", "dist/index.js"));
const { ChatOpenAI } = await import(entry("openai/node_modules/@langchain/openai", "dist/index.js"));

const add = tool(({ a, b }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

export const agent = createAgent({
  model: new ChatOpenAI({
    model: "scripted-model",
    apiKey: "not-used-by-the-loopback-model",
    configuration: { baseURL: process.env.BENCH_MODEL_URL },
    streamUsage: true,
  }),
  tools: [add],
});
