// long-thread.bench: does a turn cost the same at message 10 and at message 5,000? (issue 25)
//
// One thread per backend (SQLite, then PostgreSQL when ANTLER_TEST_PG_URL is set) grows to 5,000 messages. At
// 10 / 100 / 1,000 / 5,000 messages it runs real turns through `AntlerClient.stream` (in process) against a
// scripted model that waits MODEL_DELAY_MS and answers a paragraph, and one one-line answer through the real
// gateway's HTTP API on loopback (`POST /api/threads/{id}/runs/stream`). Between the points the thread is grown
// by seeding saved messages through the client's own checkpointer (see bench/thread-growth.mjs for how, and why
// the result is a thread like any other of that length).
//
// Printed per point:
//   server ms/turn   median wall time of a turn, minus the scripted model's delay (one model call per turn)
//   cpu ms/turn      median of this process's CPU time per turn (less disturbed by other load on the machine)
//   TTFT ms          median time from the call to the first streamed answer text, model delay included
//                    (these three over 2 × BENCH_TURNS turns: a block measured for bytes, then a block interleaved
//                    turn by turn with a fresh 10-message thread, whose medians give the same-time ratio the time
//                    targets are judged on)
//   1st turn after seeding ms   server time of the one turn that first reads what the seeding wrote (the client
//                    decodes those messages once; a restarted server pays this for the whole thread; at the first
//                    point it also builds the agent), not a target
//   ckpt B/turn      bytes the checkpoint store gained per turn: SQLite, the payload of every table in
//                    checkpoints.sqlite (dbstat); PostgreSQL, the size of the checkpoint and message-log tables
//                    (pg_total_relation_size, so 8 KiB pages and compression show)
//   file Δ B/turn    SQLite only: growth of checkpoints.sqlite (+ its WAL, after a checkpoint of it) per turn
//   log B/turn       of which the thread's message log (the delta saver's `log.size`), when the store has one
//   new-msg B/turn   the serialized size of the messages a turn adds (question + answer)
//   events B/turn    bytes the run event log (gateway `stream_bridge`) stored for one turn
//   SSE B 1-line     bytes of the HTTP SSE response of a one-line answer
// Then ratios against the 10-message point and PASS/FAIL against the targets. Target misses do not fail
// the process (the machine is noisy): only a crash does.
//
// Run after a build: `pnpm --filter @antler/plugin-gateway bench` runs it with the other gateway benchmarks, or
// `node bench/long-thread.bench.mjs` in packages/plugins/gateway. Knobs: BENCH_TURNS (timed turns per point,
// default 7), BENCH_POINTS (comma-separated message counts), BENCH_SMOKE=1 (points 10, 20 and 40, 2 turns: seconds;
// the targets are checked at 20 and 40 in place of 1,000 and 5,000).
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, checkpointThreadId } from "@antler/plugin-runtime";
import { createPostgresPool } from "@antler/plugin-storage-postgres";
import { CHECKPOINTS_SQLITE_FILE, openSqliteFile } from "@antler/plugin-storage-sqlite";
import { startGateway } from "../dist/index.js";
import { appendSeededMessages, storesMessagesOnce } from "./thread-growth.mjs";

const SMOKE = process.env.BENCH_SMOKE === "1";
const POINTS = (process.env.BENCH_POINTS ?? (SMOKE ? "10,20,40" : "10,100,1000,5000")).split(",").map(Number);
// The points the targets name; a smoke run checks its own second and third points in their place, so every line
// of the report runs.
const AT_1000 = SMOKE ? POINTS[1] : 1000;
const AT_5000 = SMOKE ? POINTS[2] : 5000;
const TURNS = Number(process.env.BENCH_TURNS ?? (SMOKE ? 2 : 7));
const MODEL_DELAY_MS = 20;
const PG_URL = process.env.ANTLER_TEST_PG_URL;
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 30 * 60_000);
const USER = "bench";
// The length of the fresh thread each point's turns are timed against.
const BASE_MESSAGES = 10;
const KEY = "long-thread-bench-key-0123456789";

const watchdog = setTimeout(() => {
  console.error(`long-thread.bench: no result after ${TIMEOUT_MS / 1000} s (BENCH_TIMEOUT_MS); giving up.`);
  process.exit(1);
}, TIMEOUT_MS);
watchdog.unref();

for (const p of POINTS) if (!Number.isInteger(p) || p < 2 || p % 2 !== 0) throw new Error(`BENCH_POINTS: ${p} is not an even count ≥ 2`);
if (!Number.isInteger(TURNS) || TURNS < 1) throw new Error(`BENCH_TURNS must be a positive integer, got ${process.env.BENCH_TURNS}`);

