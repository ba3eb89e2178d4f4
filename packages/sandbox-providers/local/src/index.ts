export { isSecretVariable, scrubEnvironment } from "./env-policy.js";
export { type LocalSandboxHostDirs, MAX_PATH_LENGTH, type PathAccess, type ResolvedPath, SandboxPathMap } from "./path-mapping.js";
export { default, type LocalSandboxConfig, localSandboxConfigSchema } from "./plugin.js";
export { killProcessGroup, type ProcessGroupResult, type ProcessGroupRun, runInProcessGroup } from "./process-group.js";
export { LocalSandboxProvider, type LocalSandboxProviderOptions, localSandboxId } from "./provider.js";
export { LocalSandbox, type LocalSandboxOptions } from "./sandbox.js";
export { GREP_MAX_FILE_BYTES } from "./search.js";
