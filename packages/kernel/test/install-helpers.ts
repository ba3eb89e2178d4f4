// Child processes for the install tests (standalone-install, npm-install, create-antler's): a project outside the workspace is packed,
// installed and tested by real pnpm, npm, tsc and vitest processes.
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dirname, "../../..");

export interface RunResult {
  readonly code: number | null;
  readonly output: string;
}

const running = new Set<ChildProcess>();

/**
 * Runs a command in its own process group and collects stdout and stderr together. On timeout the whole group
 * is killed (npx → vitest → its workers), so a hung step leaves no process behind.
 */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? cleanEnv(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => killGroup(child), options.timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      running.delete(child);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      running.delete(child);
      killGroup(child); // workers the command left behind, if any
      resolvePromise({ code, output });
    });
  });
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // the group is already gone
  }
}

/** Kills every process group these helpers started that is still running (an `afterAll` after a failed step). */
export function killRunning(): void {
  for (const child of running) killGroup(child);
}

/**
 * The environment of a user's shell: none of the outer vitest's variables (the project's own vitest would believe
 * it runs inside a worker). `packageManagerVars: false` also drops the `npm_*`/`pnpm_*` settings pnpm exports to
 * the scripts it runs, which would point npm at pnpm's own configuration.
 */
export function cleanEnv(options: { packageManagerVars?: boolean } = {}): NodeJS.ProcessEnv {
  const dropped = ["NODE_OPTIONS", "TEST", "ANTLER_CONFIG", "ANTLER_LOG_LEVEL", "FORCE_COLOR", "INIT_CWD"];
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) =>
        !key.startsWith("VITEST") && !dropped.includes(key) && (options.packageManagerVars !== false || !/^(npm|pnpm)_/i.test(key)),
    ),
  );
  // Plain text, so the child's summary lines can be matched.
  return { ...env, NO_COLOR: "1", npm_config_update_notifier: "false" };
}

/**
 * How to start pnpm: the one running this test suite (`npm test` starts pnpm through npx, so it need not be on
 * PATH; pnpm names itself in npm_execpath), else `pnpm` from PATH.
 */
export function pnpmCommand(args: readonly string[]): [string, string[]] {
  const self = process.env.npm_execpath;
  if (self && /pnpm/.test(self))
    return self.endsWith(".js") || self.endsWith(".cjs") ? [process.execPath, [self, ...args]] : [self, [...args]];
  return ["pnpm", [...args]];
}

/** Why `command args` (a `--version` probe) cannot run here, or undefined when it can. */
export async function commandMissing(command: string, args: readonly string[], name: string): Promise<string | undefined> {
  try {
    const { code } = await run(command, args, { cwd: REPO_ROOT, timeoutMs: 30_000 });
    return code === 0 ? undefined : `\`${name} --version\` failed`;
  } catch {
    return `${name} is not on PATH`;
  }
}

/**
 * Packs each workspace package folder (relative to the root) with `pnpm pack` into `dest`, as a user's shell runs it;
 * resolves with the tarball file name of each package, by package name. Throws with pnpm's output when one fails.
 */
export async function packWorkspacePackages(dirs: readonly string[], dest: string, timeoutMs = 60_000): Promise<Record<string, string>> {
  const tarballs: Record<string, string> = {};
  for (const dir of dirs) {
    const [command, args] = pnpmCommand(["pack", "--pack-destination", dest]);
    const packed = await run(command, args, { cwd: join(REPO_ROOT, dir), env: cleanEnv({ packageManagerVars: false }), timeoutMs });
    const name = (JSON.parse(readFileSync(join(REPO_ROOT, dir, "package.json"), "utf8")) as { name: string }).name;
    if (packed.code !== 0) throw new Error(`pnpm pack of ${name} failed:\n${packed.output}`);
    const file = readdirSync(dest).find((f) => f.startsWith(`${name.replace("@", "").replace("/", "-")}-`));
    if (!file) throw new Error(`pnpm pack made no tarball for ${name} in ${dest}: ${readdirSync(dest).join(", ")}`);
    tarballs[name] = file;
  }
  return tarballs;
}

/**
 * The stand-in for better-sqlite3's prebuilt binary in a project installed with `--ignore-scripts` (its install
 * script would download one from GitHub, unreachable from CI, then compile for minutes): the binding the workspace
 * built from the same version is copied in. Same version only: 12 as better-sqlite3 and, where this Node installed
 * it (22 and later), 13 as the alias better-sqlite3-napi. Throws when the project holds another version.
 */
export function installWorkspaceSqliteBinding(projectDir: string): void {
  const fromSqlitePlugin = createRequire(join(REPO_ROOT, "packages/plugins/storage-sqlite/package.json"));
  const version = (dir: string) => (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
  for (const name of ["better-sqlite3", "better-sqlite3-napi"]) {
    let workspaceSqlite: string;
    try {
      workspaceSqlite = dirname(fromSqlitePlugin.resolve(`${name}/package.json`));
    } catch {
      continue; // the optional 13 is not installed on Node 20
    }
    const sqliteDir = join(projectDir, "node_modules", name);
    if (version(sqliteDir) !== version(workspaceSqlite)) {
      throw new Error(`${sqliteDir} is ${version(sqliteDir)}, the workspace built ${version(workspaceSqlite)}: no binding to copy`);
    }
    const built = join(workspaceSqlite, "build/Release/better_sqlite3.node");
    // 13 ships prebuilt bindings for each platform in its package (prebuilds/), which the install already holds.
    if (!existsSync(built) && existsSync(join(sqliteDir, "prebuilds"))) continue;
    mkdirSync(join(sqliteDir, "build/Release"), { recursive: true });
    copyFileSync(built, join(sqliteDir, "build/Release/better_sqlite3.node"));
  }
}

/** A command as a user's shell runs it: without pnpm's `npm_*` settings, which would point npm at pnpm's config. */
export function runAsUser(command: string, args: readonly string[], options: { cwd: string; timeoutMs: number }): Promise<RunResult> {
  return run(command, args, { env: cleanEnv({ packageManagerVars: false }), ...options });
}

/**
 * Strips the types of a project's `src/plugin.ts` into `build/plugin.js` with the project's own TypeScript, as a user
 * would (Node 20 runs JavaScript; the type-check ran before).
 */
export function transpilePlugin(projectDir: string): Promise<RunResult> {
  const script = `import ts from "typescript"; import { readFileSync, mkdirSync, writeFileSync } from "node:fs";
const { outputText } = ts.transpileModule(readFileSync("src/plugin.ts", "utf8"), { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } });
mkdirSync("build", { recursive: true }); writeFileSync("build/plugin.js", outputText);`;
  return runAsUser(process.execPath, ["--input-type=module", "-e", script], { cwd: projectDir, timeoutMs: 60_000 });
}

/** Why an install test cannot run here: a package to pack has no build, or npm or pnpm is missing; else undefined. */
export async function packedInstallSkipReason(packed: readonly string[]): Promise<string | undefined> {
  const unbuilt = packed.filter((dir) => !existsSync(join(REPO_ROOT, dir, "dist/index.js")));
  if (unbuilt.length > 0) return `${unbuilt.join(", ")} ${unbuilt.length === 1 ? "has" : "have"} no dist; run \`pnpm run build\` first`;
  return (await commandMissing("npm", ["--version"], "npm")) ?? (await commandMissing(...pnpmCommand(["--version"]), "pnpm"));
}
