import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type AntlerDatabase,
  type AntlerError,
  appliedMigrations,
  ErrorCodes,
  isAntlerError,
  type Migration,
  runMigrations,
  threadPaths,
} from "@antler/kernel";
import { sqliteDriver } from "@antler/plugin-storage-sqlite";
import type { DeltaCheckpointSaver } from "@antler/storage-kit";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { sql } from "kysely";
import { describe, expect, it, vi } from "vitest";
import { RuntimeErrorCodes } from "../src/errors.js";
import { createThreadStore, listUploads, mimeTypeFor, readArtifact, sanitizeUploadName, saveUpload } from "../src/index.js";
import { readCheckpoint, writeCheckpoint } from "./fixtures/checkpoint-data.js";
import { tempDir } from "./fixtures.js";
import { createCheckpointer, createDatabase } from "./storage.js";

async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

/** A clock that moves one second per call, so ordering by updated_at is deterministic. */
function steppingClock(start = Date.UTC(2025, 0, 1)): () => Date {
  let t = start;
  return () => {
    t += 1000;
    return new Date(t);
  };
}

async function withDatabase<T>(database: AntlerDatabase, fn: (db: AntlerDatabase) => Promise<T>): Promise<T> {
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}

describe("createCheckpointer", () => {
  it("sqlite: a checkpoint written by one saver is read back by a new saver after the first is closed", async () => {
    const baseDir = tempDir();
    const first = await createCheckpointer({ backend: "sqlite" }, { baseDir });
    expect(first.kind).toBe("sqlite");
    expect((first.saver as DeltaCheckpointSaver).inner).toBeInstanceOf(SqliteSaver);
    const id = await writeCheckpoint(first.saver, "thread-1", "from the first process");
    await first.close();

    const second = await createCheckpointer({ backend: "sqlite" }, { baseDir });
    try {
      expect(await readCheckpoint(second.saver, "thread-1")).toEqual({ id, note: "from the first process" });
      expect(await readCheckpoint(second.saver, "thread-2")).toBeUndefined();
    } finally {
      await second.close();
    }
  });

  it("sqlite: writes <base_dir>/<sqlite_dir>/checkpoints.sqlite in WAL mode", async () => {
    const baseDir = tempDir();
    const cp = await createCheckpointer({ backend: "sqlite", sqlite_dir: "state/db" }, { baseDir });
    await writeCheckpoint(cp.saver, "t", "x");
    await cp.close();
    const file = join(baseDir, "state", "db", "checkpoints.sqlite");
    expect(cp.location).toBe(file);
    const raw = new (sqliteDriver())(file, { readonly: true });
    try {
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      raw.close();
    }
  });

  it("storage.checkpointer overrides storage.backend", async () => {
    const baseDir = tempDir();
    const cp = await createCheckpointer({ backend: "postgres", checkpointer: "memory" }, { baseDir });
    expect(cp.kind).toBe("memory");
    expect(cp.location).toBe(":memory:");
    await cp.close();
    expect(existsSync(join(baseDir, "data"))).toBe(false);
  });

  it("postgres without storage.postgres_url is a coded error naming the key", async () => {
    const error = await caught(() => createCheckpointer({ backend: "postgres" }, { baseDir: tempDir() }));
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((error as Error).message).toContain("storage.postgres_url");
  });

  it("an unreachable PostgreSQL gives host and port, never the password", async () => {
    // Port 1 on loopback refuses at once: a connection failure without any network.
    const url = "postgres://alice:hunter2-secret@127.0.0.1:1/antler";
    const error = await caught(() => createCheckpointer({ backend: "postgres", postgres_url: url }, { baseDir: tempDir() }));
    expect(isAntlerError(error, ErrorCodes.STORAGE_UNAVAILABLE)).toBe(true);
    const text = JSON.stringify((error as { toJSON(): unknown }).toJSON());
    expect(text).toContain("127.0.0.1:1/antler");
    expect(text).toContain("storage.postgres_url");
    expect(text).not.toContain("hunter2");
  });

  it("createDatabase on an unreachable PostgreSQL names host and port (AggregateError from localhost included), never the password", async () => {
    const url = "postgres://alice:hunter2-secret@localhost:1/antler";
    const error = await caught(() => createDatabase({ backend: "postgres", postgres_url: url }, { baseDir: tempDir() }));
    expect(isAntlerError(error, ErrorCodes.STORAGE_UNAVAILABLE)).toBe(true);
    expect((error as Error).message).toMatch(/localhost:1\/antler: .*ECONNREFUSED/);
    expect(JSON.stringify((error as { toJSON(): unknown }).toJSON())).not.toContain("hunter2");
  });

  it("a storage backend no plugin registered is refused with its config path and the registered ones", async () => {
    const error = await caught(() => createCheckpointer({ backend: "mysql" }, { baseDir: tempDir() }));
    expect(isAntlerError(error, ErrorCodes.STORAGE_BACKEND_NOT_FOUND)).toBe(true);
    expect((error as AntlerError).where).toBe("storage.backend");
    expect((error as Error).message).toContain('"mysql"');
    expect((error as AntlerError).hint).toContain("memory, sqlite, postgres");
  });
});

