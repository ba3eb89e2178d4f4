import { createTestKernel, runPluginConformance } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import mcpPlugin, { backgroundTasksMiddleware, MCP_BACKGROUND_TASKS, scrubHandle } from "../src/index.js";

// Nothing listens on port 9: the server fails to list (and is skipped), which these tests do not need.
const withTasks = {
  servers: {
    jobs: {
      transport: "http",
      url: "http://127.0.0.1:9/mcp",
      init_timeout_seconds: 2,
      tasks: { tools: [{ tool: "start_job", status_tool: "job_status", cancel_tool: "cancel_job" }] },
    },
  },
};

runPluginConformance(mcpPlugin, {
  validConfig: withTasks,
  invalidConfigs: [
    { servers: { jobs: { transport: "http", url: "http://127.0.0.1:9/mcp", tasks: { tools: [] } } } },
    { servers: { jobs: { transport: "http", url: "http://127.0.0.1:9/mcp", tasks: { tools: [{ tool: "a" }] } } } },
    {
      servers: {
        jobs: { transport: "http", url: "http://127.0.0.1:9/mcp", tasks: { tools: [{ tool: "a", status_tool: "b", extra: 1 }] } },
      },
    },
    { background_tasks: { poll_interval_seconds: 0 } },
    { background_tasks: { lease_second: 5 } },
  ],
});

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("durable MCP task tools exist only while a server lists tasks", () => {
  it("without `tasks:` there is no service, no task tool, no background_tasks state and no `mcp tasks` command", async () => {
    const kernel = await createTestKernel({ plugins: [{ plugin: mcpPlugin, config: {} }] });
    closers.push(() => kernel.close());
    expect(kernel.scope.tryResolve(MCP_BACKGROUND_TASKS)).toBeUndefined();
    const names = (await kernel.getAvailableTools({ includeMcp: true })).map((t) => t.name);
    expect(names).not.toContain("list_background_tasks");
    expect(names).not.toContain("cancel_background_task");
    expect([...kernel.commands].map((c) => c.name)).not.toContain("mcp tasks list");
  });

  it("with `tasks:` the agent gets list_background_tasks and cancel_background_task, and the poller is not started by assembly", async () => {
    const kernel = await createTestKernel({ plugins: [{ plugin: mcpPlugin, config: withTasks }] });
    closers.push(() => kernel.close());
    const names = (await kernel.getAvailableTools({ includeMcp: true })).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["list_background_tasks", "cancel_background_task"]));
    expect(kernel.scope.resolve(MCP_BACKGROUND_TASKS).isPolling).toBe(false);
    expect([...kernel.commands].map((c) => c.name)).toEqual(expect.arrayContaining(["mcp tasks list", "mcp tasks run"]));
  });
});

describe("the background_tasks projection", () => {
  it("owns an optional `background_tasks` state field", () => {
    const spec = backgroundTasksMiddleware(() => {
      throw new Error("not called");
    });
    const field = spec.state?.background_tasks as { safeParse(v: unknown): { success: boolean } };
    expect(field.safeParse(undefined).success).toBe(true);
    expect(
      field.safeParse([{ task_id: "bgt_1", task_name: "jobs_start_job", status: "running", updated_at: "2026-01-01T00:00:00.000Z" }])
        .success,
    ).toBe(true);
    expect(field.safeParse([{ task_id: "bgt_1" }]).success).toBe(false);
  });
});

describe("scrubHandle", () => {
  it("replaces every occurrence of the handle and leaves other text alone", () => {
    expect(scrubHandle("job H-1 failed; retry H-1 later", "H-1")).toBe("job [job handle] failed; retry [job handle] later");
    expect(scrubHandle("nothing here", "H-1")).toBe("nothing here");
  });
});
