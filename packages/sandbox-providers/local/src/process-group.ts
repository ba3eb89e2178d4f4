export interface ProcessGroupRun {
  shell: string;
  command: string;
  cwd: string;
  env: Record<string, string>;
  /** Milliseconds until the whole group is killed. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Per stream, in characters; past it the group is killed and the output cut. */
  maxOutputChars: number;
  /** Told about the group while it runs, so an owner can kill it on close. */
  running?: Set<number>;
}

export interface ProcessGroupResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  outputTruncated: boolean;
  signal: string | null;
  /** Set when the shell could not be started at all (not found, not executable). */
  spawnError: { code: string | undefined; message: string } | null;
}

/**
 * SIGKILLs every process in the group. The group id is the leader's pid, which stays reserved while any member
 * lives, so this reaches grandchildren the command left behind; ESRCH just means the group is already gone.
 */
export function killProcessGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}

/**
 * Runs `shell -c command` as the leader of a new process group (`detached`), so a timeout, an abort or an
 * output flood kills the command with everything it spawned, not just the shell.
 */
export async function runInProcessGroup(run: ProcessGroupRun): Promise<ProcessGroupResult> {
  // execa (about a hundred modules) loads with the first command, not with the plugin (`antler config check`).
  const { execa } = await import("execa");
  const subprocess = execa(run.shell, ["-c", run.command], {
    cwd: run.cwd,
    env: run.env,
    extendEnv: false,
    detached: true,
    reject: false,
    stdin: "ignore",
    stripFinalNewline: false,
    maxBuffer: run.maxOutputChars,
    windowsHide: true,
  });
  const pid = subprocess.pid;
  let timedOut = false;
  let aborted = false;
  const kill = () => {
    if (pid !== undefined) killProcessGroup(pid);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, run.timeoutMs);
  const onAbort = () => {
    aborted = true;
    kill();
  };
  run.signal?.addEventListener("abort", onAbort, { once: true });
  if (pid !== undefined) run.running?.add(pid);
  try {
    const result = await subprocess;
    if (result.isMaxBuffer) kill(); // execa stops only the shell; its children may still be writing
    const spawned = pid !== undefined && !(result.failed && result.exitCode === undefined && result.signal === undefined);
    return {
      exitCode: result.exitCode ?? null,
      stdout: String(result.stdout ?? ""),
      stderr: String(result.stderr ?? ""),
      timedOut,
      aborted,
      outputTruncated: result.isMaxBuffer,
      signal: result.signal ?? null,
      spawnError: spawned ? null : { code: result.code, message: result.shortMessage ?? "the shell could not be started" },
    };
  } finally {
    clearTimeout(timer);
    run.signal?.removeEventListener("abort", onAbort);
    if (pid !== undefined) run.running?.delete(pid);
  }
}
