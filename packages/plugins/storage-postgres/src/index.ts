export { MESSAGES_TABLE, PostgresMessageLog } from "./message-log.js";
export { default } from "./plugin.js";
export {
  assertSchemaName,
  createPostgresPool,
  describePostgresTarget,
  isConnectionFailure,
  openPostgresCheckpointer,
  openPostgresDatabase,
  type PostgresCheckpointerOptions,
  type PostgresOpenOptions,
  type PostgresPoolOptions,
  postgresUnavailable,
  requirePostgresUrl,
} from "./postgres.js";
