import { DEFAULT_USER_ID, resolveTraceId } from "@antler/kernel";
import type { BatchRecord, BatchStatus, BatchStore, ExportedItem } from "./store.js";
import { type BatchSubmission, validateSubmission } from "./validation.js";

export interface BatchClientOptions {
  readonly store: BatchStore;
  /** The owner when a call names none. Default "default". */
  readonly userId?: string | undefined;
  /** Largest batch accepted. Default 10,000. */
  readonly maxItems?: number | undefined;
  /** The configured subagent types; a submission naming another type is refused with this list. */
  readonly subagentTypes?: (() => readonly string[]) | undefined;
  /** Called after a batch is stored (the plugin wakes its embedded worker). */
  readonly onSubmitted?: ((batch: BatchRecord) => void) | undefined;
}

export interface BatchCallOptions {
  /** Acts for this user; another user's batches are "not found". */
  readonly userId?: string | undefined;
}

export interface SubmitOptions extends BatchCallOptions {
  /** The thread the items' subagents work in (their files land in its workspace). */
  readonly threadId?: string | undefined;
  /** Stamped on the batch and on every log line and event of its items. Default: the ambient trace id, or a new one. */
  readonly traceId?: string | undefined;
  /**
   * The submitter's authorization role (`authorization.roles`), recorded with the batch: each item's subagent acts
   * with it, so its tools and models are that role's. Default: none, and items act with `default_role`.
   */
  readonly userRole?: string | undefined;
}

export interface WatchOptions extends BatchCallOptions {
  /** Poll interval. Default 1000 ms. */
  readonly intervalMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * The programmatic face of the batch store: submit, status, cancel, export and watch, all scoped to one owner.
 * Results never pass through an agent's context: read them here or with `antler batch export`.
 */
export class BatchClient {
  readonly store: BatchStore;
  private readonly options: BatchClientOptions;

  constructor(options: BatchClientOptions) {
    this.store = options.store;
    this.options = options;
  }

  private owner(options?: BatchCallOptions): string {
    return options?.userId ?? this.options.userId ?? DEFAULT_USER_ID;
  }

  /** Validates and stores a batch; it is queued for workers as soon as this resolves. */
  async submit(submission: BatchSubmission, options: SubmitOptions = {}): Promise<BatchRecord> {
    const normalized = validateSubmission(submission, {
      maxItems: this.options.maxItems ?? 10_000,
      subagentTypes: this.options.subagentTypes?.(),
    });
    const batch = await this.store.createBatch(this.owner(options), normalized, {
      threadId: options.threadId,
      traceId: resolveTraceId(options.traceId),
      userRole: options.userRole,
    });
    this.options.onSubmitted?.(batch);
    return batch;
  }

  status(batchId: string, options?: BatchCallOptions): Promise<BatchStatus> {
    return this.store.status(this.owner(options), batchId);
  }

  cancel(batchId: string, options?: BatchCallOptions): Promise<{ batch: BatchRecord; cancelledItems: number }> {
    return this.store.cancel(this.owner(options), batchId);
  }

  list(options?: BatchCallOptions & { limit?: number }): Promise<BatchRecord[]> {
    return this.store.listBatches(this.owner(options), options?.limit);
  }

  /** Every item with its result, in submission order. */
  export(batchId: string, options?: BatchCallOptions): AsyncGenerator<ExportedItem> {
    return this.store.exportItems(this.owner(options), batchId);
  }

  /** Writes the export as JSON Lines (one item per line); resolves to the number of lines written. */
  async exportJsonl(batchId: string, out: NodeJS.WritableStream, options?: BatchCallOptions): Promise<number> {
    let lines = 0;
    // A reader that goes away (`antler batch export <id> | head`) ends the export quietly instead of crashing.
    let closed = false;
    const onError = () => {
      closed = true;
    };
    out.on("error", onError);
    try {
      for await (const item of this.export(batchId, options)) {
        if (closed) break;
        if (!out.write(`${JSON.stringify(item)}\n`)) {
          await new Promise<void>((resolve) => {
            out.once("drain", () => resolve());
            out.once("error", () => resolve());
          });
        }
        lines += 1;
      }
    } finally {
      out.off("error", onError);
    }
    return lines;
  }

  /** Yields the status now and then every `intervalMs` until the batch is completed or cancelled. */
  async *watch(batchId: string, options: WatchOptions = {}): AsyncGenerator<BatchStatus> {
    const interval = options.intervalMs ?? 1000;
    for (;;) {
      const status = await this.status(batchId, options);
      yield status;
      if (status.state !== "active" || options.signal?.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, interval);
        options.signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  }
}
