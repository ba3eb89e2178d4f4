import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCodes, type Sandbox, threadPaths } from "@antler/kernel";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LocalSandboxProvider } from "../src/index.js";

const WS = "/mnt/user-data/workspace";

/** True until `kill(pid, 0)` fails with ESRCH: a killed process counts as gone only once it has been reaped. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

/** Polls until `file` exists (a loaded machine can take a while to start a shell); false after `ms`. */
async function waitForFile(file: string, ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!existsSync(file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return existsSync(file);
}

/** Polls until the process is gone (a SIGKILLed orphan lingers as a zombie until init reaps it). */
async function waitGone(pid: number, ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

describe("local sandbox commands", () => {
  let root: string;
  let baseDir: string;
  let provider: LocalSandboxProvider;
  let sandbox: Sandbox;
  let workspaceHost: string;
  const strays: number[] = [];

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "antler-local-exec-"));
    baseDir = join(root, "base");
    provider = new LocalSandboxProvider({ baseDir });
    sandbox = await provider.acquire("exec-thread", { userId: "default" });
    workspaceHost = threadPaths(baseDir, "default", "exec-thread").workspace;
  });

  afterEach(async () => {
    vi.unstubAllEnvs();
    for (const pid of strays.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone, which is what the tests expect
      }
    }
    await provider.close();
    await rm(root, { recursive: true, force: true });
  });

  async function pidFrom(file: string): Promise<number> {
    const pid = Number((await readFile(join(workspaceHost, file), "utf8")).trim());
    expect(Number.isInteger(pid) && pid > 0).toBe(true);
    strays.push(pid);
    return pid;
  }

  it("a timeout kills the whole process group, grandchildren included", async () => {
    const started = Date.now();
    // 2 s leaves a loaded machine time to start both shells and write the pid file before the timeout.
    const result = await sandbox.executeCommand(`bash -c '(sleep 30 & echo $! > ${WS}/pid; wait)'`, { timeout: 2_000 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe("SIGKILL");
    // Well short of the 30 s sleep, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000);
    const pid = await pidFrom("pid");
    expect(await waitGone(pid)).toBe(true);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });

  it("an abort signal kills the whole process group and is not a timeout", async () => {
    const controller = new AbortController();
    const running = sandbox.executeCommand(`(sleep 30 & echo $! > ${WS}/pid2; wait)`, { signal: controller.signal, timeout: 20_000 });
    expect(await waitForFile(join(workspaceHost, "pid2"))).toBe(true);
    const aborting = Date.now();
    controller.abort();
    const result = await running;
    expect(Date.now() - aborting).toBeLessThan(15_000);
    expect(result.timedOut).toBe(false);
    expect(result.signal).toBe("SIGKILL");
    expect(await waitGone(await pidFrom("pid2"))).toBe(true);
  });

  it("an already-aborted signal refuses to start the command", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(sandbox.executeCommand(`touch ${WS}/never`, { signal: controller.signal })).rejects.toMatchObject({
      code: ErrorCodes.RUN_CANCELLED,
    });
    expect(existsSync(join(workspaceHost, "never"))).toBe(false);
  });

  it("closing the provider kills commands still running", async () => {
    const running = sandbox.executeCommand(`(sleep 30 & echo $! > ${WS}/pid3; wait)`, { timeout: 20_000 });
    expect(await waitForFile(join(workspaceHost, "pid3"))).toBe(true);
    const closing = Date.now();
    await provider.close();
    const result = await running;
    expect(Date.now() - closing).toBeLessThan(15_000);
    expect(result.signal).toBe("SIGKILL");
    expect(await waitGone(await pidFrom("pid3"))).toBe(true);
  });

  it("scrubs secrets from the inherited environment and keeps harmless variables", async () => {
    const secrets = {
      OPENAI_API_KEY: "sk-test",
      MY_SECRET: "s",
      GITHUB_TOKEN: "ghp",
      DB_PASSWORD: "pw",
      AWS_CREDENTIALS: "aws",
      SENTRY_DSN: "https://k@sentry.example/1",
      DATABASE_URL: "postgres://localhost/db",
      ANALYTICS_DATABASE_URL: "postgres://localhost/a",
      REDIS_URL: "redis://localhost:6379",
      MONGODB_URL: "mongodb://localhost",
      UPSTREAM: "https://user:hunter2@internal.example/api",
      lower_api_key: "k",
    };
    for (const [k, v] of Object.entries(secrets)) vi.stubEnv(k, v);
    vi.stubEnv("ANTLER_HARMLESS_SETTING", "visible");
    vi.stubEnv("ANTLER_PUBLIC_URL", "https://example.com/docs");
    const fresh = new LocalSandboxProvider({ baseDir });
    try {
      const box = await fresh.acquire("env-thread", { userId: "default" });
      const result = await box.executeCommand("env");
      const names = new Set(result.stdout.split("\n").map((line) => line.split("=")[0]));
      for (const name of Object.keys(secrets)) expect(names.has(name), `${name} must be scrubbed`).toBe(false);
      expect(result.stdout).not.toContain("hunter2");
      expect(result.stdout).toContain("ANTLER_HARMLESS_SETTING=visible");
      expect(result.stdout).toContain("ANTLER_PUBLIC_URL=https://example.com/docs");
    } finally {
      await fresh.close();
    }
  });

  it("passes an explicit env value through even when its name looks secret", async () => {
    vi.stubEnv("GITHUB_TOKEN", "from-host");
    const fresh = new LocalSandboxProvider({ baseDir });
    try {
      const box = await fresh.acquire("env-thread", { userId: "default" });
      const result = await box.executeCommand('printf "%s" "$GITHUB_TOKEN"', { env: { GITHUB_TOKEN: "request-scoped" } });
      expect(result.stdout).toBe("request-scoped");
    } finally {
      await fresh.close();
    }
  });

  it("refuses an env name that is not a POSIX name", async () => {
    await expect(sandbox.executeCommand("true", { env: { "BAD-NAME": "x" } })).rejects.toMatchObject({
      code: ErrorCodes.SANDBOX_EXEC_FAILED,
    });
  });

  it("translates virtual paths in the command text to the thread's host folders", async () => {
    const result = await sandbox.executeCommand(
      "mkdir -p /mnt/user-data/outputs/sub && printf hi > /mnt/user-data/outputs/sub/o.txt && cp /mnt/user-data/outputs/sub/o.txt /mnt/user-data/uploads/",
    );
    expect(result.exitCode).toBe(0);
    const paths = threadPaths(baseDir, "default", "exec-thread");
    expect(await readFile(join(paths.outputs, "sub", "o.txt"), "utf8")).toBe("hi");
    expect(await readFile(join(paths.uploads, "o.txt"), "utf8")).toBe("hi");
  });

  it("translates the thread's host paths in stdout and stderr back to virtual paths, through a symlinked base dir too", async () => {
    // Under a symlinked base dir `pwd -P` and `realpath` print real paths that differ from the configured ones.
    const linkedBase = join(root, "linked-base");
    await symlink(baseDir, linkedBase);
    const linked = new LocalSandboxProvider({ baseDir: linkedBase });
    try {
      const box = await linked.acquire("exec-thread", { userId: "default" });
      const result = await box.executeCommand(
        'echo "$PWD"; pwd -P; realpath ../outputs; ls /mnt/user-data/nope 2>&1 >/dev/null; echo err: $PWD >&2',
      );
      const lines = result.stdout.trim().split("\n");
      expect(lines[0]).toBe(WS);
      expect(lines[1]).toBe(WS);
      expect(lines[2]).toBe("/mnt/user-data/outputs");
      expect(lines[3]).toContain("/mnt/user-data/nope");
      expect(result.stderr.trim()).toBe(`err: ${WS}`);
      expect(result.stdout + result.stderr).not.toContain(root);
      expect(result.stdout + result.stderr).not.toContain(await realpath(root));
    } finally {
      await linked.close();
    }
  });

  it("maps /mnt/skills and /mnt/acp-workspace in commands, and leaves look-alike paths alone", async () => {
    await mkdir(join(baseDir, "skills", "public"), { recursive: true });
    await mkdir(join(threadPaths(baseDir, "default", "exec-thread").threadDir, "acp-workspace"), { recursive: true });
    const result = await sandbox.executeCommand(
      "ls -d /mnt/skills/public; cd /mnt/acp-workspace && pwd; echo /mnt/skillsets x/mnt/user-data/workspace",
    );
    expect(result.stdout.trim().split("\n")).toEqual([
      "/mnt/skills/public",
      "/mnt/acp-workspace",
      "/mnt/skillsets x/mnt/user-data/workspace",
    ]);
  });

  it("runs in a virtual cwd, read-only roots included, and rejects a missing one", async () => {
    await mkdir(join(baseDir, "skills"), { recursive: true });
    expect((await sandbox.executeCommand("pwd", { cwd: "/mnt/skills" })).stdout.trim()).toBe("/mnt/skills");
    await expect(sandbox.executeCommand("pwd", { cwd: `${WS}/missing` })).rejects.toMatchObject({ code: ErrorCodes.SANDBOX_NOT_FOUND });
  });

  it("recreates the workspace when a command removed it", async () => {
    await sandbox.executeCommand("rm -rf /mnt/user-data/workspace");
    const result = await sandbox.executeCommand("pwd");
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe(WS);
  });

  it("reports a shell that cannot start as SANDBOX_EXEC_FAILED", async () => {
    const broken = new LocalSandboxProvider({ baseDir, shell: join(root, "no-such-shell") });
    try {
      const box = await broken.acquire("exec-thread", { userId: "default" });
      await expect(box.executeCommand("true")).rejects.toMatchObject({ code: ErrorCodes.SANDBOX_EXEC_FAILED });
    } finally {
      await broken.close();
    }
  });

  it("kills a command whose output passes the limit and says so", async () => {
    const small = new LocalSandboxProvider({ baseDir, maxOutputChars: 10_000 });
    try {
      const box = await small.acquire("exec-thread", { userId: "default" });
      const result = await box.executeCommand("yes antler", { timeout: 10_000 });
      expect(result.timedOut).toBe(false);
      expect(result.stderr).toContain("output exceeded 10000 characters");
    } finally {
      await small.close();
    }
  });
});
