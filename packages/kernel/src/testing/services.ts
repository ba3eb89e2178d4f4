import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach, describe, it } from "vitest";

/** The env var that points integration tests at a PostgreSQL server, e.g. postgres://postgres@127.0.0.1:5432/test. */
export const POSTGRES_TEST_URL_ENV = "ANTLER_TEST_PG_URL";
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** The PostgreSQL URL for integration tests, or undefined when the env var is unset or blank. */
export function postgresTestUrl(): string | undefined {
  const url = process.env[POSTGRES_TEST_URL_ENV]?.trim();
  return url ? url : undefined;
}

/** The Chromium binary for browser tests, when it is installed. */
export function chromiumPath(): string | undefined {
  return existsSync(CHROMIUM_PATH) ? CHROMIUM_PATH : undefined;
}

/**
 * A suite that runs unless `skipReason` is set; then one skipped test says why, so the report shows
 * "skipped: <reason>" instead of a suite that silently passed with nothing in it.
 */
export function describeUnless(name: string, skipReason: string | undefined, fn: () => void): void {
  describe(name, () => {
    if (skipReason === undefined) fn();
    // Skipped on purpose, with its reason as the test's name: the service or browser it needs is not on this machine.
    else it.skip(`skipped: ${skipReason}`, () => {}); // reason: skipReason, the missing service or browser, named above
  });
}

/** A suite that needs a service: `fn(value)` when it is there, else one skipped test naming `reason`. */
function describeWithService(name: string, value: string | undefined, reason: string, fn: (value: string) => void): void {
  describeUnless(name, value === undefined ? reason : undefined, () => fn(value as string));
}

/** Runs `fn(url)` as a suite when ANTLER_TEST_PG_URL is set; otherwise registers one skipped test naming the reason. */
export function describeWithPostgres(name: string, fn: (url: string) => void): void {
  describeWithService(name, postgresTestUrl(), `${POSTGRES_TEST_URL_ENV} is not set`, fn);
}

/** Runs `fn(url)` as a suite when ANTLER_TEST_REDIS_URL is set; otherwise registers one skipped test naming the reason. */
export function describeWithRedis(name: string, fn: (url: string) => void): void {
  const url = process.env.ANTLER_TEST_REDIS_URL?.trim() || undefined;
  describeWithService(name, url, "ANTLER_TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379)", fn);
}

/** Runs `fn(executablePath)` as a suite when /usr/bin/chromium exists; otherwise one skipped test naming the reason. */
export function describeWithChromium(name: string, fn: (executablePath: string) => void): void {
  describeWithService(name, chromiumPath(), `${CHROMIUM_PATH} is not installed (apt-get install -y chromium)`, fn);
}

export interface PostgresTestSchema {
  /** The schema's name: a plain lower-case identifier, unique to this test. */
  readonly name: string;
  /** Drops the schema and everything in it. Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * Creates a fresh, uniquely named schema, so test files running in parallel against one database never see
 * each other's tables. Pass its name as the `schema` option of createDatabase / createCheckpointer.
 */
export async function createPostgresTestSchema(url: string, prefix = "antler_test"): Promise<PostgresTestSchema> {
  const safePrefix =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, "_")
      .slice(0, 30) || "antler_test";
  const name = `${safePrefix}_${process.pid}_${randomBytes(6).toString("hex")}`;
  await withClient(url, (client) => client.query(`CREATE SCHEMA "${name}"`));
  let dropped = false;
  return {
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      // A client's background work (checkpoint retention after a run) may still hold locks in the schema when a
      // test ends; PostgreSQL then picks one side of the deadlock (40P01) to fail. Dropping again succeeds.
      for (let attempt = 1; ; attempt++) {
        try {
          await withClient(url, (client) => client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`));
          return;
        } catch (err) {
          if ((err as { code?: string }).code !== "40P01" || attempt >= 5) throw err;
          await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
        }
      }
    },
  };
}

/**
 * Registers hooks that give each test (or, with `scope: "all"`, the whole file) its own schema and drop it
 * afterwards. Read `.name` inside a test or hook.
 */
export function usePostgresSchema(url: string, options: { prefix?: string; scope?: "each" | "all" } = {}): { readonly name: string } {
  let current: PostgresTestSchema | undefined;
  const [before, after] = options.scope === "all" ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(async () => {
    current = await createPostgresTestSchema(url, options.prefix);
  });
  after(async () => {
    await current?.drop();
    current = undefined;
  });
  return {
    get name(): string {
      if (!current) throw new Error("usePostgresSchema: the schema exists only inside a test or hook");
      return current.name;
    },
  };
}

interface PgClient {
  connect(): Promise<void>;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
}

/**
 * `pg` is an optional peer of the test kit: only PostgreSQL tests need it, and they run where a PostgreSQL
 * plugin (which depends on it) is installed. The kernel itself never depends on a database driver.
 */
async function withClient<T>(url: string, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const driver = "pg";
  let pg: { Client: new (options: { connectionString: string }) => PgClient };
  try {
    pg = ((await import(driver)) as { default: typeof pg }).default;
  } catch (cause) {
    throw new Error("PostgreSQL tests need the `pg` package installed next to the tests (npm install -D pg)", { cause });
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
