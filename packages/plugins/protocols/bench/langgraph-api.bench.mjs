// Antler against LangGraph's own JavaScript server, @langchain/langgraph-api 1.5.1 (what `langgraphjs dev` runs),
// serving the same `createAgent` graph (agent-graph.mjs: langchain's createAgent, ChatOpenAI, an `add` tool) with
// the same loopback OpenAI-compatible model (in this process) and its default in-memory checkpointer. Each server
// runs in a child process of its own; the clients run in a third (load-client.mjs).
//
// Targets: Antler's native API (POST /api/threads, POST /api/threads/{id}/runs/stream; raw fetch, its own SSE
// shape), Antler's LangGraph-compatible route (<gateway>/langgraph) when the built plugin serves it, and
// langgraph-api, the last two through the LangGraph SDK's Client (`threads.create`, `runs.stream` with stream
// modes messages-tuple + values). Each run: a new thread, then a streaming run that calls `add` and answers.
//
// Per round, for each concurrency level (50, 200) and each target (forward in even rounds, reversed in odd ones,
// so a drift in the machine's load falls on every target alike): `concurrency` workers each do
// BENCH_RUNS_PER_WORKER (1) runs back to back. Figures: runs/s (runs / wall time), time to first
// token (the stream request to the first messages event, i.e. the model's first output), the run's time (the
// stream request to its end), the thread's creation before it, the client process's CPU per run (one process
// runs every client of a phase: when it saturates, it caps runs/s for every server alike), server CPU per run
// (the server process's own process.cpuUsage over the phase / runs, idle work included), stream bytes per run,
// and heap per open stream (HOLD streams held open at the model; server heap after GC minus before, per stream;
// once per target after the rounds). Medians of rounds for runs/s and CPU; time percentiles over every run of
// every round.
//
// Run after a build: `pnpm bench` (this package) or `node bench/langgraph-api.bench.mjs`. Env: BENCH_ROUNDS,
// BENCH_LEVELS (e.g. 50,200), BENCH_RUNS_PER_WORKER, BENCH_HOLD. BENCH_SMOKE=1: 5 concurrent runs, one round, no warm-up (seconds; the figures mean nothing).
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startBenchModel, whenWaiting } from "./bench-model.mjs";
import { median, pct, runLoadClient } from "./run-load-client.mjs";
import { startServerProcess } from "./server-process.mjs";

const SMOKE = process.env.BENCH_SMOKE === "1";
const LEVELS = (process.env.BENCH_LEVELS ?? (SMOKE ? "5" : "50,200")).split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 2));
const RUNS_PER_WORKER = Number(process.env.BENCH_RUNS_PER_WORKER ?? 1);
// Heap per open stream: this many runs held open at once (each measured run costs the server a run).
const HOLD = Number(process.env.BENCH_HOLD ?? (SMOKE ? LEVELS[0] : 100));
const OPEN_TIMEOUT_MS = Number(process.env.BENCH_OPEN_TIMEOUT_MS ?? 120_000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 10 * 60_000);

const watchdog = setTimeout(() => {
  console.error(`langgraph-api.bench: no result after ${TIMEOUT_MS / 1000} s (BENCH_TIMEOUT_MS); giving up.`);
  process.exit(1);
}, TIMEOUT_MS);
watchdog.unref();

