import { setTimeout as sleep } from "node:timers/promises";
import { AntlerError, ErrorCodes } from "@antler/kernel";

/**
 * Where the requests-per-minute windows of models are counted: in process by default, or somewhere every instance
 * shares (the runtime counts in Redis with `model_limits.redis_url`).
 */
export interface ModelRateStore {
  /**
   * Takes one request of `model`'s window if fewer than `perMinute` were taken in it: returns 0. Otherwise takes
   * nothing and returns how many milliseconds to wait before asking again.
   */
  takeRequest(model: string, perMinute: number): Promise<number>;
}

const MINUTE_MS = 60_000;

/** A sliding window per model, in process: the last minute's start times. */
export function inProcessRateStore(now: () => number = Date.now): ModelRateStore {
  const windows = new Map<string, number[]>();
  return {
    async takeRequest(model, perMinute) {
      const at = now();
      const starts = (windows.get(model) ?? []).filter((t) => t > at - MINUTE_MS);
      windows.set(model, starts);
      if (starts.length < perMinute) {
        starts.push(at);
        return 0;
      }
      return Math.max(1, (starts[0] as number) + MINUTE_MS - at);
    },
  };
}

export interface ModelLimits {
  readonly maxConcurrency: number | undefined;
  readonly requestsPerMinute: number | undefined;
  /** Longest wait for a slot, in ms; past it the call fails as rate limited. */
  readonly queueTimeoutMs: number;
}

/** A slot held for one model call; release it once, when the call settles. */
export interface ModelSlot {
  release(): void;
  /** How long the call waited for its slot, in ms. */
  readonly waitedMs: number;
}

class Semaphore {
  private active = 0;
  private readonly waiters: Array<() => void> = [];
  constructor(readonly size: number) {}

  tryTake(): boolean {
    if (this.active >= this.size) return false;
    this.active += 1;
    return true;
  }

  /** Resolves true once taken, false when `deadline` (or the signal) comes first. */
  take(timeoutMs: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (this.tryTake()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", giveUp);
        this.active += 1;
        resolve(true);
      };
      const giveUp = () => {
        clearTimeout(timer);
        const at = this.waiters.indexOf(wake);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(false);
      };
      const timer = setTimeout(giveUp, timeoutMs);
      signal?.addEventListener("abort", giveUp, { once: true });
      this.waiters.push(wake);
    });
  }

  release(): void {
    this.active -= 1;
    const next = this.waiters.shift();
    if (next) next();
  }
}

function rateLimited(model: string, what: string, why: string, details: Record<string, unknown>): AntlerError {
  return new AntlerError(ErrorCodes.MODEL_RATE_LIMITED, `model "${model}" is at its ${what}: ${why}`, {
    hint: `Raise the model's ${what} or queue_timeout_seconds, or add fallbacks.`,
    details: { model, limit: what, ...details },
  });
}

/**
 * The per-model `max_concurrency` and `requests_per_minute` of one kernel: every run, subagent and plugin call of
 * the process that builds its models from this kernel shares them.
 */
export class ModelLimiter {
  private readonly semaphores = new Map<string, Semaphore>();

  constructor(private readonly store: () => ModelRateStore) {}

  /** Waits for a concurrency slot, then for a rate slot; throws MODEL_RATE_LIMITED past `queueTimeoutMs`. */
  async acquire(model: string, limits: ModelLimits, signal?: AbortSignal): Promise<ModelSlot> {
    const started = performance.now();
    let semaphore: Semaphore | undefined;
    if (limits.maxConcurrency !== undefined) {
      semaphore = this.semaphores.get(model);
      if (!semaphore || semaphore.size !== limits.maxConcurrency) {
        semaphore = new Semaphore(limits.maxConcurrency);
        this.semaphores.set(model, semaphore);
      }
      if (!(await semaphore.take(limits.queueTimeoutMs, signal))) {
        signal?.throwIfAborted();
        throw rateLimited(model, "max_concurrency", `no slot came free within ${limits.queueTimeoutMs} ms`, {
          waited_ms: limits.queueTimeoutMs,
        });
      }
    }
    const held = semaphore;
    try {
      if (limits.requestsPerMinute !== undefined) await this.takeRate(model, limits, started, signal);
    } catch (error) {
      held?.release();
      throw error;
    }
    let released = false;
    return {
      waitedMs: Math.round(performance.now() - started),
      release: () => {
        if (released) return;
        released = true;
        held?.release();
      },
    };
  }

  private async takeRate(model: string, limits: ModelLimits, started: number, signal: AbortSignal | undefined): Promise<void> {
    const store = this.store();
    for (;;) {
      const wait = await store.takeRequest(model, limits.requestsPerMinute as number);
      if (wait <= 0) return;
      const left = limits.queueTimeoutMs - (performance.now() - started);
      // Waiting past the deadline would only fail later: fail now and let the fallbacks answer.
      if (wait > left) {
        throw rateLimited(model, "requests_per_minute", `the window frees a request in ${wait} ms, past the queue timeout`, {
          wait_ms: wait,
        });
      }
      await sleep(wait, undefined, { signal });
    }
  }
}
