import { createHash, randomUUID } from "node:crypto";
import { type AcquireOptions, AntlerError, assertSafeId, ErrorCodes, type SandboxProvider } from "@antler/kernel";
import {
  type DiscoveredSandbox,
  type NetworkSettings,
  policyLabelOf,
  type SandboxBackend,
  type SandboxInstance,
  type SandboxMount,
} from "./backend.js";
import { AioClient } from "./client.js";
import { SidecarEgressControl } from "./egress.js";
import type { FetchLike } from "./http.js";
import { AioPathMap } from "./paths.js";
import { AioSandbox } from "./sandbox.js";
import type { TeardownLeases } from "./teardown-lease.js";
import { sleep } from "./wait.js";

/** `acquire` options of this provider: the kernel's, plus the request's network settings (default the provider's). */
export interface AioAcquireOptions extends AcquireOptions {
  network?: NetworkSettings;
}

export interface AioProviderOptions {
  backend: SandboxBackend;
  /** Most released sandboxes kept warm; the least recently released beyond this is destroyed. Default 3. */
  replicas?: number;
  /** A warm sandbox unused this long is destroyed. Default 600. */
  idleTimeoutSeconds?: number;
  /** Deadline for create + readiness of a new sandbox. Default 120. */
  acquireTimeoutSeconds?: number;
  /** Container folder the virtual `/mnt` tree maps to; default the home folder `GET /v1/sandbox` reports. */
  containerRoot?: string;
  /** Sent to each sandbox's AIO API as `Authorization: Bearer` (the image's `SANDBOX_API_KEY`). */
  sandboxApiKey?: string;
  fetch?: FetchLike;
  /** Deadline of one AIO API call (commands get their own); default 30 000 ms. */
  requestTimeoutMs?: number;
  /** Milliseconds between readiness probes; default 500. */
  readinessIntervalMs?: number;
  /**
   * The thread's host folders are the container's own (bind-mounted): its files never need synchronizing, so
   * its sandboxes report no `generation`. Otherwise every new container is a new generation.
   */
  sharesHostFolders?: boolean;
  /** Network mode and egress policy of requests that name none; default open. */
  network?: NetworkSettings;
  /**
   * A sandbox found on the backend that this process does not hold (made before a restart, or by another
   * instance) and cannot reuse is replaced only once it is older than this. Default 300.
   */
  orphanGraceSeconds?: number;
  /** The cross-instance teardown lease store (the kernel's SQL store); without it only the local reservation applies. */
  teardownLeases?: () => Promise<TeardownLeases>;
  /** How long a teardown lease holds before another instance may take it over; default 120. */
  teardownLeaseSeconds?: number;
  /** Names this provider instance in teardown leases; default a random id. */
  instanceId?: string;
  /** Where failures of background clean-up go (a reaped sandbox the backend could not destroy). */
  logger?: { warn(obj: object, msg?: string): void };
  /** Host folders each user's sandbox shows (the skills plugin's `/mnt/skills/{public,custom}`), passed to the backend. */
  mounts?: (userId: string) => readonly SandboxMount[];
}

interface Lease {
  readonly key: string;
  readonly sandbox: AioSandbox;
  readonly instance: SandboxInstance;
  state: "active" | "warm";
  releasedAt: number;
  idleTimer: NodeJS.Timeout | undefined;
}

export interface AioPoolStats {
  active: number;
  warm: number;
}

/**
 * Provider `aio`: one AIO container per (user, thread) lease.
 *
 * - A lease is owned by exactly one (user, thread); its sandbox is never handed to another thread or user,
 *   warm or not. Concurrent acquires of one lease share one creation.
 * - `release` parks the sandbox warm; the next `acquire` of the same lease reuses it after a health probe.
 *   At most `replicas` sandboxes stay warm; each is destroyed after `idleTimeoutSeconds` unused.
 * - Sandbox ids are derived from (user, thread), so the id is stable across release, reaping and restarts.
 */
