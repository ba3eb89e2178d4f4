import { AntlerError, ErrorCodes, type Logger, type Sandbox, type SandboxProvider } from "@antler/kernel";
import { KeyedLock } from "./path-lock.js";

/** Whose sandbox: thread ids are only unique per user, so both make the key. */
export interface SandboxScope {
  readonly userId: string;
  readonly threadId: string;
}

/** A thread's sandbox while runs on that thread use it. */
export interface SandboxLease {
  readonly sandbox: Sandbox;
  /** The provider that handed it out; the lease goes back to the same one. */
  readonly provider: SandboxProvider;
  /**
   * Content hashes of files this thread read or wrote during the lease, by normalized path. Thread state holds
   * the durable copy (`_read_stamps`), but every tool call of one step sees the state from the step's start;
   * this overlay is what lets the second of two parallel edits see the first one's result.
   */
  readonly stamps: Map<string, string>;
  /**
   * The graphs (by checkpoint thread id) whose state a tool result of this lease already stamped with
   * `{ sandbox_id }`. A subagent borrows its parent's lease but keeps its own state, so each records once.
   */
  readonly recordedIn: Set<string>;
}

interface Entry {
  readonly pending: Promise<SandboxLease>;
  lease?: SandboxLease;
}

function keyOf(scope: SandboxScope): string {
  return `${scope.userId}\u0000${scope.threadId}`;
}

/**
 * The sandboxes in use, keyed by (user, thread). One registry per plugin instance, so two kernels in one process
 * never share one, and tools reach a thread's sandbox only through their own run's thread and user, so two
 * threads never see each other's. An entry lives from the first tool call that needs a sandbox to the end of
 * the run: `afterAgent` releases it, or the run-end hook when the run failed or was cancelled before that.
 */
export class SandboxRegistry {
  private readonly entries = new Map<string, Entry>();
  /** Runs in flight per thread (from the kernel's run hooks): a sandbox is released only when the last one ends. */
  private readonly activeRuns = new Map<string, number>();
  /** Per (sandbox id, path) edit lock. */
  readonly locks = new KeyedLock();

  constructor(
    private readonly provider: () => SandboxProvider,
    private readonly logger?: Logger,
  ) {}

  /** The thread's lease, acquiring the sandbox on first use. Concurrent callers share one acquisition. */
  acquire(scope: SandboxScope, signal?: AbortSignal): Promise<SandboxLease> {
    const key = keyOf(scope);
    const existing = this.entries.get(key);
    if (existing) return existing.pending;
    const open = async (): Promise<SandboxLease> => {
      const provider = this.provider();
      const sandbox = await provider.acquire(scope.threadId, { userId: scope.userId, ...(signal ? { signal } : {}) });
      return { sandbox, provider, stamps: new Map(), recordedIn: new Set() };
    };
    const entry: Entry = { pending: open() };
    entry.pending.then(
      (lease) => {
        entry.lease = lease;
      },
      () => {},
    );
    this.entries.set(key, entry);
    // A failed acquisition is not remembered, so the next tool call tries again.
    entry.pending.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.pending;
  }

  /** The thread's lease if a sandbox was acquired for it in a run still going on. */
  current(scope: SandboxScope): SandboxLease | undefined {
    return this.entries.get(keyOf(scope))?.lease;
  }

  runStarted(scope: SandboxScope): void {
    const key = keyOf(scope);
    this.activeRuns.set(key, (this.activeRuns.get(key) ?? 0) + 1);
  }

  /** The kernel's run-end hook: the last run on a thread hands back whatever `afterAgent` did not. */
  async runEnded(scope: SandboxScope): Promise<void> {
    const key = keyOf(scope);
    const left = (this.activeRuns.get(key) ?? 1) - 1;
    if (left > 0) {
      this.activeRuns.set(key, left);
      return;
    }
    this.activeRuns.delete(key);
    await this.release(scope);
  }

  /**
   * `afterAgent`: releases the sandbox unless another run on the same thread is still going (then the last
   * run's end releases it). Agents built without the kernel's run hooks count as the only run.
   */
  async releaseAfterAgent(scope: SandboxScope): Promise<void> {
    if ((this.activeRuns.get(keyOf(scope)) ?? 0) > 1) return;
    await this.release(scope);
  }

  /** Hands the thread's sandbox back to its provider (a pooled provider parks it warm). Never throws. */
  async release(scope: SandboxScope): Promise<void> {
    const key = keyOf(scope);
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    let lease: SandboxLease;
    try {
      lease = await entry.pending;
    } catch {
      return;
    }
    try {
      await lease.provider.release(lease.sandbox.id);
    } catch (err) {
      this.logger?.warn(
        { err, sandbox_id: lease.sandbox.id, thread_id: scope.threadId },
        `releasing sandbox "${lease.sandbox.id}" failed; the provider keeps it until it expires`,
      );
    }
  }

  /** Threads holding a sandbox right now (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }
}

/** Wraps a provider failure so the model reads what failed and the user's operator reads what to check. */
export function acquireError(err: unknown): AntlerError {
  if (err instanceof AntlerError) return err;
  return new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `the sandbox could not be started: ${(err as Error)?.message ?? String(err)}`, {
    where: "sandbox.provider",
    hint: "Check the sandbox provider's configuration and that its backend is reachable.",
    cause: err,
  });
}
