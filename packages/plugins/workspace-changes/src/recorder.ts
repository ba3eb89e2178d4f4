import { threadPaths } from "@antler/kernel";
import { type ChangesOptions, computeChanges, type WorkspaceChanges } from "./changes.js";
import { type ScanLimits, type ScanLogger, type ScanOutcome, WorkspaceScan } from "./scan.js";

export interface RecorderOptions {
  baseDir: string;
  limits?: Partial<ScanLimits>;
  maxDiffBytes?: number;
  logger?: ScanLogger;
}

interface Pending {
  runId: string;
  userId: string;
  threadId: string;
  start: WorkspaceScan;
}

const VIRTUAL_ROOTS = { workspace: "/mnt/user-data/workspace", outputs: "/mnt/user-data/outputs" } as const;

/**
 * Captures a thread's `workspace` and `outputs` at the start of a run and compares them at its end. One capture
 * per (user, thread) at a time; a run that ends without `finish` (cancelled, failed) has its capture cancelled by
 * `abandon`, which drains the text scan before its cache goes.
 */
export class WorkspaceRecorder {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly options: RecorderOptions) {}

  private roots(userId: string, threadId: string): Record<string, string> {
    const paths = threadPaths(this.options.baseDir, userId, threadId);
    return { workspace: paths.workspace, outputs: paths.outputs };
  }

  /** Starts the run's start capture (a text scan) without waiting for it. */
  begin(run: { runId: string; userId: string; threadId: string }): void {
    const key = `${run.userId}\0${run.threadId}`;
    const previous = this.pending.get(key);
    if (previous) void previous.start.cancel();
    const start = WorkspaceScan.start({
      roots: this.roots(run.userId, run.threadId),
      includeText: true,
      ...(this.options.limits ? { limits: this.options.limits } : {}),
      ...(this.options.logger ? { logger: this.options.logger } : {}),
    });
    this.pending.set(key, { ...run, start });
  }

  /** Waits until the start capture is taken (the run's tools must not change files the scan has not seen yet). */
  async ready(userId: string, threadId: string): Promise<void> {
    await this.pending.get(`${userId}\0${threadId}`)?.start.outcome;
  }

  /** Scans again and builds the run's record; undefined when no capture was taken or it did not complete. */
  async finish(userId: string, threadId: string): Promise<WorkspaceChanges | undefined> {
    const key = `${userId}\0${threadId}`;
    const pending = this.pending.get(key);
    if (!pending) return undefined;
    this.pending.delete(key);
    const end = WorkspaceScan.start({
      roots: this.roots(userId, threadId),
      includeText: true,
      ...(this.options.limits ? { limits: this.options.limits } : {}),
      ...(this.options.logger ? { logger: this.options.logger } : {}),
    });
    try {
      const [a, b] = await Promise.all([pending.start.outcome, end.outcome]);
      if (a.status !== "done" || b.status !== "done") {
        this.options.logger?.warn(
          { start: status(a), end: status(b), run_id: pending.runId },
          "workspace changes not recorded: a scan did not complete",
        );
        return undefined;
      }
      const options: ChangesOptions = { runId: pending.runId, threadId, virtualRoots: VIRTUAL_ROOTS };
      if (this.options.maxDiffBytes !== undefined) options.maxDiffBytes = this.options.maxDiffBytes;
      return await computeChanges(a, b, options);
    } finally {
      await Promise.all([pending.start.dispose(), end.dispose()]);
    }
  }

  /** The run ended without `finish`: cancels its capture (draining a text scan before its cache is removed). */
  async abandon(userId: string, threadId: string): Promise<void> {
    const key = `${userId}\0${threadId}`;
    const pending = this.pending.get(key);
    if (!pending) return;
    this.pending.delete(key);
    await pending.start.cancel();
  }
}

function status(outcome: ScanOutcome): string {
  return outcome.status === "failed" ? `failed: ${outcome.error}` : outcome.status;
}
