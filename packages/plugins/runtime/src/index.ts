export { admitRun, admittedModels, provideRunAdmission, type RunAdmissionCheck, type RunAdmissionRequest } from "./admission.js";
export {
  type AgentFeatures,
  type AgentSubagents,
  type AntlerAgent,
  builtinMiddleware,
  type CreateAntlerAgentOptions,
  createAntlerAgent,
  type ExtraMiddleware,
} from "./agent.js";
export {
  type AgentConfig,
  type AgentDetails,
  type AgentSaveRequest,
  type AgentSummary,
  agentConfigSchema,
  agentSaveRequestSchema,
  type CustomAgent,
  deleteCustomAgent,
  listCustomAgents,
  loadCustomAgent,
  requireCustomAgent,
  saveCustomAgent,
} from "./agents.js";
export { TurnRenderer, type TurnSummary } from "./cli/render.js";
export {
  AntlerClient,
  type AntlerClientOptions,
  type CreateThreadOptions,
  checkpointThreadId,
  type ObservedRun,
  type ReasoningEffort,
  RUN_PAUSED_EVENT,
  RUN_QUEUE_CHANNEL,
  RUN_RESUMED_EVENT,
  RUNS_PER_CONNECTION,
  type RunCallOptions,
  type RunObserver,
  type RunQueueEvent,
  type RunResult,
  resetAgents,
  type ThreadDetails,
} from "./client/client.js";
export {
  type CustomEvent,
  type EndEvent,
  type MessagesTupleEvent,
  messageReasoning,
  messageText,
  type RunCost,
  type SerializedMessage,
  type SerializedToolCall,
  type SerializedToolCallChunk,
  type StreamEvent,
  StreamTranslator,
  serializeMessage,
  type Usage,
  type ValuesEvent,
} from "./client/events.js";
export { DEFAULT_SYSTEM_PROMPT } from "./client/lead-agent.js";
export type { MessagePageRequest } from "./client/message-page.js";
export * from "./client/schemas.js";
export type { ThreadCheckpoint, ThreadHistoryOptions, UpdateThreadStateOptions } from "./client/thread-state.js";
export { type RuntimeConfig, runtimeConfig, runtimeConfigSections } from "./config.js";
export { loadConfigTools } from "./config-tools.js";
export { type RunContextValues, runContextSchema } from "./context.js";
export { RuntimeErrorCodes } from "./errors.js";
export {
  CLARIFICATION_MIDDLEWARE_NAME,
  clarificationMiddleware,
  danglingToolCallMiddleware,
  isClarificationAllowed,
  type LoopDetectionOptions,
  llmErrorHandlingMiddleware,
  loopDetectionMiddleware,
  patchDanglingToolCalls,
  type SummarizationOptions,
  summarizationMiddleware,
  type TitleOptions,
  type ToolFailureMeta,
  threadDataMiddleware,
  titleMiddleware,
  todoMiddleware,
  tokenUsageMiddleware,
  toolErrorHandlingMiddleware,
  uploadsMiddleware,
  type ViewImageOptions,
  viewImageMiddleware,
  WRITE_TODOS_TOOL,
} from "./middleware/index.js";
export { default } from "./plugin.js";
export { QUEUE_NOTIFICATIONS_TOKEN, type QueueNotifications, queueChannel } from "./queue-notifications.js";
export { provideRunResumeCheck, type RunResumeCheck, type RunResumeRequest, vetResume } from "./resume-checks.js";
export { INTERNAL_PRINCIPAL, type Principal, type SanitizedContext, SERVER_OWNED_CONTEXT_KEYS, sanitizeRunContext } from "./run-context.js";
export { RUN_HOSTING_TOKEN, type RunHosting } from "./run-hosting.js";
export { type Shutdown, type ShutdownReason, type UntilShutdownOptions, untilShutdown } from "./shutdown.js";
export {
  compileThreadPipeline,
  mergeArtifacts,
  mergeSandbox,
  mergeTodos,
  mergeViewedImages,
  type SandboxRef,
  type Todo,
  threadStateFields,
  type ViewedImage,
} from "./state.js";
export { type Artifact, DEFAULT_MIME_TYPE, mimeTypeFor, readArtifact } from "./stores/artifacts.js";
export {
  type CreateRunInput,
  createRunStore,
  type MultitaskStrategy,
  type PausedInterrupt,
  type PauseRecord,
  type PromoteResult,
  RUNS_TABLE,
  type RunEndFacts,
  type RunRecord,
  type RunStartInput,
  type RunStatus,
  type RunStore,
  type RunsTable,
  runRecordMigrations,
  type ThreadHolder,
  threadBusyError,
} from "./stores/runs.js";
export {
  createThreadStore,
  type ListThreadsOptions,
  THREADS_TABLE,
  type ThreadRecord,
  type ThreadStore,
  type ThreadStoreOptions,
  type ThreadsTable,
  type TouchThreadOptions,
  threadMigrations,
} from "./stores/threads.js";
export {
  DEFAULT_UPLOAD_MAX_BYTES,
  DEFAULT_UPLOAD_MAX_FILES,
  listUploads,
  type SaveUploadOptions,
  sanitizeUploadName,
  saveUpload,
  type UploadRecord,
} from "./stores/uploads.js";
export * from "./tools/index.js";
