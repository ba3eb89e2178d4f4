import { type AntlerTables, createKernel, type Kernel } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { type Kysely, sql } from "kysely";
import type pg from "pg";
import { afterEach, expect, it } from "vitest";

const kernels: Kernel[] = [];
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.close();
});

async function bootKernel(storage: Record<string, unknown>): Promise<Kernel> {
  const kernel = await createKernel({ config: { storage }, env: {}, discover: false });
  kernels.push(kernel);
  return kernel;
}

/** Checks out a connection of the handle's pool and keeps it until `release` resolves. */
function holdConnection(db: Kysely<AntlerTables>, release: Promise<void>) {
  let held: () => void = () => {};
  const acquired = new Promise<void>((resolve) => {
    held = resolve;
  });
  const done = db.connection().execute(async () => {
    held();
    await release;
  });
  return { acquired, done };
}

describeWithPostgres("storage.postgres.pool", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_pg_pool" });

  it("sizes the database pool: with its `max` connections held, the next statement fails after acquire_timeout_ms", async () => {
    const kernel = await bootKernel({
      backend: "postgres",
      postgres_url: url,
      postgres_schema: schema.name,
      postgres: { pool: { max: 3, acquire_timeout_ms: 300 } },
    });
    const database = await kernel.openDatabase();
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holders = Array.from({ length: 3 }, () => holdConnection(database.db, released));
    await Promise.all(holders.map((h) => h.acquired));
    await expect(sql`select 1`.execute(database.db)).rejects.toThrow(/timeout exceeded when trying to connect/);
    release();
    await Promise.all(holders.map((h) => h.done));
    // The pool is whole again once they are back.
    expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
    await database.close();
  });

  it("keeps upkeep connections of its own: they answer while every connection of `db` is held", async () => {
    const kernel = await bootKernel({
      backend: "postgres",
      postgres_url: url,
      postgres_schema: schema.name,
      postgres: { pool: { max: 2, acquire_timeout_ms: 300 } },
    });
    const database = await kernel.openDatabase();
    const upkeep = database.upkeep;
    if (!upkeep) throw new Error("the postgres handle has no upkeep lane");
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holders = Array.from({ length: 2 }, () => holdConnection(database.db, released));
    await Promise.all(holders.map((h) => h.acquired));
    await expect(sql`select 1`.execute(database.db)).rejects.toThrow(/timeout exceeded when trying to connect/);
    // Same database and schema: it sees the tables the handle's search path points at.
    const rows = await sql<{ schema: string }>`select current_schema() as schema`.execute(upkeep);
    expect(rows.rows).toEqual([{ schema: schema.name }]);
    release();
    await Promise.all(holders.map((h) => h.done));
    await database.close();
  });

  it("sizes the checkpointer's pool from the same keys", async () => {
    const kernel = await bootKernel({
      backend: "postgres",
      postgres_url: url,
      postgres_schema: schema.name,
      postgres: { pool: { max: 4, acquire_timeout_ms: 1234 } },
    });
    const checkpointer = await kernel.openCheckpointer();
    // PostgresSaver keeps its pool private (behind the delta wrapper); its options are what this test pins.
    const pool = (checkpointer.saver as unknown as { inner: { pool: pg.Pool } }).inner.pool;
    expect(pool.options).toMatchObject({ max: 4, connectionTimeoutMillis: 1234 });
    await checkpointer.close();
  });
});
