import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { sqliteDriver } from "../src/driver.js";
import { openSqliteDatabase, withStatementCache } from "../src/sqlite.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function counted(sqlite: Database.Database): { prepared: () => number } {
  let n = 0;
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((sql: string) => {
    n++;
    return prepare(sql);
  }) as typeof sqlite.prepare;
  return { prepared: () => n };
}

describe("withStatementCache", () => {
  it("prepares a query's SQL once and reuses the statement with new parameters", () => {
    const sqlite = new (sqliteDriver())(":memory:");
    sqlite.exec("create table t (k text primary key, v int)");
    sqlite.exec("insert into t values ('a', 1), ('b', 2)");
    const count = counted(sqlite);
    const db = withStatementCache(sqlite);
    const read = (k: string) => db.prepare("select v from t where k = ?").all([k]);
    expect(read("a")).toEqual([{ v: 1 }]);
    expect(read("b")).toEqual([{ v: 2 }]);
    expect(count.prepared()).toBe(1);
    db.close();
  });

  it("gives a statement still being iterated a fresh twin instead of failing as busy", () => {
    const sqlite = new (sqliteDriver())(":memory:");
    sqlite.exec("create table t (k int)");
    sqlite.exec("insert into t values (1), (2), (3)");
    const db = withStatementCache(sqlite);
    const sql = "select k from t order by k";
    const outer = db.prepare(sql).iterate([]);
    const seen: unknown[] = [];
    for (const row of outer) {
      seen.push(row);
      expect(db.prepare(sql).all([])).toHaveLength(3);
    }
    expect(seen).toHaveLength(3);
    db.close();
  });

  it("keeps at most `size` statements, dropping the least recently used", () => {
    const sqlite = new (sqliteDriver())(":memory:");
    const count = counted(sqlite);
    const db = withStatementCache(sqlite, 2);
    for (const sql of ["select 1", "select 2", "select 1", "select 3", "select 1", "select 2"]) db.prepare(sql).all([]);
    // select 1, select 2, (1 hit), select 3 drops 2, (1 hit), select 2 again.
    expect(count.prepared()).toBe(4);
    db.close();
  });

  it("serves Kysely's queries on an Antler database, writes included, and sees a schema change", async () => {
    dir = mkdtempSync(join(tmpdir(), "antler-sqlite-"));
    const database = openSqliteDatabase(join(dir, "antler.sqlite"));
    const { db } = database as unknown as { db: import("kysely").Kysely<Record<string, { k: string; v: number }>> };
    await db.schema
      .createTable("t")
      .addColumn("k", "text", (c) => c.primaryKey())
      .addColumn("v", "integer")
      .execute();
    const read = () => db.selectFrom("t").select("v").where("k", "=", "a").executeTakeFirst();
    await db.insertInto("t").values({ k: "a", v: 1 }).execute();
    expect(await read()).toEqual({ v: 1 });
    await db.updateTable("t").set({ v: 2 }).where("k", "=", "a").execute();
    expect(await read()).toEqual({ v: 2 });
    await db.schema.dropTable("t").execute();
    await db.schema.createTable("t").addColumn("k", "text").addColumn("v", "integer").execute();
    await db.insertInto("t").values({ k: "a", v: 3 }).execute();
    expect(await read()).toEqual({ v: 3 });
    await database.close();
  });
});
