export { BASH_TOOL_NAME, type BashToolOptions, bashSchema, createBashTool, formatExecResult, hostBashRefusalText } from "./bash-tool.js";
export { type SandboxPluginConfig, type SandboxToolLimits, sandboxPluginConfigSchema, toolLimits } from "./config.js";
export { countOccurrences, createStrReplaceTool, createWriteFileTool, strReplaceSchema, writeFileSchema } from "./edit-tools.js";
export {
  denialClarification,
  EGRESS_REQUEST_KEY,
  type EgressRequest,
  egressOf,
  isApproval,
  type SandboxEgress,
  type SandboxEgressDenial,
} from "./egress.js";
export {
  createGlobTool,
  createGrepTool,
  createLsTool,
  createReadFileTool,
  descriptionArg,
  globSchema,
  grepSchema,
  lsSchema,
  readFileSchema,
  type SandboxToolOptions,
} from "./file-tools.js";
export {
  createSandboxMiddlewareSpec,
  SANDBOX_MIDDLEWARE_NAME,
  SANDBOX_TOOL_NAMES,
  type SandboxMiddlewareOptions,
  sandboxMiddleware,
  withStateUpdate,
} from "./middleware.js";
export { truncateMiddle, truncateTail } from "./output.js";
export { KeyedLock } from "./path-lock.js";
export { default, SANDBOX_TOOL_GROUPS } from "./plugin.js";
export { contentStamp, MAX_READ_STAMPS, mergeReadStamps, READ_STAMPS_KEY, type ReadStamps, readStampsField } from "./read-stamps.js";
export { type SandboxLease, SandboxRegistry, type SandboxScope } from "./registry.js";
export { scopeOf } from "./tool-session.js";
export { normalizeVirtualPath, readOnlyRootOf } from "./virtual-path.js";
