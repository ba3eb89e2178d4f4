// `pnpm bench:smoke`: every package's `bench` script once, with BENCH_SMOKE=1 (each benchmark shrinks its sizes and
// rounds to seconds but runs every code path), one after another. It checks that no benchmark has rotted: a crash
// or a non-zero exit fails the run; target misses do not (smoke figures mean nothing). Run after a build; CI runs it
// after the tests.
//
// When ANTLER_TEST_PG_URL is set but nothing answers there, the benchmarks run without it (they skip their
// PostgreSQL parts and say so) instead of failing on a service the machine does not have.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { delimiter, dirname, join, relative } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Every workspace package (packages/*, packages/<kind>/*) with a `bench` script, in a stable order. */
function benchPackages() {
  const found = [];
  const visit = (dir, depth) => {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, "utf8"));
      if (pkg.scripts?.bench) found.push({ name: pkg.name, dir, script: pkg.scripts.bench });
      return;
    }
    if (depth === 0) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory() && entry.name !== "node_modules") visit(join(dir, entry.name), depth - 1);
    }
  };
  visit(join(root, "packages"), 2);
  return found;
}

/** Whether something accepts TCP connections at the URL's host and port within two seconds. */
function reachable(url, defaultPort) {
  let target;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const socket = connect({ host: target.hostname || "127.0.0.1", port: Number(target.port || defaultPort) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

const env = { ...process.env, BENCH_SMOKE: "1" };
const pgUrl = env.ANTLER_TEST_PG_URL?.trim();
if (!pgUrl) console.log("bench:smoke: ANTLER_TEST_PG_URL is not set; benchmarks skip their PostgreSQL parts.");
else if (!(await reachable(pgUrl, 5432))) {
  console.log("bench:smoke: nothing answers at ANTLER_TEST_PG_URL; benchmarks run without it and skip their PostgreSQL parts.");
  delete env.ANTLER_TEST_PG_URL;
}

const packages = benchPackages();
if (packages.length === 0) {
  console.error("bench:smoke: found no package with a `bench` script under packages/");
  process.exit(1);
}
const results = [];
for (const pkg of packages) {
  console.log(`\n=== ${pkg.name} (${relative(root, pkg.dir)}): ${pkg.script}`);
  const t0 = performance.now();
  // As `pnpm run bench` would: a shell, in the package's folder, with its node_modules/.bin first on the PATH.
  const result = spawnSync(pkg.script, {
    cwd: pkg.dir,
    shell: true,
    stdio: "inherit",
    env: { ...env, PATH: [join(pkg.dir, "node_modules/.bin"), join(root, "node_modules/.bin"), env.PATH].join(delimiter) },
  });
  const seconds = (performance.now() - t0) / 1000;
  const failure = result.error ? result.error.message : result.status !== 0 ? `exit ${result.status ?? result.signal}` : undefined;
  results.push({ name: pkg.name, seconds, failure });
}

console.log("\nbench:smoke summary");
for (const r of results)
  console.log(
    `  ${r.failure ? "FAIL" : "ok  "} ${r.name.padEnd(36)} ${r.seconds.toFixed(1).padStart(6)} s${r.failure ? `  (${r.failure})` : ""}`,
  );
const failed = results.filter((r) => r.failure);
console.log(`  total ${results.reduce((sum, r) => sum + r.seconds, 0).toFixed(1)} s`);
if (failed.length > 0) {
  console.error(`bench:smoke: ${failed.length} benchmark(s) failed: ${failed.map((r) => r.name).join(", ")}`);
  process.exitCode = 1;
}
