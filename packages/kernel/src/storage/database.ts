import { join } from "node:path";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import type { Logger } from "../logging.js";
import {
  assertSchemaName,
  createPostgresPool,
  describePostgresTarget,
  isConnectionFailure,
  openSqliteFile,
  parseStorageConfig,
  postgresUnavailable,
  requirePostgresUrl,
  type StorageConfigInput,
  sqliteDirectory,
} from "./backend.js";
import { type Migration, runMigrations } from "./migrations.js";
import { threadMigrations } from "./threads.js";

/** The file that holds Antler's own tables, next to the checkpoints in `<base_dir>/<sqlite_dir>`. */
export const ANTLER_SQLITE_FILE = "antler.sqlite";

export interface MigrationsTable {
  name: string;
  applied_at: string;
}

/** Timestamps are ISO-8601 UTC text and metadata is JSON text, so one column type works on both dialects. */
export interface ThreadsTable {
  thread_id: string;
  user_id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  metadata: string;
}

/**
 * Antler's tables. Features that add tables through their own migrations reach them with
 * `database.db.withTables<TheirTables>()`.
 */
export interface AntlerTables {
  antler_migrations: MigrationsTable;
  antler_threads: ThreadsTable;
}

export type SqlDialect = "sqlite" | "postgres";

export interface AntlerDatabase {
  readonly db: Kysely<AntlerTables>;
  /** For the rare statement that cannot be portable (row leases with SKIP LOCKED, advisory locks). */
  readonly dialect: SqlDialect;
  /** A file path, `:memory:` or `host:port/db` (never credentials). */
  readonly location: string;
  /** Closes the SQLite handle or ends the pool. Safe to call twice. */
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `base_dir` from config.yaml, already resolved against the config file's folder. */
  baseDir: string;
  logger?: Logger;
  /** PostgreSQL only: keep Antler's tables in this schema (created if missing) instead of `public`. */
  schema?: string;
  /** More migrations to run after the kernel's own, at open. Features may also call `runMigrations` later. */
  migrations?: readonly Migration[];
}

/** The migrations every Antler database gets at open. */
export const coreMigrations: readonly Migration[] = [...threadMigrations];

/**
 * Opens the database for Antler's own tables (thread registry, and later run records and batch items) and
 * brings its schema up to date. `storage.backend` picks the engine: `sqlite` → `<base_dir>/<sqlite_dir>/antler.sqlite`,
 * `postgres` → `storage.postgres_url`, `memory` → an in-memory SQLite database that lives as long as this handle.
 */
export async function createDatabase(storageInput: StorageConfigInput | undefined, options: DatabaseOptions): Promise<AntlerDatabase> {
  const storage = parseStorageConfig(storageInput);
  const database =
    storage.backend === "postgres"
      ? await openPostgres(requirePostgresUrl(storage, "the database"), options)
      : openSqlite(storage.backend === "memory" ? ":memory:" : join(sqliteDirectory(storage, options.baseDir), ANTLER_SQLITE_FILE));
  try {
    const applied = await runMigrations(database, [...coreMigrations, ...(options.migrations ?? [])]);
    if (applied.length > 0) options.logger?.info({ location: database.location, applied }, "database migrated");
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

function openSqlite(file: string): AntlerDatabase {
  const sqlite = openSqliteFile(file);
  const db = new Kysely<AntlerTables>({ dialect: new SqliteDialect({ database: sqlite }) });
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

// Namespaces the advisory lock that serialises CREATE SCHEMA across processes (it is not atomic under concurrency).
const SCHEMA_LOCK_CLASS = 0x616e_7473; // "ants"

async function openPostgres(url: string, options: DatabaseOptions): Promise<AntlerDatabase> {
  const schema = options.schema === undefined ? undefined : assertSchemaName(options.schema);
  const pool = createPostgresPool(url, { schema, logger: options.logger });
  const db = new Kysely<AntlerTables>({ dialect: new PostgresDialect({ pool }) });
  let closed = false;
  const database: AntlerDatabase = {
    db,
    dialect: "postgres",
    location: `${describePostgresTarget(url)}${schema ? ` (schema ${schema})` : ""}`,
    close: async () => {
      if (closed) return;
      closed = true;
      await db.destroy();
      if (!pool.ended) await pool.end();
    },
  };
  try {
    if (schema === undefined) {
      await sql`select 1`.execute(db);
    } else {
      await db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${sql.lit(SCHEMA_LOCK_CLASS)}, hashtext(${schema}))`.execute(trx);
        await sql`create schema if not exists ${sql.id(schema)}`.execute(trx);
      });
    }
  } catch (cause) {
    await database.close();
    throw isConnectionFailure(cause) ? postgresUnavailable(url, "database", cause) : cause;
  }
  return database;
}
