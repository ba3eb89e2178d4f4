export { type A2AAgentConfig, a2aAgentSchema, a2aAgentsSectionSchema } from "./client/config.js";
export { A2A_EVENT, A2A_URL_REFUSED, INVOKE_A2A_AGENT_TOOL, traceparentFor } from "./client/names.js";
export { A2A_REMOTE_SESSIONS_TABLE, a2aClientMigrations } from "./client/session-store.js";
export { A2A_PLUGIN_NAME, type A2AConfig, a2aConfigSchema, default } from "./plugin.js";
export { AntlerA2AHandler, LEAD_SKILL_ID } from "./server/handler.js";
export { AGENT_CARD_ROUTE } from "./server/routes.js";
export { A2A_TASKS_TABLE, a2aMigrations } from "./server/task-store.js";
