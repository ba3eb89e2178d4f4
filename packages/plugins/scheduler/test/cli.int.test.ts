import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ScheduledRun, ScheduledTaskView } from "../src/index.js";
import { harness, schedulerFor, tempDir, waitFor } from "./helpers.js";

const here = dirname(fileURLToPath(import.meta.url));
const ANTLER = join(here, "..", "..", "..", "kernel", "bin", "antler.js");
const DIST = join(here, "..", "dist", "index.js");
const MODELS = join(here, "fixtures", "scripted-models.mjs");

let dir: ReturnType<typeof tempDir>;
const running: Array<ReturnType<typeof spawn>> = [];

beforeAll(() => {
  for (const file of [DIST, join(here, "..", "..", "..", "kernel", "dist", "cli", "main.js")]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: build first (npx tsc -b packages/plugins/scheduler)`);
  }
});

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  dir?.remove();
});

function writeConfig(): string {
  dir = tempDir();
  const file = join(dir.path, "config.yaml");
  writeFileSync(
    file,
    [
      "models:",
      "  - { name: scripted, provider: scripted }",
      "title: { enabled: false }",
      "plugins:",
      `  - path: ${JSON.stringify(MODELS)}`,
      `  - path: ${JSON.stringify(DIST)}`,
      "    config: { poll_interval_seconds: 0.1, instance_id: cli-poller }",
      "",
    ].join("\n"),
  );
  return file;
}

function antler(args: string[], options: { cwd: string }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ANTLER, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += String(d);
    });
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the antler binary with the scheduler plugin", () => {
  it("adds a once task, `antler scheduler run` fires it non-interactively, and stops cleanly on SIGTERM", async () => {
    writeConfig();
    // Added in-process against the same SQLite file (a CLI boot can take seconds on a busy machine, and the time
    // must still be in the future when it is checked).
    const h = await harness({ baseDir: join(dir.path, ".antler") });
    const admin = schedulerFor(h, undefined);
    let task: ScheduledTaskView;
    try {
      task = await admin.add("alice", { prompt: "nightly digest", at: new Date(Date.now() + 3000).toISOString() });
    } finally {
      await admin.close();
      await h.close();
    }

    const poller = spawn(process.execPath, [ANTLER, "scheduler", "run"], {
      cwd: dir.path,
      env: { PATH: process.env.PATH },
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.push(poller);
    let stderr = "";
    poller.stderr.on("data", (d) => {
      stderr += String(d);
    });
    const exited = new Promise<number | null>((resolve) => poller.once("exit", (code) => resolve(code)));
    await waitFor(() => stderr.includes("scheduler instance cli-poller polling"), 30_000, "the poller to start");

    const runs = await waitFor(
      async () => {
        const listed = await antler(["schedule", "runs", task.id, "--json"], { cwd: dir.path });
        const parsed = JSON.parse(listed.stdout || "[]") as ScheduledRun[];
        return parsed.some((r) => r.status !== "running") ? parsed : undefined;
      },
      60_000,
      "the occurrence to finish",
    );
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "succeeded", instance_id: "cli-poller", owner_user_id: "alice" });
    expect(runs[0]?.trace_id).toMatch(/^[0-9a-f]{32}$/);

    poller.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/scheduler stopping/);
  });

  it("adds and lists a task, and exits 1 with the reason for a bad cron expression and for an unknown id", async () => {
    writeConfig();
    const added = await antler(["schedule", "add", "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "--prompt", "standup", "--json"], {
      cwd: dir.path,
    });
    expect(added.code).toBe(0);
    const task = JSON.parse(added.stdout) as ScheduledTaskView;
    expect(task).toMatchObject({ kind: "cron", owner_user_id: "default", state: "active" });
    const listed = await antler(["schedule", "list"], { cwd: dir.path });
    expect(listed.stdout).toContain(`${task.id}  [active]  cron "0 9 * * 1-5" Europe/Berlin`);
    const bad = await antler(["schedule", "add", "--cron", "*/5 * * *", "--prompt", "x"], { cwd: dir.path });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/✖ cron: cron expression "\*\/5 \* \* \*" has 4 field\(s\); five are needed\n {2}hint: Write "minute hour/);
    const missing = await antler(["schedule", "trigger", "task_nope"], { cwd: dir.path });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/✖ no scheduled task "task_nope"/);
  });

  it("a process whose only activity is the poller exits by itself: the poller never keeps it alive", async () => {
    dir = tempDir();
    const started = Date.now();
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(here, "fixtures", "poller-alone.mjs"), dir.path], {
        env: { PATH: process.env.PATH },
        stdio: ["ignore", "pipe", "inherit"],
      });
      running.push(child);
      let stdout = "";
      child.stdout.on("data", (d) => {
        stdout += String(d);
      });
      const timer = setTimeout(() => reject(new Error(`still running after 30 s: ${stdout}`)), 30_000);
      child.once("exit", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout });
      });
    });
    expect(result).toEqual({ code: 0, stdout: "polling true\n" });
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
