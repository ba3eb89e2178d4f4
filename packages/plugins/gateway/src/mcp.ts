import { readFile, rename, writeFile } from "node:fs/promises";
import type { Kernel, Logger } from "@antler/kernel";
import { MCP_BACKGROUND_TASKS, MCP_TOOLS, type McpToolCatalog, parseExtensionsConfig } from "@antler/plugin-mcp";
import type { AntlerClient } from "@antler/plugin-runtime";
import { RuntimeErrorCodes } from "@antler/plugin-runtime";
import type { Context, Hono } from "hono";
import { z } from "zod";
import type { GatewayConfig } from "./config.js";
import type { GatewayEnv } from "./env.js";
import { GatewayErrorCodes, HttpError } from "./errors.js";

/** `GET /api/mcp/config`: each server's state and tools (never its env, headers or credentials). */
export const mcpConfigResponseSchema = z.object({
  extensions_config: z.string().nullable(),
  servers: z.array(
    z.object({
      name: z.string(),
      transport: z.string(),
      origin: z.string(),
      state: z.string(),
      tool_count: z.number().int(),
      tools: z.array(z.string()),
      last_error: z.string().nullable(),
    }),
  ),
});

/** `PUT /api/mcp/config`: the DeerFlow extensions-config shape, written to the plugin's `extensions_config` file. */
export const mcpConfigUpdateSchema = z.object({ mcpServers: z.record(z.string(), z.record(z.string(), z.unknown())) }).loose();

interface McpRouteDeps {
  client: AntlerClient;
  config: GatewayConfig;
  logger: Logger;
  readJson<S extends z.ZodType>(c: Context<GatewayEnv>, schema: S): Promise<z.output<S>>;
}

type ServerView = z.output<typeof mcpConfigResponseSchema>["servers"][number];

/**
 * The catalog's status, with the extensions file read afresh: the catalog itself re-reads it only when it next
 * assembles tools (which would start servers), and a status read must start nothing.
 */
async function describe(catalog: McpToolCatalog): Promise<z.output<typeof mcpConfigResponseSchema>> {
  const status = catalog.status();
  const known = new Map<string, ServerView>(
    status.servers.map((s) => [
      s.name,
      {
        name: s.name,
        transport: s.transport,
        origin: s.origin,
        state: s.state,
        tool_count: s.toolCount,
        tools: [...s.tools],
        last_error: s.lastError,
      },
    ]),
  );
  const path = catalog.extensionsConfigPath;
  if (path) {
    const text = await readFile(path, "utf8").catch(() => null);
    let fromFile: Record<string, { transport: string; enabled: boolean }> = {};
    try {
      fromFile = text === null ? {} : parseExtensionsConfig(text, path);
    } catch {
      // An unusable file: the catalog's own status already reports its error.
    }
    for (const [name, entry] of known) if (entry.origin === "extensions_config" && !(name in fromFile)) known.delete(name);
    for (const [name, server] of Object.entries(fromFile)) {
      const current = known.get(name);
      if (current?.origin === "config") continue; // `servers:` in config.yaml overrides the file
      if (!current || current.transport !== server.transport) {
        known.set(name, {
          name,
          transport: server.transport,
          origin: "extensions_config",
          state: server.enabled ? "idle" : "disabled",
          tool_count: 0,
          tools: [],
          last_error: null,
        });
      }
    }
  }
  return { extensions_config: path, servers: [...known.values()] };
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

  app.get("/api/mcp/config", async (c) => c.json(await describe(catalog)));

  app.put("/api/mcp/config", async (c) => {
    requireAdmin(c);
    const body = await deps.readJson(c, mcpConfigUpdateSchema);
    const path = catalog.extensionsConfigPath;
    if (!path) {
      throw new HttpError(
        409,
        RuntimeErrorCodes.STATE_CONFLICT,
        "the MCP plugin has no extensions_config file to write",
        "Set `extensions_config: extensions_config.json` in the @antler/plugin-mcp config; servers under `servers:` are edited in config.yaml.",
      );
    }
    const text = `${JSON.stringify(body, null, 2)}\n`;
    // Validates every server exactly as the plugin will read it; a bad entry is a 400 before anything is written.
    parseExtensionsConfig(text, "PUT /api/mcp/config");
    const staged = `${path}.${process.pid}.tmp`;
    await writeFile(staged, text);
    await rename(staged, path);
    await catalog.reset();
    deps.client.resetAgent();
    deps.logger.info(
      { trace_id: c.get("traceId"), user_id: c.get("principal").userId, servers: Object.keys(body.mcpServers) },
      "MCP config updated",
    );
    return c.json(await describe(catalog));
  });

  app.post("/api/mcp/cache/reset", async (c) => {
    requireAdmin(c);
    // Every instance on this base_dir drops its sessions too, at its next tool assembly.
    await catalog.requestReset();
    deps.client.resetAgent();
    return c.json({ reset: true });
  });
}
