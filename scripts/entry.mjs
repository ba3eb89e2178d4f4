// The two README commands (`npm run demo`, `npm test`) land here. They must work on a machine with only
// Node 20 and npm, so pnpm is fetched through npx at the pinned version instead of relying on corepack.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
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
const buildEnv = nativeBuildEnv();
const pnpm = (...args) => run("npx", ["-y", pnpmSpec, ...args], { npm_config_update_notifier: "false", ...buildEnv });

/**
 * Native addons (better-sqlite3) compile against the headers npm's `nodedir` names; a machine may set it to its
 * system Node's headers while this runs on another Node (say Node 24 from the registry's `node` package, which
 * ships its own headers next to its binary). Then the addon would load under neither: use the running Node's own
 * headers whenever they sit next to its binary and the configured ones are another version.
 */
function nativeBuildEnv() {
  const own = join(dirname(dirname(process.execPath)), "include", "node");
  if (!existsSync(join(own, "node_version.h"))) return {};
  const configured = spawnSync("npm", ["config", "get", "nodedir"], {
    encoding: "utf8",
    shell: process.platform === "win32",
  }).stdout?.trim();
  const header = configured && configured !== "undefined" ? join(configured, "include", "node", "node_version.h") : "";
  if (header && existsSync(header) && majorOf(readFileSync(header, "utf8")) === process.versions.node.split(".")[0]) return {};
  return { npm_config_nodedir: dirname(dirname(process.execPath)) };
}
function majorOf(versionHeader) {
  return /#define NODE_MAJOR_VERSION (\d+)/.exec(versionHeader)?.[1];
}

/**
 * The SQLite driver this Node loads (better-sqlite3 12 on Node 20, 13 as `better-sqlite3-napi` from 22: see
 * packages/plugins/storage-sqlite/src/driver.ts), when built for another Node (node_modules installed under one
 * Node, tests run under another), is rebuilt.
 */
function ensureNativeAddons() {
  const driver = Number(process.versions.node.split(".")[0]) >= 22 ? "better-sqlite3-napi" : "better-sqlite3";
  const probe = spawnSync(
    process.execPath,
    [
      "-e",
      `require(require.resolve('${driver}', { paths: [process.argv[1]] }))(':memory:').close()`,
      join(root, "packages/plugins/storage-sqlite"),
    ],
    { encoding: "utf8" },
  );
  if (probe.status === 0) return;
  if (!/NODE_MODULE_VERSION|compiled against a different Node/.test(probe.stderr)) return; // any other failure: the tests say it
  console.log(`\n${driver} was built for another Node.js; rebuilding it for ${process.version}`);
  pnpm("rebuild", driver);
}

const task = process.argv[2];
try {
  pnpm("install", "--frozen-lockfile");
  ensureNativeAddons();
  pnpm("run", "build");
  if (task === "test") {
    pnpm("run", "typecheck");
    pnpm("run", "lint");
    // The built packages as users get them: each API against its checked-in report, each tarball through
    // publint, Are the Types Wrong and npm publish --dry-run.
    pnpm("run", "api:check");
    pnpm("run", "pack:lint");
    // The docs: the generated config reference matches the schemas, and the site builds with its dead-link check on.
    pnpm("run", "docs:config-reference:check");
    pnpm("run", "docs:build");
    pnpm("run", "test:all");
    // Every benchmark once with BENCH_SMOKE=1 (seconds each), so none rots unnoticed.
    pnpm("run", "bench:smoke");
  } else if (task === "suite") {
    // The test suite alone, on whichever Node runs this script: `.ci/run`'s second leg runs it on Node 24 after
    // `npm test` ran everything on the machine's Node (the checks above do not depend on the Node version).
    pnpm("run", "test:all");
  } else if (task === "demo") {
    pnpm("--filter", "@antler/example-research-assistant", "run", "demo");
  } else {
    throw new Error(`unknown task "${task}"; expected "demo", "test" or "suite"`);
  }
} catch (err) {
  if (!process.exitCode) {
    console.error(String(err?.message ?? err));
    process.exitCode = 1;
  }
}
