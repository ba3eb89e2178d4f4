import type { AntlerDatabase, Migration } from "./contract.js";

/**
 * Applies, in order, every migration not yet recorded in `antler_migrations`, once across processes, and returns
 * the names it applied. `openDatabase({ migrations })` calls it at open; features may also call it later.
 */
export async function runMigrations(database: AntlerDatabase, migrations: readonly Migration[]): Promise<string[]> {
  return (await import("./migrations.js")).runMigrations(database, migrations);
}

/** Names already recorded, oldest first. */
export async function appliedMigrations(database: AntlerDatabase): Promise<string[]> {
  return (await import("./migrations.js")).appliedMigrations(database);
}
