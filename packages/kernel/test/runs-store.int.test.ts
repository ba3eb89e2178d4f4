import { afterEach, describe, expect, it } from "vitest";
import {
  type AntlerDatabase,
  createDatabase,
  createRunStore,
  type RunStore,
  runMigrations,
  runRecordMigrations,
} from "../src/storage/index.js";
import { describeWithPostgres, usePostgresSchema } from "../src/testing/services.js";
import { tempDir } from "./fixtures.js";

function steppingClock(start = Date.UTC(2025, 0, 1)): () => Date {
  let t = start;
  return () => {
    t += 1000;
    return new Date(t);
  };
}

const opened: AntlerDatabase[] = [];
afterEach(async () => {
  for (const d of opened.splice(0)) await d.close();
});

function runStoreContract(open: () => Promise<AntlerDatabase>) {
  async function store(): Promise<RunStore> {
    const database = await open();
    opened.push(database);
    expect(await runMigrations(database, runRecordMigrations)).toEqual(["runs/001-create"]);
    // Idempotent: a second open applies nothing.
    expect(await runMigrations(database, runRecordMigrations)).toEqual([]);
    return createRunStore(database, { now: steppingClock() });
  }

  it("stores the trace id and the kwargs with secrets redacted, and records the first outcome only", async () => {
    const runs = await store();
    const created = await runs.create({
      runId: "r1",
      threadId: "t1",
      userId: "alice",
      traceId: "trace-1",
      model: "m",
      kwargs: {
        input: "hi",
        context: { api_key: "sk-abcdefghijklmnopqrstuvwx", plan_mode: true },
        metadata: { url: "postgres://u:pw@h/db" },
      },
    });
    expect(created).toMatchObject({ status: "running", trace_id: "trace-1", error: null });
    expect(created.kwargs).toEqual({
      input: "hi",
      context: { api_key: "[REDACTED]", plan_mode: true },
      metadata: { url: "postgres://u:[REDACTED]@h/db" },
    });
    await runs.finish("r1", "error", "failed with Bearer abcdefghijklmnop");
    await runs.finish("r1", "success");
    const stored = await runs.get("alice", "r1");
    expect(stored).toMatchObject({ status: "error", error: "failed with Bearer [REDACTED]" });
    expect((stored?.updated_at ?? "") > (stored?.created_at ?? "")).toBe(true);
  });

  it("scopes reads by user: another user's run is missing, and lists are per thread, newest first", async () => {
    const runs = await store();
    for (const [runId, threadId, userId] of [
      ["a", "t", "alice"],
      ["b", "t", "alice"],
      ["c", "other", "alice"],
      ["d", "t", "bob"],
    ] as const) {
      await runs.create({ runId, threadId, userId, traceId: `tr-${runId}`, model: "m", kwargs: {} });
    }
    expect(await runs.get("bob", "a")).toBeNull();
    expect((await runs.list("alice", "t")).map((r) => r.run_id)).toEqual(["b", "a"]);
    expect((await runs.list("alice", "t", { limit: 1, offset: 1 })).map((r) => r.run_id)).toEqual(["a"]);
    expect((await runs.list("bob", "t")).map((r) => r.run_id)).toEqual(["d"]);
    expect(await runs.deleteThread("alice", "t")).toBe(2);
    expect(await runs.list("alice", "t")).toEqual([]);
    expect((await runs.list("bob", "t")).map((r) => r.run_id)).toEqual(["d"]);
  });
}

describe("run records on SQLite", () => {
  runStoreContract(() => createDatabase({ backend: "sqlite" }, { baseDir: tempDir() }));
});

describeWithPostgres("run records on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_runs" });
  runStoreContract(() => createDatabase({ backend: "postgres", postgres_url: url }, { baseDir: tempDir(), schema: schema.name }));
});
