// Memory per completed run (issue 25): how much a gateway with `storage.backend: memory` keeps for each run it
// has finished. A server process (this file with `--role=gateway`) runs the real gateway on loopback with a
// scripted model; this process drives BENCH_RUNS completed runs through HTTP (most on a fresh thread, every
// fifth on a shared thread that takes 5 runs; half streamed with POST /runs/stream, read to the end, half with
// POST /runs/wait), then asks the server to collect garbage (`--expose-gc`) and report its heap and RSS. The
// growth between a warmed-up start and the end, divided by the runs, is the figure; the target is ≤ 70 KiB of
// RSS per completed run.
//
// Baseline, measured in the same run: bare LangGraph (`createAgent` + `MemorySaver`, the same scripted model
// and tool) doing the same runs in a process of its own (`--role=bare`), without HTTP, run records or an event
// log. Each kind runs BENCH_ROUNDS times (interleaved, each in a new process); medians are printed.
//
// Run after a build: `node bench/memory-per-run.bench.mjs` (BENCH_RUNS, BENCH_ROUNDS, BENCH_SHARED_THREADS, BENCH_SHARED_RUNS; BENCH_SMOKE=1 runs a few).
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const SMOKE = process.env.BENCH_SMOKE === "1";
const RUNS = Number(process.env.BENCH_RUNS ?? (SMOKE ? 20 : 1000));
// Enough to fill the fixed-size caches (the delta checkpointer keeps 256 threads) and to finish compiling hot code.
const WARMUP = Number(process.env.BENCH_WARMUP ?? (SMOKE ? 5 : 400));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 3));
const SHARED_THREADS = Number(process.env.BENCH_SHARED_THREADS ?? 10);
// Runs each shared thread takes before it is replaced (BENCH_SHARED_RUNS; longer threads cost more per run).
const SHARED_RUNS = Number(process.env.BENCH_SHARED_RUNS ?? 5);
const TARGET_KIB = 70;
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 20 * 60_000);

const role = process.argv.find((a) => a.startsWith("--role="))?.slice("--role=".length);

// The same plan in both processes: the i-th run goes to a fresh thread, or (every fifth) to one of 10 shared
// threads that each take SHARED_RUNS runs and are then replaced, so every thread stays short (long threads are
// long-thread.bench's); even runs are streamed, odd ones waited for.
const planned = (i) => {
  const streamed = i % 2 === 0;
  if (i % 5 !== 4) return { thread: null, streamed };
  const j = Math.floor(i / 5);
  return { thread: `shared-${Math.floor(j / (SHARED_THREADS * SHARED_RUNS))}-${j % SHARED_THREADS}`, streamed };
};

async function settle() {
  for (let i = 0; i < 4; i++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 25));
  }
}
function memory() {
  const m = process.memoryUsage();
  // Checkpoints are serialized into ArrayBuffers, which heapUsed does not count.
  return { heap: m.heapUsed + m.arrayBuffers, rss: m.rss };
}

// One tool call, then a final answer: two model calls and one tool call per run.
function script(isTool) {
  return (messages) =>
    isTool(messages.at(-1))
      ? { text: "The sum is three, computed by the add tool; that is the final answer.", usage: { input_tokens: 20, output_tokens: 14 } }
      : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 10, output_tokens: 3 } };
}

if (role === "gateway") await serveGateway();
else if (role === "bare") await runBare();
else await main();

// ---------------------------------------------------------------- the gateway under test (child process)

