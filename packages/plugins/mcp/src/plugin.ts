import { type AntlerTool, createToken, definePlugin, KERNEL } from "@antler/kernel";
import { type McpStatus, McpToolCatalog } from "./catalog.js";
import { mcpPluginConfigSchema } from "./config.js";
import { backgroundTaskCommands } from "./tasks/cli.js";
import { CANCEL_BACKGROUND_TASK_TOOL, LIST_BACKGROUND_TASKS_TOOL } from "./tasks/names.js";
import { clientNotifier } from "./tasks/notifier.js";
import { BackgroundTaskService } from "./tasks/service.js";
import { backgroundTasksMiddleware } from "./tasks/state.js";
import { mcpTaskMigrations } from "./tasks/store.js";
import { PLUGIN_NAME, PLUGIN_VERSION } from "./version.js";

/** The kernel's MCP catalog: `scope.resolve(MCP_TOOLS).reset()` / `.status()`. */
export const MCP_TOOLS = createToken<McpToolCatalog>("plugin-mcp.catalog");

/**
 * The durable MCP task service, bound only while some server lists `tasks:` (and then its tools exist):
 * `scope.tryResolve(MCP_BACKGROUND_TASKS)?.startPoller()`, `.list(user, thread)`, `.pollOnce()`.
 */
export const MCP_BACKGROUND_TASKS = createToken<BackgroundTaskService>("plugin-mcp.background-tasks");

function formatStatus(status: McpStatus): string {
  const lines: string[] = [];
  if (status.extensionsConfig) {
    const e = status.extensionsConfig;
    lines.push(`extensions_config: ${e.path} (loaded ${e.loads}x)${e.error ? ` — ${e.error}` : ""}`);
  }
  if (status.servers.length === 0) lines.push("no MCP servers configured");
  for (const s of status.servers) {
    lines.push(
      `${s.name} [${s.transport}, ${s.origin}] ${s.state}: ${s.toolCount} tools, ${s.sessions.length} sessions, ${s.starts} starts${
        s.lastError ? `\n  last error: ${s.lastError}` : ""
      }`,
    );
  }
  return `${lines.join("\n")}\n`;
}

export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  kernel: "^0.1.0",
  description: "Tools from MCP servers (stdio, streamable HTTP, SSE), started lazily and cached by config signature.",
  configSchema: mcpPluginConfigSchema,
  setup(ctx) {
    // Durable tasks exist only while a server in config.yaml lists `tasks:` (servers from extensions_config.json
    // cannot: that file has no place for them). Without one, no service, no tools, no state field.
    const hasTasks = Object.values(ctx.config.servers).some((s) => s.tasks !== undefined);
    let tasks: BackgroundTaskService | undefined;
    const catalog = new McpToolCatalog({
      config: ctx.config,
      configDir: ctx.paths.configDir,
      baseDir: ctx.paths.baseDir,
      logger: ctx.logger,
      pluginName: ctx.plugin.name,
      backgroundTasks: hasTasks ? { start: (request) => backgroundTasks().start(request) } : undefined,
    });
    function backgroundTasks(): BackgroundTaskService {
      tasks ??= new BackgroundTaskService({
        config: ctx.config.background_tasks,
        catalog,
        openDatabase: () => ctx.storage.openDatabase({ migrations: mcpTaskMigrations }),
        logger: ctx.logger,
        notifier: clientNotifier(() => ctx.services.resolve(KERNEL)),
      });
      return tasks;
    }
    ctx.provide(MCP_TOOLS, { useValue: catalog });
    ctx.hooks.assembleTools.tap(async (tools, context) => (context.includeMcp ? [...tools, ...(await catalog.assemble(context))] : tools), {
      stage: "normal",
    });
    if (hasTasks) {
      ctx.provide(MCP_BACKGROUND_TASKS, { useFactory: () => backgroundTasks() });
      // Named, so `antler plugins list` shows them; built (LangChain) on the first assembly.
      let taskTools: Promise<readonly AntlerTool[]> | undefined;
      for (const name of [LIST_BACKGROUND_TASKS_TOOL, CANCEL_BACKGROUND_TASK_TOOL]) {
        ctx.tools.add(
          async () => {
            taskTools ??= import("./tasks/tools.js").then((m) => m.createBackgroundTaskTools(backgroundTasks()));
            return (await taskTools).find((t) => t.name === name) ?? null;
          },
          { source: "builtin", stage: "normal", name },
        );
      }
      ctx.middleware.add(backgroundTasksMiddleware(backgroundTasks), { stage: "normal" });
      for (const command of backgroundTaskCommands(backgroundTasks)) ctx.commands.add(command);
    }
    // Stop hooks run in reverse order: the task service finishes its step (sessions still open), then the catalog closes.
    ctx.hooks.stop.tap(() => catalog.close());
    ctx.hooks.stop.tap(async () => {
      await tasks?.close();
    });
    ctx.commands.add({
      name: "mcp status",
      summary: "Start each enabled MCP server, list its tools, and show its state and last error (--no-probe: config only).",
      options: { "no-probe": { type: "boolean", description: "Show the config only: start no server." } },
      async run(_args, io) {
        // A CLI process has its own catalog: probing is the only way it can tell a working server from a broken one.
        if (!io.options["no-probe"]) await io.kernel.assembleTools({ context: {}, includeMcp: true });
        const status = catalog.status();
        io.stdout.write(formatStatus(status));
        return status.servers.some((s) => s.state === "failed") ? 1 : 0;
      },
    });
    ctx.commands.add({
      name: "mcp reset",
      summary: "Close all MCP sessions and drop the cached tool lists, here and in every process on the same base_dir.",
      options: {},
      async run(_args, io) {
        await catalog.requestReset();
        io.stdout.write(
          `MCP tool cache cleared and sessions closed. Running processes on this base_dir (antler serve, workers) do the same at their next tool assembly (marker: ${catalog.resetMarkerPath}).\n`,
        );
        return 0;
      },
    });
  },
});