describe("thread registry (SQLite)", () => {
  it("touch creates a thread, and touching again bumps updated_at but keeps created_at and the title", async () => {
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir: tempDir() }), async (database) => {
      const threads = createThreadStore(database, { now: steppingClock() });
      const created = await threads.touch("alice", "t1", { title: "Trip plan", metadata: { source: "api" } });
      expect(created).toMatchObject({ user_id: "alice", thread_id: "t1", title: "Trip plan", metadata: { source: "api" } });
      const again = await threads.touch("alice", "t1");
      expect(again.created_at).toBe(created.created_at);
      expect(again.updated_at > created.updated_at).toBe(true);
      expect(again.title).toBe("Trip plan");
      expect(again.metadata).toEqual({ source: "api" });
      const retitled = await threads.touch("alice", "t1", { title: "Renamed", metadata: { n: 2 } });
      expect(retitled.title).toBe("Renamed");
      expect(retitled.metadata).toEqual({ n: 2 });
      expect(await threads.get("alice", "t1")).toEqual(retitled);
    });
  });

  it("another user's thread is invisible: get is null, list is empty, delete does nothing", async () => {
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir: tempDir() }), async (database) => {
      const threads = createThreadStore(database);
      await threads.touch("alice", "secret-thread", { title: "alice only" });
      expect(await threads.get("bob", "secret-thread")).toBeNull();
      expect(await threads.list("bob")).toEqual([]);
      expect(await threads.delete("bob", "secret-thread")).toBe(false);
      expect(isAntlerError(await caught(() => threads.require("bob", "secret-thread")), RuntimeErrorCodes.THREAD_NOT_FOUND)).toBe(true);
      // Bob touching the same thread id makes his own thread; alice's is untouched.
      await threads.touch("bob", "secret-thread", { title: "bob's" });
      expect((await threads.get("alice", "secret-thread"))?.title).toBe("alice only");
      expect((await threads.list("bob")).map((t) => t.title)).toEqual(["bob's"]);
    });
  });

  it("list returns the user's threads most recently updated first, with limit and offset", async () => {
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir: tempDir() }), async (database) => {
      const threads = createThreadStore(database, { now: steppingClock() });
      for (const id of ["t1", "t2", "t3"]) await threads.touch("alice", id);
      await threads.touch("alice", "t1");
      expect((await threads.list("alice")).map((t) => t.thread_id)).toEqual(["t1", "t3", "t2"]);
      expect((await threads.list("alice", { limit: 2 })).map((t) => t.thread_id)).toEqual(["t1", "t3"]);
      expect((await threads.list("alice", { limit: 2, offset: 2 })).map((t) => t.thread_id)).toEqual(["t2"]);
    });
  });

  it("delete removes only that thread", async () => {
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir: tempDir() }), async (database) => {
      const threads = createThreadStore(database);
      await threads.touch("alice", "keep");
      await threads.touch("alice", "drop");
      expect(await threads.delete("alice", "drop")).toBe(true);
      expect(await threads.delete("alice", "drop")).toBe(false);
      expect((await threads.list("alice")).map((t) => t.thread_id)).toEqual(["keep"]);
    });
  });

  it("refuses ids that could not be folder names", async () => {
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir: tempDir() }), async (database) => {
      const threads = createThreadStore(database);
      expect(isAntlerError(await caught(() => threads.touch("alice", "../etc")), ErrorCodes.PATH_UNSAFE)).toBe(true);
      expect(isAntlerError(await caught(() => threads.touch("a/b", "t")), ErrorCodes.PATH_UNSAFE)).toBe(true);
    });
  });

  it("threads survive closing and reopening the database file", async () => {
    const baseDir = tempDir();
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir }), (db) => createThreadStore(db).touch("alice", "t1"));
    expect(existsSync(join(baseDir, "data", "antler.sqlite"))).toBe(true);
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir }), async (db) => {
      expect((await createThreadStore(db).get("alice", "t1"))?.thread_id).toBe("t1");
    });
  });

  it("the memory backend keeps threads in an in-memory database and writes no files", async () => {
    const baseDir = tempDir();
    await withDatabase(await createDatabase({ backend: "memory" }, { baseDir }), async (database) => {
      await createThreadStore(database).touch("alice", "t1");
      expect((await createThreadStore(database).list("alice")).length).toBe(1);
    });
    expect(existsSync(join(baseDir, "data"))).toBe(false);
  });
});

