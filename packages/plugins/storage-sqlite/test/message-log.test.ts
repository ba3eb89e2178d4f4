import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runMessageLogConformance } from "@antler/storage-kit/testing";
import type Database from "better-sqlite3";
import { afterAll } from "vitest";
import { SqliteMessageLog } from "../src/message-log.js";
import { openSqliteFile } from "../src/sqlite.js";

const dir = mkdtempSync(join(tmpdir(), "antler-sqlite-log-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runMessageLogConformance("SqliteMessageLog (file, two connections)", async () => {
  // One file for the whole suite: each test uses its own thread ids, and a second connection races the first.
  const file = join(dir, "checkpoints.sqlite");
  const handles: Database.Database[] = [];
  const open = () => {
    const db = openSqliteFile(file);
    handles.push(db);
    return new SqliteMessageLog(db);
  };
  return {
    log: open(),
    another: async () => open(),
    close: async () => {
      for (const db of handles) db.close();
    },
  };
});

runMessageLogConformance("SqliteMessageLog (:memory:)", async () => {
  const db = openSqliteFile(":memory:");
  return {
    log: new SqliteMessageLog(db),
    close: async () => {
      db.close();
    },
  };
});
