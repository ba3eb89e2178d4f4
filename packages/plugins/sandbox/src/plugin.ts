import { type AntlerTool, DEFAULT_USER_ID, definePlugin, type PluginContext, type SandboxProvider } from "@antler/kernel";
import { type SandboxToolLimits, sandboxPluginConfigSchema, toolLimits } from "./config.js";
import { SANDBOX_MIDDLEWARE_NAME } from "./names.js";
import { SandboxRegistry } from "./registry.js";

/** Tool groups (`tool_groups` in config.yaml). */
export const SANDBOX_TOOL_GROUPS = {
  read: "file:read",
  write: "file:write",
  bash: "bash",
} as const;

type SandboxToolName = "ls" | "read_file" | "glob" | "grep" | "write_file" | "str_replace" | "bash";
const TOOL_GROUPS: ReadonlyArray<readonly [SandboxToolName, string]> = [
  ["ls", SANDBOX_TOOL_GROUPS.read],
  ["read_file", SANDBOX_TOOL_GROUPS.read],
  ["glob", SANDBOX_TOOL_GROUPS.read],
  ["grep", SANDBOX_TOOL_GROUPS.read],
  ["write_file", SANDBOX_TOOL_GROUPS.write],
  ["str_replace", SANDBOX_TOOL_GROUPS.write],
  ["bash", SANDBOX_TOOL_GROUPS.bash],
];

/**
 * `@antler/plugin-sandbox`: the sandbox capability (tools and the Sandbox middleware) over whichever
 * `SandboxProvider` `sandbox.provider` selects. The substrate comes from a provider plugin (local, AIO, E2B).
 * The tools and the middleware (LangChain) load on the first agent build, so `antler config check` loads none.
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

    const middlewareOptions = { registry, hostBashAllowed, providerId, logger: ctx.logger };
    ctx.middleware.add(
      {
        name: SANDBOX_MIDDLEWARE_NAME,
        create: async (build) =>
          (await import("./middleware.js")).createSandboxMiddlewareSpec(middlewareOptions, { subagent: build.subagent }),
      },
      { after: "Uploads" },
    );
    addTools(ctx, { registry, limits, hostBashAllowed, providerId });
  },
});

/** One instance of each tool per kernel, built on the first assembly. */
function addTools(
  ctx: PluginContext,
  options: { registry: SandboxRegistry; limits: SandboxToolLimits; hostBashAllowed(): boolean; providerId(): string | undefined },
): void {
  let tools: Promise<Record<SandboxToolName, AntlerTool>> | undefined;
  const built = () =>
    (tools ??= Promise.all([import("./file-tools.js"), import("./edit-tools.js"), import("./bash-tool.js")]).then(([file, edit, bash]) => ({
      ls: file.createLsTool(options),
      read_file: file.createReadFileTool(options),
      glob: file.createGlobTool(options),
      grep: file.createGrepTool(options),
      write_file: edit.createWriteFileTool(options),
      str_replace: edit.createStrReplaceTool(options),
      bash: bash.createBashTool(options),
    })));
  for (const [name, group] of TOOL_GROUPS) {
    // `bash` is decided per assembly: a provider plugin may be swapped by config reload, and isolation is its property.
    const enabled = name === "bash" ? options.hostBashAllowed : () => true;
    // Reads may run again after a takeover; writes and bash never run twice (see docs/plugins/gateway.md).
    ctx.tools.add(async () => (enabled() ? (await built())[name] : null), { name, group, idempotent: group === "file:read" });
  }
}
