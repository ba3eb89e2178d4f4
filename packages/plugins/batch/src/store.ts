import { randomUUID } from "node:crypto";
import type { AntlerDatabase, Migration } from "@antler/kernel";
import { type Kysely, type RawBuilder, sql } from "kysely";
import { batchNotFound } from "./errors.js";
import type { NormalizedSubmission } from "./validation.js";

export const BATCHES_TABLE = "batch_batches";
export const ITEMS_TABLE = "batch_items";

/** Execution states of an item. `running` means leased by a worker (waiting for an admission slot or executing). */
export type ItemState = "pending" | "running" | "completed" | "failed" | "cancelled" | "timed_out";
export const ITEM_STATES: readonly ItemState[] = ["pending", "running", "completed", "failed", "cancelled", "timed_out"];
export const TERMINAL_STATES: readonly ItemState[] = ["completed", "failed", "cancelled", "timed_out"];

/** `completed` when every item has reached a terminal state; `cancelled` after cancel_batch. */
export type BatchState = "active" | "completed" | "cancelled";

/** Acceptance verdict of an item; `none` when it had no criteria or did not complete. */
export type VerdictKey = "MET" | "UNMET" | "UNVERIFIED" | "none";

export interface BatchesTable {
  id: string;
  owner_id: string;
  title: string;
  subagent_type: string;
  state: string;
  total_items: number;
  max_live_items: number | null;
  max_running_items: number | null;
  thread_id: string | null;
  trace_id: string;
  /** The authorization role of the submitter; its items' subagents act with it. Null: `default_role`. */
  user_role: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface ItemsTable {
  batch_id: string;
  item_key: string;
  seq: number;
  prompt: string;
  /** JSON array of strings. */
  acceptance_criteria: string;
  state: string;
  attempts: number;
  lease_owner: string | null;
  lease_token: string | null;
  /** Epoch milliseconds of the database clock, so workers on machines with skewed clocks agree. */
  lease_expires_at: number | string | null;
  heartbeat_at: number | string | null;
  started_at: string | null;
  finished_at: string | null;
  result: string | null;
  result_sha256: string | null;
  error: string | null;
  verdict: string | null;
  /** JSON: the acceptance report. */
  acceptance: string | null;
  /** JSON: model, usage, stop reason, duration, receipts. */
  outcome: string | null;
}

export type BatchTables = {
  batch_batches: BatchesTable;
  batch_items: ItemsTable;
};

export const batchMigrations: readonly Migration[] = [
  {
    name: "batch/001-batches-and-items",
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable(BATCHES_TABLE)
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("owner_id", "text", (c) => c.notNull())
        .addColumn("title", "text", (c) => c.notNull())
        .addColumn("subagent_type", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("total_items", "integer", (c) => c.notNull())
        .addColumn("max_live_items", "integer")
        .addColumn("max_running_items", "integer")
        .addColumn("thread_id", "text")
        .addColumn("trace_id", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("finished_at", "text")
        .execute();
      // Serves listing one owner's batches and the workers' scan of active batches.
      await db.schema.createIndex("batch_batches_owner_created").on(BATCHES_TABLE).columns(["owner_id", "created_at"]).execute();
      await db.schema.createIndex("batch_batches_state_created").on(BATCHES_TABLE).columns(["state", "created_at"]).execute();

      await db.schema
        .createTable(ITEMS_TABLE)
        .addColumn("batch_id", "text", (c) => c.notNull().references(`${BATCHES_TABLE}.id`).onDelete("cascade"))
        .addColumn("item_key", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("prompt", "text", (c) => c.notNull())
        .addColumn("acceptance_criteria", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("state", "text", (c) => c.notNull().defaultTo("pending"))
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("lease_owner", "text")
        .addColumn("lease_token", "text")
        .addColumn("lease_expires_at", "bigint")
        .addColumn("heartbeat_at", "bigint")
        .addColumn("started_at", "text")
        .addColumn("finished_at", "text")
        .addColumn("result", "text")
        .addColumn("result_sha256", "text")
        .addColumn("error", "text")
        .addColumn("verdict", "text")
        .addColumn("acceptance", "text")
        .addColumn("outcome", "text")
        .addPrimaryKeyConstraint("batch_items_pkey", ["batch_id", "item_key"])
        .execute();
      // Claiming: the next pending items of a batch in submission order.
      await db.schema
        .createIndex("batch_items_pending")
        .on(ITEMS_TABLE)
        .columns(["batch_id", "seq"])
        .where(sql.ref("state"), "=", "pending")
        .execute();
      // Re-claiming and reaping: leased items by expiry.
      await db.schema
        .createIndex("batch_items_leased")
        .on(ITEMS_TABLE)
        .columns(["batch_id", "lease_expires_at"])
        .where(sql.ref("state"), "=", "running")
        .execute();
      // Status: counts by state and verdict straight from the index, without reading the rows.
      await db.schema.createIndex("batch_items_batch_state").on(ITEMS_TABLE).columns(["batch_id", "state", "verdict"]).execute();
    },
  },
  {
    name: "batch/002-batch-role",
    async up(db: Kysely<unknown>) {
      // Nullable: batches stored before it keep running their items with default_role, as they did.
      await db.schema.alterTable(BATCHES_TABLE).addColumn("user_role", "text").execute();
    },
  },
];

export interface BatchRecord {
  readonly id: string;
  readonly ownerId: string;
  readonly title: string;
  readonly subagentType: string;
  readonly state: BatchState;
  readonly totalItems: number;
  readonly maxLiveItems: number | null;
  readonly maxRunningItems: number | null;
  readonly threadId: string | null;
  readonly traceId: string;
  /** The submitter's authorization role (the API key's `role`, the lead run's `user_role`); null: `default_role`. */
  readonly userRole: string | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

export interface BatchStatus extends BatchRecord {
  /** Execution counts; they always add up to `totalItems`. */
  readonly counts: Readonly<Record<ItemState, number>>;
  /** Acceptance verdicts of the items, separate from execution: a completed item may still be UNMET. */
  readonly verdicts: Readonly<Record<VerdictKey, number>>;
  /** Items in a terminal state. */
  readonly done: number;
}

export interface ExportedItem {
  readonly batch_id: string;
  readonly key: string;
  readonly seq: number;
  readonly state: ItemState;
  readonly attempts: number;
  readonly verdict: Exclude<VerdictKey, "none"> | null;
  readonly result: string | null;
  readonly result_sha256: string | null;
  readonly error: string | null;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  readonly acceptance: unknown;
  readonly outcome: unknown;
  readonly trace_id: string;
}

/** An item a worker has leased, with what it needs to run it. */
export interface ClaimedItem {
  readonly batchId: string;
  readonly key: string;
  readonly seq: number;
  readonly prompt: string;
  readonly acceptanceCriteria: readonly string[];
  readonly attempts: number;
  readonly leaseToken: string;
  readonly batch: Pick<BatchRecord, "ownerId" | "title" | "subagentType" | "threadId" | "traceId" | "userRole">;
  /** Claimed after another worker's lease on it expired (a takeover), not fresh from the queue. */
  readonly takenOver?: boolean;
}

export interface ItemCompletion {
  readonly batchId: string;
  readonly key: string;
  readonly leaseToken: string;
  readonly state: Exclude<ItemState, "pending" | "running">;
  readonly result: string | null;
  readonly resultSha256: string | null;
  readonly error: string | null;
  readonly verdict: Exclude<VerdictKey, "none"> | null;
  readonly acceptance: unknown;
  readonly outcome: unknown;
}

export interface ClaimOptions {
  readonly workerId: string;
  /** Most items to claim in total. */
  readonly limit: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  /** Items of each batch this worker already holds, for `max_live_items`. */
  readonly localLive?: ReadonlyMap<string, number>;
  /** Default cap on one batch's items per worker when the batch sets no `max_live_items`. */
  readonly defaultMaxLive?: number;
  /** Also look for items whose lease expired (default true). Workers check for those on a slower beat. */
  readonly includeExpired?: boolean;
}

export interface LeaseRef {
  readonly batchId: string;
  readonly key: string;
  readonly leaseToken: string;
}

const INSERT_CHUNK = 500;
const CANDIDATE_TTL_MS = 500;

interface CandidateBatch {
  id: string;
  owner_id: string;
  title: string;
  subagent_type: string;
  thread_id: string | null;
  trace_id: string;
  user_role: string | null;
  max_live_items: number | null;
  max_running_items: number | null;
}

const leaseKey = (batchId: string, key: string) => `${batchId}\u0000${key}`;

/**
 * The durable store of batches and items, over the kernel's SQL layer (SQLite or PostgreSQL). Methods that
 * take an owner are the user-facing API: another owner's batch is reported exactly like a missing one. The
 * claim/heartbeat/complete methods are the workers' side and are not owner-scoped.
 */
export class BatchStore {
  readonly database: AntlerDatabase;
  private readonly db: Kysely<BatchTables>;

  constructor(database: AntlerDatabase) {
    this.database = database;
    this.db = database.db.withTables<BatchTables>() as unknown as Kysely<BatchTables>;
  }

  get dialect(): AntlerDatabase["dialect"] {
    return this.database.dialect;
  }

  /** The database clock in epoch milliseconds, as a SQL expression; leases never trust a worker's own clock. */
  private nowMs(): RawBuilder<number> {
    return this.database.dialect === "postgres"
      ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
      : sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`;
  }

  /**
   * A transaction that holds the write lock from its first statement (SQLite BEGIN IMMEDIATE; PostgreSQL BEGIN).
   *
   * `relaxed` commits without waiting for the disk (PostgreSQL `synchronous_commit = off`, SQLite WAL with
   * `synchronous = NORMAL`). Only writes that are safe to lose in a database crash use it: a lost result or
   * release leaves the item leased, so it runs again after its lease expires and is still recorded once.
   * Submissions, cancels, claims and heartbeats always wait for the disk.
   */
  private async writeTransaction<T>(fn: (db: Kysely<BatchTables>) => Promise<T>, durability: "full" | "relaxed" = "full"): Promise<T> {
    const sqlite = this.database.dialect === "sqlite";
    return this.db.connection().execute(async (conn) => {
      if (sqlite && durability === "full") await sql`pragma synchronous = full`.execute(conn);
      await sql`${sql.raw(sqlite ? "begin immediate" : "begin")}`.execute(conn);
      try {
        if (!sqlite && durability === "relaxed") await sql`set local synchronous_commit = off`.execute(conn);
        const result = await fn(conn);
        await sql`commit`.execute(conn);
        return result;
      } catch (error) {
        await sql`rollback`.execute(conn).catch(() => {});
        throw error;
      } finally {
        if (sqlite && durability === "full") await sql`pragma synchronous = normal`.execute(conn).catch(() => {});
      }
    });
  }

  private tuned: Promise<void> | undefined;

  /**
   * SQLite only: statements outside `writeTransaction(..., "full")` commit with `synchronous = NORMAL`. In WAL
   * mode that survives any process crash; a power cut may undo the last commits, which for claims means items
   * that run again (the process that ran them died with the machine, so never two at once).
   */
  private tune(): Promise<void> {
    this.tuned ??=
      this.database.dialect === "sqlite" ? sql`pragma synchronous = normal`.execute(this.db).then(() => undefined) : Promise.resolve();
    return this.tuned;
  }

  /** Stores a validated submission and all of its items in one transaction; returns the new batch. */
  async createBatch(
    ownerId: string,
    submission: NormalizedSubmission,
    options: { threadId?: string | undefined; traceId: string; userRole?: string | undefined; id?: string },
  ): Promise<BatchRecord> {
    const id = options.id ?? `batch_${randomUUID().replaceAll("-", "")}`;
    const createdAt = new Date().toISOString();
    const row: BatchesTable = {
      id,
      owner_id: ownerId,
      title: submission.title,
      subagent_type: submission.subagentType,
      state: "active",
      total_items: submission.items.length,
      max_live_items: submission.maxLiveItems,
      max_running_items: submission.maxRunningItems,
      thread_id: options.threadId ?? null,
      trace_id: options.traceId,
      user_role: options.userRole ?? null,
      created_at: createdAt,
      finished_at: null,
    };
    await this.writeTransaction(async (db) => {
      await db.insertInto(BATCHES_TABLE).values(row).execute();
      for (let start = 0; start < submission.items.length; start += INSERT_CHUNK) {
        const chunk = submission.items.slice(start, start + INSERT_CHUNK).map((item, i) => ({
          batch_id: id,
          item_key: item.key,
          seq: start + i,
          prompt: item.prompt,
          acceptance_criteria: JSON.stringify(item.acceptanceCriteria),
          state: "pending",
          attempts: 0,
        }));
        await db.insertInto(ITEMS_TABLE).values(chunk).execute();
      }
    });
    return toBatchRecord(row);
  }

  private async findBatch(ownerId: string, batchId: string): Promise<BatchesTable | undefined> {
    if (typeof batchId !== "string" || batchId.length === 0 || batchId.length > 200) return undefined;
    return this.db.selectFrom(BATCHES_TABLE).selectAll().where("id", "=", batchId).where("owner_id", "=", ownerId).executeTakeFirst();
  }

  /** The batch, or BATCH_NOT_FOUND when it does not exist or belongs to someone else. */
  async getBatch(ownerId: string, batchId: string): Promise<BatchRecord> {
    const row = await this.findBatch(ownerId, batchId);
    if (!row) throw batchNotFound(batchId);
    return toBatchRecord(row);
  }

  /** Newest first. */
  async listBatches(ownerId: string, limit = 50): Promise<BatchRecord[]> {
    const rows = await this.db
      .selectFrom(BATCHES_TABLE)
      .selectAll()
      .where("owner_id", "=", ownerId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(Math.min(Math.max(1, limit), 1000))
      .execute();
    return rows.map(toBatchRecord);
  }

  /** Counts by execution state, and acceptance verdicts as a separate tally. */
  async status(ownerId: string, batchId: string): Promise<BatchStatus> {
    const batch = await this.getBatch(ownerId, batchId);
    const rows = await this.db
      .selectFrom(ITEMS_TABLE)
      .select(["state", "verdict", (eb) => eb.fn.countAll<number | string>().as("n")])
      .where("batch_id", "=", batchId)
      .groupBy(["state", "verdict"])
      .execute();
    const counts = Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>;
    const verdicts: Record<VerdictKey, number> = { MET: 0, UNMET: 0, UNVERIFIED: 0, none: 0 };
    for (const row of rows) {
      const n = Number(row.n);
      counts[row.state as ItemState] = (counts[row.state as ItemState] ?? 0) + n;
      const verdict = (row.verdict ?? "none") as VerdictKey;
      verdicts[verdict] = (verdicts[verdict] ?? 0) + n;
    }
    const done = TERMINAL_STATES.reduce((sum, s) => sum + counts[s], 0);
    const state: BatchState = batch.state === "cancelled" ? "cancelled" : done === batch.totalItems ? "completed" : "active";
    return { ...batch, state, counts, verdicts, done };
  }

  /**
   * Cancels the batch: pending and running items become `cancelled` at once. Workers running one of them lose
   * its lease at their next heartbeat, abort the subagent, and cannot record a result for it.
   */
  async cancel(ownerId: string, batchId: string): Promise<{ batch: BatchRecord; cancelledItems: number }> {
    const finishedAt = new Date().toISOString();
    return this.writeTransaction(async (db) => {
      const updated = await db
        .updateTable(BATCHES_TABLE)
        .set({ state: "cancelled", finished_at: finishedAt })
        .where("id", "=", batchId)
        .where("owner_id", "=", ownerId)
        .where("state", "=", "active")
        .executeTakeFirst();
      const row = await db
        .selectFrom(BATCHES_TABLE)
        .selectAll()
        .where("id", "=", batchId)
        .where("owner_id", "=", ownerId)
        .executeTakeFirst();
      if (!row) throw batchNotFound(batchId);
      let cancelledItems = 0;
      if (Number(updated.numUpdatedRows) > 0) {
        const items = await db
          .updateTable(ITEMS_TABLE)
          .set({ state: "cancelled", finished_at: finishedAt, lease_owner: null, lease_token: null, lease_expires_at: null })
          .where("batch_id", "=", batchId)
          .where("state", "in", ["pending", "running"])
          .executeTakeFirst();
        cancelledItems = Number(items.numUpdatedRows);
      }
      return { batch: toBatchRecord(row), cancelledItems };
    });
  }

  /** The items with their results, in submission order, read in pages so a 10,000-item batch never sits in memory. */
  async *exportItems(ownerId: string, batchId: string, options: { pageSize?: number } = {}): AsyncGenerator<ExportedItem> {
    const batch = await this.getBatch(ownerId, batchId);
    const pageSize = options.pageSize ?? 500;
    let after = -1;
    for (;;) {
      const rows = await this.db
        .selectFrom(ITEMS_TABLE)
        .select([
          "item_key",
          "seq",
          "state",
          "attempts",
          "verdict",
          "result",
          "result_sha256",
          "error",
          "started_at",
          "finished_at",
          "acceptance",
          "outcome",
        ])
        .where("batch_id", "=", batchId)
        .where("seq", ">", after)
        .orderBy("seq")
        .limit(pageSize)
        .execute();
      for (const row of rows) {
        yield {
          batch_id: batchId,
          key: row.item_key,
          seq: Number(row.seq),
          state: row.state as ItemState,
          attempts: Number(row.attempts),
          verdict: (row.verdict ?? null) as ExportedItem["verdict"],
          result: row.result,
          result_sha256: row.result_sha256,
          error: row.error,
          started_at: row.started_at,
          finished_at: row.finished_at,
          acceptance: parseJson(row.acceptance),
          outcome: parseJson(row.outcome),
          trace_id: batch.traceId,
        };
      }
      if (rows.length < pageSize) return;
      after = Number(rows[rows.length - 1]?.seq);
    }
  }

  // ---- the workers' side -------------------------------------------------------------------------------------

  /**
   * Leases up to `limit` items: pending ones, and running ones whose lease expired (their worker crashed or
   * stalled). PostgreSQL picks rows with FOR UPDATE SKIP LOCKED, so concurrent workers never wait for or take
   * the same row; SQLite runs each claim as one UPDATE ... RETURNING under its write lock. Every claim gets a
   * fresh lease token, and only the holder of the current token can complete the item.
   */
  async claim(options: ClaimOptions): Promise<ClaimedItem[]> {
    await this.tune();
    const includeExpired = options.includeExpired ?? true;
    const candidates = await this.candidateBatches(includeExpired);
    let short = false;
    const claimed: ClaimedItem[] = [];
    for (const batch of candidates) {
      const remaining = options.limit - claimed.length;
      if (remaining <= 0) break;
      const liveCap = batch.max_live_items ?? options.defaultMaxLive;
      const local = options.localLive?.get(batch.id) ?? 0;
      const allowance = liveCap === undefined || liveCap === null ? remaining : Math.min(remaining, liveCap - local);
      if (allowance <= 0) continue;
      const meta = {
        ownerId: batch.owner_id,
        title: batch.title,
        subagentType: batch.subagent_type,
        threadId: batch.thread_id,
        traceId: batch.trace_id,
        userRole: batch.user_role,
      };
      const rows =
        batch.max_running_items === null
          ? await this.claimFrom(this.db, batch.id, allowance, options)
          : await this.writeTransaction(async (db) => {
              // Lock the batch row so concurrent claimers of this batch count running items one at a time.
              if (this.dialect === "postgres") {
                await sql`select id from ${sql.table(BATCHES_TABLE)} where id = ${batch.id} for update`.execute(db);
              }
              const running = await db
                .selectFrom(ITEMS_TABLE)
                .select((eb) => eb.fn.countAll<number | string>().as("n"))
                .where("batch_id", "=", batch.id)
                .where("state", "=", "running")
                .where("lease_expires_at", ">=", this.nowMs())
                .executeTakeFirstOrThrow();
              const room = Math.min(allowance, (batch.max_running_items as number) - Number(running.n));
              return room > 0 ? this.claimFrom(db, batch.id, room, options) : [];
            });
      rows.sort((a, b) => a.seq - b.seq);
      if (rows.length < allowance) short = true;
      for (const row of rows) claimed.push({ ...row, batch: meta });
    }
    // A batch that ran dry (or a claim that found nothing) means the cached list may be stale.
    if (short || claimed.length === 0) this.candidateCache = undefined;
    return claimed;
  }

  private candidateCache: { at: number; includeExpired: boolean; rows: CandidateBatch[] } | undefined;

  /** Forget the cached list of batches with work, so the next claim sees a batch submitted just now. */
  invalidateCandidates(): void {
    this.candidateCache = undefined;
  }

  /**
   * Active batches with claimable items, oldest first. Cached for a moment while claims keep filling up: the
   * scan is the most expensive statement of a claim, and the answer rarely changes between claims.
   */
  private async candidateBatches(includeExpired: boolean): Promise<CandidateBatch[]> {
    const cached = this.candidateCache;
    if (cached && Date.now() - cached.at < CANDIDATE_TTL_MS && (cached.includeExpired || !includeExpired)) return cached.rows;
    const now = this.nowMs();
    const rows = await this.db
      .selectFrom(`${BATCHES_TABLE} as b`)
      .select([
        "b.id",
        "b.owner_id",
        "b.title",
        "b.subagent_type",
        "b.thread_id",
        "b.trace_id",
        "b.user_role",
        "b.max_live_items",
        "b.max_running_items",
      ])
      .where("b.state", "=", "active")
      .where((eb) => {
        const pending = eb.exists(
          eb
            .selectFrom(`${ITEMS_TABLE} as p`)
            .select(sql.lit(1).as("one"))
            .whereRef("p.batch_id", "=", "b.id")
            .where("p.state", "=", "pending"),
        );
        if (!includeExpired) return pending;
        const expired = eb.exists(
          eb
            .selectFrom(`${ITEMS_TABLE} as r`)
            .select(sql.lit(1).as("one"))
            .whereRef("r.batch_id", "=", "b.id")
            .where("r.state", "=", "running")
            .where("r.lease_expires_at", "<", now),
        );
        return eb.or([pending, expired]);
      })
      .orderBy("b.created_at")
      .orderBy("b.id")
      .limit(16)
      .execute();
    this.candidateCache = { at: Date.now(), includeExpired, rows };
    return rows;
  }

  /** Expired leases first (their items waited longest), then pending items in submission order. */
  private async claimFrom(
    db: Kysely<BatchTables>,
    batchId: string,
    limit: number,
    options: ClaimOptions,
  ): Promise<Array<Omit<ClaimedItem, "batch">>> {
    const now = this.nowMs();
    // Two statements, each matching one partial index exactly; an OR of both would scan and sort the whole batch.
    const expired = sql`batch_id = ${batchId} and state = 'running' and lease_expires_at < ${now} and attempts < ${options.maxAttempts}`;
    const pending = sql`batch_id = ${batchId} and state = 'pending'`;
    const reclaimed = (options.includeExpired === false ? [] : await this.claimWhere(db, batchId, expired, limit, options)).map((item) => ({
      ...item,
      takenOver: true,
    }));
    if (reclaimed.length >= limit) return reclaimed;
    return [...reclaimed, ...(await this.claimWhere(db, batchId, pending, limit - reclaimed.length, options))];
  }

  private async claimWhere(
    db: Kysely<BatchTables>,
    batchId: string,
    claimable: RawBuilder<unknown>,
    limit: number,
    options: ClaimOptions,
  ): Promise<Array<Omit<ClaimedItem, "batch">>> {
    const token = randomUUID();
    const now = this.nowMs();
    const startedAt = new Date().toISOString();
    const set = sql`state = 'running', lease_owner = ${options.workerId}, lease_token = ${token},
      lease_expires_at = ${now} + ${options.leaseMs}, heartbeat_at = ${now}, attempts = attempts + 1,
      started_at = coalesce(started_at, ${startedAt})`;
    type Row = { item_key: string; seq: number | string; prompt: string; acceptance_criteria: string; attempts: number | string };
    const result =
      this.dialect === "postgres"
        ? await sql<Row>`with picked as (
              select batch_id, item_key from ${sql.table(ITEMS_TABLE)} where ${claimable}
              order by seq limit ${limit} for update skip locked)
            update ${sql.table(ITEMS_TABLE)} as i set ${set}
            from picked where i.batch_id = picked.batch_id and i.item_key = picked.item_key
            returning i.item_key, i.seq, i.prompt, i.acceptance_criteria, i.attempts`.execute(db)
        : await sql<Row>`update ${sql.table(ITEMS_TABLE)} set ${set}
            where batch_id = ${batchId} and item_key in (
              select item_key from ${sql.table(ITEMS_TABLE)} where ${claimable} order by seq limit ${limit})
            returning item_key, seq, prompt, acceptance_criteria, attempts`.execute(db);
    return result.rows.map((row) => ({
      batchId,
      key: row.item_key,
      seq: Number(row.seq),
      prompt: row.prompt,
      acceptanceCriteria: (parseJson(row.acceptance_criteria) as string[] | null) ?? [],
      attempts: Number(row.attempts),
      leaseToken: token,
    }));
  }

  /** Items waiting in the queue (pending, in any batch); counted from the claiming index. */
  async queueDepth(): Promise<number> {
    const row = await this.db
      .selectFrom(ITEMS_TABLE)
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("state", "=", "pending")
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Renews every lease this worker holds and returns the ones it still holds. An item missing from the answer
   * was cancelled, or its lease expired and another worker claimed it: the caller must stop running it.
   */
  async heartbeat(workerId: string, leaseMs: number): Promise<Set<string>> {
    const now = this.nowMs();
    const rows = await this.db
      .updateTable(ITEMS_TABLE)
      .set({ lease_expires_at: sql`${now} + ${leaseMs}`, heartbeat_at: now })
      .where("lease_owner", "=", workerId)
      .where("state", "=", "running")
      .returning(["batch_id", "item_key", "lease_token"])
      .execute();
    return new Set(rows.map((r) => `${leaseKey(r.batch_id, r.item_key)}\u0000${r.lease_token}`));
  }

  static leaseId(ref: LeaseRef): string {
    return `${leaseKey(ref.batchId, ref.key)}\u0000${ref.leaseToken}`;
  }

  /**
   * Records results, each only if the caller still holds the item's lease and the item is still running, so a
   * result is recorded at most once per item and a worker that lost its lease cannot overwrite anything.
   * Returns the lease ids that were recorded; the others were discarded.
   */
  async complete(completions: readonly ItemCompletion[]): Promise<Set<string>> {
    const recorded = new Set<string>();
    if (completions.length === 0) return recorded;
    await this.tune();
    const finishedAt = new Date().toISOString();
    const values = completions.map((c) => ({
      batch_id: c.batchId,
      item_key: c.key,
      lease_token: c.leaseToken,
      state: c.state,
      result: c.result,
      result_sha256: c.resultSha256,
      error: c.error,
      verdict: c.verdict,
      acceptance: c.acceptance === undefined || c.acceptance === null ? null : JSON.stringify(c.acceptance),
      outcome: c.outcome === undefined || c.outcome === null ? null : JSON.stringify(c.outcome),
    }));
    if (this.dialect === "postgres") {
      // One statement for the whole flush: a conditional multi-row UPDATE from a VALUES list.
      const tuples = values.map(
        (v) =>
          sql`(${v.batch_id}, ${v.item_key}, ${v.lease_token}, ${v.state}, ${v.result}, ${v.result_sha256}, ${v.error}, ${v.verdict}, ${v.acceptance}, ${v.outcome})`,
      );
      // One round trip. The one-row join sets synchronous_commit for this statement's own transaction only
      // (set_config(..., true) is transaction-local), so this commit does not wait for the disk.
      const result = await sql<{ batch_id: string; item_key: string; lease_token: string }>`
        update ${sql.table(ITEMS_TABLE)} as i set
          state = v.state, result = v.result, result_sha256 = v.result_sha256, error = v.error, verdict = v.verdict,
          acceptance = v.acceptance, outcome = v.outcome, finished_at = ${finishedAt},
          lease_owner = null, lease_token = null, lease_expires_at = null
        from (values ${sql.join(tuples)}) as v(batch_id, item_key, lease_token, state, result, result_sha256, error, verdict, acceptance, outcome)
          cross join (select set_config('synchronous_commit', 'off', true) as relaxed) as durability
        where i.batch_id = v.batch_id and i.item_key = v.item_key and i.lease_token = v.lease_token and i.state = 'running'
        returning v.batch_id, v.item_key, v.lease_token`.execute(this.db);
      for (const r of result.rows) recorded.add(BatchStore.leaseId({ batchId: r.batch_id, key: r.item_key, leaseToken: r.lease_token }));
    } else {
      await this.writeTransaction(async (db) => {
        for (const v of values) {
          const updated = await db
            .updateTable(ITEMS_TABLE)
            .set({
              state: v.state,
              result: v.result,
              result_sha256: v.result_sha256,
              error: v.error,
              verdict: v.verdict,
              acceptance: v.acceptance,
              outcome: v.outcome,
              finished_at: finishedAt,
              lease_owner: null,
              lease_token: null,
              lease_expires_at: null,
            })
            .where("batch_id", "=", v.batch_id)
            .where("item_key", "=", v.item_key)
            .where("lease_token", "=", v.lease_token)
            .where("state", "=", "running")
            .executeTakeFirst();
          if (Number(updated.numUpdatedRows) > 0) {
            recorded.add(BatchStore.leaseId({ batchId: v.batch_id, key: v.item_key, leaseToken: v.lease_token }));
          }
        }
      }, "relaxed");
    }
    return recorded;
  }

  /** Hands leased items back unrun (shutdown, admission queue full): pending again, the attempt not counted. */
  async release(refs: readonly LeaseRef[]): Promise<number> {
    let released = 0;
    for (const ref of refs) {
      const updated = await this.db
        .updateTable(ITEMS_TABLE)
        .set({ state: "pending", lease_owner: null, lease_token: null, lease_expires_at: null, attempts: sql`attempts - 1` })
        .where("batch_id", "=", ref.batchId)
        .where("item_key", "=", ref.key)
        .where("lease_token", "=", ref.leaseToken)
        .where("state", "=", "running")
        .executeTakeFirst();
      released += Number(updated.numUpdatedRows);
    }
    return released;
  }

  /**
   * Fails items whose lease expired `maxAttempts` times: an item that keeps killing its worker must not be
   * claimed forever. Returns how many were failed.
   */
  async reapExhausted(maxAttempts: number): Promise<number> {
    const updated = await this.db
      .updateTable(ITEMS_TABLE)
      .set({
        state: "failed",
        error: `the item's lease expired ${maxAttempts} times (its worker crashed or stalled each time); not retried again`,
        finished_at: new Date().toISOString(),
        lease_owner: null,
        lease_token: null,
        lease_expires_at: null,
      })
      .where("state", "=", "running")
      .where("lease_expires_at", "<", this.nowMs())
      .where("attempts", ">=", maxAttempts)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows);
  }

  /** Marks active batches whose items are all terminal as completed, so workers stop scanning them. */
  async settle(batchIds: Iterable<string>): Promise<string[]> {
    const ids = [...new Set(batchIds)];
    if (ids.length === 0) return [];
    const rows = await this.db
      .updateTable(BATCHES_TABLE)
      .set({ state: "completed", finished_at: new Date().toISOString() })
      .where("id", "in", ids)
      .where("state", "=", "active")
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom(`${ITEMS_TABLE} as i`)
              .select(sql.lit(1).as("one"))
              .whereRef("i.batch_id", "=", `${BATCHES_TABLE}.id`)
              .where("i.state", "in", ["pending", "running"]),
          ),
        ),
      )
      .returning("id")
      .execute();
    return rows.map((r) => r.id);
  }
}

function toBatchRecord(row: BatchesTable): BatchRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    title: row.title,
    subagentType: row.subagent_type,
    state: row.state as BatchState,
    totalItems: Number(row.total_items),
    maxLiveItems: row.max_live_items === null ? null : Number(row.max_live_items),
    maxRunningItems: row.max_running_items === null ? null : Number(row.max_running_items),
    threadId: row.thread_id,
    traceId: row.trace_id,
    userRole: row.user_role ?? null,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}

function parseJson(text: string | null | undefined): unknown {
  if (text === null || text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
