import { type AcquireOptions, definePlugin, type Logger } from "@antler/kernel";
import { type E2BSandbox, E2BSandboxProvider, e2bConfigSchema, type RemoteSandboxService, skillMounts } from "@antler/sandbox-e2b";
import { TenkiApi } from "./api.js";
import { TENKI_KEY_ENVS, type TenkiConfig, tenkiConfigSchema } from "./config.js";
import { createTenkiRemote } from "./remote.js";

export const TENKI_PROVIDER_ID = "tenki";

export const TENKI_SERVICE: RemoteSandboxService = Object.freeze({
  id: TENKI_PROVIDER_ID,
  label: "Tenki",
  createHint: "Check api_key, api_url and project_id, and that the Tenki workspace has sandbox quota left.",
});

export interface TenkiProviderOptions {
  config: TenkiConfig;
  baseDir: string;
  logger: Logger;
  /** Where TENKI_AUTH_TOKEN / TENKI_API_KEY are looked up. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  where?: string;
  mounts?: (userId: string) => ReadonlyArray<{ hostPath: string; virtualPath: string }>;
  /** First retry delay and session polling interval in ms (tests shorten them). */
  retryBaseMs?: number;
  pollMs?: number;
}

/**
 * Sandbox provider `tenki`: one Tenki session (a micro-VM) per (user, thread), over Tenki's ConnectRPC API. The
 * lifecycle (warm pool, reattach after a restart by session metadata, uploads pushed on acquire, output sync on
 * release) is `@antler/sandbox-e2b`'s, over this package's `E2BRemote`.
 */
export class TenkiSandboxProvider extends E2BSandboxProvider {
  readonly api: TenkiApi;

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
      config: e2bConfigSchema.parse({
        timeout_seconds: config.timeout_seconds,
        pool_size: config.pool_size,
        request_timeout_ms: config.request_timeout_ms,
        max_file_bytes: config.max_file_bytes,
        max_total_bytes: config.max_total_bytes,
        max_files: config.max_files,
        deadline_ms: config.deadline_ms,
      }),
      service: TENKI_SERVICE,
      baseDir: options.baseDir,
      logger: options.logger,
      where,
      remote: createTenkiRemote(api, {
        projectId: config.project_id,
        workspaceId: config.workspace_id,
        cpuCores: config.cpu_cores,
        memoryMb: config.memory_mb,
        readyTimeoutMs: config.ready_timeout_ms,
        scratchDir: config.scratch_dir,
        ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
      }),
      ...(options.mounts ? { mounts: options.mounts } : {}),
    });
    this.api = api;
  }

  override async acquire(threadId: string, options: AcquireOptions): Promise<E2BSandbox> {
    this.api.requireKey();
    return super.acquire(threadId, options);
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
  setup(ctx) {
    // No I/O and no key check here: a kernel that never uses this provider boots without Tenki credentials.
    ctx.sandbox.addProvider(
      new TenkiSandboxProvider({
        config: ctx.config,
        baseDir: ctx.paths.baseDir,
        logger: ctx.logger,
        where: `plugins[${ctx.plugin.name}].config`,
        mounts: skillMounts(ctx.services),
      }),
    );
  },
});

export default tenkiSandboxPlugin;
