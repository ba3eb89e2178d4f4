export * from "./api.js";
export {
  type DiscoveredSandbox,
  type NetworkSettings,
  policyLabelOf,
  type SandboxBackend,
  type SandboxInstance,
  type SandboxMount,
  type SandboxRequest,
} from "./backend.js";
export { AioClient, type AioClientOptions, type CallOptions } from "./client.js";
export { type AioConfig, type AioConfigInput, aioConfigSchema } from "./config.js";
export {
  AIO_CONTAINER_PORT,
  DEFAULT_AIO_IMAGE,
  DEFAULT_SIDECAR_IMAGE,
  DockerBackend,
  type DockerBackendOptions,
  dockerNames,
  mountFlags,
  parseHostPort,
  type ThreadMount,
  threadMounts,
} from "./docker.js";
export { SidecarEgressControl } from "./egress.js";
export { type FetchLike, HttpEndpoint, type HttpEndpointOptions, type RequestOptions } from "./http.js";
export { AioPathMap, type ResolveOptions } from "./paths.js";
export { type CreateAioProviderOptions, createAioProvider, default } from "./plugin.js";
export { type AioAcquireOptions, type AioPoolStats, type AioProviderOptions, AioSandboxProvider, sandboxIdFor } from "./provider.js";
export { ProvisionerBackend, type ProvisionerBackendOptions, ProvisionerClient, type ProvisionerClientOptions } from "./provisioner.js";
export { AioSandbox, type AioSandboxOptions } from "./sandbox.js";
export type { EgressDenial } from "./sidecar/denials.js";
export { type EgressPolicy, type EgressPolicyInput, egressPolicySchema } from "./sidecar/policy.js";
export { TeardownLeases, type TeardownLeasesTable, teardownLeaseMigrations } from "./teardown-lease.js";
