import { AntlerError, ErrorCodes } from "@antler/kernel";
import {
  type ProvisionerCreateRequest,
  type ProvisionerDeleteResponse,
  type ProvisionerSandbox,
  provisionerDeleteResponseSchema,
  provisionerSandboxSchema,
} from "./api.js";
import type { SandboxBackend, SandboxInstance, SandboxRequest } from "./backend.js";
import { type FetchLike, HttpEndpoint } from "./http.js";
import { sleep } from "./wait.js";

export interface ProvisionerClientOptions {
  /** e.g. `http://provisioner:8002`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  fetch?: FetchLike;
  timeoutMs?: number;
  /** Config path for errors; default `provisioner_url`. */
  where?: string;
}

/** Typed client of the sandbox provisioner API: `POST /api/sandboxes`, `GET`/`DELETE /api/sandboxes/{id}`. */
export class ProvisionerClient {
  private readonly http: HttpEndpoint;

  constructor(options: ProvisionerClientOptions) {
    this.http = new HttpEndpoint({
      baseUrl: options.baseUrl,
      service: "sandbox provisioner",
      where: options.where ?? "provisioner_url",
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
  }

  create(body: ProvisionerCreateRequest, signal?: AbortSignal): Promise<ProvisionerSandbox> {
    return this.http.json("/api/sandboxes", provisionerSandboxSchema, { body, ...(signal ? { signal } : {}) });
  }

  get(sandboxId: string, signal?: AbortSignal): Promise<ProvisionerSandbox> {
    return this.http.json(`/api/sandboxes/${encodeURIComponent(sandboxId)}`, provisionerSandboxSchema, signal ? { signal } : {});
  }

  delete(sandboxId: string, signal?: AbortSignal): Promise<ProvisionerDeleteResponse> {
    return this.http.json(`/api/sandboxes/${encodeURIComponent(sandboxId)}`, provisionerDeleteResponseSchema, {
      method: "DELETE",
      ...(signal ? { signal } : {}),
    });
  }
}

export interface ProvisionerBackendOptions extends ProvisionerClientOptions {
  /** Image the provisioner should run, if it lets callers choose. */
  image?: string;
  /** Milliseconds between status polls while the sandbox is `Pending`; default 500. */
  pollIntervalMs?: number;
}

/** Remote sandboxes from a provisioner service (DeerFlow's shape: a Pod + Service per sandbox). */
export class ProvisionerBackend implements SandboxBackend {
  readonly kind = "provisioner" as const;
  readonly client: ProvisionerClient;
  private readonly image: string | undefined;
  private readonly pollIntervalMs: number;

  constructor(options: ProvisionerBackendOptions) {
    this.client = new ProvisionerClient(options);
    this.image = options.image;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
  }

  async create(request: SandboxRequest): Promise<SandboxInstance> {
    let state = await this.client.create(
      {
        sandbox_id: request.sandboxId,
        thread_id: request.threadId,
        user_id: request.userId,
        ...(this.image ? { image: this.image } : {}),
        ...(request.mounts?.length
          ? { mounts: request.mounts.map((m) => ({ host_path: m.hostPath, container_path: m.virtualPath, read_only: m.readOnly })) }
          : {}),
      },
      request.signal,
    );
    const sandboxId = state.sandbox_id;
    while (state.status !== "Running" || !state.sandbox_url) {
      if (state.status === "Failed" || state.status === "Succeeded" || state.status === "NotFound") {
        throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `the provisioner reports sandbox ${sandboxId} as ${state.status}`, {
          where: "provisioner_url",
          hint: "Check the provisioner's logs (image pull, resource limits); the next acquire retries.",
          details: { sandboxId, status: state.status },
        });
      }
      await sleep(this.pollIntervalMs, request.signal);
      state = await this.client.get(sandboxId, request.signal);
    }
    return { sandboxId, baseUrl: state.sandbox_url, handle: sandboxId };
  }

  async destroy(instance: SandboxInstance): Promise<void> {
    try {
      await this.client.delete(instance.handle);
    } catch (error) {
      // Already gone is the goal of a delete.
      if (error instanceof AntlerError && error.code === ErrorCodes.SANDBOX_NOT_FOUND) return;
      throw error;
    }
  }
}
