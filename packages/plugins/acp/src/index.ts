export { type AcpTurnOptions, type AcpTurnResult, decidePermission, runAcpTurn, TRACE_META_KEY } from "./acp-turn.js";
export { type AcpAgentOptions, CWD_METADATA_KEY, createAcpAgent, RUN_META_KEY, toRequestError } from "./agent-side.js";
export { AcpUpdateEncoder, acpStopReason, historyUpdates, planEntries, promptText, toolKind, toolTitle } from "./agent-updates.js";
export {
  type AcpAgentConfig,
  type AcpConfig,
  type AcpMcpServerConfig,
  type AcpServeConfig,
  acpAgentSchema,
  acpConfigSchema,
  acpMcpServerSchema,
  acpServeSchema,
  resolveEnvRefs,
} from "./config.js";
export { EditorBridge, READ_EDITOR_FILE, WRITE_EDITOR_FILE } from "./editor-bridge.js";
export { ACP_WORKSPACE_DIR, ACP_WORKSPACE_VIRTUAL, INVOKE_ACP_AGENT } from "./names.js";
export { default } from "./plugin.js";
export { acpServersFromMcp, createInvokeAcpAgentTool, type InvokeAcpAgentOptions } from "./tool.js";
