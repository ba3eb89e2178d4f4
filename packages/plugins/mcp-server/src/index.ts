// The entry stays light (config check and plugin loading never load the MCP SDK or the runtime); the server itself
// is at the subpath `@antler/plugin-mcp-server/server`.
export { type AgentTool, agentToolName, askInputSchema, askOutputSchema, LEAD_AGENT_TOOL } from "./agent-tools.js";
export { CALLER_KEY, type McpCaller } from "./caller.js";
export { type McpServerConfig, mcpServerConfigSchema } from "./config.js";
export { default } from "./plugin.js";
