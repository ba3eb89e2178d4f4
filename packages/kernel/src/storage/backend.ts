import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { z } from "zod";
import { redactText } from "../config/redact.js";
import { storageSectionSchema } from "../config/schema.js";
import { AntlerError, ErrorCodes } from "../errors.js";
import type { Logger } from "../logging.js";

/** The `storage` section of config.yaml after defaults are applied. */
export type StorageConfig = z.output<typeof storageSectionSchema>;
/** The `storage` section as written (every key optional). */
export type StorageConfigInput = z.input<typeof storageSectionSchema>;

export type StorageKind = "memory" | "sqlite" | "postgres";

/** Applies defaults and validates, so callers may pass `{ backend: "sqlite" }` as well as a loaded config. */
export function parseStorageConfig(storage: StorageConfigInput | undefined): StorageConfig {
  const parsed = storageSectionSchema.safeParse(storage ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = ["storage", ...(issue?.path ?? []).map(String)].join(".");
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, issue?.message ?? "invalid storage section", {
      where: path,
      hint: "Fix the `storage` section of config.yaml (backend: sqlite | postgres | memory).",
    });
  }
  return parsed.data;
}

/** `<baseDir>/<sqlite_dir>`, absolute. `sqlite_dir` may itself be absolute. */
export function sqliteDirectory(storage: StorageConfig, baseDir: string): string {
  return resolve(baseDir, storage.sqlite_dir);
}

/**
 * Opens a better-sqlite3 database file for a long-lived store: folders created, WAL so readers never block the
 * writer, and a busy timeout so two processes sharing the file wait for each other instead of failing at once.
 */
export function openSqliteFile(file: string): Database.Database {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  let db: Database.Database;
  try {
    db = new Database(file);
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
  schema?: string;
  max?: number;
  logger?: Logger;
}

/**
 * A pg pool with an `error` listener: without one, an idle client dropped by the server (restart, failover)
 * emits an unhandled `error` event and takes the whole process down.
 */
export function createPostgresPool(url: string, options: PostgresPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 10_000,
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

export function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return redactText(String(cause));
  // Node reports a refused dual-stack connect ("localhost") as an AggregateError with an empty message.
  const code = (cause as { code?: unknown }).code;
  return redactText(cause.message || (typeof code === "string" ? code : cause.name));
}
