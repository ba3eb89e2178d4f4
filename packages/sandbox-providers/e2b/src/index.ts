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
export { default, type RemoteProviderContextOptions, setupRemoteSandboxProvider, skillMounts } from "./plugin.js";
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
export {
  type KeyedVendorApi,
  type VendorLifecycleConfig,
  VendorSandboxProvider,
  type VendorSandboxProviderOptions,
} from "./vendor-provider.js";
