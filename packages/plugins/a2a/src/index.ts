export { A2A_PLUGIN_NAME, type A2AConfig, a2aConfigSchema, default } from "./plugin.js";
export { AntlerA2AHandler, LEAD_SKILL_ID } from "./server/handler.js";
export { AGENT_CARD_ROUTE } from "./server/routes.js";
export { A2A_TASKS_TABLE, a2aMigrations } from "./server/task-store.js";