const model = await startBenchModel();
const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const servers = [];
try {
  const antler = await startServerProcess(here("./antler-server.mjs"), { BENCH_MODEL_URL: model.url });
  servers.push(antler);
  // Workers = the highest concurrency, so that its run queue never caps a level (the dev CLI's default is 10).
  // LOG_LEVEL=error: no per-request log lines (Antler logs at warn; langgraph-api's one warn is a version check
  // that cannot read pnpm's layout).
  const lg = await startServerProcess(here("./langgraph-server.mjs"), {
    BENCH_MODEL_URL: model.url,
    BENCH_LG_WORKERS: String(Math.max(...LEVELS, HOLD)),
    LOG_LEVEL: "error",
  });
  servers.push(lg);

  const lgRoute = await fetch(`${antler.url}/langgraph/threads`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  await lgRoute.body?.cancel();
  const baseline = {
    name: "@langchain/langgraph-api 1.5.1 (SDK Client)",
    server: lg,
    job: { target: "sdk", url: lg.url, assistant: "agent" },
  };
  const targets = [
    { name: "Antler native API (/api, fetch SSE)", server: antler, job: { target: "native", url: antler.url } },
    ...(lgRoute.status !== 404
      ? [
          {
            name: "Antler LangGraph route (/langgraph, SDK Client)",
            server: antler,
            job: { target: "sdk", url: `${antler.url}/langgraph`, assistant: "agent" },
          },
        ]
      : []),
    baseline,
  ];
  for (const t of targets)
    Object.assign(t, {
      levels: Object.fromEntries(
        LEVELS.map((c) => [
          c,
          { rps: [], cpu: [], bytes: [], ttft: [], runMs: [], create: [], clientCpu: [], failed: 0, errors: [], resets: 0 },
        ]),
      ),
      heap: [],
    });

  let tags = 0;
  async function throughput(target, concurrency, runsPerWorker, record) {
    const before = await target.server.stats();
    const result = await runLoadClient({ mode: "throughput", ...target.job, concurrency, runsPerWorker, tag: `r${process.pid}-${++tags}` });
    const after = await target.server.stats();
    const cpuMs = (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / 1000;
    const done = result.runs.length;
    if (result.failed > 0) console.error(`  note: ${target.name}: ${result.failed} runs failed, e.g. ${result.errors[0]}`);
    if (record) {
      record.rps.push(done / result.seconds);
      record.cpu.push(cpuMs / Math.max(1, done));
      record.bytes.push(result.bytes / Math.max(1, done));
      record.ttft.push(...result.runs.map((r) => r.ttft));
      record.runMs.push(...result.runs.map((r) => r.ms));
      record.create.push(...result.runs.map((r) => r.create));
      record.clientCpu.push(result.clientCpuMs / Math.max(1, done));
      record.failed += result.failed;
      record.errors.push(...result.errors);
      record.resets += result.resets;
    }
  }

  async function heapPerOpenStream(target) {
    const before = await target.server.stats(true);
    model.hold();
    const result = runLoadClient({
      mode: "throughput",
      ...target.job,
      concurrency: HOLD,
      runsPerWorker: 1,
      tag: `h${process.pid}-${++tags}`,
    });
    const open = await whenWaiting(model, HOLD, OPEN_TIMEOUT_MS, result);
    const during = await target.server.stats(true);
    await model.release(0);
    await result;
    if (open < HOLD) console.error(`  note: ${target.name}: only ${open} of ${HOLD} streams were open at once`);
    return (during.heapUsed - before.heapUsed) / Math.max(1, open);
  }

  const started = performance.now();
  if (!SMOKE) for (const t of targets) await throughput(t, Math.min(10, LEVELS[0]), 1); // warm-up: JIT, graph, sockets
  for (let r = 0; r < ROUNDS; r++) {
    for (const level of LEVELS) {
      const order = r % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) await throughput(t, level, RUNS_PER_WORKER, t.levels[level]);
    }
  }
  // Heap once per target, after the rounds (after a GC it varies little; each measurement costs a round).
  for (const t of targets) t.heap.push(await heapPerOpenStream(t));

  const f = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");
  const x = (a, b) => `${f(a / b)}x`;
  console.log(
    `\nAntler vs @langchain/langgraph-api 1.5.1: the same createAgent graph shape (one add tool call, then a 16-token answer), the same loopback ` +
      `OpenAI-compatible model, ${ROUNDS} interleaved rounds, ${RUNS_PER_WORKER} runs per worker, each server in its own process, clients in a third, Node ${process.version}`,
  );
  console.log(
    "| target | concurrent runs | runs/s | TTFT p50 (ms) | TTFT p99 (ms) | run p50 (ms) | thread create p50 (ms) | server CPU per run (ms) | client CPU per run (ms) | stream bytes per run | failed |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const level of LEVELS) {
    for (const t of targets) {
      const l = t.levels[level];
      console.log(
        `| ${t.name} | ${level} | ${f(median(l.rps), 1)} | ${f(pct(l.ttft, 50), 1)} | ${f(pct(l.ttft, 99), 1)} | ${f(pct(l.runMs, 50), 0)} | ${f(pct(l.create, 50), 0)} | ${f(median(l.cpu))} | ${f(median(l.clientCpu))} | ${f(median(l.bytes), 0)} | ${l.failed} |`,
      );
    }
  }
  const resets = targets.map((t) => `${t.name}: ${LEVELS.reduce((n, l) => n + t.levels[l].resets, 0)}`).join("; ");
  console.log(`Connection resets seen by the clients (retried: by the SDK's own retry, once by the fetch client): ${resets}`);
  console.log(`\nHeap per open stream (${HOLD} runs held open at the model; server heap after GC, KiB):`);
  for (const t of targets) console.log(`  ${t.name}: ${f(median(t.heap) / 1024, 1)}`);
  console.log("\nRatios against langgraph-api (Antler / langgraph-api):");
  console.log(
    "| target | concurrent runs | runs/s | TTFT p50 | TTFT p99 | CPU per run | stream bytes | heap per open stream | targets (LangGraph route: >= 1.3x runs/s, <= 0.8x CPU) |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  const b = baseline.levels;
  for (const t of targets.filter((t) => t !== baseline)) {
    for (const level of LEVELS) {
      const l = t.levels[level];
      const rps = median(l.rps) / median(b[level].rps);
      const cpu = median(l.cpu) / median(b[level].cpu);
      const isRoute = t.job.target === "sdk";
      console.log(
        `| ${t.name} | ${level} | ${f(rps)}x | ${x(pct(l.ttft, 50), pct(b[level].ttft, 50))} | ${x(pct(l.ttft, 99), pct(b[level].ttft, 99))} | ` +
          `${f(cpu)}x | ${x(median(l.bytes), median(b[level].bytes))} | ${x(median(t.heap), median(baseline.heap))} | ` +
          `${isRoute ? `${rps >= 1.3 ? "met" : "MISSED"} / ${cpu <= 0.8 ? "met" : "MISSED"}` : "(native API; reference figures, no target)"} |`,
      );
    }
  }
  if (!targets.some((t) => t.job.target === "sdk" && t.server === antler)) {
    console.log("The LangGraph-compatible route is not served by the built plugin yet (404 at /langgraph/threads): not measured.");
  }
  console.log(
    "\nDurability: Antler runs with SQLite storage (its default embedded setup): threads, runs, checkpoints and run events are written to a " +
      "SQLite file as the run goes (run events in batches every 20 ms). langgraph-api's dev server keeps runs, threads and checkpoints in memory " +
      "and writes them whole to JSON files under its cwd once nothing has changed for 3 s, so a crash under load loses everything since the last quiet moment.",
  );
  console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s measuring)`);
  const failed = targets.reduce((n, t) => n + LEVELS.reduce((m, l) => m + t.levels[l].failed, 0), 0);
  if (failed > 0) {
    const errors = targets.flatMap((t) => LEVELS.flatMap((l) => t.levels[l].errors.map((e) => `${t.name}: ${e}`)));
    throw new Error(`${failed} runs failed, e.g.\n  ${errors.slice(0, 5).join("\n  ")}`);
  }
} finally {
  for (const server of servers) await server.close();
  await model.close();
}
