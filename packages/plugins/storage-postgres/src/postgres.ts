import {
  type AntlerDatabase,
  AntlerError,
  type AntlerTables,
  type Checkpointer,
  describeCause,
  ErrorCodes,
  type Logger,
  type PostgresPoolConfig,
  redactText,
  type StorageConfig,
} from "@antler/kernel";
import type { CheckpointRetention, RetentionPolicy } from "@antler/storage-kit";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { messageLogDdl, PostgresMessageLog } from "./message-log.js";

/** The PostgreSQL checkpointer, with what retention and `antler storage compact` reach beyond the kernel's contract. */
export interface PostgresCheckpointer extends Checkpointer {
  readonly retention: CheckpointRetention;
  prune(threadId: string): Promise<void>;
  /** VACUUM ANALYZE of the checkpoint tables. */
  vacuum(): Promise<void>;
}

export interface PostgresOpenOptions {
  /** Keep the tables in this schema (created if missing) instead of `public`. */
  schema?: string | undefined;
  logger?: Logger | undefined;
  /** `storage.postgres.pool`; default 20 connections and a 30 s acquire timeout. */
  pool?: Partial<PostgresPoolConfig> | undefined;
  /** `storage.checkpoint.keep` (checkpointer only); default the last 20 checkpoints and the last of every turn. */
  keep?: RetentionPolicy | undefined;
}

export interface PostgresCheckpointerOptions extends PostgresOpenOptions {
  /** `storage.checkpoint.mode`: `delta` (default) stores each message once in `antler_messages`; `full` is LangGraph's format. */
  mode?: "delta" | "full" | undefined;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A PostgreSQL schema name is interpolated into DDL, so it must be a plain identifier. */
export function assertSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `PostgreSQL schema name ${JSON.stringify(schema)} is not a plain identifier`, {
      where: "storage (schema option)",
      hint: "Use 1–63 letters, digits and underscores, starting with a letter or underscore.",
    });
  }
  return schema;
}

/** `storage.postgres_url`, or a coded error naming the key when a postgres store is asked for without it. */
export function requirePostgresUrl(storage: StorageConfig, purpose: string): string {
  const url = storage.postgres_url?.trim();
  if (!url) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `${purpose} uses PostgreSQL but no connection URL is set`, {
      where: "storage.postgres_url",
      hint: "Set storage.postgres_url (e.g. postgres://user@host:5432/db, or $DATABASE_URL), or choose backend: sqlite.",
    });
  }
  return url;
}

/** Where a URL points, without credentials: `host:port/database`. */
export function describePostgresTarget(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname || "localhost";
    const port = parsed.port || "5432";
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || "(default database)";
    return `${host}:${port}/${database}`;
  } catch {
    return "(unparsable postgres_url)";
  }
}

export interface PostgresPoolOptions {
  /** Puts this schema first on the search path of every connection (created by the caller). */
  schema?: string | undefined;
  /** Most connections; default `storage.postgres.pool.max`'s default (20). */
  max?: number | undefined;
  /** How long a statement waits for a connection before failing; default 30000. */
  acquireTimeoutMs?: number | undefined;
  logger?: Logger | undefined;
}

// The defaults of storage.postgres.pool in the kernel's config schema, for callers that open handles directly.
const DEFAULT_POOL_MAX = 20;
const DEFAULT_ACQUIRE_TIMEOUT_MS = 30_000;
/**
 * Connections of the upkeep pool (lease renewals and orphan sweeps). A client's heartbeat runs one statement at a
 * time; two leave slack while taking little of PostgreSQL's max_connections.
 */
const UPKEEP_POOL_MAX = 2;

/** `storage.postgres.pool` as pool options (validated by the kernel's config schema). */
export function poolOptionsOf(storage: StorageConfig): Pick<PostgresOpenOptions, "pool"> {
  return { pool: storage.postgres?.pool };
}

/**
 * A pg pool with an `error` listener: without one, an idle client dropped by the server (restart, failover)
 * emits an unhandled `error` event and takes the whole process down.
 */
export function createPostgresPool(url: string, options: PostgresPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? DEFAULT_POOL_MAX,
    connectionTimeoutMillis: options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
    ...(options.schema ? { options: `-c search_path=${assertSchemaName(options.schema)},public` } : {}),
  });
  pool.on("error", (error) => {
    options.logger?.warn({ target: describePostgresTarget(url), err: redactText(error.message) }, "idle PostgreSQL connection failed");
  });
  return pool;
}

const CONNECTION_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "ECONNRESET",
  "EHOSTUNREACH",
  "28P01", // invalid_password
  "28000", // invalid_authorization_specification
  "3D000", // invalid_catalog_name: the database does not exist
]);

/** True for failures that mean "could not reach or log in to the server", as opposed to a failing query. */
export function isConnectionFailure(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && CONNECTION_ERROR_CODES.has(code)) return true;
  const message = (error as { message?: unknown }).message;
  return typeof message === "string" && /connection terminated|timeout expired|connect ECONNREFUSED/i.test(message);
}

/** The error a user sees when PostgreSQL cannot be reached: where it tried, why, and what to check. Never the password. */
export function postgresUnavailable(url: string, purpose: string, cause: unknown): AntlerError {
  const target = describePostgresTarget(url);
  const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return new AntlerError(ErrorCodes.STORAGE_UNAVAILABLE, `${purpose}: cannot connect to PostgreSQL at ${target}: ${describeCause(cause)}`, {
    where: "storage.postgres_url",
    hint: "Check that PostgreSQL is running and reachable at that host and port, that the database exists, and that the user and password in storage.postgres_url are right.",
    cause,
    details: { target, ...(typeof code === "string" ? { cause_code: code } : {}) },
  });
}

