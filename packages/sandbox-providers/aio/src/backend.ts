/** A host folder the container should show at a virtual path (`/mnt/skills/public`, ...). */
export interface SandboxMount {
  hostPath: string;
  /** Where the agent sees it; the backend places it at the matching path of its container layout. */
  virtualPath: string;
  readOnly: boolean;
}

/** What a backend is asked for: one AIO container for one (user, thread) lease. */
export interface SandboxRequest {
  /** Deterministic per (user, thread), so a create retry or a second process finds the same sandbox. */
  sandboxId: string;
  userId: string;
  threadId: string;
  /** Covers the acquire deadline and the caller's cancellation. */
  signal: AbortSignal;
  /** Extra read-only folders for this user (skills); empty when nothing else is mounted. */
  mounts?: readonly SandboxMount[];
}

/** A started container: where its AIO API answers, plus what the backend needs to destroy it. */
export interface SandboxInstance {
  sandboxId: string;
  baseUrl: string;
  /** Backend-specific handle (the provisioner's id, a Docker container id). */
  handle: string;
}

/**
 * Where AIO containers come from. The provider owns pooling, leases and readiness; a backend only starts and
 * stops containers.
 */
export interface SandboxBackend {
  readonly kind: "provisioner" | "docker";
  /** Starts (or finds) the container; resolves once its base URL is known, not necessarily ready. */
  create(request: SandboxRequest): Promise<SandboxInstance>;
  destroy(instance: SandboxInstance): Promise<void>;
}
