// Kernel boot cost with 20 no-op plugins, against an empty kernel booted in the same run.
// Run with `pnpm bench` (after a build). Figures are medians over interleaved samples; trust the ratio.
import { performance } from "node:perf_hooks";
import { createKernel, definePlugin, silentLogger } from "../dist/bundle/index.js";

// BENCH_SMOKE=1: a few samples, to check it still runs (the figures mean nothing).
const SMOKE = process.env.BENCH_SMOKE === "1";
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? (SMOKE ? 5 : 200));
const WARMUP = SMOKE ? 2 : 30;
const logger = silentLogger();

function noopPlugins(n) {
  return Array.from({ length: n }, (_, i) =>
    definePlugin({
      name: `noop-${i}`,
      version: "1.0.0",
      kernel: "^0.1.0",
      dependsOn: i > 0 ? [`noop-${i - 1}`] : [],
      setup(ctx) {
        ctx.hooks.start.tap(() => {});
        ctx.hooks.stop.tap(() => {});
      },
    }),
  );
}

async function bootOnce(plugins) {
  const t0 = performance.now();
  const kernel = await createKernel({ plugins, discover: false, config: {}, logger, builtins: false });
  await kernel.start();
  const elapsed = performance.now() - t0;
  await kernel.close();
  return elapsed;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];

const twenty = noopPlugins(20);
for (let i = 0; i < WARMUP; i++) {
  await bootOnce([]);
  await bootOnce(twenty);
}
const base = [];
const cand = [];
for (let i = 0; i < SAMPLES; i++) {
  base.push(await bootOnce([]));
  cand.push(await bootOnce(twenty));
}
const row = (name, xs) =>
  `| ${name.padEnd(32)} | ${median(xs).toFixed(3).padStart(9)} | ${p95(xs).toFixed(3).padStart(9)} | ${(median(xs) / median(base)).toFixed(2).padStart(6)}× |`;
console.log(`\nKernel boot (createKernel + start), ${SAMPLES} interleaved samples each`);
console.log("| case                             | median ms |    p95 ms |  ratio |");
console.log("|----------------------------------|-----------|-----------|--------|");
console.log(row("baseline: 0 plugins", base));
console.log(row("20 no-op plugins (chained deps)", cand));
const target = 50;
console.log(`\nTarget: 20-plugin median under ${target} ms: ${median(cand) < target ? "met" : "NOT met"} (${median(cand).toFixed(3)} ms)`);
