import { type AntlerTool, definePlugin } from "@antler/kernel";
import { MCP_TOOLS } from "@antler/plugin-mcp/plugin";
import { acpConfigSchema } from "./config.js";
import { INVOKE_ACP_AGENT } from "./names.js";

/**
 * `@antler/plugin-acp`: `invoke_acp_agent`. The tool (LangChain, the ACP client) loads on the first assembly,
 * so `antler config check` loads neither.
 */
export default definePlugin({
  name: "@antler/plugin-acp",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "invoke_acp_agent: hand tasks to external coding agents over the Agent Client Protocol.",
  configSchema: acpConfigSchema,
  setup(ctx) {
    // No agents, no tool: an empty agent list would only confuse the model.
    if (Object.keys(ctx.config.acp_agents).length === 0) return;
    let tool: Promise<AntlerTool> | undefined;
    ctx.tools.add(
      () =>
        (tool ??= import("./tool.js").then(({ acpServersFromMcp, createInvokeAcpAgentTool }) =>
          createInvokeAcpAgentTool({
            config: ctx.config,
            baseDir: ctx.paths.baseDir,
            // Resolved per call (from start on every plugin's tokens resolve), so MCP may load before or after this plugin.
            antlerMcpServers: () => {
              const catalog = ctx.services.tryResolve(MCP_TOOLS);
              return catalog ? acpServersFromMcp(catalog.enabledServers(), ctx.logger) : [];
            },
          }),
        )),
      { source: "acp", name: INVOKE_ACP_AGENT },
    );
  },
});
