// Run start against history: server time of one plain-text turn (AntlerClient.chat on SQLite with delta
// checkpoints, a scripted model answering at once) in threads seeded to 10, 1,000 and 5,000 messages, interleaved
// so the machine's noise hits them alike. Ratios against the 10-message thread; the targets are ≤ 1.2× at
// 1,000 and ≤ 1.5× at 5,000. Summarization is off here (the model has no context window), so every message of the
// thread is sent to the model: what grows with history is the model call's own input, as it must.
// Run after a build: `node bench/run-start.bench.mjs` (BENCH_TURNS, default 12 per size).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { AntlerClient, checkpointThreadId } from "../dist/index.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 12);
const SIZES = (process.env.BENCH_SIZES ?? "10,1000,5000").split(",").map(Number);
const dir = mkdtempSync(join(tmpdir(), "antler-bench-run-start-"));

const client = await AntlerClient.create({
  config: { base_dir: dir, models: [{ name: "m", provider: "scripted" }], storage: { backend: "sqlite" }, logging: { level: "error" } },
  plugins: [scriptedModelsPlugin({ m: () => ({ text: "Fine." }) })],
  cwd: dir,
  env: {},
  discover: false,
});

async function seed(threadId, count) {
  await client.createThread({ threadId });
  const messages = Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? new HumanMessage({ id: `h${i}`, content: `Seeded question ${i}: what about item ${i}, in a sentence or two?` })
      : new AIMessage({ id: `a${i}`, content: `Seeded answer ${i}: item ${i} is fine, and here is a line about why.` }),
  );
  const checkpointer = await client.kernel.openCheckpointer();
  await checkpointer.saver.put(
    { configurable: { thread_id: checkpointThreadId("default", threadId), checkpoint_ns: "" } },
    { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages }, channel_versions: { messages: 1 } },
    { source: "update", step: 0, parents: {} },
    { messages: 1 },
  );
  await checkpointer.close();
}

try {
  for (const size of SIZES) await seed(`t${size}`, size);
  // One warm-up turn each: the first read of a thread in a process decodes its messages once.
  for (const size of SIZES) await client.chat("warm up", { threadId: `t${size}` });
  const times = Object.fromEntries(SIZES.map((s) => [s, []]));
  for (let turn = 0; turn < TURNS; turn++) {
    for (const size of SIZES) {
      const start = performance.now();
      await client.chat(`turn ${turn}`, { threadId: `t${size}` });
      times[size].push(performance.now() - start);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(times[SIZES[0]]);
  for (const size of SIZES) {
    const m = median(times[size]);
    console.log(`turn at ${String(size).padStart(5)} messages: ${m.toFixed(1).padStart(7)} ms median  ${(m / base).toFixed(2)}×`);
  }
} finally {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
}
