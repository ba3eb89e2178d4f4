// LangGraph's own JavaScript server, @langchain/langgraph-api (what `langgraphjs dev` runs), in a process of its
// own, started with its `startServer` as the dev CLI's entrypoint does, serving agent-graph.mjs as `agent`. Its
// defaults: in-memory ops and checkpointer, written to JSON files under cwd after 3 s without a change. Workers:
// BENCH_LG_WORKERS (the benchmark sets it to its highest concurrency, so queueing never caps a level).
// LOG_LEVEL=warn (set by the benchmark) keeps its per-request logging off, as Antler's is.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "@langchain/langgraph-api/server";
import { serveStats } from "./server-process.mjs";

const cwd = mkdtempSync(join(tmpdir(), "langgraph-api-bench-"));
const graph = fileURLToPath(new URL("./agent-graph.mjs", import.meta.url));
const { host, cleanup } = await startServer({
  port: 0,
  nWorkers: Number(process.env.BENCH_LG_WORKERS ?? 10),
  host: "127.0.0.1",
  cwd,
  graphs: { agent: `${graph}:agent` },
});
serveStats(`http://${host}`, async () => {
  await cleanup();
  rmSync(cwd, { recursive: true, force: true });
});
