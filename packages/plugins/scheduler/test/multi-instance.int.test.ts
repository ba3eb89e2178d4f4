import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KernelConfigInput } from "@antler/kernel";
import { createPostgresTestSchema, describeWithPostgres, type PostgresTestSchema } from "@antler/kernel/testing";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ScheduledRun, Scheduler } from "../src/index.js";
import { type Harness, harness, schedulerFor, tempDir, waitFor } from "./helpers.js";

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, "fixtures", "instance.mjs");
const DIST = join(here, "..", "dist", "index.js");

type Storage = KernelConfigInput["storage"];

interface Instance {
  child: ChildProcess;
  exited: Promise<number | null>;
}

interface RecordLine {
  pid: number;
  instance: string;
  kind: "model" | "context";
  tools?: string[];
  context?: Record<string, unknown>;
}

const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(() => {
  if (!existsSync(DIST))
    throw new Error(`${DIST} is missing: build first (npx tsc -b packages/plugins/scheduler); the instances run compiled code`);
});

/** Starts one scheduler instance in its own Node process and resolves once it is polling. */
async function startInstance(options: {
  baseDir: string;
  storage: Storage;
  record: string;
  instanceId: string;
  delayMs?: number;
  scheduler?: Record<string, unknown>;
}): Promise<Instance> {
  const child = spawn(process.execPath, [FIXTURE], {
    env: {
      PATH: process.env.PATH,
      SCHEDULER_INSTANCE: JSON.stringify({ ...options, scheduler: { instance_id: options.instanceId, ...options.scheduler } }),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    let stdout = "";
    child.stdout?.on("data", (d) => {
      stdout += String(d);
      if (stdout.includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`instance ${options.instanceId} exited with ${code} before it was ready:\n${stderr}`)));
  });
  return { child, exited };
}

function records(file: string): RecordLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RecordLine);
}

async function stop(instance: Instance): Promise<void> {
  instance.child.kill("SIGTERM");
  const code = await instance.exited;
  expect(code).toBe(0);
}

async function finished(scheduler: Scheduler, taskId: string): Promise<ScheduledRun[]> {
  await waitFor(async () => (await scheduler.get(null, taskId)).state === "done", 30_000, `task ${taskId} to be done`);
  return scheduler.runs(null, taskId);
}

