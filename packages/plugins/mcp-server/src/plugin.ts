import { definePlugin } from "@antler/kernel";
import { defineGatewayRoute, provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { mcpServerConfigSchema } from "./config.js";
import type { McpHttpSessions } from "./http.js";
import { PLUGIN_NAME, PLUGIN_VERSION } from "./version.js";

/**
 * `@antler/plugin-mcp-server`: Antler as an MCP server. `antler mcp serve` speaks stdio; with the gateway, the
 * same server answers streamable HTTP at `http.path` (default `/mcp`) behind the gateway's API keys. The SDK and
 * the runtime load when a command runs or the first request arrives, never with the plugin.
 */
export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  kernel: "^0.1.0",
  description: "Antler as an MCP server: agents as ask_<agent> tools, thread artifacts as resources; stdio and streamable HTTP (/mcp).",
  configSchema: mcpServerConfigSchema,
  setup(ctx) {
    const config = ctx.config;
    const logger = ctx.logger;
    ctx.commands.add({
      name: "mcp serve",
      summary: "Serve this distribution's agents as MCP tools over stdio (for Claude Desktop, Cursor, Zed or another agent).",
      // No options of its own: the CLI's -c/--config and -v/--verbose (info logs, on stderr); anything else exits 2.
      options: {},
      async run(_args, io) {
        const { serveStdio } = await import("./stdio.js");
        return serveStdio(io, config, logger);
      },
    });
    if (!config.http.enabled) return;
    let sessions: Promise<McpHttpSessions> | undefined;
    const sessionsOf = () => (sessions ??= import("./http.js").then((m) => new m.McpHttpSessions({ config, logger })));
    const path = config.http.path;
    provideGatewayRoutes(ctx, {
      routes: (["POST", "GET", "DELETE"] as const).map((method) =>
        defineGatewayRoute({
          method,
          path,
          mount: "root",
          summary: `MCP streamable HTTP (${method === "POST" ? "JSON-RPC requests" : method === "GET" ? "server stream" : "end a session"}): agents as tools, artifacts as resources.`,
          handler: async (req) => (await sessionsOf()).handle(req),
        }),
      ),
      onServe: async (client) => {
        // An unknown or unexposable expose_tools entry fails the gateway's start (naming this plugin), not a request.
        if (config.expose_tools.length > 0) {
          const { checkExposedTools } = await import("./exposed-tools.js");
          await checkExposedTools(client.kernel, config, { userId: config.stdio.user });
        }
        return async () => {
          if (sessions) await (await sessions).closeAll();
        };
      },
    });
  },
});
