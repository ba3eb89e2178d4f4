// Whole-process time of the CLI commands that only read config (issue 16): `antler config check` and `antler
// plugins list` with the research-assistant example's config, and `antler --help` there, against bare `node -e 0`
// measured in the same run. Floor rows boot the kernel host with no plugin (`preset: none`), which is what no
// plugin change can go below, and import zod and YAML alone, which no config check can avoid. Each sample is a
// fresh process; the cases run interleaved in rounds, in an order rotated every round, so noise on a shared machine
// hits all of them. Prints medians, ratios and PASS/FAIL against 4× bare node. Run with `pnpm bench` (after a
// build), or `node packages/kernel/bench/cli-startup.bench.mjs`; BENCH_ROUNDS sets the samples per case (default
// 5). Always exits 0.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, sampleInterleaved } from "./process-timing.mjs";

// BENCH_SMOKE=1: one round, to check it still runs; there a failed case or an error exits 1.
const SMOKE = process.env.BENCH_SMOKE === "1";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 5));
const WARMUP_ROUNDS = SMOKE ? 0 : 1;
const TARGET = 4;
const kernelDir = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = join(kernelDir, "../..");
const bin = join(kernelDir, "bin/antler.js");
const exampleDir = join(repoRoot, "examples/research-assistant");
const config = join(exampleDir, "config.yaml");
const floorDir = mkdtempSync(join(tmpdir(), "antler-cli-startup-"));
writeFileSync(join(floorDir, "config.yaml"), "preset: none\nlogging:\n  level: warn\n");
// Nothing that adds the same fixed cost to every process (NODE_EXTRA_CA_CERTS parses a CA bundle at start-up).
const STRIPPED_ENV = ["ANTLER_CONFIG", "NODE_OPTIONS", "NODE_EXTRA_CA_CERTS", "ANTLER_LOG_LEVEL"];
const childEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !STRIPPED_ENV.includes(key))),
  // The example's config.yaml points its MCP server here; `config check` never starts it.
  RESEARCH_ASSISTANT_DIR: exampleDir,
};

const cases = [
  { name: "baseline: node -e 0", args: ["-e", "0"], cwd: floorDir },
  { name: "antler config check (research-assistant)", args: [bin, "config", "check", "-c", config], cwd: exampleDir, target: true },
  // The CLI turns on Node's on-disk compile cache where Node has it (22.1 and later); this row runs without it.
  {
    name: "antler config check, compile cache off",
    args: [bin, "config", "check", "-c", config],
    cwd: exampleDir,
    env: { NODE_DISABLE_COMPILE_CACHE: "1" },
  },
  { name: "antler plugins list (research-assistant)", args: [bin, "plugins", "list", "-c", config], cwd: exampleDir, target: true },
  { name: "antler --help (research-assistant)", args: [bin, "--help", "-c", config], cwd: exampleDir },
  {
    name: "floor: config check, preset none, 0 plugins",
    args: [bin, "config", "check", "-c", join(floorDir, "config.yaml")],
    cwd: floorDir,
  },
  // What any config check must load: zod (every plugin's config schema is one) and a YAML parser.
  { name: "floor: import zod", args: ["--input-type=module", "-e", "await import('zod')"], cwd: kernelDir },
  { name: "floor: import yaml", args: ["--input-type=module", "-e", "await import('yaml')"], cwd: kernelDir },
];
const [baseline] = cases;

function main() {
  if (!existsSync(join(kernelDir, "dist/bundle/cli.js"))) {
    console.log("\nCLI start-up benchmark skipped: packages/kernel/dist is missing; run `pnpm run build` first.");
    return;
  }
  if (!existsSync(join(exampleDir, "node_modules"))) {
    console.log("\nCLI start-up benchmark skipped: examples/research-assistant is not installed; run `pnpm install` first.");
    return;
  }
  const samples = sampleInterleaved(cases, {
    rounds: ROUNDS,
    warmupRounds: WARMUP_ROUNDS,
    env: childEnv,
    label: "CLI start-up benchmark",
    strict: SMOKE,
  });
  if (!samples) return;
  const base = samples.get(baseline);
  const ratio = (c) => (samples.get(c).length ? median(samples.get(c)) / median(base) : Number.NaN);
  console.log(
    `\nCLI wall time, fresh process per sample, median of ${ROUNDS} interleaved rounds (order rotated), ${WARMUP_ROUNDS} warm-up round dropped`,
  );
  console.log(`Children run without ${STRIPPED_ENV.join(", ")}.`);
  console.log(`| case                                          | median ms |   ratio | target ≤ ${TARGET}× |`);
  console.log(`|-----------------------------------------------|-----------|---------|------------|`);
  for (const c of cases) {
    const xs = samples.get(c);
    const r = ratio(c);
    const verdict = c.target ? (r <= TARGET ? "PASS" : "FAIL") : "";
    console.log(
      `| ${c.name.padEnd(45)} | ${(xs.length ? median(xs).toFixed(0) : "n/a").padStart(9)} | ${r.toFixed(2).padStart(6)}× | ${verdict.padEnd(10)} |`,
    );
  }
}

try {
  main();
} catch (err) {
  console.log(`\nCLI start-up benchmark could not finish: ${err instanceof Error ? err.message : String(err)}`);
  if (SMOKE) process.exitCode = 1;
} finally {
  rmSync(floorDir, { recursive: true, force: true });
}
