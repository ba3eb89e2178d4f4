// Start-up cost of the kernel, against bare `node -e 0` measured in the same run: importing @antler/kernel,
// and `antler --help` from an empty folder with no config. Each sample is a fresh process; the cases run
// interleaved in rounds, in an order rotated every round, so noise on this shared machine hits all of them.
// Run with `pnpm bench` (after a build). Trust the ratios, not the absolute milliseconds. Always exits 0.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, sampleInterleaved } from "./process-timing.mjs";

// BENCH_SMOKE=1: two rounds and one RSS sample, to check it still runs; there a failed case or an error exits 1.
const SMOKE = process.env.BENCH_SMOKE === "1";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 2 : 25));
const WARMUP_ROUNDS = SMOKE ? 0 : 2;
const RSS_SAMPLES = Number(process.env.BENCH_RSS_SAMPLES ?? (SMOKE ? 1 : 5));
const kernelDir = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(kernelDir, "bin/antler.js");
const emptyDir = mkdtempSync(join(tmpdir(), "antler-startup-"));
// No config, and nothing that adds the same fixed cost to every process: NODE_EXTRA_CA_CERTS alone parses a CA
// bundle at start-up (about 80 ms here), which would inflate the baseline and flatter the ratios.
const STRIPPED_ENV = ["ANTLER_CONFIG", "NODE_OPTIONS", "NODE_EXTRA_CA_CERTS"];
const childEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !STRIPPED_ENV.includes(key)));

const cases = [
  { name: "baseline: node -e 0", args: ["-e", "0"], cwd: emptyDir },
  // Run inside packages/kernel so the package resolves itself by name through its "exports" (dist/bundle/index.js).
  { name: "import('@antler/kernel')", args: ["--input-type=module", "-e", "await import('@antler/kernel')"], cwd: kernelDir },
  { name: "antler --help (empty dir, no config)", args: [bin, "--help"], cwd: emptyDir },
];
const [baseline, importCase, helpCase] = cases;

/** Peak resident set size in KiB of one run of a case, via GNU time, or else via an exit hook inside the child. */
function peakRssKiB(c) {
  if (existsSync("/usr/bin/time")) {
    const result = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, ...c.args], {
      cwd: c.cwd,
      env: childEnv,
      encoding: "utf8",
    });
    const kib = Number(result.stderr.trim().split("\n").at(-1));
    if (result.status === 0 && Number.isFinite(kib)) return kib;
  }
  // process.resourceUsage().maxRSS is the child's own peak in KiB; printed on exit to stderr's last line.
  const hook = `data:text/javascript,process.on("exit",()=>process.stderr.write("\\n"+process.resourceUsage().maxRSS+"\\n"))`;
  const result = spawnSync(process.execPath, ["--import", hook, ...c.args], { cwd: c.cwd, env: childEnv, encoding: "utf8" });
  const kib = Number(result.stderr.trim().split("\n").at(-1));
  return result.status === 0 && Number.isFinite(kib) ? kib : Number.NaN;
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const p90 = (xs) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

function main() {
  if (!existsSync(join(kernelDir, "dist/bundle/cli.js"))) {
    console.log("\nStart-up benchmark skipped: packages/kernel/dist is missing; run `pnpm run build` first.");
    return;
  }
  const samples = sampleInterleaved(cases, {
    rounds: ROUNDS,
    warmupRounds: WARMUP_ROUNDS,
    env: childEnv,
    label: "Start-up benchmark",
    strict: SMOKE,
  });
  if (!samples) return;
  const base = samples.get(baseline);
  const ratio = (c) => (samples.get(c).length ? median(samples.get(c)) / median(base) : Number.NaN);
  const row = (c) => {
    const xs = samples.get(c);
    const cell = (stat) => (xs.length ? stat(xs).toFixed(1) : "n/a").padStart(9);
    return `| ${c.name.padEnd(38)} | ${cell(median)} | ${cell(p90)} | ${ratio(c).toFixed(2).padStart(6)}× |`;
  };
  console.log(
    `\nStart-up wall time, fresh process per sample, ${ROUNDS} interleaved rounds (order rotated), ${WARMUP_ROUNDS} warm-up rounds dropped`,
  );
  console.log(`Children run without ${STRIPPED_ENV.join(", ")}.`);
  console.log(`| case                                   | median ms |    p90 ms |  ratio |`);
  console.log(`|----------------------------------------|-----------|-----------|--------|`);
  for (const c of cases) console.log(row(c));

  const rss = (c) => median(Array.from({ length: RSS_SAMPLES }, () => peakRssKiB(c)));
  const mib = (kib) => (Number.isFinite(kib) ? `${(kib / 1024).toFixed(1)} MiB` : "n/a");
  const helpRss = rss(helpCase);
  const baseRss = rss(baseline);
  console.log(`\nPeak RSS (median of ${RSS_SAMPLES} runs): antler --help ${mib(helpRss)}, bare node ${mib(baseRss)}`);

  const target = (label, c, limit) => {
    const r = ratio(c);
    console.log(`Target: ${label} ≤ ${limit}× bare node: ${r <= limit ? "met" : "NOT met"} (${r.toFixed(2)}×)`);
  };
  target("antler --help", helpCase, 2.5);
  target("import @antler/kernel", importCase, 3);
}

try {
  main();
} catch (err) {
  console.log(`\nStart-up benchmark could not finish: ${err instanceof Error ? err.message : String(err)}`);
  if (SMOKE) process.exitCode = 1;
} finally {
  rmSync(emptyDir, { recursive: true, force: true });
}
