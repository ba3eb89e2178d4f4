import { type AntlerDatabase, AntlerError, assertSafeId, type Migration } from "@antler/kernel";
import type { Kysely } from "kysely";
import { RuntimeErrorCodes } from "../errors.js";

export const THREADS_TABLE = "antler_threads";

/** Timestamps are ISO-8601 UTC text and metadata is JSON text, so one column type works on both dialects. */
export interface ThreadsTable {
  thread_id: string;
  user_id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  metadata: string;
}

export const threadMigrations: readonly Migration[] = [
  {
    name: "threads/001-create",
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable(THREADS_TABLE)
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("title", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("metadata", "text", (c) => c.notNull().defaultTo("{}"))
        .addPrimaryKeyConstraint("antler_threads_pkey", ["user_id", "thread_id"])
        .execute();
      // Serves list(): one user's threads, newest first.
      await db.schema.createIndex("antler_threads_user_updated").on(THREADS_TABLE).columns(["user_id", "updated_at"]).execute();
    },
  },
];

export interface ThreadRecord {
  thread_id: string;
  user_id: string;
  title: string | null;
  /** ISO-8601 UTC. */
  created_at: string;
  /** ISO-8601 UTC; bumped by every `touch`. */
  updated_at: string;
  metadata: Record<string, unknown>;
}

export interface TouchThreadOptions {
  /** Replaces the title when given; an existing title is kept otherwise. */
  title?: string | null;
  /** Replaces the whole metadata object when given (no merge); kept otherwise. Must be JSON-serialisable. */
  metadata?: Record<string, unknown>;
}

export interface ListThreadsOptions {
  /** 1–1000, default 50. Out-of-range values are clamped. */
  limit?: number;
  /** Default 0. */
  offset?: number;
}

/**
 * The registry of a user's threads. Every method takes the owner: a thread belongs to exactly one user, and
 * another user's thread behaves exactly like a missing one (never "forbidden", which would confirm it exists).
 */
export interface ThreadStore {
  /** Creates the thread or bumps its `updated_at`; returns the row as stored. */
  touch(userId: string, threadId: string, options?: TouchThreadOptions): Promise<ThreadRecord>;
  get(userId: string, threadId: string): Promise<ThreadRecord | null>;
  /** Like `get`, but a missing thread is a THREAD_NOT_FOUND error. */
  require(userId: string, threadId: string): Promise<ThreadRecord>;
  /** Most recently updated first. */
  list(userId: string, options?: ListThreadsOptions): Promise<ThreadRecord[]>;
  /** True when a row was deleted. Thread files and checkpoints are the caller's to remove. */
  delete(userId: string, threadId: string): Promise<boolean>;
}

export interface ThreadStoreOptions {
  /** Clock for `created_at` / `updated_at`; tests pass a fake one to pin ordering. */
  now?: () => Date;
}

export function createThreadStore(database: AntlerDatabase, options: ThreadStoreOptions = {}): ThreadStore {
  const db = database.db.withTables<{ antler_threads: ThreadsTable }>();
  const now = options.now ?? (() => new Date());

  const get = async (userId: string, threadId: string): Promise<ThreadRecord | null> => {
    const row = await db
      .selectFrom(THREADS_TABLE)
      .selectAll()
      .where("user_id", "=", userId)
      .where("thread_id", "=", threadId)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  };

  return {
    async touch(userId, threadId, touchOptions = {}) {
      // Ids become folder names (threadPaths), so the registry refuses anything a folder could not hold.
      assertSafeId("user", userId);
      assertSafeId("thread", threadId);
      const stamp = now().toISOString();
      const row: ThreadsTable = {
        user_id: userId,
        thread_id: threadId,
        title: touchOptions.title ?? null,
        created_at: stamp,
        updated_at: stamp,
        metadata: encodeMetadata(touchOptions.metadata ?? {}),
      };
      const stored = await db
        .insertInto(THREADS_TABLE)
        .values(row)
        .onConflict((oc) =>
          oc.columns(["user_id", "thread_id"]).doUpdateSet((eb) => ({
            updated_at: eb.ref("excluded.updated_at"),
            ...(touchOptions.title !== undefined ? { title: eb.ref("excluded.title") } : {}),
            ...(touchOptions.metadata !== undefined ? { metadata: eb.ref("excluded.metadata") } : {}),
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRecord(stored);
    },

    get,

    async require(userId, threadId) {
      const record = await get(userId, threadId);
      if (!record) {
        throw new AntlerError(RuntimeErrorCodes.THREAD_NOT_FOUND, `thread ${JSON.stringify(threadId)} not found`, {
          where: `user ${JSON.stringify(userId)}`,
          hint: "Create the thread first (or check the thread id); threads are visible only to the user who owns them.",
        });
      }
      return record;
    },

    async list(userId, listOptions = {}) {
      const limit = clampInt(listOptions.limit, 50, 1, 1000);
      const offset = clampInt(listOptions.offset, 0, 0, Number.MAX_SAFE_INTEGER);
      const rows = await db
        .selectFrom(THREADS_TABLE)
        .selectAll()
        .where("user_id", "=", userId)
        .orderBy("updated_at", "desc")
        // Ties (same millisecond) still come back in a stable order, so pagination never repeats or skips.
        .orderBy("thread_id", "desc")
        .limit(limit)
        .offset(offset)
        .execute();
      return rows.map(toRecord);
    },

    async delete(userId, threadId) {
      const result = await db.deleteFrom(THREADS_TABLE).where("user_id", "=", userId).where("thread_id", "=", threadId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

function encodeMetadata(metadata: Record<string, unknown>): string {
  // A programming error rather than a user-facing condition (HTTP bodies are validated before they get here),
  // hence a plain TypeError.
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) {
    throw new TypeError(`${THREADS_TABLE}.metadata must be a plain object`);
  }
  try {
    return JSON.stringify(metadata);
  } catch (cause) {
    throw new TypeError(`${THREADS_TABLE}.metadata is not JSON-serialisable (cycles, BigInts?)`, { cause });
  }
}

function toRecord(row: ThreadsTable): ThreadRecord {
  let metadata: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(row.metadata);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) metadata = parsed as Record<string, unknown>;
  } catch {
    // A row written by hand with bad JSON still lists; its metadata reads as empty.
  }
  return {
    thread_id: row.thread_id,
    user_id: row.user_id,
    title: row.title,
    created_at: row.created_at,
    updated_at: row.updated_at,
    metadata,
  };
}

function clampInt(value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.trunc(value)));
}
