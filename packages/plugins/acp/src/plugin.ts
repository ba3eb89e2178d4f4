import { type AntlerTool, definePlugin } from "@antler/kernel";
import { MCP_TOOLS } from "@antler/plugin-mcp/plugin";
import { acpConfigSchema } from "./config.js";
import { EditorBridge, READ_EDITOR_FILE, WRITE_EDITOR_FILE } from "./editor-bridge.js";
import { INVOKE_ACP_AGENT } from "./names.js";
import { acpCommand } from "./serve-command.js";

export const PLUGIN_VERSION = "0.1.0";

/**
 * `@antler/plugin-acp`: `invoke_acp_agent` (Antler as an ACP client) and `antler acp` (Antler as an ACP agent).
 * The tool (LangChain, the ACP client) and the agent side load on first use, so `antler config check` loads neither.
 */
export default definePlugin({
  name: "@antler/plugin-acp",
  version: PLUGIN_VERSION,
  kernel: "^0.1.0",
  description: "ACP both ways: invoke_acp_agent hands tasks to external coding agents; `antler acp` serves Antler as an ACP agent.",
  configSchema: acpConfigSchema,
  setup(ctx) {
    // The client's file system, for runs of `antler acp` whose client offers it; no connection, no editor tools.
    const editor = new EditorBridge();
    ctx.commands.add(acpCommand({ config: ctx.config.serve, logger: ctx.logger, version: PLUGIN_VERSION, editor }));
    ctx.tools.add(async () => (editor.can("read") ? (await import("./editor-tools.js")).readEditorFileTool(editor) : null), {
      name: READ_EDITOR_FILE,
      group: "file:read",
    });
    ctx.tools.add(async () => (editor.can("write") ? (await import("./editor-tools.js")).writeEditorFileTool(editor) : null), {
      name: WRITE_EDITOR_FILE,
      group: "file:write",
    });
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
