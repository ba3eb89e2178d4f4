import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runKernelCommand } from "@antler/kernel/testing";
import { AntlerClient, checkpointThreadId, type StreamEvent } from "@antler/plugin-runtime";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mcpPluginConfigSchema } from "../src/index.js";
import { type JobServer, mcpTaskConfig, startJobServer, type TaskHarness, taskHarness, waitFor } from "./tasks-helpers.js";

let server: JobServer;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  server = await startJobServer();
});
afterAll(async () => {
  await server.stop();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server.hold(false, "job_status");
  await server.hold(false, "cancel_job");
});

async function setup(backgroundTasks: Record<string, unknown> = {}): Promise<{ h: TaskHarness; client: AntlerClient; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "antler-mcp-tasks-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const h = await taskHarness({ baseDir: dir, mcp: mcpTaskConfig(server.url, backgroundTasks) });
  cleanups.push(() => h.close());
  const client = new AntlerClient({ kernel: h.kernel });
  cleanups.push(() => client.close());
  return { h, client, dir };
}

/** Runs one turn and returns its tool results (content by tool name) and its trace id. */
async function turn(
  client: AntlerClient,
  threadId: string,
  message: string,
): Promise<{ tools: Record<string, string>; events: StreamEvent[] }> {
  const tools: Record<string, string> = {};
  const events: StreamEvent[] = [];
  for await (const event of client.stream(message, { threadId })) {
    events.push(event);
    if (event.type === "messages-tuple" && event.data.type === "tool") tools[String(event.data.name)] = String(event.data.content);
  }
  return { tools, events };
}

function taskIdOf(text: string): string {
  const id = /bgt_[0-9a-f]{32}/.exec(text)?.[0];
  if (!id) throw new Error(`no task id in: ${text}`);
  return id;
}

async function jobOf(handle: string) {
  return (await server.state()).jobs.find((j) => j.id === handle);
}

