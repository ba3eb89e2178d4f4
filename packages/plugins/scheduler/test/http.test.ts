import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { CALLER_DATA_LIMITS, type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import schedulerPlugin, { type ScheduledRun, type ScheduledTaskView } from "../src/index.js";
import { contextRecorder, tempDir, waitFor } from "./helpers.js";

const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef00";

let dir: ReturnType<typeof tempDir>;
let client: AntlerClient;
let gateway: RunningGateway;
let models: ReturnType<typeof scriptedModelsPlugin>;
let recorder: ReturnType<typeof contextRecorder>;

beforeEach(async () => {
  dir = tempDir();
  models = scriptedModelsPlugin({ scripted: { respond: () => ({ text: "done" }) } });
  recorder = contextRecorder();
  client = await AntlerClient.create({
    plugins: [models, recorder.plugin, schedulerPlugin],
    config: {
      base_dir: dir.path,
      models: [{ name: "scripted", provider: "scripted" }],
      title: { enabled: false },
      logging: { level: "warn" },
    },
    cwd: dir.path,
    env: {},
    discover: false,
  });
  gateway = await startGateway({
    client,
    config: {
      port: 0,
      auth: {
        mode: "api_keys",
        api_keys: [
          { key: ALICE, user: "alice" },
          { key: BOB, user: "bob" },
        ],
      },
    },
    shutdownGraceMs: 500,
  });
});

afterEach(async () => {
  await gateway.close();
  await client.close();
  await client.kernel.close();
  dir.remove();
});

/** The JSON bodies these routes answer with (tasks, runs, errors), loosely. */
interface Body {
  tasks: ScheduledTaskView[];
  run: ScheduledRun;
  runs: ScheduledRun[];
  error: { code: string; message: string; where?: string; details?: Record<string, unknown> };
  [key: string]: unknown;
}

async function call(
  path: string,
  init: { key?: string; method?: string; json?: unknown } = {},
): Promise<{ status: number; body: Body; headers: Headers }> {
  const response = await fetch(`${gateway.url}/api${path}`, {
    method: init.method ?? (init.json === undefined ? "GET" : "POST"),
    headers: {
      ...(init.key === "" ? {} : { authorization: `Bearer ${init.key ?? ALICE}` }),
      ...(init.json === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as Body, headers: response.headers };
}

describe("/api/scheduled-tasks over HTTP", () => {
  it("adds, lists, pauses, resumes, triggers and deletes a user's own task", async () => {
    const created = await call("/scheduled-tasks", {
      json: { prompt: "weekly digest", cron: "0 8 * * 1", timezone: "Asia/Tokyo", name: "digest" },
    });
    expect(created.status).toBe(201);
    const task = created.body as unknown as ScheduledTaskView;
    expect(task).toMatchObject({
      owner_user_id: "alice",
      kind: "cron",
      timezone: "Asia/Tokyo",
      state: "active",
      name: "digest",
      running: false,
    });
    // Instance names are the deployment's host names and pids: not for API users.
    expect(Object.keys(task)).not.toContain("lease_owner");
    expect(created.headers.get("x-trace-id")).toBeTruthy();

    expect((await call("/scheduled-tasks")).body.tasks.map((t) => t.id)).toEqual([task.id]);
    expect((await call(`/scheduled-tasks/${task.id}`)).body.id).toBe(task.id);
    expect((await call(`/scheduled-tasks/${task.id}/pause`, { method: "POST" })).body.state).toBe("paused");
    expect((await call(`/scheduled-tasks/${task.id}/resume`, { method: "POST" })).body.state).toBe("active");

    const triggered = await call(`/scheduled-tasks/${task.id}/trigger`, { method: "POST" });
    expect(triggered.status).toBe(202);
    const run = triggered.body.run;
    expect(run).toMatchObject({ status: "running", trigger: "manual", owner_user_id: "alice" });
    expect(Object.keys(run)).not.toContain("instance_id");
    // A manual trigger is a layered binding inside the request: the occurrence stays on the request's trace.
    expect(run.trace_id).toBe(triggered.headers.get("x-trace-id"));
    const runs = await waitFor(
      async () => {
        const listed = (await call(`/scheduled-tasks/${task.id}/runs`)).body.runs;
        return listed[0]?.status === "succeeded" ? listed : undefined;
      },
      20_000,
      "the triggered run to succeed",
    );
    expect(runs).toHaveLength(1);
    expect(models.models.get("scripted")?.calls[0]?.tools).not.toContain("ask_clarification");
    expect(recorder.contexts[0]).toMatchObject({ non_interactive: true, user_id: "alice", antler_trace_id: run.trace_id });

    const deleted = await call(`/scheduled-tasks/${task.id}`, { method: "DELETE" });
    expect(deleted).toMatchObject({ status: 200, body: { id: task.id, deleted: true } });
    expect((await call(`/scheduled-tasks/${task.id}`)).status).toBe(404);
  });

  it("answers 404 for another user's task on every route, and lists only the caller's tasks", async () => {
    const task = (await call("/scheduled-tasks", { json: { prompt: "alice only", cron: "*/10 * * * *" } }))
      .body as unknown as ScheduledTaskView;
    expect((await call("/scheduled-tasks", { key: BOB })).body.tasks).toEqual([]);
    for (const [method, suffix] of [
      ["GET", ""],
      ["POST", "/pause"],
      ["POST", "/resume"],
      ["POST", "/trigger"],
      ["GET", "/runs"],
      ["DELETE", ""],
    ] as const) {
      const response = await call(`/scheduled-tasks/${task.id}${suffix}`, { key: BOB, method });
      expect(response.status, `${method} ${suffix}`).toBe(404);
      expect(response.body.error.code).toBe("ANTLER_ERR_SCHEDULE_NOT_FOUND");
    }
    expect((await call(`/scheduled-tasks/${task.id}`)).body.state).toBe("active");
    expect((await call(`/scheduled-tasks/${task.id}/runs`)).body.runs).toEqual([]);
  });

  it("answers 400 with the reason for a bad cron expression, a bad timezone, a past once time and a server-owned context key", async () => {
    const badCron = await call("/scheduled-tasks", { json: { prompt: "x", cron: "0 9 * *" } });
    expect(badCron.status).toBe(400);
    expect(badCron.body.error).toMatchObject({ code: "ANTLER_ERR_SCHEDULE_INVALID", where: "cron" });
    expect(badCron.body.error.message).toMatch(/has 4 field\(s\); five are needed/);
    const badTz = await call("/scheduled-tasks", { json: { prompt: "x", cron: "0 9 * * *", timezone: "Nowhere/City" } });
    expect(badTz.body.error.message).toMatch(/unknown timezone "Nowhere\/City"/);
    const past = await call("/scheduled-tasks", { json: { prompt: "x", at: "2001-01-01T00:00:00Z" } });
    expect(past.status).toBe(400);
    expect(past.body.error.message).toMatch(/is in the past/);
    const forged = await call("/scheduled-tasks", { json: { prompt: "x", cron: "0 9 * * *", context: { non_interactive: false } } });
    expect(forged.status).toBe(400);
    expect(forged.body.error.code).toBe("ANTLER_ERR_CONTEXT_FORBIDDEN_KEY");
    const both = await call("/scheduled-tasks", { json: { prompt: "x", cron: "0 9 * * *", at: "2030-01-01T00:00:00Z" } });
    expect(both.status).toBe(400);
    expect((await call("/scheduled-tasks")).body.tasks).toEqual([]);
  });

  it("holds a task's context to the caller-data limits of a run's context: 400 naming the limit, nothing stored", async () => {
    const wide = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]));
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 40; i++) deep = { next: deep };
    for (const [context, limit] of [
      [wide, "max_keys"],
      [deep, "max_depth"],
      [{ note: "x".repeat(60 * 1024) }, "max_string_length"],
    ] as const) {
      const refused = await call("/scheduled-tasks", { json: { prompt: "x", cron: "0 9 * * *", context } });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe("ANTLER_ERR_GATEWAY_LIMIT_EXCEEDED");
      expect(refused.body.error).toMatchObject({ details: { limit, max: CALLER_DATA_LIMITS[limit] } });
    }
    expect((await call("/scheduled-tasks")).body.tasks).toEqual([]);
    // Context within the limits is still taken.
    const ok = await call("/scheduled-tasks", {
      json: { prompt: "x", cron: "0 9 * * *", context: { topic: "digest", depth: { a: [1, 2] } } },
    });
    expect(ok.status).toBe(201);
  });

  it("refuses requests without an API key", async () => {
    expect((await call("/scheduled-tasks", { key: "" })).status).toBe(401);
  });
});

