// `@antler/plugin-mcp` is an optional peer of the gateway: a deployment without MCP installs neither it nor the
// MCP SDK. Nothing here imports it; ./mcp.js (which does) is loaded with import() only when the MCP plugin is
// among the kernel's plugins, which also means the package is installed (the kernel loaded it from the config).
// Without it the MCP admin routes do not exist: they are 404s, as whenever MCP is off.
import { AntlerError, ErrorCodes, type Kernel } from "@antler/kernel";
import type { GatewayServeHook } from "@antler/plugin-runtime/routes";

const MCP_PLUGIN_NAME = "@antler/plugin-mcp";

/** The gateway's MCP part (admin routes and task poller), as `loadMcpAdmin` resolves it. */
export type McpAdmin = Pick<typeof import("./mcp.js"), "mountMcpRoutes">;

function mcpPluginLoaded(kernel: Pick<Kernel, "plugins">): boolean {
  return kernel.plugins.some((plugin) => plugin.name === MCP_PLUGIN_NAME);
}

/** The MCP admin routes when `@antler/plugin-mcp` is loaded in `kernel`; undefined (and nothing imported) otherwise. */
export async function loadMcpAdmin(kernel: Pick<Kernel, "plugins">): Promise<McpAdmin | undefined> {
  if (!mcpPluginLoaded(kernel)) return undefined;
  try {
    return await import("./mcp.js");
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new AntlerError(
      ErrorCodes.PLUGIN_NOT_FOUND,
      `${MCP_PLUGIN_NAME} is loaded, but @antler/plugin-gateway cannot import it for the MCP admin routes: ${(error as Error).message}`,
      {
        where: "@antler/plugin-gateway",
        hint: `Install ${MCP_PLUGIN_NAME} as a dependency of the project, next to @antler/plugin-gateway (it is the gateway's optional peer).`,
        cause: error,
      },
    );
  }
}

/**
 * The durable MCP task poller as a serve hook, when `@antler/plugin-mcp` is loaded: while the gateway serves, it
 * resumes the tasks a previous process left (a no-op when no MCP server lists `tasks:`).
 */
export function mcpServeHook(kernel: Kernel): { plugin: string; onServe: GatewayServeHook } | undefined {
  if (!mcpPluginLoaded(kernel)) return undefined;
  return { plugin: MCP_PLUGIN_NAME, onServe: async () => (await import("./mcp.js")).startMcpTaskPoller(kernel) };
}