const ANSWER =
  "Here is the short version. The figures from this morning match last week's, the two open questions were " +
  "answered in the notes, and the only change is the delivery date, which moved by a day. Nothing else needs a " +
  "decision today; I will flag it here if that changes, with what moved and why, so the thread stays readable.";
const scripts = {
  // One model call per turn: a paragraph of answer after a fixed, off-CPU wait.
  m: () => ({ text: ANSWER, delayMs: MODEL_DELAY_MS, usage: { input_tokens: 40, output_tokens: 80 } }),
  short: () => ({ text: "Yes.", usage: { input_tokens: 10, output_tokens: 1 } }),
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuMs = (c) => (c.user + c.system) / 1000;

/** SQLite: what checkpoints.sqlite holds, by table payload and on disk. */
function sqliteSizer(baseDir) {
  const file = join(baseDir, "data", CHECKPOINTS_SQLITE_FILE);
  let db;
  return {
    label: "payload of every table in checkpoints.sqlite (dbstat)",
    async measure() {
      db ??= openSqliteFile(file);
      db.pragma("wal_checkpoint(TRUNCATE)");
      const tables = db.prepare("SELECT name, SUM(payload) AS bytes FROM dbstat GROUP BY name").all();
      const onDisk = statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
      return { checkpoint: tables.reduce((sum, t) => sum + Number(t.bytes), 0), file: onDisk };
    },
    async close() {
      db?.close();
    },
  };
}

// Checkpoint tables are LangGraph's (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`, ...) plus any message
// log a delta checkpointer keeps next to them; Antler's own tables (threads, runs, run events) are not counted.
const CHECKPOINT_TABLE = /checkpoint|message/;

/** PostgreSQL: the size of the checkpoint tables in the bench's own schema. */
function postgresSizer(url, schema) {
  const pool = createPostgresPool(url, { max: 2 });
  return {
    label: `pg_total_relation_size of the tables matching ${CHECKPOINT_TABLE} in schema ${schema}`,
    async measure() {
      const { rows } = await pool.query(
        "SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
        [schema],
      );
      return {
        checkpoint: rows.filter((r) => CHECKPOINT_TABLE.test(r.name)).reduce((sum, r) => sum + Number(r.bytes), 0),
        file: null,
        tables: rows.map((r) => r.name),
      };
    },
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await pool.end();
    },
  };
}

