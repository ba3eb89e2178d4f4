import { definePlugin } from "@antler/kernel";
import {
  type RemoteProviderContextOptions,
  type RemoteSandboxService,
  setupRemoteSandboxProvider,
  VendorSandboxProvider,
} from "@antler/sandbox-e2b";
import { TenkiApi } from "./api.js";
import { TENKI_KEY_ENVS, type TenkiConfig, tenkiConfigSchema } from "./config.js";
import { createTenkiRemote } from "./remote.js";

export const TENKI_PROVIDER_ID = "tenki";

export const TENKI_SERVICE: RemoteSandboxService = Object.freeze({
  id: TENKI_PROVIDER_ID,
  label: "Tenki",
  createHint: "Check api_key, api_url and project_id, and that the Tenki workspace has sandbox quota left.",
});

export interface TenkiProviderOptions extends RemoteProviderContextOptions<TenkiConfig> {
  /** Where TENKI_AUTH_TOKEN / TENKI_API_KEY are looked up. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** First retry delay and session polling interval in ms (tests shorten them). */
  retryBaseMs?: number;
  pollMs?: number;
}

/**
 * Sandbox provider `tenki`: one Tenki session (a micro-VM) per (user, thread), over Tenki's ConnectRPC API. The
 * lifecycle (warm pool, reattach after a restart by session metadata, uploads pushed on acquire, output sync on
 * release) is `@antler/sandbox-e2b`'s, over this package's `E2BRemote`.
 */
export class TenkiSandboxProvider extends VendorSandboxProvider<TenkiApi> {
  constructor(options: TenkiProviderOptions) {
    const { config } = options;
    const where = options.where ?? "@antler/sandbox-tenki config";
    const env = options.env ?? process.env;
    const api = new TenkiApi({
      apiUrl: config.api_url,
      apiKey: () => config.api_key ?? TENKI_KEY_ENVS.map((name) => env[name]).find((v) => v !== undefined && v !== ""),
      requestTimeoutMs: config.request_timeout_ms,
      maxRetries: config.max_retries,
      ...(options.retryBaseMs !== undefined ? { retryBaseMs: options.retryBaseMs } : {}),
      where,
    });
    super({
      ...options,
      where,
      service: TENKI_SERVICE,
      api,
      remote: createTenkiRemote(api, {
        projectId: config.project_id,
        workspaceId: config.workspace_id,
        cpuCores: config.cpu_cores,
        memoryMb: config.memory_mb,
        readyTimeoutMs: config.ready_timeout_ms,
        scratchDir: config.scratch_dir,
        ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
      }),
    });
  }
}

/** Sandbox provider `tenki`: Tenki micro-VM sessions over ConnectRPC, outputs synced to the host on release. */
const tenkiSandboxPlugin = definePlugin({
  name: "@antler/sandbox-tenki",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Sandbox provider `tenki`: one Tenki micro-VM session per thread over its ConnectRPC API, outputs synced to the host on release.",
  configSchema: tenkiConfigSchema,
  setup: setupRemoteSandboxProvider((options) => new TenkiSandboxProvider(options)),
});

export default tenkiSandboxPlugin;
