import type { AntlerDatabase, Migration } from "@antler/kernel";
import type { Kysely, sql as SqlTag } from "kysely";

/** `aio_teardown_leases`: who may tear down which sandbox right now, across gateway instances. */
export type TeardownLeasesTable = {
  sandbox_id: string;
  holder: string;
  /** ISO-8601 UTC; compares as text on SQLite and PostgreSQL alike. */
  expires_at: string;
  acquired_at: string;
};

type Tables = { aio_teardown_leases: TeardownLeasesTable };

export const teardownLeaseMigrations: readonly Migration[] = [
  {
    name: "sandbox-aio/001-teardown-leases",
    async up(db) {
      await db.schema
        .createTable("aio_teardown_leases")
        .ifNotExists()
        .addColumn("sandbox_id", "text", (c) => c.primaryKey())
        .addColumn("holder", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addColumn("acquired_at", "text", (c) => c.notNull())
        .execute();
    },
  },
];

/**
 * The cross-instance teardown lease, in the kernel's SQL store: before replacing a sandbox it found, an instance
 * takes the sandbox's row; a second instance racing for the same sandbox finds the row held and leaves the
 * sandbox alone. The row outlives a successful teardown until it expires, so an instance that raced and lost
 * cannot take it a moment later and tear down the replacement; its holder may take it again (a retried sweep).
 * An expired row (its holder crashed mid-teardown) can be taken over.
 */
export class TeardownLeases {
  private constructor(
    private readonly database: AntlerDatabase,
    private readonly sql: typeof SqlTag,
  ) {}

  /** kysely's `sql` loads here, with the database, not with the plugin entry. */
  static async open(open: (migrations: readonly Migration[]) => Promise<AntlerDatabase>): Promise<TeardownLeases> {
    const database = await open(teardownLeaseMigrations);
    return new TeardownLeases(database, (await import("kysely")).sql);
  }

  private get db(): Kysely<Tables> {
    return this.database.db.withTables<Tables>() as unknown as Kysely<Tables>;
  }

  /** True when `holder` now holds the lease of `sandboxId` until `ttlMs` from now. One statement, so two callers never both win. */
  async tryAcquire(sandboxId: string, holder: string, ttlMs: number): Promise<boolean> {
    const now = new Date();
    const expires = new Date(now.getTime() + ttlMs).toISOString();
    const result = await this.db
      .insertInto("aio_teardown_leases")
      .values({ sandbox_id: sandboxId, holder, expires_at: expires, acquired_at: now.toISOString() })
      .onConflict((oc) =>
        oc
          .column("sandbox_id")
          .doUpdateSet({ holder, expires_at: expires, acquired_at: now.toISOString() })
          .where(this.sql<boolean>`aio_teardown_leases.expires_at < ${now.toISOString()} or aio_teardown_leases.holder = ${holder}`),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async release(sandboxId: string, holder: string): Promise<void> {
    await this.db.deleteFrom("aio_teardown_leases").where("sandbox_id", "=", sandboxId).where("holder", "=", holder).execute();
  }

  close(): Promise<void> {
    return this.database.close();
  }
}