describe("migrations", () => {
  const createNotes: Migration = {
    name: "notes/001-create",
    async up(db) {
      await db.schema
        .createTable("notes")
        .addColumn("id", "text", (c) => c.primaryKey())
        .execute();
    },
  };

  it("running the same migrations again applies nothing and fails nothing", async () => {
    const baseDir = tempDir();
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir }), async (database) => {
      expect(await appliedMigrations(database)).toEqual(["threads/001-create"]);
      expect(await runMigrations(database, [createNotes])).toEqual(["notes/001-create"]);
      expect(await runMigrations(database, [createNotes])).toEqual([]);
    });
    // A restart runs the core list again; the feature's own migration stays recorded.
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir, migrations: [createNotes] }), async (database) => {
      expect(await appliedMigrations(database)).toEqual(["threads/001-create", "notes/001-create"]);
    });
  });

  it("a start against an up-to-date database takes no write lock, so a busy writer in another process never holds it up", async () => {
    const baseDir = tempDir();
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir, migrations: [createNotes] }), async () => {});
    // Another process is in the middle of a write transaction on the same file.
    const writer = new (sqliteDriver())(join(baseDir, "data", "antler.sqlite"));
    writer.exec("BEGIN IMMEDIATE");
    writer.prepare("insert into notes (id) values ('held')").run();
    try {
      await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir, migrations: [createNotes] }), async (database) => {
        expect(await runMigrations(database, [createNotes])).toEqual([]);
      });
    } finally {
      writer.exec("COMMIT");
      writer.close();
    }
  }, 20_000);

  it("two stores of one process opening a new SQLite file at once both migrate, without one stalling the other", async () => {
    const baseDir = tempDir();
    // A migration that yields to the event loop while it holds the write lock.
    const slow: Migration = {
      name: "notes/001-slow",
      async up(db) {
        await db.schema
          .createTable("slow_notes")
          .addColumn("id", "text", (c) => c.primaryKey())
          .execute();
        await new Promise((resolve) => setTimeout(resolve, 50));
      },
    };
    const opened = await Promise.all([
      createDatabase({ backend: "sqlite" }, { baseDir, migrations: [slow] }),
      createDatabase({ backend: "sqlite" }, { baseDir, migrations: [slow] }),
    ]);
    for (const database of opened) {
      expect(await appliedMigrations(database)).toContain("notes/001-slow");
      await database.close();
    }
  }, 20_000);

  it("keeps the history in the order applied even when runs fall in the same millisecond", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-12-01T00:00:00.000Z"));
    try {
      await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir: tempDir() }), async (database) => {
        // "notes" sorts before "threads": only the stamps can keep the order.
        await runMigrations(database, [createNotes]);
        expect(await appliedMigrations(database)).toEqual(["threads/001-create", "notes/001-create"]);
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it("a failing migration rolls back the whole run and is not recorded", async () => {
    await withDatabase(await createDatabase({ backend: "sqlite" }, { baseDir: tempDir() }), async (database) => {
      const broken: Migration = {
        name: "notes/002-broken",
        async up(db) {
          await sql`select * from no_such_table`.execute(db);
        },
      };
      const error = await caught(() => runMigrations(database, [createNotes, broken]));
      expect(isAntlerError(error, ErrorCodes.STORAGE_MIGRATION_FAILED)).toBe(true);
      expect((error as Error).message).toContain("notes/002-broken");
      expect(await appliedMigrations(database)).toEqual(["threads/001-create"]);
      // notes/001 ran inside the same transaction, so its table is gone too.
      expect(await runMigrations(database, [createNotes])).toEqual(["notes/001-create"]);
    });
  });

  it("refuses a list that names one migration twice", async () => {
    await withDatabase(await createDatabase({ backend: "memory" }, { baseDir: tempDir() }), async (database) => {
      const error = await caught(() => runMigrations(database, [createNotes, createNotes]));
      expect(isAntlerError(error, ErrorCodes.STORAGE_MIGRATION_FAILED)).toBe(true);
    });
  });
});

