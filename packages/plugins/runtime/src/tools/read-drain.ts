/**
 * Sandbox reads still under way, per thread. A cancelled run stops waiting for its tools, but a read of the live
 * sandbox (a `view_image` download) keeps going; the run's end must not hand the sandbox back (or let a pooled
 * provider reap it) while that read still uses it. `drain` waits for them (seed 000, `view_image`).
 */
export class SandboxReadDrain {
  private readonly inFlight = new Map<string, Set<Promise<unknown>>>();

  /** Registers `work` under the thread's key until it settles; returns it unchanged. */
  track<T>(key: string, work: Promise<T>): Promise<T> {
    let set = this.inFlight.get(key);
    if (!set) {
      set = new Set();
      this.inFlight.set(key, set);
    }
    const entry = work.then(
      () => undefined,
      () => undefined,
    );
    set.add(entry);
    void entry.then(() => {
      set.delete(entry);
      if (set.size === 0 && this.inFlight.get(key) === set) this.inFlight.delete(key);
    });
    return work;
  }

  /** Waits until every read registered under `key` (including ones registered meanwhile) has settled. */
  async drain(key: string): Promise<void> {
    for (;;) {
      const set = this.inFlight.get(key);
      if (!set || set.size === 0) return;
      await Promise.all([...set]);
    }
  }

  pending(key: string): number {
    return this.inFlight.get(key)?.size ?? 0;
  }
}

export function drainKey(userId: string, threadId: string): string {
  return `${userId}\u0000${threadId}`;
}
