import { type Kysely, sql } from "kysely";
import { AntlerError, ErrorCodes } from "../errors.js";
import type { AntlerDatabase, Migration } from "./contract.js";
import { describeCause } from "./describe.js";

export const MIGRATIONS_TABLE = "antler_migrations";

// Namespaces Antler's advisory locks: pg_advisory_xact_lock(classid, objid) with objid = hash of the schema,
// so migrations in different schemas of one database do not wait for each other.
const MIGRATION_LOCK_CLASS = 0x616e_746d; // "antm"

/**
 * Applies, in list order, every migration whose name is not yet recorded, and returns the names it applied.
 * Idempotent. The whole run is one transaction holding a lock, so two processes starting at once apply each
 * migration exactly once: the second waits, then finds nothing to do. Names recorded by other features'
 * lists are left alone, so each feature may call this with only its own migrations.
 *
 * The lock is the one unavoidable dialect fork: PostgreSQL takes a transaction-scoped advisory lock; SQLite
 * uses BEGIN IMMEDIATE, which takes the database write lock up front (and waits `busy_timeout` for it).
 */
export async function runMigrations(database: AntlerDatabase, migrations: readonly Migration[]): Promise<string[]> {
  const seen = new Set<string>();
  for (const migration of migrations) {
    if (!migration.name || seen.has(migration.name)) {
      throw new AntlerError(
        ErrorCodes.STORAGE_MIGRATION_FAILED,
        `migration name ${JSON.stringify(migration.name)} is empty or listed twice`,
        { where: MIGRATIONS_TABLE, hint: "Give every migration a unique, stable name such as `feature/001-what-it-does`." },
      );
    }
    seen.add(migration.name);
  }
  // The common case, a process starting against an up-to-date database, takes no write lock: a busy writer
  // (a batch worker, another gateway) would otherwise hold up every start for nothing.
  if (await allRecorded(database, seen)) return [];
  // better-sqlite3 waits for a busy lock synchronously, blocking the event loop: a second connection of this
  // process (another store on the same file) waiting for the lock would stall the first one, which holds it
  // across awaits, until busy_timeout fails it. One SQLite migration run at a time per process avoids that.
  if (database.dialect === "sqlite") {
    const run = sqliteMigrations.then(() => applyLocked(database, migrations));
    sqliteMigrations = run.catch(() => undefined);
    return run;
  }
  return applyLocked(database, migrations);
}

let sqliteMigrations: Promise<unknown> = Promise.resolve();

async function applyLocked(database: AntlerDatabase, migrations: readonly Migration[]): Promise<string[]> {
  return database.db.connection().execute(async (conn) => {
    if (database.dialect === "postgres") {
      await sql`begin`.execute(conn);
      await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_CLASS)}, hashtext(coalesce(current_schema(), '')))`.execute(conn);
    } else {
      await sql`begin immediate`.execute(conn);
    }
    try {
      await conn.schema
        .createTable(MIGRATIONS_TABLE)
        .ifNotExists()
        .addColumn("name", "text", (c) => c.primaryKey())
        .addColumn("applied_at", "text", (c) => c.notNull())
        .execute();
      const rows = await conn.selectFrom(MIGRATIONS_TABLE).select(["name", "applied_at"]).execute();
      const done = new Set(rows.map((row) => row.name));
      // applied_at orders the history (`appliedMigrations`), so every new entry is stamped after the latest one,
      // even when two runs fall in the same millisecond.
      let last = rows.reduce((max, row) => Math.max(max, Date.parse(row.applied_at) || 0), 0);
      const stamp = () => {
        last = Math.max(Date.now(), last + 1);
        return new Date(last).toISOString();
      };
      const applied: string[] = [];
      for (const migration of migrations) {
        if (done.has(migration.name)) continue;
        try {
          await migration.up(conn as unknown as Kysely<unknown>);
        } catch (cause) {
          throw new AntlerError(
            ErrorCodes.STORAGE_MIGRATION_FAILED,
            `database migration ${migration.name} failed: ${describeCause(cause)}`,
            {
              where: `${MIGRATIONS_TABLE}:${migration.name}`,
              hint: "Nothing from this run was applied (it is one transaction). Fix the migration or the database, then start again.",
              cause,
            },
          );
        }
        await conn.insertInto(MIGRATIONS_TABLE).values({ name: migration.name, applied_at: stamp() }).execute();
        applied.push(migration.name);
      }
      await sql`commit`.execute(conn);
      return applied;
    } catch (error) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw error;
    }
  });
}

async function allRecorded(database: AntlerDatabase, names: ReadonlySet<string>): Promise<boolean> {
  try {
    const rows = await database.db
      .selectFrom(MIGRATIONS_TABLE)
      .select("name")
      .where("name", "in", [...names])
      .execute();
    return rows.length === names.size;
  } catch {
    // No migrations table yet (a new database): the locked path creates it.
    return false;
  }
}

/** Names already recorded, oldest first. */
export async function appliedMigrations(database: AntlerDatabase): Promise<string[]> {
  const rows = await database.db
    .selectFrom(MIGRATIONS_TABLE)
    .select(["name", "applied_at"])
    .orderBy("applied_at")
    .orderBy("name")
    .execute();
  return rows.map((row) => row.name);
}
