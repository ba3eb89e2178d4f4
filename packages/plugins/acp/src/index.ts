export { type AcpTurnOptions, type AcpTurnResult, decidePermission, runAcpTurn, TRACE_META_KEY } from "./acp-turn.js";
export {
  type AcpAgentConfig,
  type AcpConfig,
  type AcpMcpServerConfig,
  acpAgentSchema,
  acpConfigSchema,
  acpMcpServerSchema,
  resolveEnvRefs,
} from "./config.js";
export { ACP_WORKSPACE_DIR, ACP_WORKSPACE_VIRTUAL, INVOKE_ACP_AGENT } from "./names.js";
export { default } from "./plugin.js";
export { acpServersFromMcp, createInvokeAcpAgentTool, type InvokeAcpAgentOptions } from "./tool.js";
