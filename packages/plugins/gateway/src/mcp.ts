// The gateway's MCP part: the admin routes and the durable task poller. It is the only module that imports
// `@antler/plugin-mcp` (an optional peer), and it is loaded with import() only when that plugin is loaded
// (mcp-optional.ts), so a gateway installed without it serves. The admin routes answer with the plugin's own
// client and schemas (the in-process twin of these routes).
import type { Kernel, Logger } from "@antler/kernel";
import { MCP_BACKGROUND_TASKS, MCP_TOOLS, McpConfigClient, mcpConfigUpdateSchema } from "@antler/plugin-mcp";
import type { AntlerClient } from "@antler/plugin-runtime";
import type { Context, Hono } from "hono";
import type { z } from "zod";
import { backgroundTasksResponseSchema } from "./background-tasks-schema.js";
import type { GatewayConfig } from "./config.js";
import type { GatewayEnv } from "./env.js";
import { GatewayErrorCodes, HttpError } from "./errors.js";

interface McpRouteDeps {
  client: AntlerClient;
  config: GatewayConfig;
  logger: Logger;
  readJson<S extends z.ZodType>(c: Context<GatewayEnv>, schema: S): Promise<z.output<S>>;
}

/**
 * While the gateway serves, the durable MCP task poller runs in it (so a restarted server resumes the tasks a
 * previous process left); any number of servers may poll one database, each task is leased to one at a time.
 * Returns its stop, or undefined when no MCP server has durable tasks.
 */
export function startMcpTaskPoller(kernel: Kernel): (() => Promise<void>) | undefined {
  const tasks = kernel.scope.tryResolve(MCP_BACKGROUND_TASKS);
  if (!tasks) return undefined;
  tasks.startPoller();
  return () => tasks.stopPoller();
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