async function serveGateway() {
  const { definePlugin } = await import("@antler/kernel");
  const { defineTool } = await import("@antler/kernel/authoring");
  const { scriptedModelsPlugin } = await import("@antler/kernel/testing");
  const { AntlerClient } = await import("@antler/plugin-runtime");
  const { z } = await import("zod");
  const { startGateway } = await import("../dist/index.js");
  const tools = definePlugin({
    name: "bench-tools",
    version: "1.0.0",
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
  const scripted = scriptedModelsPlugin({ m: script((m) => m?.getType() === "tool") });
  const baseDir = mkdtempSync(join(tmpdir(), "antler-memrun-bench-"));
  const client = await AntlerClient.create({
    config: {
      base_dir: baseDir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "memory" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [scripted, tools],
    cwd: baseDir,
    env: {},
    discover: false,
  });
  // The scripted model records every call it gets (for tests); a real model keeps nothing, so neither may it.
  const forgetCalls = () => {
    const model = scripted.models.get("m");
    if (model) model.calls.length = 0;
  };
  client.observeRuns({ runStarted() {}, runEvent() {}, runEnded: forgetCalls });
  // Where the bytes are: the in-memory SQLite databases the client and the log open (Antler's tables, the run
  // event log, checkpoints), as pages in use. The handles are noted as they are opened.
  const { sql } = await import("kysely");
  const databases = [];
  const checkpointers = [];
  const openDatabase = client.kernel.openDatabase.bind(client.kernel);
  client.kernel.openDatabase = async (options) => {
    const database = await openDatabase(options);
    databases.push({ database, tables: (options?.migrations ?? []).map((m) => m.name.split("/")[0]).join("+") || "?" });
    return database;
  };
  const openCheckpointer = client.kernel.openCheckpointer.bind(client.kernel);
  client.kernel.openCheckpointer = async (options) => {
    const checkpointer = await openCheckpointer(options);
    checkpointers.push(checkpointer);
    return checkpointer;
  };
  const pageBytes = async () => {
    const out = {};
    for (const { database, tables } of databases) {
      const count = (await sql`pragma page_count`.execute(database.db)).rows[0]?.page_count ?? 0;
      const size = (await sql`pragma page_size`.execute(database.db)).rows[0]?.page_size ?? 0;
      const name = tables.includes("run-events") ? "run event log" : "Antler tables (runs, threads)";
      out[name] = (out[name] ?? 0) + count * size;
    }
    for (const checkpointer of checkpointers) {
      // The SQLite saver's handle, when the checkpointer is one (delta mode wraps it).
      const db = checkpointer.saver.inner?.db ?? checkpointer.saver.db;
      if (typeof db?.pragma === "function") {
        out.checkpoints = (out.checkpoints ?? 0) + db.pragma("page_count", { simple: true }) * db.pragma("page_size", { simple: true });
      }
    }
    return out;
  };
  const gateway = await startGateway({ client, config: { port: 0, auth: { mode: "none" } } });
  process.on("message", async (message) => {
    if (message === "measure") {
      await settle();
      process.send({ memory: memory(), pages: await pageBytes() });
    } else if (message === "close") {
      await gateway.close();
      await client.close();
      rmSync(baseDir, { recursive: true, force: true });
      process.send({ closed: true });
      process.disconnect();
    }
  });
  process.send({ url: gateway.url });
}

// ---------------------------------------------------------------- the baseline (child process)

async function runBare() {
  // The gateway package does not depend on LangChain itself; the runtime plugin does.
  const runtimeRequire = createRequire(createRequire(import.meta.url).resolve("@antler/plugin-runtime"));
  const { createAgent } = await import(runtimeRequire.resolve("langchain"));
  const { MemorySaver } = await import(runtimeRequire.resolve("@langchain/langgraph"));
  const { HumanMessage, ToolMessage } = await import(runtimeRequire.resolve("@langchain/core/messages"));
  const { tool } = await import(runtimeRequire.resolve("@langchain/core/tools"));
  const { ScriptedChatModel } = await import("@antler/kernel/testing");
  const { z } = await import("zod");
  const add = tool(({ a, b }) => String(a + b), { name: "add", description: "Adds.", schema: z.object({ a: z.number(), b: z.number() }) });
  const saver = new MemorySaver();
  const model = new ScriptedChatModel(script((m) => ToolMessage.isInstance(m)));
  const agent = createAgent({ model, tools: [add], checkpointer: saver });
  const run = async (i) => {
    const plan = planned(i);
    const thread = plan.thread ?? `fresh-${i}`;
    const input = { messages: [new HumanMessage("What is 1 + 2?")] };
    const config = { configurable: { thread_id: thread } };
    if (plan.streamed) for await (const _ of await agent.stream(input, { ...config, streamMode: ["values", "messages", "updates"] }));
    else await agent.invoke(input, config);
    model.calls.length = 0;
  };
  for (let i = 0; i < WARMUP; i++) await run(i);
  await settle();
  const before = memory();
  for (let i = 0; i < RUNS; i++) await run(WARMUP + i);
  await settle();
  const after = memory();
  // Used after the measurement on purpose: V8 may collect a value no later code reads, checkpoints and all.
  if (Object.keys(saver.storage).length === 0) throw new Error("the baseline kept no checkpoints");
  process.send({ before, after });
}

// ---------------------------------------------------------------- the driver (this process)

function child(roleName) {
  const proc = fork(fileURLToPath(import.meta.url), [`--role=${roleName}`], {
    execArgv: ["--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const inbox = [];
  const waiting = [];
  proc.on("message", (m) => (waiting.length > 0 ? waiting.shift().resolve(m) : inbox.push(m)));
  proc.on("exit", (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the ${roleName} process exited (code ${code}) before it answered`));
  });
  const next = () =>
    inbox.length > 0 ? Promise.resolve(inbox.shift()) : new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  const ask = (message) => {
    proc.send(message);
    return next();
  };
  return { proc, next, ask };
}

async function postJson(url, body) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return res;
}

async function gatewayRound() {
  const server = child("gateway");
  const { url } = await server.next();
  const shared = new Map();
  const newThread = async () => (await (await postJson(`${url}/api/threads`, {})).json()).thread_id;
  const run = async (i) => {
    const plan = planned(i);
    let thread = plan.thread === null ? await newThread() : shared.get(plan.thread);
    if (thread === undefined) {
      thread = await newThread();
      shared.set(plan.thread, thread);
    }
    const body = { input: { messages: [{ role: "user", content: "What is 1 + 2?" }] } };
    const res = await postJson(`${url}/api/threads/${thread}/runs/${plan.streamed ? "stream" : "wait"}`, body);
    const text = await res.text();
    if (plan.streamed && !/\nevent: end\n/.test(`\n${text}`)) throw new Error(`run ${i} did not end: ${text.slice(-300)}`);
  };
  for (let i = 0; i < WARMUP; i++) await run(i);
  const { memory: before, pages: pagesBefore } = await server.ask("measure");
  const started = performance.now();
  for (let i = 0; i < RUNS; i++) await run(WARMUP + i);
  const seconds = (performance.now() - started) / 1000;
  const { memory: after, pages: pagesAfter } = await server.ask("measure");
  await server.ask("close");
  const pages = Object.fromEntries(Object.entries(pagesAfter).map(([k, v]) => [k, (v - (pagesBefore[k] ?? 0)) / RUNS / 1024]));
  return { before, after, seconds, pages };
}

function bareRound() {
  return child("bare").next();
}

async function main() {
  const watchdog = setTimeout(() => {
    console.error(`memory-per-run.bench: no result after ${TIMEOUT_MS / 1000} s (BENCH_TIMEOUT_MS); giving up.`);
    process.exit(1);
  }, TIMEOUT_MS);
  watchdog.unref();
  const per = ({ before, after, pages }) => ({
    heap: (after.heap - before.heap) / RUNS / 1024,
    rss: (after.rss - before.rss) / RUNS / 1024,
    pages,
  });
  const rows = { gateway: [], bare: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ["bare", "gateway"] : ["gateway", "bare"];
    for (const kind of order) rows[kind].push(per(kind === "gateway" ? await gatewayRound() : await bareRound()));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const f = (n) => n.toFixed(1);
  const summary = Object.fromEntries(
    Object.entries(rows).map(([kind, list]) => [kind, { heap: median(list.map((x) => x.heap)), rss: median(list.map((x) => x.rss)) }]),
  );
  console.log(
    `\nMemory per completed run: ${RUNS} runs after ${WARMUP} warm-up runs (4 in 5 on a fresh thread, 1 in 5 on ${SHARED_THREADS} shared threads of ${SHARED_RUNS} runs; one tool call each), GC forced, median of ${ROUNDS} processes, Node ${process.version}`,
  );
  console.log("| server | heap + array buffers per run (KiB) | RSS per run (KiB) | rounds (RSS KiB) |");
  console.log("|---|---|---|---|");
  console.log(
    `| bare LangGraph createAgent + MemorySaver, in process | ${f(summary.bare.heap)} | ${f(summary.bare.rss)} | ${rows.bare.map((x) => f(x.rss)).join(", ")} |`,
  );
  console.log(
    `| Antler gateway, storage.backend memory, over HTTP | ${f(summary.gateway.heap)} | ${f(summary.gateway.rss)} | ${rows.gateway.map((x) => f(x.rss)).join(", ")} |`,
  );
  const parts = Object.keys(rows.gateway[0]?.pages ?? {});
  console.log(
    `gateway, in-memory SQLite pages added per run (KiB): ${parts.map((k) => `${k} ${f(median(rows.gateway.map((x) => x.pages[k] ?? 0)))}`).join(", ")}`,
  );
  const ratio = summary.gateway.rss / Math.max(1, summary.bare.rss);
  const pass = summary.gateway.rss <= TARGET_KIB;
  console.log(
    `gateway RSS per completed run: ${f(summary.gateway.rss)} KiB (${ratio.toFixed(2)}x the bare baseline); target <= ${TARGET_KIB} KiB: ${SMOKE ? "not judged (smoke run: too few runs)" : pass ? "PASS" : "FAIL"}`,
  );
}
