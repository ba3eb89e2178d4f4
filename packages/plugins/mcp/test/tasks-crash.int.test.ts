import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KernelConfigInput } from "@antler/kernel";
import { createPostgresTestSchema, describeWithPostgres } from "@antler/kernel/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type JobServer, mcpTaskConfig, startJobServer, TASK_INSTANCE, type TaskHarness, taskHarness, waitFor } from "./tasks-helpers.js";

const DIST = new URL("../dist/index.js", import.meta.url).pathname;
type Storage = KernelConfigInput["storage"];

let server: JobServer;
const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  if (!existsSync(DIST))
    throw new Error(`${DIST} is missing: build first (pnpm exec tsc -b packages/plugins/mcp); the instance runs compiled code`);
  server = await startJobServer();
});
afterAll(async () => {
  await server.stop();
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server.hold(false, "job_status");
});

/** Starts the instance that starts the task; resolves with its tool result and a reader of its output lines. */
async function startInstance(options: Record<string, unknown>): Promise<{ child: ChildProcess; toolResult: string; output: () => string }> {
  const child = spawn(process.execPath, [TASK_INSTANCE], {
    env: { PATH: process.env.PATH, TASK_INSTANCE: JSON.stringify(options) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d) => {
    out += String(d);
  });
  child.stderr?.on("data", (d) => {
    out += String(d);
  });
  const toolResult = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const line = out.split("\n").find((l) => l.includes('"event":"started"'));
      if (line) {
        clearInterval(timer);
        resolve(String((JSON.parse(line) as { tool_result: string }).tool_result));
      }
    }, 20);
    child.once("exit", (code) => {
      clearInterval(timer);
      reject(new Error(`the instance exited with ${code} before starting the task:\n${out}`));
    });
  });
  return { child, toolResult, output: () => out };
}

function scenario(storageFor: () => Promise<{ storage: Storage; drop?: () => Promise<void> }>) {
  it("a task outlives a SIGKILL of the process that started it: another instance takes its lease over after expiry and finishes it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "antler-mcp-crash-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const { storage, drop } = await storageFor();
    if (drop) cleanups.push(drop);
    const mcp = mcpTaskConfig(server.url, { lease_seconds: 2, poll_interval_seconds: 0.1 });

    // The first instance's status poll will hang on the server, so it dies holding the task's lease.
    await server.hold(true, "job_status");
    const doomed = await startInstance({
      baseDir: dir,
      storage,
      mcp: { ...mcp, background_tasks: { ...mcp.background_tasks, instance_id: "doomed" } },
      threadId: "t-crash",
    });
    const taskId = /bgt_[0-9a-f]{32}/.exec(doomed.toolResult)?.[0] as string;
    expect(taskId).toBeDefined();
    expect(doomed.toolResult).not.toContain("HANDLE-");

    const survivor: TaskHarness = await taskHarness({
      baseDir: dir,
      storage,
      mcp: { ...mcp, background_tasks: { ...mcp.background_tasks, instance_id: "survivor" } },
    });
    cleanups.push(() => survivor.close());
    const store = await survivor.service.store();
    const handle = (await store.byId(taskId))?.remote_handle as string;
    expect(handle).toMatch(/^HANDLE-/);
    await waitFor(
      async () => (await server.state()).statusCalls.some((c) => c.job_id === handle && c.held),
      15_000,
      "the doomed instance's poll",
    );
    const leased = await store.byId(taskId);
    expect(leased).toMatchObject({ lease_owner: "doomed", status: "running" });

    doomed.child.kill("SIGKILL");
    await new Promise((resolve) => doomed.child.once("exit", resolve));
    await server.hold(false, "job_status");
    await server.finish();
    survivor.service.startPoller();

    const done = await waitFor(
      async () => {
        const row = await store.byId(taskId);
        // The lease is handed back after the notification is recorded (work()'s finally), so wait for both.
        return row?.notify_state === "done" && row.lease_owner === null ? row : undefined;
      },
      20_000,
      "the survivor to finish the task, notify and hand its lease back",
    );
    expect(done).toMatchObject({ status: "completed", lease_owner: null });
    expect(done.result_summary).toContain("rendered crash");
    // The survivor waited for the dead instance's lease to expire before polling the task.
    const survivorPolls = (await server.state()).statusCalls.filter((c) => c.job_id === handle && !c.held);
    expect(survivorPolls.length).toBeGreaterThan(0);
    expect(survivorPolls.every((c) => c.at >= (leased?.lease_expires_at as string))).toBe(true);
    // The notification ran in the survivor, on the thread the dead instance started, non-interactively, in its own trace.
    const notifyIndex = survivor
      .model()
      .calls.findIndex((c) => JSON.stringify(c.messages.at(-1)?.content ?? "").includes("[Background task update]"));
    expect(notifyIndex).toBeGreaterThanOrEqual(0);
    expect(survivor.contexts[notifyIndex]).toMatchObject({
      thread_id: "t-crash",
      non_interactive: true,
      antler_trace_id: done.notify_trace_id,
    });
    expect(done.notify_trace_id).not.toBe(done.trace_id);
    // The thread's history from the dead process is there: the notification continued it.
    expect(survivor.model().calls[notifyIndex]?.messages.some((m) => String(m.content).includes("start crash"))).toBe(true);
    // No log line of either process, nor any tool result, carries the handle.
    expect(doomed.output()).toContain('"msg":"MCP background task started"');
    expect(doomed.output()).not.toContain("HANDLE-");
    expect(JSON.stringify(survivor.kernel.logs)).not.toContain("HANDLE-");
  });
}

describe("durable MCP tasks across a crash, on one SQLite file", () => {
  scenario(async () => ({ storage: { backend: "sqlite" } }));
});

describeWithPostgres("durable MCP tasks across a crash, on one PostgreSQL database", (url) => {
  scenario(async () => {
    const schema = await createPostgresTestSchema(url, "mcptasks");
    return { storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name }, drop: () => schema.drop() };
  });
});
