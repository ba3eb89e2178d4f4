export { default } from "./plugin.js";
export {
  assertSchemaName,
  createPostgresPool,
  describePostgresTarget,
  isConnectionFailure,
  openPostgresCheckpointer,
  openPostgresDatabase,
  type PostgresOpenOptions,
  type PostgresPoolOptions,
  postgresUnavailable,
  requirePostgresUrl,
} from "./postgres.js";
