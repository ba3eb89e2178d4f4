export {
  type BackgroundTaskStart,
  type BackgroundTaskStarter,
  type McpCaller,
  type McpServerState,
  type McpServerStatus,
  type McpStatus,
  McpToolCatalog,
  type McpToolCatalogOptions,
  mcpToolName,
} from "./catalog.js";
export {
  type BackgroundTasksConfig,
  type McpOAuthConfig,
  type McpPluginConfig,
  type McpServerConfig,
  type McpTaskToolConfig,
  mcpOAuthSchema,
  mcpPluginConfigSchema,
  mcpServerSchema,
  mcpTaskToolSchema,
  parseExtensionsConfig,
} from "./config.js";
export {
  McpConfigClient,
  type McpConfigResponse,
  type McpConfigUpdate,
  mcpConfigResponseSchema,
  mcpConfigUpdateSchema,
} from "./config-client.js";
export { OAuthTokenSource } from "./oauth.js";
export { default, MCP_BACKGROUND_TASKS, MCP_TOOLS } from "./plugin.js";
export { errorText, type ToolContentBlock, toToolContent } from "./results.js";
export { McpSession, TRACE_META_KEY } from "./session.js";
export { type McpTaskErrorCode, McpTaskErrorCodes } from "./tasks/errors.js";
export { clientNotifier } from "./tasks/notifier.js";
export {
  BackgroundTaskService,
  type BackgroundTaskServiceOptions,
  notificationPrompt,
  scrubHandle,
  type TaskNotification,
  type TaskNotifier,
  type TaskPollResult,
} from "./tasks/service.js";
export { type BackgroundTasksState, backgroundTasksMiddleware, backgroundTasksStateSchema } from "./tasks/state.js";
export {
  BACKGROUND_TASKS_TABLE,
  type BackgroundTaskRow,
  type BackgroundTaskStatus,
  BackgroundTaskStore,
  type BackgroundTaskView,
  mcpTaskMigrations,
  viewTask,
} from "./tasks/store.js";
export { CANCEL_BACKGROUND_TASK_TOOL, createBackgroundTaskTools, LIST_BACKGROUND_TASKS_TOOL, taskForModel } from "./tasks/tools.js";