describe("durable MCP tasks (job-handle pattern, real MCP server over HTTP)", () => {
  it("a long tool returns a local task id at once; the handle is stored privately and its status/cancel tools are hidden", async () => {
    const { h, client } = await setup();
    await h.service.stopPoller();
    const { tools } = await turn(client, "t-start", "start report");
    const text = tools.jobs_start_job ?? "";
    const taskId = taskIdOf(text);
    expect(text).not.toContain("HANDLE-");
    const row = await (await h.service.store()).byId(taskId);
    expect(row?.remote_handle).toMatch(/^HANDLE-/);
    expect(row).toMatchObject({
      status: "running",
      thread_id: "t-start",
      server: "jobs",
      task_name: "jobs_start_job",
      cancel_requested: 0,
    });
    expect(await jobOf(row?.remote_handle ?? "")).toMatchObject({ status: "running", label: "report" });
    const offered = h.model().calls[0]?.tools ?? [];
    expect(offered).toEqual(expect.arrayContaining(["jobs_start_job", "jobs_echo", "list_background_tasks", "cancel_background_task"]));
    expect(offered).not.toContain("jobs_job_status");
    expect(offered).not.toContain("jobs_cancel_job");
  });

  it("the thread's background_tasks state projects its tasks (task_id, task_name, status, updated_at)", async () => {
    const { h, client } = await setup();
    await h.service.stopPoller();
    const { tools } = await turn(client, "t-state", "start state");
    const taskId = taskIdOf(tools.jobs_start_job ?? "");
    const checkpointer = await h.kernel.openCheckpointer();
    cleanups.push(() => checkpointer.close());
    const tuple = await checkpointer.saver.getTuple({
      configurable: { thread_id: checkpointThreadId("default", "t-state"), checkpoint_ns: "" },
    });
    const projected = tuple?.checkpoint.channel_values.background_tasks as Array<Record<string, unknown>>;
    expect(projected).toEqual([{ task_id: taskId, task_name: "jobs_start_job", status: "running", updated_at: expect.any(String) }]);
    expect(JSON.stringify(tuple?.checkpoint)).not.toContain("HANDLE-");
  });

  it("the task finishes in the background and one notification run reports it, non-interactive, in its own trace", async () => {
    const { h, client } = await setup();
    const first = await turn(client, "t-notify", "start summary");
    const taskId = taskIdOf(first.tools.jobs_start_job ?? "");
    const store = await h.service.store();
    const original = await store.byId(taskId);
    await waitFor(
      async () => (await server.state()).statusCalls.some((c) => c.job_id === original?.remote_handle),
      10_000,
      "a status poll",
    );
    await server.finish({ result: undefined });
    const done = await waitFor(
      async () => {
        const row = await store.byId(taskId);
        return row?.notify_state === "done" ? row : undefined;
      },
      15_000,
      "the notification run",
    );
    expect(done).toMatchObject({ status: "completed", notify_state: "done" });
    expect(done.result_summary).toContain("rendered summary");
    expect(done.result_summary).not.toContain("HANDLE-");

    // The notification run: the model saw the update, with no ask_clarification, as a non-interactive run.
    const calls = h.model().calls;
    const notifyIndex = calls.findIndex((c) => JSON.stringify(c.messages.at(-1)?.content ?? "").includes("[Background task update]"));
    expect(notifyIndex).toBeGreaterThan(0);
    expect(calls[notifyIndex]?.tools).not.toContain("ask_clarification");
    expect(calls[0]?.tools).toContain("ask_clarification");
    const notifyContext = h.contexts[notifyIndex] ?? {};
    expect(notifyContext).toMatchObject({ non_interactive: true, thread_id: "t-notify", background_task_id: taskId });
    // Its own trace id: not the starting run's, not any poll's.
    const traceId = notifyContext.antler_trace_id;
    expect(traceId).toBe(done.notify_trace_id);
    expect(traceId).not.toBe(original?.trace_id);
    expect(h.contexts[0]?.antler_trace_id).toBe(original?.trace_id);
    const pollTraces = (await server.state()).statusCalls.filter((c) => c.job_id === original?.remote_handle).map((c) => c.trace_id);
    expect(pollTraces.length).toBeGreaterThan(0);
    expect(pollTraces).not.toContain(traceId);
    expect(pollTraces).not.toContain(original?.trace_id);
    expect(pollTraces.every((t) => typeof t === "string" && t.length > 0)).toBe(true);

    // At most once: more polls launch nothing more.
    const before = calls.length;
    await h.service.pollOnce();
    await h.service.pollOnce();
    expect(h.model().calls.length).toBe(before);
    const notifications = h
      .model()
      .calls.filter((c) => JSON.stringify(c.messages.at(-1)?.content ?? "").includes("[Background task update]"));
    expect(notifications).toHaveLength(1);
    // The run record of the notification carries the same trace id.
    const run = await client.getRun("t-notify", done.notify_run_id as string);
    expect(run.trace_id ?? (run as unknown as { metadata?: Record<string, unknown> }).metadata?.antler_trace_id).toBe(traceId);
    expect(JSON.stringify(h.kernel.logs)).not.toContain("HANDLE-");
  });

  it("cancel returns at once with the request recorded; the remote cancel happens in the background, retried after failures", async () => {
    const { h, client } = await setup();
    const started = await turn(client, "t-cancel", "start slow");
    const taskId = taskIdOf(started.tools.jobs_start_job ?? "");
    const store = await h.service.store();
    const handle = (await store.byId(taskId))?.remote_handle as string;
    // The server's cancel endpoint hangs, then fails twice: the tool must not wait for any of it.
    await server.hold(true, "cancel_job");
    await server.fail("cancel_job", 2);

    const cancelled = await turn(client, "t-cancel", `cancel ${taskId}`);
    const reply = cancelled.tools.cancel_background_task ?? "";
    expect(reply).toContain(`Cancellation of ${taskId}`);
    expect(reply).toContain('"cancel_requested":true');
    expect(reply).not.toContain("HANDLE-");
    // Recorded durably while the remote cancel is still hanging in the background.
    expect(await store.byId(taskId)).toMatchObject({ cancel_requested: 1, status: "running", cancel_sent_at: null });
    expect((await jobOf(handle))?.status).toBe("running");
    await waitFor(async () => (await server.state()).cancels.some((c) => c.job_id === handle), 10_000, "the background cancel call");
    await server.hold(false, "cancel_job");

    const finished = await waitFor(
      async () => {
        const row = await store.byId(taskId);
        return row?.status === "cancelled" ? row : undefined;
      },
      15_000,
      "the task to be cancelled",
    );
    const attempts = (await server.state()).cancels.filter((c) => c.job_id === handle);
    expect(attempts.map((c) => c.ok)).toEqual([false, false, true]);
    expect(finished.cancel_sent_at).not.toBeNull();
    expect((await jobOf(handle))?.status).toBe("cancelled");
    const retryLogs = h.kernel.logs.filter((l) => l.msg === "MCP background task remote call failed; retrying" && l.task === taskId);
    expect(retryLogs.map((l) => l.failures)).toEqual([1, 2]);
    expect(JSON.stringify(h.kernel.logs)).not.toContain("HANDLE-");
  });

  it("two instances on one database never poll the same task at once: the lease holder works, the other skips it", async () => {
    const { h, client, dir } = await setup({ lease_seconds: 30 });
    await h.service.stopPoller();
    const started = await turn(client, "t-lease", "start shared");
    const taskId = taskIdOf(started.tools.jobs_start_job ?? "");
    await h.service.stopPoller();
    const other = await taskHarness({ baseDir: dir, mcp: mcpTaskConfig(server.url, { lease_seconds: 30, instance_id: "other" }) });
    cleanups.push(() => other.close());
    const store = await h.service.store();
    const handle = (await store.byId(taskId))?.remote_handle as string;
    await waitFor(async () => (await store.due(new Date().toISOString(), 10)).includes(taskId), 5000, "the task to be due");

    await server.hold(true, "job_status");
    const first = h.service.pollOnce();
    await waitFor(async () => (await server.state()).statusCalls.some((c) => c.job_id === handle), 10_000, "the first poll");
    expect((await store.byId(taskId))?.lease_owner).toBe(h.service.instanceId);
    // Due by time, but leased: the other instance neither claims nor calls the server.
    await store.update(taskId, h.service.instanceId, { next_poll_at: new Date(0).toISOString() });
    expect(await other.service.pollOnce()).toEqual({ worked: [] });
    expect(await other.service.pollOnce()).toEqual({ worked: [] });
    expect((await server.state()).statusCalls.filter((c) => c.job_id === handle)).toHaveLength(1);
    await server.hold(false, "job_status");
    expect(await first).toEqual({ worked: [taskId] });
    expect((await store.byId(taskId))?.lease_owner).toBeNull();
  });

  it("antler mcp tasks list shows a thread's tasks without the handle; mcp tasks run --once works the due ones", async () => {
    const { h, client } = await setup({ notify: false });
    await h.service.stopPoller();
    const started = await turn(client, "t-cli", "start cli");
    const taskId = taskIdOf(started.tools.jobs_start_job ?? "");
    await h.service.stopPoller();
    const listed = await runKernelCommand(h.kernel, ["mcp", "tasks", "list", "--thread", "t-cli"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${taskId}  jobs_start_job  running`);
    expect(listed.stdout).not.toContain("HANDLE-");
    const missing = await runKernelCommand(h.kernel, ["mcp", "tasks", "list"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--thread is required.*antler mcp tasks list --thread <id>/s);

    await server.finish();
    const store = await h.service.store();
    await waitFor(async () => (await store.due(new Date().toISOString(), 10)).includes(taskId), 5000, "the task to be due");
    const ran = await runKernelCommand(h.kernel, ["mcp", "tasks", "run", "--once"]);
    expect(ran.stdout).toContain("worked on 1 task(s)");
    expect(await store.byId(taskId)).toMatchObject({ status: "completed", notify_state: "none" });
    const after = await runKernelCommand(h.kernel, ["mcp", "tasks", "list", "--thread", "t-cli"]);
    expect(after.stdout).toContain("completed");
    expect(after.stdout).toContain("rendered cli (job [job handle])");
  });

  it("list_background_tasks shows bounded local fields only", async () => {
    const { h, client } = await setup();
    await h.service.stopPoller();
    const started = await turn(client, "t-list", "start listing");
    const taskId = taskIdOf(started.tools.jobs_start_job ?? "");
    await h.service.stopPoller();
    const listed = await turn(client, "t-list", "list");
    const text = listed.tools.list_background_tasks ?? "";
    const json = JSON.parse(text.slice(text.indexOf("{"))) as { tasks: Array<Record<string, unknown>> };
    expect(json.tasks).toEqual([
      {
        task_id: taskId,
        task_name: "jobs_start_job",
        status: "running",
        cancel_requested: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    expect(text).not.toContain("HANDLE-");
    // Another thread sees none of them.
    expect(await h.service.list("default", "t-other")).toEqual([]);
  });

  it("bad input gets coded errors: unknown task, nothing to cancel, a start tool without a handle", async () => {
    const { h, client } = await setup();
    await h.service.stopPoller();
    const unknown = await turn(client, "t-bad", "cancel bgt_00000000000000000000000000000000");
    expect(unknown.tools.cancel_background_task).toMatch(/no background task "bgt_0+" on this thread.*ANTLER_ERR_MCP_TASK_NOT_FOUND/s);
    const none = await turn(client, "t-bad", "cancel");
    expect(none.tools.cancel_background_task).toMatch(/no running background task.*ANTLER_ERR_MCP_TASK_AMBIGUOUS/s);
    await expect(
      h.service.start({
        server: "jobs",
        config: mcpPluginConfigSchema.parse({ servers: { jobs: { transport: "http", url: server.url } } }).servers.jobs as never,
        task: { tool: "echo", status_tool: "job_status", handle_field: "job_id" },
        toolName: "jobs_echo",
        args: { text: "no json here" },
        caller: { userId: "default", threadId: "t-bad" },
        runContext: {},
      }),
    ).rejects.toMatchObject({ code: "ANTLER_ERR_MCP_TASK_NO_HANDLE" });
  });

  it("a finished task cannot be cancelled, and a failed remote status is retried with backoff before it finishes", async () => {
    const { h, client } = await setup();
    await h.service.stopPoller();
    const started = await turn(client, "t-retry", "start flaky");
    const taskId = taskIdOf(started.tools.jobs_start_job ?? "");
    await h.service.stopPoller();
    const store = await h.service.store();
    await server.fail("job_status", 3);
    await server.finish({ status: "failed", result: "renderer crashed" });
    const row = await waitFor(
      async () => {
        await h.service.pollOnce();
        const r = await store.byId(taskId);
        return r?.status === "failed" ? r : undefined;
      },
      15_000,
      "the failed status",
    );
    expect(row.failures).toBe(0);
    const retries = h.kernel.logs.filter((l) => l.msg === "MCP background task remote call failed; retrying" && l.task === taskId);
    expect(retries.map((l) => l.failures)).toEqual([1, 2, 3]);
    expect(retries.map((l) => l.retry_in_ms as number).every((ms, i, all) => i === 0 || ms >= (all[i - 1] as number) * 0.6)).toBe(true);
    const again = await turn(client, "t-retry", `cancel ${taskId}`);
    expect(again.tools.cancel_background_task).toMatch(/already finished \(failed\).*ANTLER_ERR_MCP_TASK_NOT_CANCELLABLE/s);
    expect(JSON.stringify(h.kernel.logs)).not.toContain("HANDLE-");
  });
});

describe("durable MCP task config", () => {
  it("refuses a start tool that is its own status tool, naming the path", () => {
    const parsed = mcpPluginConfigSchema.safeParse({
      servers: { jobs: { transport: "http", url: "http://127.0.0.1:1/mcp", tasks: { tools: [{ tool: "a", status_tool: "a" }] } } },
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(["servers", "jobs", "tasks", "tools", 0]);
    expect(parsed.error?.issues[0]?.message).toMatch(/cannot also be its own status_tool/);
  });
});
