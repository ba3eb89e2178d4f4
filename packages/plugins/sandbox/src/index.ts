import { DEFAULT_USER_ID, definePlugin, type SandboxProvider } from "@antler/kernel";
import { createBashTool } from "./bash-tool.js";
import { sandboxPluginConfigSchema, toolLimits } from "./config.js";
import { createStrReplaceTool, createWriteFileTool } from "./edit-tools.js";
import { createGlobTool, createGrepTool, createLsTool, createReadFileTool } from "./file-tools.js";
import { sandboxMiddleware } from "./middleware.js";
import { SandboxRegistry } from "./registry.js";

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
export { contentStamp, MAX_READ_STAMPS, mergeReadStamps, READ_STAMPS_KEY, type ReadStamps, readStampsField } from "./read-stamps.js";
export { type SandboxLease, SandboxRegistry, type SandboxScope } from "./registry.js";
export { scopeOf } from "./tool-session.js";
export { normalizeVirtualPath, readOnlyRootOf } from "./virtual-path.js";

/** Tool groups (`tool_groups` in config.yaml). */
export const SANDBOX_TOOL_GROUPS = {
  read: "file:read",
  write: "file:write",
  bash: "bash",
} as const;

/**
 * `@antler/plugin-sandbox`: the sandbox capability (tools and the Sandbox middleware) over whichever
 * `SandboxProvider` `sandbox.provider` selects. The substrate comes from a provider plugin (local, AIO, E2B).
 */
export default definePlugin({
  name: "@antler/plugin-sandbox",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Sandbox tools (bash, ls, glob, grep, read_file, write_file, str_replace) and the Sandbox middleware.",
  configSchema: sandboxPluginConfigSchema,
  setup(ctx) {
    const limits = toolLimits(ctx.kernelConfig.sandbox, ctx.config);
    // Resolved on use, not in setup: provider plugins may load after this one, and setup does no I/O.
    const provider = (): SandboxProvider => ctx.sandbox.provider();
    const tryProvider = (): SandboxProvider | undefined => {
      try {
        return provider();
      } catch {
        return undefined;
      }
    };
    const hostBashAllowed = () => limits.allowHostBash || tryProvider()?.isolated === true;
    const providerId = () => tryProvider()?.id;
    const registry = new SandboxRegistry(provider, ctx.logger);

    ctx.hooks.runStart.tap((run) => {
      if (run.threadId !== undefined) registry.runStarted({ threadId: run.threadId, userId: run.userId ?? DEFAULT_USER_ID });
    });
    ctx.hooks.runEnd.tap(async (run) => {
      if (run.threadId !== undefined) await registry.runEnded({ threadId: run.threadId, userId: run.userId ?? DEFAULT_USER_ID });
    });

    ctx.middleware.add(sandboxMiddleware({ registry, hostBashAllowed, providerId, logger: ctx.logger }), { after: "Uploads" });

    const options = { registry, limits };
    ctx.tools.add(createLsTool(options), { group: SANDBOX_TOOL_GROUPS.read });
    ctx.tools.add(createReadFileTool(options), { group: SANDBOX_TOOL_GROUPS.read });
    ctx.tools.add(createGlobTool(options), { group: SANDBOX_TOOL_GROUPS.read });
    ctx.tools.add(createGrepTool(options), { group: SANDBOX_TOOL_GROUPS.read });
    ctx.tools.add(createWriteFileTool(options), { group: SANDBOX_TOOL_GROUPS.write });
    ctx.tools.add(createStrReplaceTool(options), { group: SANDBOX_TOOL_GROUPS.write });
    const bash = createBashTool({ ...options, hostBashAllowed, providerId });
    // Decided per assembly: a provider plugin may be swapped by config reload, and isolation is its property.
    ctx.tools.add(() => (hostBashAllowed() ? bash : null), { group: SANDBOX_TOOL_GROUPS.bash });
  },
});
