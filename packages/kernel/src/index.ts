export {
  type AgentFeatures,
  type AntlerAgent,
  builtinMiddleware,
  type CreateAntlerAgentOptions,
  createAntlerAgent,
  type ExtraMiddleware,
} from "./agent.js";
export { CLARIFICATION_MIDDLEWARE_NAME, clarificationMiddleware, isClarificationAllowed } from "./builtins/clarification.js";
export { danglingToolCallMiddleware, patchDanglingToolCalls } from "./builtins/dangling-tool-call.js";
export { llmErrorHandlingMiddleware, type ToolFailureMeta, toolErrorHandlingMiddleware } from "./builtins/error-handling.js";
export { type LoopDetectionOptions, loopDetectionMiddleware } from "./builtins/loop-detection.js";
export { type SummarizationOptions, summarizationMiddleware } from "./builtins/summarization.js";
export { threadDataMiddleware } from "./builtins/thread-data.js";
export { type TitleOptions, titleMiddleware } from "./builtins/title.js";
export { todoMiddleware, WRITE_TODOS_TOOL } from "./builtins/todo.js";
export { tokenUsageMiddleware } from "./builtins/token-usage.js";
export * from "./builtins/tools/index.js";
export { uploadsMiddleware } from "./builtins/uploads.js";
export { type ViewImageOptions, viewImageMiddleware } from "./builtins/view-image.js";
export * from "./cassette/index.js";
export { TurnRenderer, type TurnSummary } from "./cli/render.js";
export {
  AntlerClient,
  type AntlerClientOptions,
  type CreateThreadOptions,
  checkpointThreadId,
  type RunCallOptions,
  type RunResult,
  type ThreadDetails,
} from "./client/client.js";
export {
  type CustomEvent,
  type EndEvent,
  type MessagesTupleEvent,
  messageText,
  type SerializedMessage,
  type SerializedToolCall,
  type StreamEvent,
  StreamTranslator,
  serializeMessage,
  type Usage,
  type ValuesEvent,
} from "./client/events.js";
export { DEFAULT_SYSTEM_PROMPT } from "./client/lead-agent.js";
export * from "./client/schemas.js";
export { type ConfigIssue, formatIssue, formatPath } from "./config/issues.js";
export { composedConfigJsonSchema } from "./config/json-schema.js";
export {
  type ConfigDocument,
  discoverConfigPath,
  parseConfigText,
  readConfigDocument,
  validateKernelConfig,
} from "./config/load.js";
export { isSecretKey, REDACTED, redactSecrets, redactText } from "./config/redact.js";
export { type KernelConfig, type KernelConfigInput, kernelConfigSchema, type ModelConfig } from "./config/schema.js";
export { type ContentSignature, contentSignature, isStale, SignatureCache, sameSignature } from "./config/signature.js";
export { type CustomEventPayload, emitCustomEvent } from "./custom-events.js";
export { createToken, type Lifetime, type Provider, type Scope, type Token } from "./di.js";
export {
  AntlerError,
  type AntlerErrorOptions,
  type ErrorCode,
  ErrorCodes,
  isAntlerError,
  type KernelErrorCode,
} from "./errors.js";
export {
  HOOK_TIMING_CHANNEL,
  type HookName,
  type HookTiming,
  type KernelHooks,
  type RunInfo,
  type RunOutcome,
  STAGES,
  type StageName,
} from "./hooks.js";
export {
  type CodePlugin,
  type CreateKernelOptions,
  createKernel,
  KERNEL,
  KERNEL_OWNER,
  Kernel,
  type LoadedPluginInfo,
  type RunContext,
  type RunOptions,
} from "./kernel.js";
export { type PluginAuthoringApi, type PluginOrigin, pluginAuthoringApi } from "./loader.js";
export { createLogger, type Logger, type LoggingOptions, silentLogger } from "./logging.js";
export {
  fetchWithTraceId,
  type ModelErrorContextOptions,
  providerErrorStatus,
  toModelCallError,
  withModelErrorContext,
} from "./model-call.js";
export { type ModelInfo, type ModelProvider, type ModelProviderEnv, modelInfo } from "./models.js";
export {
  assertSafeId,
  DEFAULT_USER_ID,
  isWithin,
  resolveVirtualPath,
  type ThreadPaths,
  threadPaths,
  toVirtualPath,
  type UserDataDir,
  VIRTUAL_DIRS,
  VIRTUAL_ROOT,
} from "./paths.js";
export { type BuiltinMiddlewareName, composeChain, DEFAULT_CHAIN } from "./pipeline/compose.js";
export { type RunContextValues, runContextSchema } from "./pipeline/context.js";
export { type CompiledPipeline, compilePipeline, MIDDLEWARE_SPAN_CHANNEL, type MiddlewareSpan } from "./pipeline/fuse.js";
export { mergeArtifacts, mergeSandbox, mergeTodos, mergeViewedImages, type Todo, threadStateFields } from "./pipeline/state.js";
export type {
  AgentState,
  HookRuntime,
  JumpTarget,
  MiddlewareAssemblyContext,
  MiddlewareEntry,
  MiddlewareFactory,
  MiddlewarePlacement,
  MiddlewareSpec,
  MiddlewareStage,
  ModelCallHandler,
  ModelCallRequest,
  NodeHook,
  StateField,
  StateUpdate,
  ToolCallHandlerOf,
  ToolCallRequestOf,
} from "./pipeline/types.js";
export {
  type AntlerPlugin,
  type CliCommand,
  type CliIO,
  definePlugin,
  type HookTap,
  type PluginContext,
  type PluginContributions,
  type PluginDefinition,
  type PluginHooks,
  type PluginPaths,
  type TapOptions,
  type ToolContribution,
  type ToolProvider,
} from "./plugin.js";
export { INTERNAL_PRINCIPAL, type Principal, SERVER_OWNED_CONTEXT_KEYS, sanitizeRunContext } from "./run-context.js";
export * from "./sandbox/types.js";
export * from "./storage/index.js";
export {
  type AntlerTool,
  defineTool,
  type GetAvailableToolsOptions,
  type ToolAssemblyContext,
  type ToolConflict,
  type ToolDefinition,
  type ToolEntry,
  type ToolSource,
} from "./tools.js";
export {
  ensureTraceContext,
  ensureTraceId,
  generateTraceId,
  getCurrentTraceId,
  MAX_TRACE_ID_LENGTH,
  normalizeTraceId,
  outsideTraceContext,
  requestTraceContext,
  resolveTraceId,
  TRACE_ID_HEADER,
  TRACE_METADATA_KEY,
} from "./trace.js";
export { KERNEL_VERSION } from "./version.js";
