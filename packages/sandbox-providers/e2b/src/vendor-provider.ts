import type { AcquireOptions } from "@antler/kernel";
import { type E2BConfig, e2bConfigSchema } from "./config.js";
import { type E2BProviderOptions, E2BSandboxProvider, type RemoteSandboxService } from "./provider.js";
import type { E2BRemote } from "./remote.js";
import type { E2BSandbox } from "./sandbox.js";

/**
 * The lifecycle settings a vendor's config carries: `remoteSandboxPoolAndSyncFields`, the per-request timeout, and
 * the sandbox lifetime where the vendor has one (E2B's default otherwise).
 */
export type VendorLifecycleConfig = Pick<
  E2BConfig,
  "pool_size" | "request_timeout_ms" | "max_file_bytes" | "max_total_bytes" | "max_files" | "deadline_ms"
> & { timeout_seconds?: number };

/** A vendor client whose key is resolved on first use; `requireKey` throws the vendor's coded setup error. */
export interface KeyedVendorApi {
  requireKey(): unknown;
}

export interface VendorSandboxProviderOptions<Api extends KeyedVendorApi>
  extends Pick<E2BProviderOptions, "baseDir" | "logger" | "where" | "mounts"> {
  config: VendorLifecycleConfig;
  service: RemoteSandboxService;
  /** The vendor client `remote` talks through. */
  api: Api;
  remote: E2BRemote;
}

/**
 * `E2BSandboxProvider` over another vendor's API (BoxLite, Tenki): this package's lifecycle (warm pool, reattach,
 * uploads, output sync) over the vendor's `E2BRemote`. Each acquire checks the vendor key first, so a missing key
 * is a setup problem with its own code, not "cannot create a sandbox".
 */
export class VendorSandboxProvider<Api extends KeyedVendorApi> extends E2BSandboxProvider {
  readonly api: Api;

  constructor(options: VendorSandboxProviderOptions<Api>) {
    const { config } = options;
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
      service: options.service,
      baseDir: options.baseDir,
      logger: options.logger,
      where: options.where,
      remote: options.remote,
      ...(options.mounts ? { mounts: options.mounts } : {}),
    });
    this.api = options.api;
  }

  override async acquire(threadId: string, options: AcquireOptions): Promise<E2BSandbox> {
    this.api.requireKey();
    return super.acquire(threadId, options);
  }
}
