// Heap per idle thread, measured in a process of its own (several agents in one process skew each other's
// figures). Usage: node --expose-gc bench/heap-per-thread.mjs <bare|full> → prints JSON { kib_per_thread }.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScriptedChatModel } from "@antler/kernel/testing";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { createAntlerAgent } from "../dist/index.js";

const baseDir = mkdtempSync(join(tmpdir(), "antler-heap-"));
const script = (messages) =>
  ToolMessage.isInstance(messages.at(-1)) ? { text: "The answer is 3." } : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }] };
const add = tool(({ a, b }) => String(a + b), { name: "add", description: "Adds.", schema: z.object({ a: z.number(), b: z.number() }) });
const k = process.argv[2];
const saver = new MemorySaver();
const agent =
  k === "bare"
    ? createAgent({ model: new ScriptedChatModel(script), tools: [add], checkpointer: saver })
    : createAntlerAgent({ model: new ScriptedChatModel(script), tools: [add], baseDir, checkpointer: saver }).agent;
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
};
// Checkpoints are serialized into ArrayBuffers, which heapUsed does not count.
const mem = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
await agent.invoke({ messages: [new HumanMessage("w")] }, { configurable: { thread_id: "w" }, context: { thread_id: "w" } });
await settle();
const b = mem();
// BENCH_SMOKE=1 (inherited from pipeline.bench.mjs): 50 threads, to check it still runs.
const THREADS = process.env.BENCH_SMOKE === "1" ? 50 : 1000;
for (let i = 0; i < THREADS; i++) {
  const t = `i${i}`;
  await agent.invoke({ messages: [new HumanMessage("q")] }, { configurable: { thread_id: t }, context: { thread_id: t } });
}
await settle();
const after = mem();
// `saver` is used after the measurement on purpose: V8 may collect a value no later code uses, even a top-level
// one, and then the threads' checkpoints (most of an idle thread's memory) would not be counted at all.
const stored = Object.keys(saver.storage).length;
if (stored !== THREADS + 1) throw new Error(`expected ${THREADS + 1} threads in the checkpointer, found ${stored}`);
console.log(JSON.stringify({ kib_per_thread: (after - b) / THREADS / 1024, threads: THREADS }));
