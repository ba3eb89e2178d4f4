// Child processes for the install tests (standalone-install, npm-install): a project outside the workspace is packed,
// installed and tested by real pnpm, npm, tsc and vitest processes.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";

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
