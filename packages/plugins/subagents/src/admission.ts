import { AsyncResource } from "node:async_hooks";
import { AntlerError, ErrorCodes } from "@antler/kernel";
import type { AdmissionRejectReason, AdmissionRuntime } from "./contract.js";

/** Admission refused a job: the queue was full or the runtime closed. A job cancelled while queued is RUN_CANCELLED. */
export const ADMISSION_REJECTED = "ANTLER_ERR_ADMISSION_REJECTED";

/** Why a job never ran, with `reason` (and `details.reason`) saying which limit refused it. */
export class AdmissionRejectedError extends AntlerError {
  readonly reason: AdmissionRejectReason | "aborted";
  constructor(reason: AdmissionRejectReason | "aborted", message: string, hint?: string) {
    super(reason === "aborted" ? ErrorCodes.RUN_CANCELLED : ADMISSION_REJECTED, message, {
      where: "subagents runtime",
      hint,
      details: { reason },
    });
    this.reason = reason;
  }
}

export function isAdmissionRejected(error: unknown): error is AdmissionRejectedError {
  return error instanceof AdmissionRejectedError;
}

interface Waiting {
  readonly start: () => void;
  readonly reject: (error: unknown) => void;
  readonly label: string | undefined;
}

export interface FifoAdmissionOptions {
  maxRunning?: number;
  maxQueued?: number;
}

/**
 * Process-wide FIFO admission: at most `maxRunning` jobs at once, at most `maxQueued` waiting in arrival order,
 * and anything beyond that rejected at once (reject policy; no silent unbounded queue). Each job runs in the
 * async context of the call that submitted it, so trace ids never leak from the job that freed the slot.
 */
export class FifoAdmissionRuntime implements AdmissionRuntime {
  readonly maxRunning: number;
  readonly maxQueued: number;
  private readonly queue: Waiting[] = [];
  private readonly active = new Set<AbortController>();
  private closed = false;
  private idle: Array<() => void> = [];

  constructor(options: FifoAdmissionOptions = {}) {
    this.maxRunning = options.maxRunning ?? 3;
    this.maxQueued = options.maxQueued ?? 64;
    if (!Number.isInteger(this.maxRunning) || this.maxRunning < 1) {
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, `max_running must be a positive integer, got ${this.maxRunning}`, {
        where: "@antler/plugin-subagents: runtime.max_running",
      });
    }
    if (!Number.isInteger(this.maxQueued) || this.maxQueued < 0) {
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, `max_queued must be a non-negative integer, got ${this.maxQueued}`, {
        where: "@antler/plugin-subagents: runtime.max_queued",
      });
    }
  }

  running(): number {
    return this.active.size;
  }

  queued(): number {
    return this.queue.length;
  }

  submit<T>(job: (signal: AbortSignal) => Promise<T>, options: { signal?: AbortSignal; label?: string } = {}): Promise<T> {
    const { signal, label } = options;
    if (this.closed) {
      return Promise.reject(new AdmissionRejectedError("closed", `subagent runtime is closed; ${label ?? "the job"} was not started`));
    }
    if (signal?.aborted) {
      return Promise.reject(new AdmissionRejectedError("aborted", `${label ?? "the job"} was cancelled before it started`));
    }
    if (this.active.size >= this.maxRunning && this.queue.length >= this.maxQueued) {
      return Promise.reject(
        new AdmissionRejectedError(
          "queue_full",
          `subagent runtime is full (${this.active.size} running, ${this.queue.length} queued); ${label ?? "the job"} was rejected`,
          "Wait for running subagents to finish, or raise runtime.max_running / runtime.max_queued in the plugin config.",
        ),
      );
    }
    const bound = AsyncResource.bind(job);
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        signal?.removeEventListener("abort", onAbort);
        const controller = new AbortController();
        const forward = () => controller.abort(signal?.reason);
        if (signal?.aborted) forward();
        else signal?.addEventListener("abort", forward, { once: true });
        this.active.add(controller);
        let promise: Promise<T>;
        try {
          promise = Promise.resolve(bound(controller.signal));
        } catch (err) {
          promise = Promise.reject(err);
        }
        promise.then(resolve, reject).finally(() => {
          signal?.removeEventListener("abort", forward);
          this.active.delete(controller);
          this.pump();
        });
      };
      const waiting: Waiting = { start, reject, label };
      const onAbort = () => {
        const at = this.queue.indexOf(waiting);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(new AdmissionRejectedError("aborted", `${label ?? "the job"} was cancelled while queued`));
        this.notifyIdle();
      };
      if (this.active.size < this.maxRunning) {
        start();
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(waiting);
    });
  }

  private pump(): void {
    while (!this.closed && this.active.size < this.maxRunning && this.queue.length > 0) {
      (this.queue.shift() as Waiting).start();
    }
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.active.size === 0 && this.queue.length === 0) for (const fn of this.idle.splice(0)) fn();
  }

  /** Rejects queued jobs, aborts running ones, and resolves once every running job has settled. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of this.queue.splice(0)) {
      waiting.reject(new AdmissionRejectedError("closed", `subagent runtime closed; ${waiting.label ?? "a queued job"} was not started`));
    }
    if (this.active.size === 0) return;
    const settled = new Promise<void>((resolve) => this.idle.push(resolve));
    for (const controller of this.active) controller.abort(new AdmissionRejectedError("closed", "subagent runtime closed"));
    await settled;
  }
}
