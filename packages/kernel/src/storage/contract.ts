import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { Kysely } from "kysely";
import type { StorageConfig } from "../config/schema.js";
import type { Logger } from "../logging.js";

/** A `storage.backend` / `storage.checkpointer` value: `memory` is built in, plugins add the rest. */
export type StorageKind = string;

export interface MigrationsTable {
  name: string;
  applied_at: string;
}

/**
 * The tables every Antler database has. Features that add tables through their own migrations reach them with
 * `database.db.withTables<TheirTables>()`.
 */
export interface AntlerTables {
  antler_migrations: MigrationsTable;
}

export type SqlDialect = "sqlite" | "postgres";

/** An open database for Antler's own tables (thread registry, run records, batch items, schedules). */
export interface AntlerDatabase {
  readonly db: Kysely<AntlerTables>;
  /** For the rare statement that cannot be portable (row leases with SKIP LOCKED, advisory locks). */
  readonly dialect: SqlDialect;
  /** A file path, `:memory:` or `host:port/db` (never credentials). */
  readonly location: string;
  /**
   * The most connections `db` holds at once (a pool's `max`), for sizing work against it; absent when the
   * backend has no such bound worth sizing by (SQLite's single connection serialises instead of failing).
   */
  readonly maxConnections?: number | undefined;
  /**
   * The same database on connections of its own, for short bookkeeping that must not queue behind `db`'s
   * traffic: renewing live runs' leases and sweeping orphans. If it waited for a starved pool, an instance
   * would declare its own live runs dead. Absent: use `db`.
   */
  readonly upkeep?: Kysely<AntlerTables> | undefined;
  /** Closes the handle or ends the pool. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * One schema change. `name` is recorded in `antler_migrations` and must never change once shipped; prefix it
 * with the feature that owns it (`threads/001-create`, `batch/001-items`) so features can add migrations
 * independently. `up` receives a database bound to the migration's transaction: build DDL with `db.schema`
 * (portable), and use `db.withTables<...>()` for typed data changes.
 */
export interface Migration {
  readonly name: string;
  up(db: Kysely<unknown>): Promise<void>;
}

/** The LangGraph checkpointer behind thread state. */
export interface Checkpointer {
  readonly saver: BaseCheckpointSaver;
  readonly kind: StorageKind;
  /** Human-readable location for logs: a file path, or `host:port/db` (never credentials). */
  readonly location: string;
  /** Releases the file handle or the connection pool. Safe to call twice. */
  close(): Promise<void>;
  /**
   * Applies `storage.checkpoint.keep` to one thread (its checkpoint `thread_id`): drops the checkpoints, pending
   * writes and stored messages the policy does not keep. The runtime calls it in the background after a run
   * ends; absent, a backend keeps everything.
   */
  prune?(threadId: string): Promise<void>;
}

/** What a backend is asked to open. */
export interface StorageOpenRequest {
  /** The validated `storage` section of config.yaml. */
  readonly storage: StorageConfig;
  /** `base_dir`, absolute. */
  readonly baseDir: string;
  /** Keep the tables in this PostgreSQL schema (created if missing); backends without schemas ignore it. */
  readonly schema?: string | undefined;
  /** Open a database that lives only as long as the handle (`storage.backend: memory`). */
  readonly inMemory?: boolean | undefined;
  readonly logger: Logger;
}

/**
 * A storage engine, registered by a plugin with `ctx.storage.addBackend(...)` and picked by `storage.backend`
 * (Antler's tables) and `storage.checkpointer` (thread checkpoints, default: the backend). Keep heavy drivers
 * out of the module that defines the backend: import them inside `openDatabase` / `openCheckpointer`.
 */
export interface StorageBackend {
  /** The value of `storage.backend` that selects it, e.g. "sqlite" or "postgres". */
  readonly id: string;
  readonly description?: string | undefined;
  /** True when `openDatabase` honours `inMemory`; `storage.backend: memory` keeps Antler's tables there. */
  readonly inMemoryDatabase?: boolean | undefined;
  /**
   * True when `openCheckpointer` honours `inMemory`; `storage.backend: memory` (or `storage.checkpointer: memory`)
   * keeps thread checkpoints there, and in a plain LangGraph `MemorySaver` when no backend offers it.
   */
  readonly inMemoryCheckpointer?: boolean | undefined;
  openDatabase?(request: StorageOpenRequest): Promise<AntlerDatabase>;
  openCheckpointer?(request: StorageOpenRequest): Promise<Checkpointer>;
}

export interface OpenDatabaseOptions {
  /** Migrations to apply at open (idempotent; each feature passes its own). */
  migrations?: readonly Migration[] | undefined;
  /** PostgreSQL schema; default `storage.postgres_schema`. */
  schema?: string | undefined;
}

export interface OpenCheckpointerOptions {
  /** PostgreSQL schema; default `storage.postgres_schema`. */
  schema?: string | undefined;
}

/** What plugins use at run time to reach the configured storage. Each call opens a handle the caller closes. */
export interface StorageAccess {
  openDatabase(options?: OpenDatabaseOptions): Promise<AntlerDatabase>;
  openCheckpointer(options?: OpenCheckpointerOptions): Promise<Checkpointer>;
}
