import { type ChildProcess, spawn } from "node:child_process";
import mcpPlugin, { MCP_BACKGROUND_TASKS } from "@antler/plugin-mcp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backgroundTasksResponseSchema } from "../src/background-tasks-schema.js";
import { BOB_KEY, startTestGateway } from "./fixtures.js";

// The job-handle MCP server of @antler/plugin-mcp's durable-task tests (a real process over streamable HTTP).
const JOB_SERVER = new URL("../../mcp/test/fixtures/job-server.mjs", import.meta.url).pathname;

let child: ChildProcess;
let origin: string;

beforeAll(async () => {
  child = spawn(process.execPath, [JOB_SERVER], { stdio: ["ignore", "pipe", "pipe"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += String(d);
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`job server exited with ${code}`)));
  });
  origin = `http://127.0.0.1:${port}`;
});
afterAll(() => {
  child.kill("SIGTERM");
});

function script(messages: ReadonlyArray<{ getType(): string; content: unknown }>) {
  const last = messages[messages.length - 1];
  if (last?.getType() === "tool") return { text: "started" };
  if (String(last?.content).includes("[Background task update]")) return { text: "your report is ready" };
  return { toolCalls: [{ name: "jobs_start_job", args: { label: "report" } }] };
}

describe("GET /api/threads/{id}/background-tasks", () => {
  it("lists the thread's durable MCP tasks for its owner only, never with the remote handle; the poller runs while serving", async () => {
    const gw = await startTestGateway({
      script: { respond: script },
      plugins: [
        {
          plugin: mcpPlugin,
          config: {
            servers: {
              jobs: {
                transport: "http",
                url: `${origin}/mcp`,
                tasks: { tools: [{ tool: "start_job", status_tool: "job_status", cancel_tool: "cancel_job" }] },
              },
            },
            background_tasks: { poll_interval_seconds: 0.1 },
          },
        },
      ],
    });
    const service = gw.client.kernel.scope.resolve(MCP_BACKGROUND_TASKS);
    // Serving starts the poller (a restarted server resumes what a previous process left), before any tool call.
    expect(service.isPolling).toBe(true);

    await gw.client.chat("start the report", { threadId: "t-api", userId: "alice" });
    const first = await gw.call("/api/threads/t-api/background-tasks");
    expect(first.status).toBe(200);
    const text = await first.text();
    expect(text).not.toContain("HANDLE-");
    const body = backgroundTasksResponseSchema.parse(JSON.parse(text));
    expect(body.tasks).toHaveLength(1);
    expect(body.tasks[0]).toMatchObject({ task_name: "jobs_start_job", server: "jobs", cancel_requested: false });
    expect(Object.keys(body.tasks[0] ?? {}).sort()).toEqual(
      [
        "cancel_requested",
        "created_at",
        "error",
        "finished_at",
        "result_summary",
        "server",
        "status",
        "task_id",
        "task_name",
        "updated_at",
      ].sort(),
    );

    // Another user's thread answers 404, like a missing one.
    expect((await gw.call("/api/threads/t-api/background-tasks", { key: BOB_KEY })).status).toBe(404);
    expect((await gw.call("/api/threads/nope/background-tasks")).status).toBe(404);

    await fetch(`${origin}/control/finish`, { method: "POST", body: "{}" });
    const deadline = Date.now() + 15_000;
    let finished: ReturnType<typeof backgroundTasksResponseSchema.parse> | undefined;
    while (Date.now() < deadline) {
      const raw = await (await gw.call("/api/threads/t-api/background-tasks")).text();
      expect(raw).not.toContain("HANDLE-");
      const parsed = backgroundTasksResponseSchema.parse(JSON.parse(raw));
      if (parsed.tasks[0]?.status === "completed") {
        finished = parsed;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(finished?.tasks[0]?.result_summary).toContain("rendered report");
    expect((await gw.call("/api/threads/t-api/background-tasks?active_only=true").then((r) => r.json())) as unknown).toMatchObject({
      tasks: [],
    });
    expect(JSON.stringify(gw.logs)).not.toContain("HANDLE-");
  });
});