describe("uploads", () => {
  const setup = () => {
    const root = tempDir();
    const paths = threadPaths(join(root, "base"), "alice", "t1");
    const src = join(root, "src");
    mkdirSync(src, { recursive: true });
    return { paths, src };
  };

  it("copies a file into the thread's uploads folder and describes it", async () => {
    const { paths, src } = setup();
    writeFileSync(join(src, "notes.md"), "# hi\n");
    const record = await saveUpload(paths, join(src, "notes.md"));
    expect(record).toEqual({ filename: "notes.md", virtual_path: "/mnt/user-data/uploads/notes.md", size: 5, mime_type: "text/markdown" });
    expect(existsSync(join(paths.uploads, "notes.md"))).toBe(true);
    expect(await listUploads(paths)).toEqual([record]);
  });

  it("rejects a directory before copying anything, naming the path", async () => {
    const { paths, src } = setup();
    const error = await caught(() => saveUpload(paths, src));
    expect(isAntlerError(error, RuntimeErrorCodes.UPLOAD_INVALID)).toBe(true);
    expect((error as Error).message).toContain(src);
    expect(await listUploads(paths)).toEqual([]);
  });

  it("rejects a missing file", async () => {
    const { paths, src } = setup();
    expect(isAntlerError(await caught(() => saveUpload(paths, join(src, "nope.txt"))), RuntimeErrorCodes.UPLOAD_INVALID)).toBe(true);
  });

  it("rejects a file over the size cap and leaves nothing behind", async () => {
    const { paths, src } = setup();
    writeFileSync(join(src, "big.bin"), Buffer.alloc(11));
    const error = await caught(() => saveUpload(paths, join(src, "big.bin"), { maxBytes: 10 }));
    expect(isAntlerError(error, RuntimeErrorCodes.UPLOAD_INVALID)).toBe(true);
    expect((error as { details: Record<string, unknown> }).details).toMatchObject({ size: 11, max_bytes: 10 });
    expect(await listUploads(paths)).toEqual([]);
    writeFileSync(join(src, "ok.bin"), Buffer.alloc(10));
    expect((await saveUpload(paths, join(src, "ok.bin"), { maxBytes: 10 })).size).toBe(10);
  });

  it("rejects a new upload when the thread already holds maxFiles", async () => {
    const { paths, src } = setup();
    writeFileSync(join(src, "a.txt"), "a");
    await saveUpload(paths, join(src, "a.txt"), { maxFiles: 1 });
    expect(
      isAntlerError(await caught(() => saveUpload(paths, join(src, "a.txt"), { maxFiles: 1 })), RuntimeErrorCodes.UPLOAD_INVALID),
    ).toBe(true);
  });

  it("never overwrites: a taken name gets -1, -2 before the extension", async () => {
    const { paths, src } = setup();
    writeFileSync(join(src, "report.csv"), "a,b\n");
    const names = [];
    for (let i = 0; i < 3; i++) names.push((await saveUpload(paths, join(src, "report.csv"))).filename);
    expect(names).toEqual(["report.csv", "report-1.csv", "report-2.csv"]);
    expect((await listUploads(paths)).map((u) => u.filename)).toEqual(["report-1.csv", "report-2.csv", "report.csv"]);
  });

  it("sanitises names: no path parts, control characters or leading dots; extension kept", async () => {
    expect(sanitizeUploadName("../../etc/passwd")).toBe("passwd");
    expect(sanitizeUploadName("C:\\Users\\me\\plan.pdf")).toBe("plan.pdf");
    expect(sanitizeUploadName("..\u0000hidden\u0007.txt")).toBe("hidden.txt");
    expect(sanitizeUploadName(".bashrc")).toBe("bashrc");
    expect(sanitizeUploadName("...")).toBe("upload");
    const long = `${"x".repeat(300)}.json`;
    expect(sanitizeUploadName(long).endsWith(".json")).toBe(true);
    expect(Buffer.byteLength(sanitizeUploadName(long))).toBeLessThanOrEqual(200);

    const { paths, src } = setup();
    writeFileSync(join(src, ".env"), "A=1");
    const record = await saveUpload(paths, join(src, ".env"), { filename: "../.env" });
    expect(record.filename).toBe("env");
    expect(existsSync(join(paths.uploads, "env"))).toBe(true);
  });
});

