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
export { createToken, type Lifetime, type Provider, type Scope, type Token } from "./di.js";
export { AntlerError, type AntlerErrorOptions, type ErrorCode, ErrorCodes, isAntlerError } from "./errors.js";
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
  KERNEL_OWNER,
  Kernel,
  type LoadedPluginInfo,
  type RunContext,
  type RunOptions,
} from "./kernel.js";
export { type PluginAuthoringApi, type PluginOrigin, pluginAuthoringApi } from "./loader.js";
export { createLogger, type Logger, type LoggingOptions, silentLogger } from "./logging.js";
export type { MiddlewareAssemblyContext, MiddlewareEntry, MiddlewarePlacement } from "./pipeline/types.js";
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
  requestTraceContext,
  resolveTraceId,
  TRACE_ID_HEADER,
  TRACE_METADATA_KEY,
} from "./trace.js";
export { KERNEL_VERSION } from "./version.js";