function scenarios(label: string, storageFor: () => Promise<{ storage: Storage; drop?: () => Promise<void> }>) {
  let h: Harness;
  let admin: Scheduler;
  let dir: ReturnType<typeof tempDir>;
  let storage: Storage;

  async function setup(): Promise<void> {
    dir = tempDir();
    const target = await storageFor();
    storage = target.storage;
    // The test's own kernel adds tasks and reads results; it never polls.
    h = await harness({ baseDir: dir.path, storage });
    admin = schedulerFor(h, undefined);
    cleanups.push(
      () => dir.remove(),
      async () => target.drop?.(),
      () => h.close(),
      () => admin.close(),
    );
  }

  it(`${label}: two instances in two processes fire each once task exactly once, non-interactively, with a unique recorded trace id`, async () => {
    await setup();
    const record = join(dir.path, "record.jsonl");
    writeFileSync(record, "");
    const common = { baseDir: dir.path, storage, record, scheduler: { poll_interval_seconds: 0.05, lease_seconds: 5 } };
    const [a, b] = [
      await startInstance({ ...common, instanceId: "instance-a" }),
      await startInstance({ ...common, instanceId: "instance-b" }),
    ];

    // Far enough ahead that all four adds still see a future time on a loaded machine.
    const at = new Date(Date.now() + 3_000).toISOString();
    const tasks = [];
    for (let i = 0; i < 4; i++) tasks.push(await admin.add("alice", { prompt: `scheduled job ${i}`, at }));
    const runs = await Promise.all(tasks.map((t) => finished(admin, t.id)));
    // Both instances keep polling for a while: a double fire would show up as a second run or model call.
    await new Promise((r) => setTimeout(r, 1000));
    await Promise.all([stop(a), stop(b)]);

    const all = (await Promise.all(tasks.map((t) => admin.runs(null, t.id)))).flat();
    expect(all).toHaveLength(4);
    expect(runs.map((r) => r.length)).toEqual([1, 1, 1, 1]);
    for (const run of all) {
      expect(run).toMatchObject({ status: "succeeded", attempt: 1, trigger: "schedule", owner_user_id: "alice" });
      expect(run.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(["instance-a", "instance-b"]).toContain(run.instance_id);
    }
    expect(new Set(all.map((r) => r.trace_id)).size).toBe(4);

    const lines = records(record);
    const modelCalls = lines.filter((l) => l.kind === "model");
    expect(modelCalls).toHaveLength(4);
    for (const call of modelCalls) {
      expect(call.tools).not.toContain("ask_clarification");
      expect(call.tools?.length ?? 0).toBeGreaterThan(0);
    }
    const contexts = lines.filter((l) => l.kind === "context").map((l) => l.context ?? {});
    expect(contexts).toHaveLength(4);
    for (const context of contexts) expect(context).toMatchObject({ non_interactive: true, user_id: "alice" });
    expect(contexts.map((x) => x.antler_trace_id).sort()).toEqual(all.map((r) => r.trace_id).sort());
    for (const run of all) {
      const ran = lines.find((l) => l.kind === "context" && l.context?.antler_trace_id === run.trace_id);
      expect(ran?.instance, `the instance recorded for ${run.id}`).toBe(run.instance_id);
    }
    const task = await admin.get("alice", tasks[0]?.id as string);
    expect(task).toMatchObject({ state: "done", run_count: 1, last_status: "succeeded", lease_owner: null });
    expect(task.last_trace_id).toBe(runs[0]?.[0]?.trace_id);
  });

  it(`${label}: a killed instance's occurrence is taken over by another process after its lease expires`, async () => {
    await setup();
    const record = join(dir.path, "record.jsonl");
    writeFileSync(record, "");
    const scheduler = { poll_interval_seconds: 0.1, lease_seconds: 1.5 };
    const doomed = await startInstance({ baseDir: dir.path, storage, record, instanceId: "doomed", delayMs: 120_000, scheduler });
    const task = await admin.add("alice", { prompt: "survive a crash", at: new Date(Date.now() + 2_000).toISOString() });
    await waitFor(async () => (await admin.get(null, task.id)).lease_owner === "doomed", 20_000, "the doomed instance to claim the task");
    await waitFor(
      () => records(record).some((l) => l.kind === "model" && l.instance === "doomed"),
      20_000,
      "the doomed instance's model call",
    );
    doomed.child.kill("SIGKILL");
    await doomed.exited;

    const survivor = await startInstance({ baseDir: dir.path, storage, record, instanceId: "survivor", scheduler });
    const runs = await finished(admin, task.id);
    await stop(survivor);

    expect(runs.map((r) => [r.attempt, r.status, r.instance_id])).toEqual([
      [2, "succeeded", "survivor"],
      [1, "interrupted", "doomed"],
    ]);
    expect(runs[1]?.error).toMatch(/the instance running it stopped renewing its lease/);
    expect(runs[0]?.trace_id).not.toBe(runs[1]?.trace_id);
    expect(await admin.get(null, task.id)).toMatchObject({ state: "done", last_status: "succeeded", run_count: 1 });
  });
}

describe("several scheduler processes on one SQLite file", () => {
  scenarios("SQLite", async () => ({ storage: { backend: "sqlite" } }));
});

describeWithPostgres("several scheduler processes on one PostgreSQL database", (url) => {
  scenarios("PostgreSQL", async () => {
    const schema: PostgresTestSchema = await createPostgresTestSchema(url, "sched");
    return { storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name }, drop: () => schema.drop() };
  });
});
