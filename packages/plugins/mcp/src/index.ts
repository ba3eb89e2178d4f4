import { type CliIO, createToken, definePlugin } from "@antler/kernel";
import { type McpStatus, McpToolCatalog } from "./catalog.js";
import { mcpPluginConfigSchema } from "./config.js";
import { PLUGIN_NAME, PLUGIN_VERSION } from "./version.js";

export {
  type McpServerState,
  type McpServerStatus,
  type McpStatus,
  McpToolCatalog,
  type McpToolCatalogOptions,
  mcpToolName,
} from "./catalog.js";
export {
  type McpOAuthConfig,
  type McpPluginConfig,
  type McpServerConfig,
  mcpOAuthSchema,
  mcpPluginConfigSchema,
  mcpServerSchema,
  parseExtensionsConfig,
} from "./config.js";
export { OAuthTokenSource } from "./oauth.js";
export { errorText, type ToolContentBlock, toToolContent } from "./results.js";
export { McpSession, TRACE_META_KEY } from "./session.js";

/** The kernel's MCP catalog: `scope.resolve(MCP_TOOLS).reset()` / `.status()`. */
export const MCP_TOOLS = createToken<McpToolCatalog>("plugin-mcp.catalog");

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
    const catalog = new McpToolCatalog({
      config: ctx.config,
      configDir: ctx.paths.configDir,
      baseDir: ctx.paths.baseDir,
      logger: ctx.logger,
      pluginName: ctx.plugin.name,
    });
    ctx.provide(MCP_TOOLS, { useValue: catalog });
    ctx.hooks.assembleTools.tap(async (tools, context) => (context.includeMcp ? [...tools, ...(await catalog.assemble(context))] : tools), {
      stage: "normal",
    });
    ctx.hooks.stop.tap(() => catalog.close());
    ctx.commands.add({
      name: "mcp status",
      summary: "Start each enabled MCP server, list its tools, and show its state and last error (--no-probe: config only).",
      usage: "antler mcp status [--no-probe]",
      async run(args: string[], io: CliIO) {
        // A CLI process has its own catalog: probing is the only way it can tell a working server from a broken one.
        if (!args.includes("--no-probe")) await io.kernel.assembleTools({ context: {}, includeMcp: true });
        const status = catalog.status();
        io.stdout.write(formatStatus(status));
        return status.servers.some((s) => s.state === "failed") ? 1 : 0;
      },
    });
    ctx.commands.add({
      name: "mcp reset",
      summary: "Close all MCP sessions and drop the cached tool lists, here and in every process on the same base_dir.",
      async run(_args: string[], io: CliIO) {
        await catalog.requestReset();
        io.stdout.write(
          `MCP tool cache cleared and sessions closed. Running processes on this base_dir (antler serve, workers) do the same at their next tool assembly (marker: ${catalog.resetMarkerPath}).\n`,
        );
        return 0;
      },
    });
  },
});
