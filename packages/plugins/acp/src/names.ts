export const INVOKE_ACP_AGENT = "invoke_acp_agent";
/** Where the lead agent's sandbox shows the ACP workspace (read-only). */
export const ACP_WORKSPACE_VIRTUAL = "/mnt/acp-workspace";
/** Folder name of the per-thread ACP workspace inside the thread folder. */
export const ACP_WORKSPACE_DIR = "acp-workspace";
