import { type AntlerDatabase, createToken, type Logger, type OpenDatabaseOptions, type Scope } from "@antler/kernel";
import { ADMISSION_RUNTIME, type AdmissionRuntime, SUBAGENT_RUNNER, type SubagentRunner } from "@antler/plugin-subagents/contract";
import { BatchClient } from "./client.js";
import type { BatchPluginConfig } from "./config.js";
import { BatchErrorCodes, batchError } from "./errors.js";
import type { BatchStore } from "./store.js";
import type { BatchWorker, BatchWorkerOptions } from "./worker.js";

/**
 * Overrides the runner batch items use (default: `@antler/plugin-subagents`' SUBAGENT_RUNNER). For a custom
 * executor, or the stub runner of `@antler/plugin-batch/testing` in tests and benchmarks.
 */
export const BATCH_ITEM_RUNNER = createToken<SubagentRunner>("antler.batch.item-runner");

export interface BatchServiceOptions {
  readonly config: BatchPluginConfig;
  /** Opens Antler's tables on the configured storage backend (`ctx.storage.openDatabase`). */
  readonly openDatabase: (options: OpenDatabaseOptions) => Promise<AntlerDatabase>;
  readonly logger: Logger;
  /** The kernel's root scope: the runner and admission runtime are resolved from it when first needed. */
  readonly scope: Scope;
}

/**
 * The batch plugin's state in one kernel: the database (opened on first use), the client, and the worker
 * that runs inside this process when `worker.embedded` is on. Resolve it with `scope.resolve(BATCH_SERVICE)`.
 */
export class BatchService {
  private readonly options: BatchServiceOptions;
  private opening: Promise<{ database: AntlerDatabase; store: BatchStore }> | undefined;
  private embedded: BatchWorker | undefined;
  private readonly workers = new Set<BatchWorker>();
  private closed = false;

  constructor(options: BatchServiceOptions) {
    this.options = options;
  }

  get config(): BatchPluginConfig {
    return this.options.config;
  }

  /** Opens the database (SQLite under base_dir, or PostgreSQL from `storage:`) and runs the batch migrations. */
  async store(): Promise<BatchStore> {
    if (this.closed) {
      throw batchError(BatchErrorCodes.NOT_STARTED, "the batch service is closed", { hint: "Use a kernel that is not closed." });
    }
    this.opening ??= (async () => {
      // The store (kysely) and the worker load with the database, not with the plugin entry that builds this service.
      const { BatchStore, batchMigrations } = await import("./store.js");
      const database = await this.options.openDatabase({ migrations: batchMigrations });
      return { database, store: new BatchStore(database) };
    })();
    this.opening.catch(() => {
      this.opening = undefined;
    });
    return (await this.opening).store;
  }

  /** The runner items go to: BATCH_ITEM_RUNNER when a plugin provides one, otherwise the subagent runner. */
  runner(): SubagentRunner {
    const { scope } = this.options;
    return scope.tryResolve(BATCH_ITEM_RUNNER) ?? scope.resolve(SUBAGENT_RUNNER);
  }

  admission(): AdmissionRuntime | undefined {
    return this.options.scope.tryResolve(ADMISSION_RUNTIME);
  }

  subagentTypes(): readonly string[] | undefined {
    try {
      return this.runner().types();
    } catch {
      return undefined;
    }
  }

  /** A client for `userId`. With `startWorker`, the embedded worker (if configured) is started first. */
  async client(userId?: string, options: { startWorker?: boolean } = {}): Promise<BatchClient> {
    if (options.startWorker) {
      await this.startEmbeddedWorker().catch((error: unknown) =>
        this.options.logger.error({ err: error }, "starting the embedded batch worker failed; batches wait for `antler worker`"),
      );
    }
    return new BatchClient({
      store: await this.store(),
      userId,
      maxItems: this.options.config.max_items_per_batch,
      subagentTypes: () => this.subagentTypes() ?? [],
      onSubmitted: () => this.embedded?.poke(),
    });
  }

  /** A worker over this service's store, with config defaults; the caller starts and stops it. */
  async createWorker(overrides: Partial<Omit<BatchWorkerOptions, "store">> = {}): Promise<BatchWorker> {
    const { config } = this.options;
    const store = await this.store();
    const admission = overrides.admission ?? this.admission();
    const concurrency = overrides.concurrency ?? config.worker.concurrency ?? admission?.maxRunning ?? 4;
    const { BatchWorker } = await import("./worker.js");
    const worker = new BatchWorker({
      store,
      runner: overrides.runner ?? this.runner(),
      admission,
      concurrency,
      claimBatch: overrides.claimBatch ?? config.worker.claim_batch,
      leaseMs: overrides.leaseMs ?? config.lease_seconds * 1000,
      heartbeatMs: overrides.heartbeatMs ?? config.heartbeat_seconds * 1000,
      maxAttempts: overrides.maxAttempts ?? config.max_attempts,
      pollMs: overrides.pollMs ?? config.worker.poll_ms,
      logger: overrides.logger ?? this.options.logger,
      ...(overrides.workerId ? { workerId: overrides.workerId } : {}),
      ...(overrides.onProgress ? { onProgress: overrides.onProgress } : {}),
    });
    this.workers.add(worker);
    return worker;
  }

  /** Starts the in-process worker once (when `worker.embedded` is on). Safe to call many times. */
  async startEmbeddedWorker(): Promise<BatchWorker | undefined> {
    if (!this.options.config.worker.embedded || this.closed) return undefined;
    if (!this.embedded) {
      this.embedded = await this.createWorker();
      this.embedded.start();
    }
    return this.embedded;
  }

  /** Stops every worker (in-flight items get a short grace, then go back to pending) and closes the database. */
  async close(graceMs = 10_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.workers].map((w) => w.stop(graceMs)));
    const opened = await this.opening?.catch(() => undefined);
    await opened?.database.close();
  }
}

export const BATCH_SERVICE = createToken<BatchService>("antler.batch.service");
