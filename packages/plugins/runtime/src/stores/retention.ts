/**
 * Checkpoint retention after runs, off their critical path: a finished run asks for its thread to be pruned and
 * returns at once; the pruning runs afterwards, one at a time per thread (a request that arrives meanwhile runs
 * once more after it), and a failure is logged, never thrown at a run.
 */
export class BackgroundPruner {
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  constructor(
    private readonly prune: (threadId: string) => Promise<void>,
    private readonly failed: (error: unknown, threadId: string, traceId: string) => void,
  ) {}

  /** Prunes `threadId` soon; `traceId` names the run that asked, for the log line of a failure. */
  request(threadId: string, traceId: string): void {
    if (this.running.has(threadId)) {
      this.again.add(threadId);
      return;
    }
    const work = (async () => {
      // Let the run's caller see its end before any pruning starts.
      await new Promise<void>((resolve) => setImmediate(resolve));
      do {
        this.again.delete(threadId);
        try {
          await this.prune(threadId);
        } catch (error) {
          this.failed(error, threadId, traceId);
        }
      } while (this.again.has(threadId));
    })().finally(() => this.running.delete(threadId));
    this.running.set(threadId, work);
  }

  /** Resolves once no pruning is under way or asked for. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }
}