describe("artifacts", () => {
  it("reads a file under outputs with its MIME type", async () => {
    const paths = threadPaths(tempDir(), "alice", "t1");
    mkdirSync(join(paths.outputs, "charts"), { recursive: true });
    writeFileSync(join(paths.outputs, "charts", "plot.PNG"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const artifact = await readArtifact(paths, "/mnt/user-data/outputs/charts/plot.PNG");
    expect(artifact).toEqual({ bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47]), mimeType: "image/png", size: 4 });
  });

  it("maps the known extensions and defaults to application/octet-stream", () => {
    expect(mimeTypeFor("a.md")).toBe("text/markdown");
    expect(mimeTypeFor("a.json")).toBe("application/json");
    expect(mimeTypeFor("a.jpeg")).toBe("image/jpeg");
    expect(mimeTypeFor("a.svg")).toBe("image/svg+xml");
    expect(mimeTypeFor("a.pdf")).toBe("application/pdf");
    expect(mimeTypeFor("a.tar.gz")).toBe("application/octet-stream");
    expect(mimeTypeFor("Makefile")).toBe("application/octet-stream");
  });

  it("refuses paths outside /mnt/user-data/{outputs,workspace,uploads}, including escapes and symlinks", async () => {
    const root = tempDir();
    const paths = threadPaths(join(root, "base"), "alice", "t1");
    mkdirSync(paths.outputs, { recursive: true });
    writeFileSync(join(root, "secret.txt"), "secret");
    symlinkSync(join(root, "secret.txt"), join(paths.outputs, "link.txt"));
    for (const bad of [
      "/etc/passwd",
      "/mnt/user-data/outputs/../../../../secret.txt",
      "/mnt/user-data/outputs/link.txt",
      "outputs/x.txt",
    ]) {
      expect(isAntlerError(await caught(() => readArtifact(paths, bad)), ErrorCodes.PATH_UNSAFE), bad).toBe(true);
    }
  });

  it("a missing file or a folder is ARTIFACT_NOT_FOUND", async () => {
    const paths = threadPaths(tempDir(), "alice", "t1");
    mkdirSync(join(paths.workspace, "dir"), { recursive: true });
    expect(
      isAntlerError(await caught(() => readArtifact(paths, "/mnt/user-data/outputs/none.txt")), RuntimeErrorCodes.ARTIFACT_NOT_FOUND),
    ).toBe(true);
    expect(
      isAntlerError(await caught(() => readArtifact(paths, "/mnt/user-data/workspace/dir")), RuntimeErrorCodes.ARTIFACT_NOT_FOUND),
    ).toBe(true);
  });
});
