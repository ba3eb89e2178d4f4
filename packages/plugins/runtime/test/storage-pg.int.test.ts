import { type AntlerDatabase, appliedMigrations, type Migration, runMigrations } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import type { DeltaCheckpointSaver } from "@antler/storage-kit";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { sql } from "kysely";
import pg from "pg";
import { expect, it } from "vitest";
import { createThreadStore } from "../src/index.js";
import { readCheckpoint, writeCheckpoint } from "./fixtures/checkpoint-data.js";
import { tempDir } from "./fixtures.js";
import { createCheckpointer, createDatabase } from "./storage.js";

function steppingClock(start = Date.UTC(2025, 0, 1)): () => Date {
  let t = start;
  return () => {
    t += 1000;
    return new Date(t);
  };
}

async function tablesIn(url: string, schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
      [schema],
    );
    return rows.map((r) => r.table_name);
  } finally {
    await client.end();
  }
}

describeWithPostgres("storage on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_storage" });
  const open = () => createDatabase({ backend: "postgres", postgres_url: url }, { baseDir: tempDir(), schema: schema.name });

  async function withDatabase(fn: (db: AntlerDatabase) => Promise<void>): Promise<void> {
    const database = await open();
    try {
      await fn(database);
    } finally {
      await database.close();
    }
  }

  it("creates Antler's tables in the test's own schema", async () => {
    await withDatabase(async (database) => {
      expect(database.dialect).toBe("postgres");
      expect(database.location).not.toContain("@");
    });
    expect(await tablesIn(url, schema.name)).toEqual(["antler_migrations", "antler_threads"]);
  });

  it("thread registry: touch/get/list/delete with owner scoping and newest-first order", async () => {
    await withDatabase(async (database) => {
      const threads = createThreadStore(database, { now: steppingClock() });
      const created = await threads.touch("alice", "t1", { title: "first", metadata: { tags: ["a"] } });
      await threads.touch("alice", "t2");
      await threads.touch("alice", "t3");
      const bumped = await threads.touch("alice", "t1");
      expect(bumped.created_at).toBe(created.created_at);
      expect(bumped.updated_at > created.updated_at).toBe(true);
      expect(bumped.title).toBe("first");
      expect(bumped.metadata).toEqual({ tags: ["a"] });

      expect((await threads.list("alice")).map((t) => t.thread_id)).toEqual(["t1", "t3", "t2"]);
      expect((await threads.list("alice", { limit: 1, offset: 1 })).map((t) => t.thread_id)).toEqual(["t3"]);

      expect(await threads.get("bob", "t1")).toBeNull();
      expect(await threads.list("bob")).toEqual([]);
      expect(await threads.delete("bob", "t1")).toBe(false);
      expect(await threads.get("alice", "t1")).toEqual(bumped);

      expect(await threads.delete("alice", "t2")).toBe(true);
      expect((await threads.list("alice")).map((t) => t.thread_id)).toEqual(["t1", "t3"]);
    });
  });

  it("threads persist across database handles", async () => {
    await withDatabase((db) =>
      createThreadStore(db)
        .touch("alice", "kept")
        .then(() => undefined),
    );
    await withDatabase(async (db) => {
      expect((await createThreadStore(db).get("alice", "kept"))?.thread_id).toBe("kept");
    });
  });

  it("checkpointer: PostgresSaver round trip, read back through a second saver", async () => {
    const storage = { backend: "postgres" as const, postgres_url: url };
    const first = await createCheckpointer(storage, { baseDir: tempDir(), schema: schema.name });
    expect(first.kind).toBe("postgres");
    expect((first.saver as DeltaCheckpointSaver).inner).toBeInstanceOf(PostgresSaver);
    const id = await writeCheckpoint(first.saver, "thread-pg", "hello from postgres");
    await first.close();

    const second = await createCheckpointer(storage, { baseDir: tempDir(), schema: schema.name });
    try {
      expect(await readCheckpoint(second.saver, "thread-pg")).toEqual({ id, note: "hello from postgres" });
    } finally {
      await second.close();
    }
    expect(await tablesIn(url, schema.name)).toEqual(expect.arrayContaining(["checkpoints", "checkpoint_blobs", "checkpoint_writes"]));
  });

  it("checkpointer: two setups at once on a fresh schema both succeed", async () => {
    const storage = { backend: "postgres" as const, postgres_url: url };
    const savers = await Promise.all([1, 2].map(() => createCheckpointer(storage, { baseDir: tempDir(), schema: schema.name })));
    await Promise.all(savers.map((s) => s.close()));
  });

  it("migrations started concurrently from two database objects apply each migration exactly once", async () => {
    // Two handles opening at once on an empty schema both run the core migrations.
    const [a, b] = await Promise.all([open(), open()]);
    try {
      expect(await appliedMigrations(a)).toEqual(["threads/001-create"]);
      // A slow migration without IF NOT EXISTS: without the lock, the second runner would try to create the
      // table again and fail, or record the name twice (primary key violation).
      const slow: Migration = {
        name: "test/001-slow",
        async up(db) {
          await sql`select pg_sleep(0.3)`.execute(db);
          await db.schema.createTable("slow_table").addColumn("id", "integer").execute();
        },
      };
      const results = await Promise.all([runMigrations(a, [slow]), runMigrations(b, [slow])]);
      expect(results.flat()).toEqual(["test/001-slow"]);
      expect(await appliedMigrations(b)).toEqual(["threads/001-create", "test/001-slow"]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
