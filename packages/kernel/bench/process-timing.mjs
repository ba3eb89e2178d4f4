// Whole-process timing shared by the start-up benchmarks (startup.bench.mjs, cli-startup.bench.mjs): each sample is
// a fresh `node` process, and the cases run interleaved in rounds, in an order rotated every round, so noise on a
// shared machine hits all of them alike.
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";

/** Wall time of one run of `c` (`{ name, args, cwd, env? }`, env added to the shared one), or why it failed. */
export function timeProcess(c, env) {
  const t0 = performance.now();
  const result = spawnSync(process.execPath, c.args, {
    cwd: c.cwd,
    env: c.env ? { ...env, ...c.env } : env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const ms = performance.now() - t0;
  if (result.error || result.status !== 0) {
    return {
      failure: `${c.name} failed (exit ${result.status ?? result.error?.message}): ${String(result.stderr).trim().split("\n").slice(-3).join(" | ")}`,
    };
  }
  return { ms };
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Samples every case `rounds` times after `warmupRounds` dropped rounds, interleaved. Failed runs are left out and
 * listed once. Returns the samples by case, or null (with a message) when the baseline, `cases[0]`, has none.
 * With `strict` (smoke runs), a failed run sets a failing exit code: a case that no longer runs is what they catch.
 */
export function sampleInterleaved(cases, { rounds, warmupRounds, env, label, strict = false }) {
  const samples = new Map(cases.map((c) => [c, []]));
  const failures = new Set();
  for (let round = 0; round < warmupRounds + rounds; round++) {
    const order = cases.map((_, i) => cases[(i + round) % cases.length]);
    for (const c of order) {
      const result = timeProcess(c, env);
      if (result.failure) failures.add(result.failure);
      else if (round >= warmupRounds) samples.get(c).push(result.ms);
    }
  }
  if (failures.size > 0) {
    console.log("\nSome runs failed; their figures leave those runs out:");
    for (const f of failures) console.log(`  ${f}`);
    if (strict) process.exitCode = 1;
  }
  if (samples.get(cases[0]).length === 0) {
    console.log(`\n${label}: no baseline sample succeeded, so there is nothing to compare against.`);
    return null;
  }
  return samples;
}
