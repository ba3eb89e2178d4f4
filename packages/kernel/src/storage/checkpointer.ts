import { join } from "node:path";
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
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
  type StorageKind,
  sqliteDirectory,
} from "./backend.js";

/** The file the SQLite checkpointer writes, inside `<base_dir>/<sqlite_dir>`. */
export const CHECKPOINTS_SQLITE_FILE = "checkpoints.sqlite";

export interface CheckpointerOptions {
  /** `base_dir` from config.yaml, already resolved against the config file's folder. */
  baseDir: string;
  logger?: Logger;
  /** PostgreSQL only: the schema that holds the checkpoint tables (default `public`). Created if missing. */
  schema?: string;
}

export interface Checkpointer {
  readonly saver: BaseCheckpointSaver;
  readonly kind: StorageKind;
  /** Human-readable location for logs: a file path, or `host:port/db` (never credentials). */
  readonly location: string;
  /** Releases the file handle or the connection pool. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * The LangGraph checkpointer for thread state. The kind is `storage.checkpointer`, falling back to
 * `storage.backend`, so a deployment can keep Antler's tables in one place and checkpoints in another.
 */
export async function createCheckpointer(
  storageInput: StorageConfigInput | undefined,
  options: CheckpointerOptions,
): Promise<Checkpointer> {
  const storage = parseStorageConfig(storageInput);
  const kind: StorageKind = storage.checkpointer ?? storage.backend;
  let result: Checkpointer;
  if (kind === "memory") {
    result = { saver: new MemorySaver(), kind, location: "memory", close: async () => {} };
  } else if (kind === "sqlite") {
    const file = join(sqliteDirectory(storage, options.baseDir), CHECKPOINTS_SQLITE_FILE);
    const db = openSqliteFile(file);
    result = {
      saver: new SqliteSaver(db),
      kind,
      location: file,
      close: async () => {
        if (db.open) db.close();
      },
    };
  } else {
    const url = requirePostgresUrl(storage, "the checkpointer");
    result = await openPostgresCheckpointer(url, options);
  }
  options.logger?.debug({ kind, location: result.location }, "checkpointer ready");
  return result;
}

// Arbitrary constant that namespaces Antler's advisory locks (pg_advisory_xact_lock(classid, objid)).
const CHECKPOINT_SETUP_LOCK = 0x616e_746c; // "antl"

async function openPostgresCheckpointer(url: string, options: CheckpointerOptions): Promise<Checkpointer> {
  const schema = options.schema === undefined ? undefined : assertSchemaName(options.schema);
  const pool = createPostgresPool(url, { logger: options.logger });
  const saver = new PostgresSaver(pool, undefined, schema === undefined ? {} : { schema });
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
      await saver.setup();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [CHECKPOINT_SETUP_LOCK, schema ?? "public"]);
    }
  } catch (cause) {
    client.release();
    await pool.end().catch(() => {});
    throw isConnectionFailure(cause) ? postgresUnavailable(url, "checkpointer", cause) : cause;
  }
  client.release();
  let closed = false;
  return {
    saver,
    kind: "postgres",
    location: `${describePostgresTarget(url)}${schema ? ` (schema ${schema})` : ""}`,
    close: async () => {
      if (closed) return;
      closed = true;
      await saver.end();
    },
  };
}
