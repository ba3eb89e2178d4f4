// `@antler/kernel`: the contracts plugins implement and the helpers they call. Importing it stays light: what
// needs zod, YAML, LangChain or a database loads on first use (createKernel) or lives in a subpath export:
// `@antler/kernel/authoring` (defineTool), `/pipeline` (the compiler), `/config` (config loading and schemas) and
// `/testing` (the test kit). Helpers for providers that wrap a vendor SDK are in `@antler/model-kit`.
export type { PluginAuthoringApi } from "./authoring-api.js";
export { createKernel } from "./boot.js";
export type { ConfigIssue, PathSegment } from "./config/format.js";
export { formatIssue, formatPath } from "./config/format.js";
export { isSecretKey, REDACTED, redactSecrets, redactText } from "./config/redact.js";
export type {
  CheckpointKeepConfig,
  KernelConfig,
  KernelConfigInput,
  ModelConfig,
  ModelPricing,
  PostgresPoolConfig,
  StorageConfig,
  StorageConfigInput,
} from "./config/schema.js";
export { type CustomEventPayload, emitCustomEvent } from "./custom-events.js";
export { createToken, kernelCopies, type Lifetime, type Provider, type Scope, type Token } from "./di.js";
export { AntlerError, type AntlerErrorOptions, type ErrorCode, ErrorCodes, isAntlerError, type KernelErrorCode } from "./errors.js";
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
export type { CodePlugin, CreateKernelOptions } from "./kernel.js";
export { createLogger, type Logger, type LoggingOptions, silentLogger } from "./logging.js";
export { MODEL_CALL_STAMP_KEY, type ModelCallStamp, modelCallStamp } from "./models/call-stamp.js";
export {
  type CreateModelOptions,
  MODEL_CALL_PLANNER,
  type ModelCallPlanner,
  type ModelInfo,
  type ModelProvider,
  type ModelProviderEnv,
  modelInfo,
} from "./models/contract.js";
export {
  assertSafeId,
  DEFAULT_USER_ID,
  isWithin,
  type PluginPaths,
  resolveVirtualPath,
  type ThreadPaths,
  threadPaths,
  type UserDataDir,
  VIRTUAL_DIRS,
  VIRTUAL_ROOT,
} from "./paths.js";
export { type BuiltinMiddlewareName, composeChain, DEFAULT_CHAIN } from "./pipeline/compose.js";
export type {
  AgentState,
  DefaultSlotName,
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
  type ActiveRun,
  type AntlerPlugin,
  type CliCommand,
  type CliIO,
  type CliOptionSpec,
  type CliOptionValue,
  type CliParsed,
  type CliPositionalSpec,
  definePlugin,
  type HookTap,
  KERNEL,
  KERNEL_OWNER,
  type Kernel,
  type KernelState,
  type LoadedPluginInfo,
  type PluginContext,
  type PluginContributions,
  type PluginDefinition,
  type PluginHooks,
  type PluginOrigin,
  type RunContext,
  type RunOptions,
  type TapOptions,
  type ToolContribution,
  type ToolProvider,
} from "./plugin.js";
export * from "./sandbox/types.js";
export type * from "./storage/contract.js";
export { describeCause } from "./storage/describe.js";
export { appliedMigrations, runMigrations } from "./storage/run-migrations.js";
export type { AntlerTool, GetAvailableToolsOptions, ToolAssemblyContext, ToolConflict, ToolEntry, ToolSource } from "./tools.js";
export {
  ensureTraceContext,
  ensureTraceId,
  fetchWithTraceId,
  generateTraceId,
  getCurrentTraceId,
  MAX_TRACE_ID_LENGTH,
  normalizeTraceId,
  OUTGOING_TRACE_CHANNEL,
  outsideTraceContext,
  requestTraceContext,
  resolveTraceId,
  stampTraceHeaders,
  TRACE_ID_HEADER,
  TRACE_METADATA_KEY,
} from "./trace.js";
export { KERNEL_VERSION } from "./version.js";
