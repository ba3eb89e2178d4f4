import type { Logger } from "@antler/kernel";
import type { RunRecord } from "../stores/runs.js";

/**
 * How often an executor looks for queued runs when nothing woke it. Runs queued through this client wake it at once,
 * and so does each of its runs ending (a slot is free); on PostgreSQL, a run queued by another process wakes it at
 * once too (NOTIFY, when the storage plugin provides `QUEUE_NOTIFICATIONS_TOKEN`). The poll is what finds runs other
 * processes queued on SQLite, which has no notifications (and on PostgreSQL, a notification lost with a dropped
 * connection). 200 ms: such a run waits 100 ms on average before it starts, well under a model call, and an idle
 * executor costs five indexed reads a second, which a SQLite file shrugs off.
 */
export const DEFAULT_QUEUE_POLL_MS = 200;
/** Most runs one claim takes, so one executor does not take a whole backlog another could share. */
const CLAIM_BATCH = 10;

/** What the executor needs from the client it executes for. */
export interface QueueHost {
  /** Free run slots now (`maxActiveRuns` minus runs admitted). */
  room(): number;
  /** Claims up to `limit` queued runs (running under this client from here on). */
  claim(limit: number): Promise<RunRecord[]>;
  /** Starts a claimed run in the background; its slot is counted from the call on. */
  start(record: RunRecord): void;
  readonly logger: Logger;
}

/**
 * The loop that turns queued runs into running ones: claim as many as there is room for, start them, and sleep until
 * woken (a run queued here, a run ended here) or until the poll interval passes. One loop per client.
 */
export class QueueExecutor {
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly host: QueueHost,
    private readonly pollMs = DEFAULT_QUEUE_POLL_MS,
  ) {
    if (!Number.isFinite(pollMs) || pollMs <= 0) throw new RangeError(`pollMs must be a positive number of milliseconds, got ${pollMs}`);
    this.loop = this.run();
  }

  /** Looks again at once (a run was queued, or a slot freed). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      let claimed = 0;
      const room = Math.min(CLAIM_BATCH, this.host.room());
      if (room > 0) {
        try {
          const records = await this.host.claim(room);
          claimed = records.length;
          for (const record of records) this.host.start(record);
        } catch (err) {
          this.host.logger.warn({ err }, "claiming queued runs failed; retrying at the next poll");
        }
      }
      // A full claim may have left more behind: look again at once.
      if (this.stopped || (claimed > 0 && claimed === room)) continue;
      if (this.woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        timer.unref();
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }
}
