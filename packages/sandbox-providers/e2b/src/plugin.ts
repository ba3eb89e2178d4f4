import { definePlugin, type PluginContext, type SandboxProvider, type Token } from "@antler/kernel";
import { e2bConfigSchema } from "./config.js";
import { type E2BProviderOptions, E2BSandboxProvider } from "./provider.js";

/** `@antler/plugin-skills`' mounts, by the registry key it provides them under (no dependency on that package). */
const SKILL_MOUNTS: Token<{ hostDirs(userId: string): { public: string; custom: string } }> = Object.freeze({
  key: Symbol.for("@antler/sandbox/skill-mounts"),
  name: "sandbox.skill-mounts",
});

/**
 * A remote provider's `mounts` option: the user's skills folders (when `@antler/plugin-skills` is loaded) at
 * /mnt/skills/public and /mnt/skills/custom, uploaded read-only on acquire.
 */
export function skillMounts(services: Pick<PluginContext<unknown>["services"], "tryResolve">) {
  return (userId: string): Array<{ hostPath: string; virtualPath: string }> => {
    const skills = services.tryResolve(SKILL_MOUNTS)?.hostDirs(userId);
    return skills
      ? [
          { hostPath: skills.public, virtualPath: "/mnt/skills/public" },
          { hostPath: skills.custom, virtualPath: "/mnt/skills/custom" },
        ]
      : [];
  };
}

/** What a remote provider's plugin hands its provider from the plugin context. */
export type RemoteProviderContextOptions<Config> = Pick<E2BProviderOptions, "baseDir" | "logger" | "where" | "mounts"> & {
  config: Config;
};

/**
 * The `setup` of a plugin that registers one remote sandbox provider (E2B, BoxLite, Tenki), built from the plugin's
 * config, Antler's data folder, its logger and the user's skills mounts. No I/O and no key check here: the key is
 * resolved on first acquire, so a kernel that never uses the provider boots without the vendor's credentials.
 */
export function setupRemoteSandboxProvider<Config>(
  create: (options: RemoteProviderContextOptions<Config>) => SandboxProvider,
): (ctx: PluginContext<Config>) => void {
  return (ctx) => {
    ctx.sandbox.addProvider(
      create({
        config: ctx.config,
        baseDir: ctx.paths.baseDir,
        logger: ctx.logger,
        where: `plugins[${ctx.plugin.name}].config`,
        mounts: skillMounts(ctx.services),
      }),
    );
  };
}

/** Sandbox provider `e2b`: remote E2B micro-VMs, with bounded, manifest-based output sync on release. */
const e2bSandboxPlugin = definePlugin({
  name: "@antler/sandbox-e2b",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Sandbox provider `e2b`: one remote E2B sandbox per thread, outputs synced to the host on release.",
  configSchema: e2bConfigSchema,
  setup: setupRemoteSandboxProvider((options) => new E2BSandboxProvider(options)),
});

export default e2bSandboxPlugin;