async function runBackend(name, storage, makeSizer) {
  const baseDir = mkdtempSync(join(tmpdir(), `antler-long-thread-${name}-`));
  const client = await AntlerClient.create({
    config: {
      base_dir: baseDir,
      models: [
        { name: "m", provider: "scripted" },
        { name: "short", provider: "scripted" },
      ],
      storage,
      title: { enabled: false },
      logging: { level: "error" },
    },
    plugins: [scriptedModelsPlugin(scripts)],
    cwd: baseDir,
    env: {},
    discover: false,
    userId: USER,
  });
  const gateway = await startGateway({ client, config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: KEY, user: USER }] } } });
  // The same storage the client writes to, opened a second time: it seeds the thread and reads sizes.
  const store = await client.kernel.openCheckpointer();
  const sizer = makeSizer(baseDir);
  const threadId = `long-${randomUUID().slice(0, 8)}`;
  const threadKey = checkpointThreadId(USER, threadId);
  const rows = [];
  try {
    await client.createThread({ threadId });
    let messages = 0;
    let seededTurns = 0;
    const logSize = async () => (storesMessagesOnce(store.saver) ? await store.saver.log.size(threadKey) : null);
    const eventBytes = async (runId) => {
      const log = gateway.runEvents;
      if (!log) return null;
      // The log flushes a finished run at once, but asynchronously: wait for its `end` row.
      for (let i = 0; i < 100; i++) {
        const logged = await log.store.read(runId, 0, 100_000);
        if (logged.at(-1)?.event === "end")
          return logged.reduce((sum, r) => sum + Buffer.byteLength(r.event) + Buffer.byteLength(r.json), 0);
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`run ${runId}: the run event log never stored its end event`);
    };
    const turn = async (n, thread = threadId) => {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      let ttft;
      let runId;
      for await (const event of client.stream(`Question ${n}: anything new on item ${n}?`, { threadId: thread, model: "m" })) {
        if (ttft === undefined && event.type === "messages-tuple" && event.data.type === "ai" && event.data.content)
          ttft = performance.now() - t0;
        if (event.type === "end") runId = event.data.run_id;
      }
      const wall = performance.now() - t0;
      return { wall, cpu: cpuMs(process.cpuUsage(c0)), ttft: ttft ?? Number.NaN, runId };
    };
    for (const point of POINTS) {
      if (point > messages) {
        const t0 = performance.now();
        const checkpoints = await appendSeededMessages(store.saver, threadKey, point - messages, seededTurns);
        seededTurns += (point - messages) / 2;
        console.log(
          `  ${name}: seeded ${point - messages} messages in ${checkpoints} checkpoints (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
        );
        messages = point;
      }
      // Warm-up, and the cold read: the client has not seen what the seeding wrote, so this turn reads and decodes
      // the thread's new messages (as the first turn after a restart reads the whole thread).
      const firstTurn = await turn(-1);
      messages += 2;
      const before = await sizer.measure();
      const logBefore = await logSize();
      const turns = [];
      for (let i = 0; i < TURNS; i++) turns.push(await turn(i));
      messages += 2 * TURNS;
      const after = await sizer.measure();
      const logAfter = await logSize();
      const saved = await store.saver.getTuple({ configurable: { thread_id: threadKey, checkpoint_ns: "" } });
      const savedMessages = saved?.checkpoint.channel_values?.messages ?? [];
      if (savedMessages.length !== messages)
        throw new Error(`${name}: the thread holds ${savedMessages.length} messages, expected ${messages}`);
      let newBytes = 0;
      for (const m of savedMessages.slice(-2 * TURNS)) newBytes += Buffer.byteLength((await store.saver.serde.dumpsTyped(m))[1]);
      const events = [];
      for (const t of turns) events.push(await eventBytes(t.runId));
      // Timing against a baseline measured at the same time: a fresh thread of BASE_MESSAGES messages, its turns
      // interleaved with the long thread's (the order alternating), so load on the machine hits both alike.
      const baseThread = `base-${point}-${randomUUID().slice(0, 8)}`;
      await client.createThread({ threadId: baseThread });
      await appendSeededMessages(store.saver, checkpointThreadId(USER, baseThread), BASE_MESSAGES, 0);
      await turn(-1, baseThread);
      const paired = { long: [], base: [] };
      for (let i = 0; i < TURNS; i++) {
        if (i % 2 === 0) {
          paired.long.push(await turn(i));
          paired.base.push(await turn(i, baseThread));
        } else {
          paired.base.push(await turn(i, baseThread));
          paired.long.push(await turn(i));
        }
      }
      messages += 2 * TURNS;
      const longTurns = [...turns, ...paired.long];
      // A one-line answer over the gateway's HTTP API.
      const response = await fetch(`${gateway.url}/api/threads/${threadId}/runs/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ message: "ok?", model: "short" }),
      });
      if (response.status !== 200) throw new Error(`${name}: runs/stream answered ${response.status}: ${await response.text()}`);
      const sse = (await response.arrayBuffer()).byteLength;
      messages += 2;
      rows.push({
        point,
        coldRead: firstTurn.wall - MODEL_DELAY_MS,
        server: median(longTurns.map((t) => t.wall - MODEL_DELAY_MS)),
        cpu: median(longTurns.map((t) => t.cpu)),
        ttft: median(longTurns.map((t) => t.ttft)),
        pairedServer: median(paired.long.map((t) => t.wall - MODEL_DELAY_MS)),
        baseServer: median(paired.base.map((t) => t.wall - MODEL_DELAY_MS)),
        pairedCpu: median(paired.long.map((t) => t.cpu)),
        baseCpu: median(paired.base.map((t) => t.cpu)),
        ckpt: (after.checkpoint - before.checkpoint) / TURNS,
        file: after.file === null ? null : (after.file - before.file) / TURNS,
        log: logBefore === null ? null : (logAfter - logBefore) / TURNS,
        newMsg: newBytes / TURNS,
        events: events[0] === null ? null : median(events),
        sse,
      });
    }
  } finally {
    await store.close();
    await gateway.close();
    await client.close();
    await sizer.close();
    rmSync(baseDir, { recursive: true, force: true });
  }
  return {
    rows,
    sizer: sizer.label,
    mode: storesMessagesOnce(store.saver) ? "delta (each message stored once)" : "full (whole list per checkpoint)",
  };
}

const fmt = (v, digits = 0) => (v === null || v === undefined || Number.isNaN(v) ? "n/a" : v.toFixed(digits));

