import { definePlugin } from "@antler/kernel";
import {
  type RemoteProviderContextOptions,
  type RemoteSandboxService,
  setupRemoteSandboxProvider,
  VendorSandboxProvider,
} from "@antler/sandbox-e2b";
import { BoxLiteApi } from "./api.js";
import { BOXLITE_API_KEY_ENV, type BoxLiteConfig, boxliteConfigSchema } from "./config.js";
import { createBoxLiteRemote } from "./remote.js";

export const BOXLITE_PROVIDER_ID = "boxlite";

export const BOXLITE_SERVICE: RemoteSandboxService = Object.freeze({
  id: BOXLITE_PROVIDER_ID,
  label: "BoxLite",
  createHint: "Check api_url, prefix, api_key and image, and that the BoxLite service has capacity left (max boxes per prefix).",
});

export interface BoxLiteProviderOptions extends RemoteProviderContextOptions<BoxLiteConfig> {
  /** Where `BOXLITE_API_KEY` is looked up. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** First retry delay in ms (tests shorten it). Default 200. */
  retryBaseMs?: number;
}

/**
 * Sandbox provider `boxlite`: one BoxLite box per (user, thread), driven over BoxLite's REST API. The lifecycle
 * (warm pool, reattach after a restart, uploads pushed on acquire, output sync on release) is `@antler/sandbox-e2b`'s,
 * over this package's `E2BRemote`.
 */
export class BoxLiteSandboxProvider extends VendorSandboxProvider<BoxLiteApi> {
  constructor(options: BoxLiteProviderOptions) {
    const { config } = options;
    const where = options.where ?? "@antler/sandbox-boxlite config";
    const api = new BoxLiteApi({
      apiUrl: config.api_url,
      prefix: config.prefix,
      apiKey: () => config.api_key ?? (options.env ?? process.env)[BOXLITE_API_KEY_ENV],
      requestTimeoutMs: config.request_timeout_ms,
      maxRetries: config.max_retries,
      ...(options.retryBaseMs !== undefined ? { retryBaseMs: options.retryBaseMs } : {}),
      where,
    });
    super({
      ...options,
      where,
      service: BOXLITE_SERVICE,
      api,
      remote: createBoxLiteRemote(api, { image: config.image, cpus: config.cpus, memoryMib: config.memory_mib }),
    });
  }
}

/** Sandbox provider `boxlite`: BoxLite micro-VMs over the REST API, outputs synced to the host on release. */
const boxliteSandboxPlugin = definePlugin({
  name: "@antler/sandbox-boxlite",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Sandbox provider `boxlite`: one BoxLite micro-VM per thread over BoxLite's REST API, outputs synced to the host on release.",
  configSchema: boxliteConfigSchema,
  setup: setupRemoteSandboxProvider((options) => new BoxLiteSandboxProvider(options)),
});

export default boxliteSandboxPlugin;
