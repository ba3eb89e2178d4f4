/**
 * What a sandboxed command inherits from the Antler process. Commands run on the host, so anything secret in
 * Antler's own environment (model API keys, database URLs) would otherwise be one `env` away from the agent.
 */

/** Variable names that usually hold a secret; matched case-insensitively anywhere in the name. */
const SECRET_NAME = /KEY|SECRET|TOKEN|PASS|CREDENTIAL|DSN/i;

/** Connection-string variables: DATABASE_URL, *_DATABASE_URL, POSTGRES_URL, REDIS_URL, MONGO*_URL, ... */
const DATABASE_URL_NAME =
  /(^|_)(DATABASE|DB|POSTGRES|POSTGRESQL|PG|MYSQL|MARIADB|MSSQL|SQLSERVER|REDIS|VALKEY|MONGO[A-Z0-9]*|AMQP|RABBITMQ|CLICKHOUSE|ELASTICSEARCH|NEO4J|CASSANDRA)(_[A-Z0-9]+)*_UR[LI]$/i;

/** `scheme://user:password@host`: credentials embedded in a URL, whatever the variable is called. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s@:]*:[^/?#\s@]*@/i;

/** POSIX environment variable names; anything else is refused rather than passed to the shell. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True when a variable would be dropped from a sandboxed command's inherited environment. */
export function isSecretVariable(name: string, value: string | undefined): boolean {
  if (SECRET_NAME.test(name) || DATABASE_URL_NAME.test(name)) return true;
  return value !== undefined && URL_WITH_PASSWORD.test(value.trim());
}

/**
 * The environment minus every variable whose name contains KEY, SECRET, TOKEN, PASS, CREDENTIAL or DSN
 * (case-insensitive), database connection URLs, and any value that is a URL carrying `user:password@`.
 * Undefined values are dropped too. Values a caller passes explicitly (a command's `env`) are merged after
 * this, so request-scoped secrets still reach the command on purpose.
 */
export function scrubEnvironment(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || isSecretVariable(name, value)) continue;
    out[name] = value;
  }
  return out;
}
