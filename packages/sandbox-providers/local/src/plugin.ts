import { definePlugin, type Token } from "@antler/kernel";
import { z } from "zod";
import { LocalSandboxProvider } from "./provider.js";

export const localSandboxConfigSchema = z.object({
  max_sandboxes: z.number().int().positive().default(256).describe("Live sandboxes kept (LRU); one per (user, thread)."),
  shell: z.string().default("/bin/bash").describe("Shell that runs commands as `<shell> -c <command>`."),
});

export type LocalSandboxConfig = z.output<typeof localSandboxConfigSchema>;

/** `@antler/plugin-skills`' mounts, by the registry key it provides them under (no dependency on that package). */
const SKILL_MOUNTS: Token<{ hostDirs(userId: string): { public: string; custom: string } }> = Object.freeze({
  key: Symbol.for("@antler/sandbox/skill-mounts"),
  name: "sandbox.skill-mounts",
});

/**
 * Sandbox provider `local`: commands run on the host in the thread's folders. NOT an isolation boundary; the
 * sandbox tools keep host bash off unless `sandbox.allow_host_bash: true`.
 */
export default definePlugin({
  name: "@antler/sandbox-local",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Local sandbox provider: runs commands on the host with path translation and secret scrubbing. Not an isolation boundary.",
  configSchema: localSandboxConfigSchema,
  setup(ctx) {
    const sandbox = ctx.kernelConfig.sandbox;
    if (sandbox.allow_host_bash && (sandbox.provider === undefined || sandbox.provider === "local")) {
      ctx.logger.warn("sandbox.allow_host_bash is on: agent commands run unisolated on the host as the Antler process user");
    }
    ctx.sandbox.addProvider(
      new LocalSandboxProvider({
        baseDir: ctx.paths.baseDir,
        maxSandboxes: ctx.config.max_sandboxes,
        shell: ctx.config.shell,
        defaultTimeoutMs: sandbox.bash_command_timeout_seconds * 1000,
        skillMounts: (userId) => ctx.services.tryResolve(SKILL_MOUNTS)?.hostDirs(userId),
      }),
    );
  },
});
