// Recording overhead per run with 1,000 files in the workspace: the recorder's start capture + end scan + diff,
// against a baseline measured in the same run (a plain main-thread walk that stats and hashes the same files).
// Also the event loop's worst delay while a scan runs, to show the scans stay off it. Fails, never hangs, after 120 s.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("../dist/index.js", import.meta.url));
if (!existsSync(entry)) {
  console.error(`recorder bench: ${entry} is missing; run \`pnpm run build\` first.`);
  process.exit(1);
}
const guard = setTimeout(() => {
  console.error("recorder bench: did not finish within 120 s");
  process.exit(1);
}, 120_000);
const { WorkspaceRecorder } = await import(entry);
// BENCH_SMOKE=1: one warm-up and two measured runs, to check it still runs (the figures mean nothing).
const SMOKE = process.env.BENCH_SMOKE === "1";
const WARMUP_RUNS = SMOKE ? 1 : 3;
const RUNS = SMOKE ? 2 : 10;

const baseDir = mkdtempSync(join(tmpdir(), "antler-recorder-bench-"));
const workspace = join(baseDir, "users", "u", "threads", "t", "user-data", "workspace");
mkdirSync(join(baseDir, "users", "u", "threads", "t", "user-data", "outputs"), { recursive: true });
for (let d = 0; d < 20; d++) {
  mkdirSync(join(workspace, `dir${d}`), { recursive: true });
  for (let f = 0; f < 50; f++) writeFileSync(join(workspace, `dir${d}`, `file${f}.txt`), `${"line of text\n".repeat(40)}${d}-${f}\n`);
}

function baseline() {
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else {
        statSync(full);
        createHash("sha256").update(readFileSync(full)).digest("hex");
      }
    }
  };
  const t = performance.now();
  walk(workspace);
  return performance.now() - t;
}

const recorder = new WorkspaceRecorder({ baseDir });
async function recordedRun(i) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const t = performance.now();
  recorder.begin({ runId: `r${i}`, userId: "u", threadId: "t" });
  await recorder.ready("u", "t");
  // The "run": change 10 files, add one, delete one.
  for (let k = 0; k < 10; k++) writeFileSync(join(workspace, `dir${k}`, "file0.txt"), `changed ${i}\n`);
  writeFileSync(join(workspace, `added-${i}.txt`), "new\n");
  rmSync(join(workspace, `dir19`, `file${49 - (i % 40)}.txt`), { force: true });
  const changes = await recorder.finish("u", "t");
  const ms = performance.now() - t;
  delay.disable();
  if (changes?.added.length !== 1) throw new Error("recorder bench: the record is not what the run did");
  return { ms, maxDelayMs: delay.max / 1e6 };
}

for (let i = 0; i < WARMUP_RUNS; i++) {
  baseline();
  await recordedRun(100 + i);
}
const base = [];
const runs = [];
for (let i = 0; i < RUNS; i++) {
  base.push(baseline());
  runs.push(await recordedRun(i));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const b = median(base);
const r = median(runs.map((x) => x.ms));
console.log("workspace recording with 1,000 files (baseline: one main-thread stat+hash walk of the same files, same run)");
console.log(`  baseline walk          ${b.toFixed(1)} ms`);
console.log(`  recording per run      ${r.toFixed(1)} ms (start capture + end scan + diff; two text scans)   ratio ${(r / b).toFixed(2)}x`);
console.log(
  `  event-loop max delay   ${median(runs.map((x) => x.maxDelayMs)).toFixed(1)} ms during a recorded run (scans run in worker threads)`,
);
rmSync(baseDir, { recursive: true, force: true });
clearTimeout(guard);
