import { definePlugin, type PluginContext, type Token } from "@antler/kernel";
import { e2bConfigSchema } from "./config.js";
import { E2BSandboxProvider } from "./provider.js";

export { E2B_API_KEY_ENV, type E2BConfig, type E2BConfigInput, e2bConfigSchema, remoteSandboxPoolAndSyncFields } from "./config.js";
export { createFolderRemote, type FolderRemote, type FolderRemoteOptions } from "./folder-remote.js";
export { type LedgerEntry, recordSync, SANDBOX_SYNC_LEDGER_FILE } from "./ledger.js";
export {
  type HostMeta,
  loadManifest,
  type ManifestLoad,
  type RemoteVersion,
  SYNC_MANIFEST_FILE,
  type SyncManifest,
  type SyncManifestEntry,
  saveManifest,
  syncManifestSchema,
} from "./manifest.js";
export {
  type DroppedFile,
  type DropReason,
  type OutputSyncOptions,
  type OutputSyncReport,
  type SyncLimits,
  syncOutputs,
} from "./output-sync.js";
export {
  BOOTSTRAP_COMMAND,
  E2B_PROVIDER_ID,
  E2B_SERVICE,
  type E2BProviderOptions,
  E2BSandboxProvider,
  e2bSandboxId,
  type HostMount,
  hostMounts,
  type RemoteSandboxService,
  threadMetadata,
} from "./provider.js";
export type {
  E2BRemote,
  RemoteConnectOptions,
  RemoteCreateOptions,
  RemoteEntry,
  RemoteInfo,
  RemoteReadOptions,
  RemoteRunOptions,
  RemoteRunResult,
  RemoteSandbox,
} from "./remote.js";
export { E2BSandbox, globToRegExp } from "./sandbox.js";
export { createSdkRemote, type SdkRemoteOptions } from "./sdk-remote.js";

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

/** Sandbox provider `e2b`: remote E2B micro-VMs, with bounded, manifest-based output sync on release. */
const e2bSandboxPlugin = definePlugin({
  name: "@antler/sandbox-e2b",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Sandbox provider `e2b`: one remote E2B sandbox per thread, outputs synced to the host on release.",
  configSchema: e2bConfigSchema,
  setup(ctx) {
    // No I/O and no API-key check here: the key is resolved on first acquire, so a kernel that never uses
    // this provider boots without E2B credentials.
    ctx.sandbox.addProvider(
      new E2BSandboxProvider({
        config: ctx.config,
        baseDir: ctx.paths.baseDir,
        logger: ctx.logger,
        where: `plugins[${ctx.plugin.name}].config`,
        mounts: skillMounts(ctx.services),
      }),
    );
  },
});

export default e2bSandboxPlugin;