describe("the poller under the gateway", () => {
  async function serve(schedulerConfig: Record<string, unknown>) {
    const home = tempDir();
    const served = await AntlerClient.create({
      plugins: [
        scriptedModelsPlugin({ scripted: { respond: () => ({ text: "done" }) } }),
        { plugin: schedulerPlugin, config: schedulerConfig },
      ],
      config: {
        base_dir: home.path,
        models: [{ name: "scripted", provider: "scripted" }],
        title: { enabled: false },
        logging: { level: "warn" },
      },
      cwd: home.path,
      env: {},
      discover: false,
    });
    const server = await startGateway({
      client: served,
      config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: ALICE, user: "alice" }] } },
      shutdownGraceMs: 500,
    });
    const add = async () => {
      const response = await fetch(`${server.url}/api/scheduled-tasks`, {
        method: "POST",
        headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" },
        // Far enough ahead to still be in the future when a loaded machine gets round to checking it.
        body: JSON.stringify({ prompt: "fire soon", at: new Date(Date.now() + 2_000).toISOString() }),
      });
      expect(response.status).toBe(201);
      return (await response.json()) as ScheduledTaskView;
    };
    const runs = async (id: string) =>
      (
        (await (
          await fetch(`${server.url}/api/scheduled-tasks/${id}/runs`, { headers: { authorization: `Bearer ${ALICE}` } })
        ).json()) as Body
      ).runs;
    const close = async () => {
      await server.close();
      await served.close();
      await served.kernel.close();
      home.remove();
    };
    return { add, runs, close };
  }

  it("fires a due once task while `antler serve` runs, with no separate scheduler process", async () => {
    const gw = await serve({ poll_interval_seconds: 0.1 });
    try {
      const task = await gw.add();
      await waitFor(async () => (await gw.runs(task.id)).some((r) => r.status === "succeeded"), 30_000, "the task to run");
      expect((await gw.runs(task.id)).filter((r) => r.status === "succeeded")).toHaveLength(1);
    } finally {
      await gw.close();
    }
  }, 60_000);

  it("leaves polling to `antler scheduler run` when run_in_gateway is false", async () => {
    const gw = await serve({ poll_interval_seconds: 0.1, run_in_gateway: false });
    try {
      const task = await gw.add();
      // Past the task's time (2 s ahead) plus many poll intervals: a poller in the gateway would have fired it.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(await gw.runs(task.id)).toEqual([]);
    } finally {
      await gw.close();
    }
  });
});