// Namespaces the advisory lock that serialises CREATE SCHEMA across processes (it is not atomic under concurrency).
const SCHEMA_LOCK_CLASS = 0x616e_7473; // "ants"

/** Antler's tables in PostgreSQL, optionally in their own schema (created if missing, safely across processes). */
export async function openPostgresDatabase(url: string, options: PostgresOpenOptions = {}): Promise<AntlerDatabase> {
  const schema = options.schema === undefined ? undefined : assertSchemaName(options.schema);
  const max = options.pool?.max ?? DEFAULT_POOL_MAX;
  const acquireTimeoutMs = options.pool?.acquire_timeout_ms ?? DEFAULT_ACQUIRE_TIMEOUT_MS;
  const pool = createPostgresPool(url, { schema, logger: options.logger, max, acquireTimeoutMs });
  const db = new Kysely<AntlerTables>({ dialect: new PostgresDialect({ pool }) });
  // pg opens connections on demand, so a handle whose upkeep lane is never used costs no connection.
  const upkeepPool = createPostgresPool(url, { schema, logger: options.logger, max: UPKEEP_POOL_MAX, acquireTimeoutMs });
  const upkeep = new Kysely<AntlerTables>({ dialect: new PostgresDialect({ pool: upkeepPool }) });
  let closed = false;
  const database: AntlerDatabase = {
    db,
    dialect: "postgres",
    location: `${describePostgresTarget(url)}${schema ? ` (schema ${schema})` : ""}`,
    maxConnections: max,
    upkeep,
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.all([db.destroy(), upkeep.destroy()]);
      if (!pool.ended) await pool.end();
      if (!upkeepPool.ended) await upkeepPool.end();
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

// Arbitrary constant that namespaces Antler's advisory locks (pg_advisory_xact_lock(classid, objid)).
const CHECKPOINT_SETUP_LOCK = 0x616e_746c; // "antl"

/**
 * LangGraph's PostgresSaver, set up once across processes (an advisory lock serialises `setup()` and the message
 * log's table), storing each message once in `antler_messages` unless `mode` is `full`, with retention over the
 * same tables.
 */
export async function openPostgresCheckpointer(url: string, options: PostgresCheckpointerOptions = {}): Promise<PostgresCheckpointer> {
  const schema = options.schema === undefined ? undefined : assertSchemaName(options.schema);
  const pool = createPostgresPool(url, {
    logger: options.logger,
    max: options.pool?.max,
    acquireTimeoutMs: options.pool?.acquire_timeout_ms,
  });
  const inner = new PostgresSaver(pool, undefined, schema === undefined ? {} : { schema });
  const client = await pool.connect().catch(async (cause: unknown) => {
    await pool.end().catch(() => {});
    throw isConnectionFailure(cause) ? postgresUnavailable(url, "checkpointer", cause) : cause;
  });
  try {
    // PostgresSaver.setup() is idempotent but not safe against a second process running it at the same moment
    // (both see version -1 and insert the same migration row). A session advisory lock on a separate
    // connection serialises setup across processes; the saver's own connection comes from the same pool.
    await client.query("SELECT pg_advisory_lock($1, hashtext($2))", [CHECKPOINT_SETUP_LOCK, schema ?? "public"]);
    try {
      await inner.setup();
      // Made whatever the mode, so a database switched between modes always has it.
      await client.query(messageLogDdl(schema));
    } finally {
      await client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [CHECKPOINT_SETUP_LOCK, schema ?? "public"]);
    }
  } catch (cause) {
    client.release();
    await pool.end().catch(() => {});
    throw isConnectionFailure(cause) ? postgresUnavailable(url, "checkpointer", cause) : cause;
  }
  client.release();
  const kit = await import("@antler/storage-kit");
  const { PostgresCheckpointTables } = await import("./retention.js");
  // The log is used in either mode: full mode still prunes what delta mode wrote.
  const log = new PostgresMessageLog(pool, { schema });
  const saver: BaseCheckpointSaver = new kit.DeltaCheckpointSaver(inner, log, { write: options.mode ?? "delta" });
  const tables = new PostgresCheckpointTables(pool, schema, inner.serde);
  const retention = new kit.CheckpointRetention({
    tables,
    saver: inner,
    log,
    policy: options.keep ?? kit.DEFAULT_RETENTION,
    mode: options.mode,
  });
  let closed = false;
  return {
    saver,
    retention,
    prune: async (threadId) => {
      await retention.prune(threadId);
    },
    vacuum: () => tables.vacuum(),
    kind: "postgres",
    location: `${describePostgresTarget(url)}${schema ? ` (schema ${schema})` : ""}`,
    close: async () => {
      if (closed) return;
      closed = true;
      await inner.end();
    },
  };
}

/**
 * LISTEN on `channel` over a connection of its own (never a pooled one: a pooled connection is handed to other
 * statements between uses, and would miss notifications or hold them up). Resolves with the function that stops.
 */
export async function listenPostgres(
  url: string,
  channel: string,
  onNotify: () => void,
  logger?: { warn(obj: object, msg: string): void },
): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  client.on("notification", (message) => {
    if (message.channel === channel) onNotify();
  });
  // A dropped connection loses wake-ups, not work: executors still poll.
  client.on("error", (error) => logger?.warn({ err: redactText(error.message) }, "the queue's LISTEN connection failed; polling only"));
  try {
    await client.connect();
    await client.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
  } catch (error) {
    await client.end().catch(() => undefined);
    throw postgresUnavailable(url, "the run queue's notifications", error);
  }
  return async () => {
    await client.end().catch(() => undefined);
  };
}
