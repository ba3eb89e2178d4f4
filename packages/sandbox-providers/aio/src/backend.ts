import type { EgressPolicy } from "./sidecar/policy.js";
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
  /** Network mode and egress policy; absent = open. */
  network?: NetworkSettings;
}

/** `open`: the container has the engine's default network. `restricted`: internal network plus an egress sidecar. */
export interface NetworkSettings {
  mode: "open" | "restricted";
  /** Required for `restricted`; its label fences reuse. */
  policy?: EgressPolicy;
}

/** The label a sandbox carries for its network settings: the policy's label, or `open`. */
export function policyLabelOf(network: NetworkSettings | undefined): string {
  return network?.mode === "restricted" ? (network.policy?.label ?? "default") : "open";
}

/** A sandbox found on the backend (after a restart, or made by another instance). Finding one changes nothing. */
export interface DiscoveredSandbox {
  sandboxId: string;
  /** The sandbox container's id. */
  handle: string;
  networkMode: "open" | "restricted";
  policyLabel: string;
  /** Epoch ms the sandbox was created (its label); 0 when unknown. */
  createdAt: number;
  /** Restricted sandboxes: what the relay token was derived from. */
  nonce?: string;
}

/** A started container: where its AIO API answers, plus what the backend needs to destroy it. */
export interface SandboxInstance {
  sandboxId: string;
  baseUrl: string;
  /** Backend-specific handle (the provisioner's id, a Docker container id). */
  handle: string;
  /** Headers every AIO API call needs (the sidecar relay's token). */
  headers?: Record<string, string>;
  network?: { mode: "open" | "restricted"; label: string };
  /** Restricted sandboxes: the sidecar's control API (denials, policy) at `baseUrl`. */
  relay?: { token: string };
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
  /** Read-only: the sandbox with this id, if the backend has one. */
  discover?(sandboxId: string, signal?: AbortSignal): Promise<DiscoveredSandbox | undefined>;
  /** Read-only: every Antler sandbox the backend has. */
  enumerate?(signal?: AbortSignal): Promise<DiscoveredSandbox[]>;
  /** An instance for a discovered sandbox this process can talk to, or undefined (e.g. its relay token cannot be derived). */
  adopt?(found: DiscoveredSandbox, signal?: AbortSignal): Promise<SandboxInstance | undefined>;
  /** Removes the sandbox and everything that belongs to it (sidecar, networks). Throws when anything is left. */
  teardown?(sandboxId: string): Promise<void>;
}
