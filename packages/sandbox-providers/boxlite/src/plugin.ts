import { type AcquireOptions, definePlugin } from "@antler/kernel";
import { type E2BSandbox, E2BSandboxProvider, e2bConfigSchema, type RemoteSandboxService, skillMounts } from "@antler/sandbox-e2b";
import { BoxLiteApi } from "./api.js";
import { BOXLITE_API_KEY_ENV, type BoxLiteConfig, boxliteConfigSchema } from "./config.js";
import { createBoxLiteRemote } from "./remote.js";

export const BOXLITE_PROVIDER_ID = "boxlite";

export const BOXLITE_SERVICE: RemoteSandboxService = Object.freeze({
  id: BOXLITE_PROVIDER_ID,
  label: "BoxLite",
  createHint: "Check api_url, prefix, api_key and image, and that the BoxLite service has capacity left (max boxes per prefix).",
});

export interface BoxLiteProviderOptions {
  config: BoxLiteConfig;
  /** Antler's data folder; outputs land in the thread's outputs folder on release. */
  baseDir: string;
  logger: import("@antler/kernel").Logger;
  /** Where `BOXLITE_API_KEY` is looked up. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  where?: string;
  mounts?: (userId: string) => ReadonlyArray<{ hostPath: string; virtualPath: string }>;
  /** First retry delay in ms (tests shorten it). Default 200. */
  retryBaseMs?: number;
}

/**
 * Sandbox provider `boxlite`: one BoxLite box per (user, thread), driven over BoxLite's REST API. The lifecycle
 * (warm pool, reattach after a restart, uploads pushed on acquire, output sync on release) is `@antler/sandbox-e2b`'s,
 * over this package's `E2BRemote`.
 */
export class BoxLiteSandboxProvider extends E2BSandboxProvider {
  readonly api: BoxLiteApi;

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
      config: e2bConfigSchema.parse({
        pool_size: config.pool_size,
        request_timeout_ms: config.request_timeout_ms,
        max_file_bytes: config.max_file_bytes,
        max_total_bytes: config.max_total_bytes,
        max_files: config.max_files,
        deadline_ms: config.deadline_ms,
      }),
      service: BOXLITE_SERVICE,
      baseDir: options.baseDir,
      logger: options.logger,
      where,
      remote: createBoxLiteRemote(api, { image: config.image, cpus: config.cpus, memoryMib: config.memory_mib }),
      ...(options.mounts ? { mounts: options.mounts } : {}),
    });
    this.api = api;
  }

  override async acquire(threadId: string, options: AcquireOptions): Promise<E2BSandbox> {
    // A missing key is a setup problem with its own code, not "cannot create a sandbox".
    this.api.requireKey();
    return super.acquire(threadId, options);
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
  setup(ctx) {
    // No I/O and no key check here: a kernel that never uses this provider boots without BoxLite credentials.
    ctx.sandbox.addProvider(
      new BoxLiteSandboxProvider({
        config: ctx.config,
        baseDir: ctx.paths.baseDir,
        logger: ctx.logger,
        where: `plugins[${ctx.plugin.name}].config`,
        mounts: skillMounts(ctx.services),
      }),
    );
  },
});

export default boxliteSandboxPlugin;
