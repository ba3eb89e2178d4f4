import { mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  type AntlerDatabase,
  AntlerError,
  type AntlerTables,
  type Checkpointer,
  describeCause,
  ErrorCodes,
  type StorageOpenRequest,
} from "@antler/kernel";
import type { CheckpointRetention, RetentionPolicy } from "@antler/storage-kit";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type Database from "better-sqlite3";
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from "kysely";
import { sqliteDriver } from "./driver.js";
import { SqliteMessageLog } from "./message-log.js";

/** The file that holds Antler's own tables, next to the checkpoints in `<base_dir>/<sqlite_dir>`. */
export const ANTLER_SQLITE_FILE = "antler.sqlite";
/** The file the SQLite checkpointer writes, inside `<base_dir>/<sqlite_dir>`. */
export const CHECKPOINTS_SQLITE_FILE = "checkpoints.sqlite";

/** `<base_dir>/<sqlite_dir>`, absolute. `sqlite_dir` may itself be absolute. */
export function sqliteDirectory(request: Pick<StorageOpenRequest, "storage" | "baseDir">): string {
  return resolve(request.baseDir, request.storage.sqlite_dir);
}

/**
 * Opens a better-sqlite3 database file for a long-lived store: folders created, WAL so readers never block the
 * writer, and a busy timeout so two processes sharing the file wait for each other instead of failing at once.
 */
export function openSqliteFile(file: string): Database.Database {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  let db: Database.Database;
  try {
    const Driver = sqliteDriver();
    db = new Driver(file);
  } catch (cause) {
    throw new AntlerError(ErrorCodes.STORAGE_UNAVAILABLE, `cannot open SQLite database ${file}: ${describeCause(cause)}`, {
      where: "storage.sqlite_dir",
      hint: "Check that the folder is writable, or point storage.sqlite_dir (relative to base_dir) somewhere that is.",
      cause,
    });
  }
  if (file !== ":memory:") db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  return db;
}

/** Prepared statements kept per connection; Kysely's SQL has placeholders, so this many covers every query shape. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * The connection as Kysely's dialect sees it, with prepared statements reused by SQL text (least recently used
 * dropped beyond `size`). Kysely prepares every query it runs, and SQLite's parse and plan cost more than running
 * a point lookup; a hot query (memory's version check, thread lookups) is prepared once. A statement still being
 * iterated by a streaming query is busy, so the same SQL meanwhile gets a fresh one. SQLite re-prepares a cached
 * statement by itself after a schema change.
 */
export function withStatementCache(sqlite: Database.Database, size = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const statements = new Map<string, Database.Statement>();
  return {
    close: () => {
      statements.clear();
      sqlite.close();
    },
    prepare: (sql: string): SqliteStatement => {
      const cached = statements.get(sql);
      if (cached && !cached.busy) {
        statements.delete(sql);
        statements.set(sql, cached);
        return cached as SqliteStatement;
      }
      const statement = sqlite.prepare(sql);
      if (cached) return statement as SqliteStatement;
      if (statements.size >= size) statements.delete(statements.keys().next().value as string);
      statements.set(sql, statement);
      return statement as SqliteStatement;
    },
  };
}

/** Antler's tables in `<base_dir>/<sqlite_dir>/antler.sqlite`, or in memory for `storage.backend: memory`. */
export function openSqliteDatabase(file: string): AntlerDatabase {
  const sqlite = openSqliteFile(file);
  const db = new Kysely<AntlerTables>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  let closed = false;
  return {
    db,
    dialect: "sqlite",
    location: file,
    close: async () => {
      if (closed) return;
      closed = true;
      await db.destroy();
      // Kysely only closes the handle if it ever used it.
      if (sqlite.open) sqlite.close();
    },
  };
}

/** The SQLite checkpointer, with what `antler storage compact` and retention reach beyond the kernel's contract. */
export interface SqliteCheckpointer extends Checkpointer {
  readonly retention: CheckpointRetention;
  prune(threadId: string): Promise<void>;
  /** Gives freed pages back to the file system (VACUUM, then `PRAGMA optimize`); answers the file's bytes before and after. */
  vacuum(): Promise<{ before: number; after: number }>;
  /** The file's bytes (with its WAL). */
  fileBytes(): number;
}

export interface SqliteCheckpointerOptions {
  mode?: "delta" | "full" | undefined;
  /** `storage.checkpoint.keep`; default the last 20 checkpoints and the last of every turn. */
  keep?: RetentionPolicy | undefined;
}

/**
 * LangGraph's SqliteSaver on `<base_dir>/<sqlite_dir>/checkpoints.sqlite` (or `:memory:`), storing each message
 * once in the same file unless `storage.checkpoint.mode` is `full`, with retention over the same tables.
 */
export async function openSqliteCheckpointer(file: string, options: SqliteCheckpointerOptions = {}): Promise<SqliteCheckpointer> {
  const db = openSqliteFile(file);
  const kit = await import("@antler/storage-kit");
  const { AntlerSqliteSaver, SqliteCheckpointTables } = await import("./retention.js");
  const inner = new AntlerSqliteSaver(db);
  // The log is there in either mode: full mode still reads (and retention still prunes) what delta mode wrote.
  const log = new SqliteMessageLog(db);
  const saver: BaseCheckpointSaver = new kit.DeltaCheckpointSaver(inner, log, { write: options.mode ?? "delta" });
  const retention = new kit.CheckpointRetention({
    tables: new SqliteCheckpointTables(db, inner),
    saver: inner,
    log,
    policy: options.keep ?? kit.DEFAULT_RETENTION,
    mode: options.mode,
  });
  const fileBytes = () => (file === ":memory:" ? 0 : sizeOf(file) + sizeOf(`${file}-wal`));
  return {
    saver,
    kind: file === ":memory:" ? "memory" : "sqlite",
    location: file,
    retention,
    prune: async (threadId) => {
      await retention.prune(threadId);
    },
    fileBytes,
    vacuum: async () => {
      const before = fileBytes();
      db.exec("VACUUM");
      if (file !== ":memory:") db.pragma("wal_checkpoint(TRUNCATE)");
      db.pragma("optimize");
      return { before, after: fileBytes() };
    },
    close: async () => {
      if (db.open) db.close();
    },
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function databaseFile(request: StorageOpenRequest): string {
  return request.inMemory ? ":memory:" : join(sqliteDirectory(request), ANTLER_SQLITE_FILE);
}

export function checkpointFile(request: StorageOpenRequest): string {
  return request.inMemory ? ":memory:" : join(sqliteDirectory(request), CHECKPOINTS_SQLITE_FILE);
}
