import { runKernelCommand } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ScheduledRun, ScheduledTaskView } from "../src/index.js";
import { type Harness, harness, tempDir } from "./helpers.js";

let dir: ReturnType<typeof tempDir>;
let h: Harness;

beforeEach(async () => {
  dir = tempDir();
  h = await harness({ baseDir: dir.path });
});

afterEach(async () => {
  await h.close();
  dir.remove();
});

/** Runs `antler <words...>` against the harness kernel as the CLI does: AntlerErrors become `✖ message` and exit 1. */
const antler = (...argv: string[]) => runKernelCommand(h.kernel, argv, { cwd: dir.path });

describe("antler schedule", () => {
  it("contributes add, list, runs, pause, resume, trigger, rm and `scheduler run`", () => {
    const names = h.kernel.commands.filter((c) => c.plugin === "@antler/plugin-scheduler").map((c) => c.name);
    expect(names.sort()).toEqual(
      [
        "schedule add",
        "schedule list",
        "schedule runs",
        "schedule pause",
        "schedule resume",
        "schedule trigger",
        "schedule rm",
        "scheduler run",
      ].sort(),
    );
  });

  it("adds a cron task for a user and lists it with its next fire time", async () => {
    const added = await antler(
      "schedule",
      "add",
      "--cron",
      "0 9 * * 1-5",
      "--tz",
      "Europe/Berlin",
      "--user",
      "alice",
      "--name",
      "standup",
      "--prompt",
      "Summarize yesterday",
    );
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^Added task_[0-9a-f]{32}: cron "0 9 \* \* 1-5" Europe\/Berlin, next \d{4}-\d\d-\d\dT0[78]:00:00.000Z/);
    const listed = await antler("schedule", "list");
    expect(listed.stdout).toMatch(/\[active\]\s+cron "0 9 \* \* 1-5" Europe\/Berlin\s+"standup"/);
    expect(listed.stdout).toMatch(/owner alice · thread new per run/);
    const json = JSON.parse((await antler("schedule", "list", "--user", "alice", "--json")).stdout) as ScheduledTaskView[];
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({ kind: "cron", owner_user_id: "alice", name: "standup", prompt: "Summarize yesterday" });
    expect(JSON.parse((await antler("schedule", "list", "--user", "bob", "--json")).stdout)).toEqual([]);
  });

  it("exits 1 with a clear message for a bad cron expression, a bad timezone, a past once time and a missing schedule", async () => {
    const badCron = await antler("schedule", "add", "--cron", "0 9 * *", "--prompt", "x");
    expect(badCron.code).toBe(1);
    expect(badCron.stderr).toMatch(/✖ cron: cron expression "0 9 \* \*" has 4 field\(s\); five are needed/);
    const badRange = await antler("schedule", "add", "--cron", "0 24 * * *", "--prompt", "x");
    expect(badRange.stderr).toMatch(/invalid cron expression "0 24 \* \* \*": .*hour/);
    const badTz = await antler("schedule", "add", "--cron", "0 9 * * *", "--tz", "Berlin", "--prompt", "x");
    expect(badTz.stderr).toMatch(/✖ timezone: unknown timezone "Berlin"/);
    const past = await antler("schedule", "add", "--at", "2020-01-01T00:00:00Z", "--prompt", "x");
    expect(past.stderr).toMatch(/✖ at: once time 2020-01-01T00:00:00.000Z is in the past/);
    const neither = await antler("schedule", "add", "--prompt", "x");
    expect(neither.stderr).toMatch(/give exactly one of `at` \(a once task\) and `cron`/);
    const unknownFlag = await antler("schedule", "add", "--every", "5m", "--prompt", "x");
    expect(unknownFlag.stderr).toMatch(/Unknown option '--every'[\s\S]*Usage: antler schedule add/);
    expect(JSON.parse((await antler("schedule", "list", "--json")).stdout)).toEqual([]);
  });

  it("pauses, resumes and removes by id, and says so for an unknown id", async () => {
    const { stdout } = await antler("schedule", "add", "--cron", "*/15 * * * *", "--prompt", "x", "--json");
    const task = JSON.parse(stdout) as ScheduledTaskView;
    expect((await antler("schedule", "pause", task.id)).stdout).toBe(`${task.id} is paused\n`);
    expect((await antler("schedule", "resume", task.id)).stdout).toMatch(new RegExp(`^${task.id} is active, next \\d{4}-`));
    expect((await antler("schedule", "rm", task.id)).stdout).toBe(`Removed ${task.id}.\n`);
    for (const verb of ["pause", "resume", "trigger", "rm", "runs"]) {
      const missing = await antler("schedule", verb, task.id);
      expect(missing.code, verb).toBe(1);
      expect(missing.stderr, verb).toMatch(new RegExp(`✖ no scheduled task "${task.id}"[\\s\\S]*antler schedule list`));
    }
    const noId = await antler("schedule", "pause");
    expect(noId.stderr).toMatch(/give a task id[\s\S]*Usage: antler schedule pause <id>/);
  });

  it("triggers a task now, non-interactively, and prints the finished run with its trace id", async () => {
    const { stdout } = await antler(
      "schedule",
      "add",
      "--at",
      new Date(Date.now() + 3600_000).toISOString(),
      "--prompt",
      "report now",
      "--user",
      "alice",
      "--json",
    );
    const task = JSON.parse(stdout) as ScheduledTaskView;
    const triggered = await antler("schedule", "trigger", task.id, "--json");
    expect(triggered.code).toBe(0);
    const run = JSON.parse(triggered.stdout) as ScheduledRun;
    expect(run).toMatchObject({ status: "succeeded", trigger: "manual", task_id: task.id });
    expect(h.model().calls[0]?.tools).not.toContain("ask_clarification");
    expect(h.contexts[0]).toMatchObject({ non_interactive: true, user_id: "alice", antler_trace_id: run.trace_id });
    const runs = await antler("schedule", "runs", task.id);
    expect(runs.stdout).toMatch(new RegExp(`${run.id}\\s+succeeded\\s+manual .* trace ${run.trace_id}`));
    // A manual trigger leaves the schedule alone: the once task is still due later.
    const after = JSON.parse((await antler("schedule", "list", "--json")).stdout) as ScheduledTaskView[];
    expect(after[0]).toMatchObject({ state: "active", next_fire_at: task.next_fire_at, run_count: 1 });
  });

  it("warns that tasks are not shared when storage.backend is memory", async () => {
    await h.close();
    h = await harness({ baseDir: dir.path, storage: { backend: "memory" } });
    const added = await antler("schedule", "add", "--cron", "0 9 * * *", "--prompt", "x");
    expect(added.code).toBe(0);
    expect(added.stderr).toMatch(/warning: storage.backend is memory, so tasks live only in this process/);
  });
});
