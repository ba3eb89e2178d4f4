import type { Kernel, Logger } from "@antler/kernel";
import { MCP_BACKGROUND_TASKS, MCP_TOOLS, McpConfigClient, mcpConfigUpdateSchema } from "@antler/plugin-mcp";
import type { AntlerClient } from "@antler/plugin-runtime";
import type { Context, Hono } from "hono";
import { z } from "zod";
import type { GatewayConfig } from "./config.js";
import type { GatewayEnv } from "./env.js";
import { GatewayErrorCodes, HttpError } from "./errors.js";

// The MCP admin routes answer with the plugin's own client and schemas (the in-process twin of these routes).
export { mcpConfigResponseSchema, mcpConfigUpdateSchema } from "@antler/plugin-mcp";

interface McpRouteDeps {
  client: AntlerClient;
  config: GatewayConfig;
  logger: Logger;
  readJson<S extends z.ZodType>(c: Context<GatewayEnv>, schema: S): Promise<z.output<S>>;
}

/** `GET /api/threads/{id}/background-tasks`: the thread's durable MCP tasks, bounded local fields only. */
export const backgroundTasksResponseSchema = z.object({
  thread_id: z.string(),
  tasks: z.array(
    z.object({
      task_id: z.string(),
      task_name: z.string(),
      server: z.string(),
      status: z.string(),
      cancel_requested: z.boolean(),
      result_summary: z.string().nullable(),
      error: z.string().nullable(),
      created_at: z.string(),
      updated_at: z.string(),
      finished_at: z.string().nullable(),
    }),
  ),
});

/**
 * While the gateway serves, the durable MCP task poller runs in it (so a restarted server resumes the tasks a
 * previous process left); any number of servers may poll one database, each task is leased to one at a time.
 */
export function mcpServeHook(kernel: Kernel): { plugin: string; onServe: () => () => Promise<void> } | undefined {
  const tasks = kernel.scope.tryResolve(MCP_BACKGROUND_TASKS);
  if (!tasks) return undefined;
  return {
    plugin: "@antler/plugin-mcp",
    onServe: () => {
      tasks.startPoller();
      return () => tasks.stopPoller();
    },
  };
}

/** Mounts the MCP admin routes when `@antler/plugin-mcp` is loaded; otherwise they do not exist (404). */
export function mountMcpRoutes(app: Hono<GatewayEnv>, deps: McpRouteDeps): void {
  const catalog = deps.client.kernel.scope.tryResolve(MCP_TOOLS);
  if (!catalog) return;
  const tasks = deps.client.kernel.scope.tryResolve(MCP_BACKGROUND_TASKS);
  if (tasks) {
    app.get("/api/threads/:id/background-tasks", async (c) => {
      const userId = c.get("principal").userId;
      const threadId = c.req.param("id");
      // Another user's thread is THREAD_NOT_FOUND (404), exactly like a missing one.
      await deps.client.getThreadRecord(threadId, { userId });
      const activeOnly = c.req.query("active_only") === "true";
      const body = backgroundTasksResponseSchema.parse({ thread_id: threadId, tasks: await tasks.list(userId, threadId, { activeOnly }) });
      return c.json(body);
    });
  }
  const { config } = deps;
  const admins = new Set(config.auth.mode === "none" ? [config.auth.user] : config.auth.admins);
  const requireAdmin = (c: Context<GatewayEnv>) => {
    const userId = c.get("principal").userId;
    if (!admins.has(userId)) {
      throw new HttpError(
        403,
        GatewayErrorCodes.FORBIDDEN,
        `user ${userId} may not change the MCP configuration`,
        "List the user under auth.admins in the gateway config.",
      );
    }
  };

  const mcp = new McpConfigClient(deps.client);
  app.get("/api/mcp/config", async (c) => c.json(await mcp.getConfig()));

  app.put("/api/mcp/config", async (c) => {
    requireAdmin(c);
    const body = await deps.readJson(c, mcpConfigUpdateSchema);
    const status = await mcp.updateConfig(body);
    deps.logger.info(
      { trace_id: c.get("traceId"), user_id: c.get("principal").userId, servers: Object.keys(body.mcpServers) },
      "MCP config updated",
    );
    return c.json(status);
  });

  app.post("/api/mcp/cache/reset", async (c) => {
    requireAdmin(c);
    // Every instance on this base_dir drops its sessions too, at its next tool assembly.
    return c.json(await mcp.resetCache());
  });
}
