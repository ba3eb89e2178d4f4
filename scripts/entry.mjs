// The two README commands (`npm run demo`, `npm test`) land here. They must work on a machine with only
// Node 20 and npm, so pnpm is fetched through npx at the pinned version instead of relying on corepack.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const pnpmSpec = pkg.packageManager; // "pnpm@x.y.z"

function run(cmd, args, extraEnv = {}) {
  const shown = [cmd, ...args].join(" ");
  console.log(`\n> ${shown}`);
  const res = spawnSync(cmd, args, {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, ...extraEnv },
    shell: process.platform === "win32",
  });
  if (res.status !== 0) {
    console.error(`\n✖ "${shown}" failed with exit code ${res.status ?? res.signal}`);
    process.exitCode = res.status || 1;
    throw new Error("step failed");
  }
}
const pnpm = (...args) => run("npx", ["-y", pnpmSpec, ...args], { npm_config_update_notifier: "false" });

const task = process.argv[2];
try {
  pnpm("install", "--frozen-lockfile");
  pnpm("run", "build");
  if (task === "test") {
    pnpm("run", "typecheck");
    pnpm("run", "lint");
    pnpm("run", "test:all");
    // Every benchmark once with BENCH_SMOKE=1 (seconds each), so none rots unnoticed.
    pnpm("run", "bench:smoke");
  } else if (task === "demo") {
    pnpm("--filter", "@antler/example-research-assistant", "run", "demo");
  } else {
    throw new Error(`unknown task "${task}"; expected "demo" or "test"`);
  }
} catch (err) {
  if (!process.exitCode) {
    console.error(String(err?.message ?? err));
    process.exitCode = 1;
  }
}