function report(name, { rows, sizer, mode }) {
  console.log(
    `\n${name}: one thread, ${TURNS} timed turns per point (medians), model delay ${MODEL_DELAY_MS} ms per turn, checkpoints ${mode}`,
  );
  console.log(`checkpoint bytes: ${sizer}`);
  console.log(
    "| messages | server ms/turn | cpu ms/turn | TTFT ms | 1st turn after seeding ms | ckpt B/turn | file Δ B/turn | log B/turn | new-msg B/turn | events B/turn | SSE B 1-line |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.point} | ${fmt(r.server, 1)} | ${fmt(r.cpu, 1)} | ${fmt(r.ttft, 1)} | ${fmt(r.coldRead, 1)} | ${fmt(r.ckpt)} | ${fmt(r.file)} | ${fmt(r.log)} | ${fmt(r.newMsg)} | ${fmt(r.events)} | ${r.sse} |`,
    );
  }
  const base = rows[0];
  const ratio = (a, b) => (a === null || b === null || !(b > 0) ? "n/a" : `${(a / b).toFixed(2)}×`);
  console.log(
    `\nratios vs the ${base.point}-message point, and (last two columns) vs a fresh ${BASE_MESSAGES}-message thread timed in the same minutes, turns interleaved`,
  );
  console.log(
    "| messages | server time | cpu time | TTFT | ckpt B/turn | events B/turn | SSE B | server time, same-time | cpu time, same-time |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.point} | ${ratio(r.server, base.server)} | ${ratio(r.cpu, base.cpu)} | ${ratio(r.ttft, base.ttft)} | ${ratio(r.ckpt, base.ckpt)} | ${ratio(r.events, base.events)} | ${ratio(r.sse, base.sse)} | ${ratio(r.pairedServer, r.baseServer)} (${fmt(r.pairedServer, 1)} vs ${fmt(r.baseServer, 1)} ms) | ${ratio(r.pairedCpu, r.baseCpu)} |`,
    );
  }
  const verdict = (ok) => (ok ? "PASS" : "FAIL");
  console.log(`\ntargets (${name}); turn times against the same-time ${BASE_MESSAGES}-message thread:`);
  for (const [point, limit] of [
    [AT_1000, 1.2],
    [AT_5000, 1.5],
  ]) {
    const r = rows.find((x) => x.point === point);
    if (!r) console.log(`  turn at ${point} ≤ ${limit}× a turn at ${BASE_MESSAGES}: not measured (BENCH_POINTS)`);
    else
      console.log(
        `  ${verdict(r.pairedServer <= limit * r.baseServer)} turn at ${point} ≤ ${limit}× a turn at ${BASE_MESSAGES}: ${(r.pairedServer / r.baseServer).toFixed(2)}× (server ${fmt(r.pairedServer, 1)} vs ${fmt(r.baseServer, 1)} ms; CPU ${(r.pairedCpu / r.baseCpu).toFixed(2)}×; vs the ${base.point}-message point ${(r.server / base.server).toFixed(2)}×)`,
      );
  }
  // The constant is what a turn costs the store at the first point, where the history is shortest: checkpoint
  // rows, pending writes and metadata, whatever the length of the thread.
  for (const r of rows.slice(1)) {
    const allowed = 2 * r.newMsg + base.ckpt;
    console.log(
      `  ${verdict(r.ckpt <= allowed)} checkpoint bytes/turn at ${r.point} ≤ 2 × new messages (${fmt(r.newMsg)} B) + the ${base.point}-message turn's ${fmt(base.ckpt)} B: ${fmt(r.ckpt)} B (allowed ${fmt(allowed)} B)`,
    );
  }
  const at1000 = rows.find((x) => x.point === AT_1000);
  if (!at1000) console.log(`  one-line answer at ${AT_1000} messages streams ≤ 8 KB: not measured (BENCH_POINTS)`);
  else console.log(`  ${verdict(at1000.sse <= 8 * 1024)} one-line answer at ${AT_1000} messages streams ≤ 8 KB: ${at1000.sse} B`);
}

console.log(
  `long-thread.bench${SMOKE ? " (BENCH_SMOKE: shrunk sizes, the numbers mean nothing)" : ""}: points ${POINTS.join(", ")} messages`,
);
report("SQLite", await runBackend("sqlite", { backend: "sqlite" }, (dir) => sqliteSizer(dir)));
if (!PG_URL) {
  console.log("\nPostgreSQL: skipped — ANTLER_TEST_PG_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test).");
} else {
  const schema = `bench_long_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  report(
    "PostgreSQL",
    await runBackend("postgres", { backend: "postgres", postgres_url: PG_URL, postgres_schema: schema }, () =>
      postgresSizer(PG_URL, schema),
    ),
  );
}