export class AioSandboxProvider implements SandboxProvider {
  readonly id = "aio";
  readonly isolated = true;
  readonly backend: SandboxBackend;
  private readonly options: AioProviderOptions;
  private readonly leases = new Map<string, Lease>();
  /** Deletes under way, by sandbox id: a new sandbox with the same id waits for its predecessor to be gone. */
  private readonly destroying = new Map<string, Promise<void>>();
  private readonly byId = new Map<string, Lease>();
  private readonly pending = new Map<string, Promise<AioSandbox>>();
  /** Bumped by reset/close so creations that finish afterwards are destroyed instead of leased. */
  private generation = 0;
  private closed = false;
  /** Sandboxes this process is tearing down right now (the local reservation). */
  private readonly reserved = new Set<string>();
  /** Teardowns that failed midway; the next sweep retries them. */
  private readonly unfinishedTeardowns = new Set<string>();
  private leaseStore: Promise<TeardownLeases> | undefined;
  readonly instanceId: string;

  constructor(options: AioProviderOptions) {
    this.backend = options.backend;
    this.options = options;
    this.instanceId = options.instanceId ?? `aio-provider-${randomUUID()}`;
  }

  async acquire(threadId: string, options: AioAcquireOptions): Promise<AioSandbox> {
    if (this.closed) {
      throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, "the aio sandbox provider is closed", {
        hint: "Acquire from the provider of the running kernel.",
      });
    }
    const userId = assertSafeId("user", options.userId);
    assertSafeId("thread", threadId);
    const key = leaseKey(userId, threadId);
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const network = options.network ?? this.options.network ?? { mode: "open" };
    const attempt = this.obtain(key, userId, threadId, network, options.signal).finally(() => this.pending.delete(key));
    this.pending.set(key, attempt);
    return attempt;
  }

  get(id: string): AioSandbox | undefined {
    return this.byId.get(id)?.sandbox;
  }

  async release(id: string): Promise<void> {
    const lease = this.byId.get(id);
    if (!lease || lease.state === "warm") return;
    const replicas = this.options.replicas ?? 3;
    if (replicas <= 0) {
      await this.destroy(lease);
      return;
    }
    lease.state = "warm";
    lease.releasedAt = Date.now();
    lease.idleTimer = setTimeout(
      () => {
        lease.idleTimer = undefined;
        this.destroy(lease).catch((error: unknown) => this.warn(lease, error, "could not destroy an idle AIO sandbox"));
      },
      (this.options.idleTimeoutSeconds ?? 600) * 1000,
    );
    // Reaping is housekeeping: it must not keep the process alive.
    lease.idleTimer.unref();
    const warm = [...this.leases.values()].filter((l) => l.state === "warm").sort((a, b) => a.releasedAt - b.releasedAt);
    const excess = warm.slice(0, Math.max(0, warm.length - replicas));
    await Promise.all(
      excess.map((l) => this.destroy(l).catch((error: unknown) => this.warn(l, error, "could not destroy a surplus warm AIO sandbox"))),
    );
  }

  async reset(): Promise<void> {
    this.generation++;
    const all = [...this.leases.values()];
    const results = await Promise.allSettled(all.map((lease) => this.destroy(lease)));
    results.forEach((r, i) => {
      if (r.status === "rejected") this.warn(all[i] as Lease, r.reason, "could not destroy an AIO sandbox on reset");
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.reset();
  }

  /** Live sandboxes by state, for diagnostics and tests. */
  stats(): AioPoolStats {
    let active = 0;
    let warm = 0;
    for (const lease of this.leases.values()) {
      if (lease.state === "active") active++;
      else warm++;
    }
    return { active, warm };
  }

  private async obtain(
    key: string,
    userId: string,
    threadId: string,
    network: NetworkSettings,
    signal: AbortSignal | undefined,
  ): Promise<AioSandbox> {
    const existing = this.leases.get(key);
    // Policy labels fence reuse: a sandbox made for another policy or network mode is never handed out.
    if (existing && !sameNetwork(existing.instance, network)) {
      if (existing.state === "active") {
        throw new AntlerError(
          ErrorCodes.SANDBOX_UNAVAILABLE,
          `the sandbox of thread ${threadId} is in use with network policy "${existing.instance.network?.label ?? "open"}", not "${policyLabelOf(network)}"`,
          { hint: "Wait for the thread's current run to end, then acquire again." },
        );
      }
      await this.destroy(existing).catch((e: unknown) => this.warn(existing, e, "could not destroy a warm AIO sandbox of another policy"));
    } else if (existing?.state === "active") {
      return existing.sandbox;
    } else if (existing) {
      clearTimeout(existing.idleTimer);
      existing.idleTimer = undefined;
      existing.state = "active";
      // A warm container may have died while parked (OOM, node restart); probe before handing it out.
      try {
        await existing.sandbox.client.context({ timeoutMs: 5_000, ...(signal ? { signal } : {}) });
        return existing.sandbox;
      } catch (error) {
        await this.destroy(existing).catch((e: unknown) => this.warn(existing, e, "could not destroy a dead warm AIO sandbox"));
        if (signal?.aborted) throw error;
      }
    }
    return this.create(key, userId, threadId, network, signal);
  }

  /** Read-only: the sandboxes the backend has (after a restart, or another instance's). Nothing is changed. */
  async enumerate(signal?: AbortSignal): Promise<DiscoveredSandbox[]> {
    return this.backend.enumerate ? this.backend.enumerate(signal) : [];
  }

  /** Retries teardowns that failed midway (a network that could not be removed). Never throws; what is left is logged. */
  async sweep(): Promise<void> {
    for (const sandboxId of [...this.unfinishedTeardowns]) {
      try {
        await this.replaceFound(sandboxId, undefined);
        this.unfinishedTeardowns.delete(sandboxId);
      } catch (error) {
        this.options.logger?.warn({ err: error, sandboxId }, "an AIO sandbox teardown is still unfinished; retrying on the next sweep");
      }
    }
  }

  /** Teardowns that failed midway and wait for the next sweep (diagnostics and tests). */
  unfinished(): string[] {
    return [...this.unfinishedTeardowns];
  }

  private async leases$(): Promise<TeardownLeases | undefined> {
    const open = this.options.teardownLeases;
    if (!open) return undefined;
    this.leaseStore ??= retryWhileBusy(open);
    // A failed open is not remembered: the next teardown tries again.
    return this.leaseStore.catch((error: unknown) => {
      this.leaseStore = undefined;
      throw error;
    });
  }

  /**
   * Tears down a sandbox this process found but does not hold: only from the acquire path (or the sweep retrying
   * it), only after the orphan grace, under the local reservation and the cross-instance teardown lease.
   */
  private async replaceFound(sandboxId: string, found: DiscoveredSandbox | undefined): Promise<void> {
    if (!this.backend.teardown) return;
    if (found) {
      const graceMs = (this.options.orphanGraceSeconds ?? 300) * 1000;
      const age = Date.now() - found.createdAt;
      if (age < graceMs) {
        throw new AntlerError(
          ErrorCodes.SANDBOX_UNAVAILABLE,
          `sandbox ${sandboxId} exists with network mode ${found.networkMode} and policy "${found.policyLabel}", which this request cannot reuse, ` +
            `and is ${Math.round(age / 1000)} s old; it is replaced only after the orphan grace of ${graceMs / 1000} s`,
          {
            where: "plugins[@antler/sandbox-aio].config.orphan_grace_seconds",
            hint: `Another gateway may still use it. Retry in ${Math.ceil((graceMs - age) / 1000)} s.`,
            details: { sandboxId, retryAfterSeconds: Math.ceil((graceMs - age) / 1000) },
          },
        );
      }
    }
    if (this.reserved.has(sandboxId)) {
      throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `sandbox ${sandboxId} is being torn down by this process`, {
        hint: "Acquire again in a moment.",
      });
    }
    this.reserved.add(sandboxId);
    const store = await this.leases$();
    try {
      const ttlMs = (this.options.teardownLeaseSeconds ?? 120) * 1000;
      if (store && !(await retryWhileBusy(() => store.tryAcquire(sandboxId, this.instanceId, ttlMs)))) {
        throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `another instance is tearing down sandbox ${sandboxId}`, {
          hint: "Acquire again in a moment; the other instance replaces it.",
          details: { sandboxId },
        });
      }
      try {
        await this.backend.teardown(sandboxId);
      } catch (error) {
        this.unfinishedTeardowns.add(sandboxId);
        throw error;
      }
      // The lease row stays until it expires: an instance that lost the race must not replace the replacement.
    } finally {
      this.reserved.delete(sandboxId);
    }
  }

  /** A sandbox the backend already has: reused when its network matches and this process can reach it, else replaced. */
  private async reuseOrReplace(sandboxId: string, network: NetworkSettings, signal: AbortSignal): Promise<SandboxInstance | undefined> {
    if (!this.backend.discover) return undefined;
    const found = await this.backend.discover(sandboxId, signal);
    if (!found) return undefined;
    if (found.networkMode === network.mode && found.policyLabel === policyLabelOf(network) && this.backend.adopt) {
      const instance = await this.backend.adopt(found, signal).catch(() => undefined);
      if (instance) {
        const probe = this.clientFor(instance);
        const alive = await probe.context({ signal, timeoutMs: 5_000 }).then(
          () => true,
          () => false,
        );
        if (alive) return instance;
      }
    }
    await this.replaceFound(sandboxId, found);
    return undefined;
  }

  private clientFor(instance: SandboxInstance): AioClient {
    return new AioClient({
      baseUrl: instance.baseUrl,
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
      ...(this.options.sandboxApiKey ? { apiKey: this.options.sandboxApiKey } : {}),
      ...(this.options.requestTimeoutMs !== undefined ? { timeoutMs: this.options.requestTimeoutMs } : {}),
      ...(instance.headers ? { headers: instance.headers } : {}),
    });
  }

  private async create(
    key: string,
    userId: string,
    threadId: string,
    network: NetworkSettings,
    callerSignal: AbortSignal | undefined,
  ): Promise<AioSandbox> {
    const generation = this.generation;
    const timeoutSeconds = this.options.acquireTimeoutSeconds ?? 120;
    const deadline = AbortSignal.timeout(timeoutSeconds * 1000);
    const signal = callerSignal ? AbortSignal.any([callerSignal, deadline]) : deadline;
    const sandboxId = sandboxIdFor(userId, threadId);
    let instance: SandboxInstance | undefined;
    try {
      // The id is fixed per (user, thread): a delete of the previous sandbox that is still under way (an idle
      // reap just as the user returns) would otherwise remove the new one, or clash with it by name.
      await this.destroying.get(sandboxId)?.catch(() => undefined);
      const mounts = this.options.mounts?.(userId) ?? [];
      await this.sweep();
      instance =
        (await this.reuseOrReplace(sandboxId, network, signal)) ??
        (await this.backend.create({ sandboxId, userId, threadId, signal, network, ...(mounts.length > 0 ? { mounts } : {}) }));
      const client = this.clientFor(instance);
      const context = await this.waitReady(client, signal, timeoutSeconds);
      const sandbox = new AioSandbox({
        id: `aio:${sandboxId}`,
        client,
        paths: new AioPathMap(this.options.containerRoot ?? context.home_dir),
        homeDir: context.home_dir,
        ...(this.options.sharesHostFolders ? {} : { generation: `${instance.handle}@${randomUUID()}` }),
        ...(instance.relay
          ? { egress: new SidecarEgressControl(instance.baseUrl, instance.relay.token, this.options.fetch, policyLabelOf(network)) }
          : {}),
      });
      await sandbox.prepareFolders(signal);
      if (generation !== this.generation) {
        throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, "the aio sandbox provider was reset while a sandbox was starting", {
          hint: "Acquire again.",
        });
      }
      const lease: Lease = { key, sandbox, instance, state: "active", releasedAt: 0, idleTimer: undefined };
      this.leases.set(key, lease);
      this.byId.set(sandbox.id, lease);
      return sandbox;
    } catch (error) {
      if (instance) {
        const started = instance;
        await this.backend
          .destroy(started)
          .catch((e: unknown) => this.options.logger?.warn({ err: e, sandboxId }, "could not destroy a half-started AIO sandbox"));
      }
      if (deadline.aborted && !callerSignal?.aborted) {
        throw new AntlerError(
          ErrorCodes.SANDBOX_UNAVAILABLE,
          `the AIO sandbox for thread ${threadId} was not ready within ${timeoutSeconds} s`,
          {
            where: "plugins[@antler/sandbox-aio].config.acquire_timeout_seconds",
            hint: "The image may still be pulling or the host is slow; raise acquire_timeout_seconds or check the backend.",
            cause: error,
            details: { sandboxId, backend: this.backend.kind },
          },
        );
      }
      if (callerSignal?.aborted && !(error instanceof AntlerError && error.code === ErrorCodes.RUN_CANCELLED)) {
        throw new AntlerError(ErrorCodes.RUN_CANCELLED, `acquiring the AIO sandbox for thread ${threadId} was cancelled`, { cause: error });
      }
      throw error;
    }
  }

  private async waitReady(client: AioClient, signal: AbortSignal, timeoutSeconds: number) {
    const interval = this.options.readinessIntervalMs ?? 500;
    let last: unknown;
    while (!signal.aborted) {
      try {
        return await client.context({ signal, timeoutMs: 5_000 });
      } catch (error) {
        last = error;
      }
      await sleep(interval, signal).catch(() => undefined);
    }
    throw new AntlerError(
      ErrorCodes.SANDBOX_UNAVAILABLE,
      `the AIO sandbox at ${client.baseUrl} did not become ready within ${timeoutSeconds} s`,
      {
        hint: "GET /v1/sandbox never answered; check the container's logs.",
        cause: last,
      },
    );
  }

  private async destroy(lease: Lease): Promise<void> {
    clearTimeout(lease.idleTimer);
    lease.idleTimer = undefined;
    // Forget first: a sandbox being destroyed is no longer live for get() or acquire().
    if (this.leases.get(lease.key) === lease) this.leases.delete(lease.key);
    if (this.byId.get(lease.sandbox.id) === lease) this.byId.delete(lease.sandbox.id);
    const sandboxId = lease.instance.sandboxId;
    const gone = this.backend.destroy(lease.instance).catch((error: unknown) => {
      // A teardown that failed midway (a network left) is retried by the next sweep, and said so.
      if (lease.instance.network?.mode === "restricted") this.unfinishedTeardowns.add(sandboxId);
      throw error;
    });
    this.destroying.set(sandboxId, gone);
    try {
      await gone;
    } finally {
      if (this.destroying.get(sandboxId) === gone) this.destroying.delete(sandboxId);
    }
  }

  private warn(lease: Lease, error: unknown, msg: string): void {
    this.options.logger?.warn({ err: error, sandboxId: lease.sandbox.id }, msg);
  }
}

/**
 * SQLite answers "database is locked" while another process (a second gateway on the same file) holds the write
 * lock, e.g. during its migrations; that is a wait, not a verdict on the lease.
 */
async function retryWhileBusy<T>(fn: () => Promise<T>, attempts = 8): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const busy = /database is locked|SQLITE_BUSY/i.test(String((error as Error)?.message ?? error));
      if (!busy || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 1000)));
    }
  }
}

function sameNetwork(instance: SandboxInstance, network: NetworkSettings): boolean {
  const mode = instance.network?.mode ?? "open";
  const label = instance.network?.label ?? "open";
  return mode === network.mode && label === policyLabelOf(network);
}

function leaseKey(userId: string, threadId: string): string {
  // Safe ids never contain '/', so the key is unambiguous.
  return `${userId}/${threadId}`;
}

/** Deterministic, DNS-label-safe id of the sandbox of one (user, thread). */
export function sandboxIdFor(userId: string, threadId: string): string {
  return `aio-${createHash("sha256").update(`${userId}\0${threadId}`).digest("hex").slice(0, 20)}`;
}
