import { type AntlerDatabase, runMigrations } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createRunStore, type RunRecord, type RunStore, runRecordMigrations } from "../src/index.js";
import { forgetToolCall, startToolCall } from "../src/stores/run-takeover.js";
import { orphanedRunError, RUNS_TABLE, type RunsTable } from "../src/stores/runs.js";
import { tempDir } from "./fixtures.js";
import { createDatabase } from "./storage.js";

function steppingClock(start = Date.UTC(2025, 0, 1)): () => Date {
  let t = start;
  return () => {
    t += 1000;
    return new Date(t);
  };
}

/** A clock the test moves by hand; several stores share it, as instances share (roughly) one wall time. */
function manualClock(start = Date.UTC(2025, 0, 1)) {
  const clock = {
    t: start,
    now: () => new Date(clock.t),
    advance(ms: number) {
      clock.t += ms;
    },
  };
  return clock;
}

const opened: AntlerDatabase[] = [];
afterEach(async () => {
  for (const d of opened.splice(0)) await d.close();
});

/** `place()` picks a fresh database for one test and returns an opener: every call opens another handle on it. */
function runStoreContract(place: () => () => Promise<AntlerDatabase>) {
  async function store(): Promise<RunStore> {
    const database = await place()();
    opened.push(database);
    expect(await runMigrations(database, runRecordMigrations)).toEqual([
      "runs/001-create",
      "runs/002-leases",
      "runs/003-one-running-per-thread",
      "runs/004-pauses",
      "runs/005-cost",
      "runs/006-takeover",
      "runs/007-start-input",
    ]);
    // Idempotent: a second open applies nothing.
    expect(await runMigrations(database, runRecordMigrations)).toEqual([]);
    return createRunStore(database, { now: steppingClock() });
  }

  /** `count` stores on separate handles of one database (as separate instances would hold), all on `clock`. */
  async function instances(count: number, clock: { now: () => Date }): Promise<RunStore[]> {
    const open = place();
    const stores: RunStore[] = [];
    for (let i = 0; i < count; i++) {
      const database = await open();
      opened.push(database);
      await runMigrations(database, runRecordMigrations);
      stores.push(createRunStore(database, { now: clock.now }));
    }
    return stores;
  }

  // Each run on its own thread: a thread holds at most one running run.
  const run = (runId: string, owner?: { id: string; leaseMs: number }) => ({
    runId,
    threadId: `t-${runId}`,
    userId: "alice",
    traceId: `tr-${runId}`,
    model: "m",
    kwargs: {},
    ...(owner ? { owner } : {}),
  });

  it("keeps a run's cost and model attempts from its end, and sums a user's cost since a time", async () => {
    const runs = await store();
    for (const id of ["c1", "c2", "c3"]) await runs.create(run(id));
    await runs.create({ ...run("bob-1"), userId: "bob" });
    await runs.finish("c1", "success", null, { costUsd: 0.25, modelAttempts: [{ model: "a", attempt: 1, next: "fallback" }] });
    await runs.finish("c2", "error", "boom", { costUsd: 0.5 });
    await runs.finish("c3", "success", null, { costUsd: null });
    await runs.finish("bob-1", "success", null, { costUsd: 9 });
    expect(await runs.get("alice", "c1")).toMatchObject({ cost_usd: 0.25, model_attempts: [{ model: "a", attempt: 1, next: "fallback" }] });
    expect(await runs.get("alice", "c3")).toMatchObject({ cost_usd: null, model_attempts: [] });
    expect(await runs.costSince("alice", "2000-01-01T00:00:00.000Z")).toBeCloseTo(0.75, 10);
    expect(await runs.costSince("alice", "2999-01-01T00:00:00.000Z")).toBe(0);
    expect(await runs.costSince("carol", "2000-01-01T00:00:00.000Z")).toBe(0);
  });

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

  it("keeps the input and context as given apart from the redacted record, until the run ends, pauses or is cancelled queued", async () => {
    const runs = await store();
    const given = { input: "my password is Tr0ub4dor&3", context: { api_key: "sk-abcdefghijklmnopqrstuvwx", plan_mode: true } };
    const base = { threadId: "t1", userId: "alice", traceId: "trace-1", model: "m", kwargs: given };
    const running = await runs.create({ ...base, runId: "r1" });
    expect(JSON.stringify(running.kwargs)).not.toMatch(/Tr0ub4dor|sk-abc/);
    expect(await runs.startInput("r1")).toEqual(given);
    await runs.finish("r1", "success");
    expect(await runs.startInput("r1")).toBeNull();

    await runs.create({ ...base, runId: "r2", threadId: "t2" });
    const pause = { interrupt: { id: "i1", value: { kind: "approval" } }, context: {} };
    expect(await runs.pause("r2", pause, null)).toBe(true);
    expect(await runs.startInput("r2")).toBeNull();

    await runs.create({ ...base, runId: "r3", threadId: "t3", status: "pending" });
    expect(await runs.startInput("r3")).toEqual(given);
    expect(await runs.cancelQueued("r3")).toBe(true);
    expect(await runs.startInput("r3")).toBeNull();
    expect(await runs.startInput("missing")).toBeNull();
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
      // Ended before the next starts: a thread holds one running run at a time.
      await runs.finish(runId, "success");
    }
    expect(await runs.get("bob", "a")).toBeNull();
    expect((await runs.list("alice", "t")).map((r) => r.run_id)).toEqual(["b", "a"]);
    expect((await runs.list("alice", "t", { limit: 1, offset: 1 })).map((r) => r.run_id)).toEqual(["a"]);
    expect((await runs.list("bob", "t")).map((r) => r.run_id)).toEqual(["d"]);
    expect(await runs.deleteThread("alice", "t")).toBe(2);
    expect(await runs.list("alice", "t")).toEqual([]);
    expect((await runs.list("bob", "t")).map((r) => r.run_id)).toEqual(["d"]);
  });

  it("finishes each expired queued run exactly once under two concurrent sweepers, naming the expired lease", async () => {
    const clock = manualClock();
    const [owner, sweeperA, sweeperB] = (await instances(3, clock)) as [RunStore, RunStore, RunStore];
    const ids = Array.from({ length: 20 }, (_, i) => `orphan-${i}`);
    for (const id of ids) await owner.create({ ...run(id, { id: "dead-instance", leaseMs: 1000 }), status: "pending" });
    const leaseUntil = new Date(clock.t + 1000).toISOString();
    clock.advance(1001);
    const [a, b] = await Promise.all([sweeperA.sweepExpired(), sweeperB.sweepExpired()]);
    // Every run finished, none twice.
    expect([...a, ...b].sort()).toEqual([...ids].sort());
    const records = await Promise.all(ids.map(async (id) => (await sweeperA.get("alice", id)) as RunRecord));
    expect(new Set(records.map((r) => r.status))).toEqual(new Set(["error"]));
    for (const record of records) expect(record.error).toBe(orphanedRunError(leaseUntil));
    expect(orphanedRunError(leaseUntil)).toBe(`the process running this run stopped (lease expired at ${leaseUntil}); start the run again`);
    // Nothing left for a later sweep, and the first outcome stands against a late finish from the "dead" owner.
    expect(await sweeperB.sweepExpired()).toEqual([]);
    await owner.finish("orphan-0", "success");
    expect((await owner.get("alice", "orphan-0"))?.status).toBe("error");
  });

  it("takes over each expired running run exactly once under two concurrent instances, and fences the old owner out", async () => {
    const clock = manualClock();
    const [owner, a, b] = (await instances(3, clock)) as [RunStore, RunStore, RunStore];
    const ids = Array.from({ length: 20 }, (_, i) => `orphan-${i}`);
    for (const id of ids) await owner.create(run(id, { id: "dead-instance", leaseMs: 1000 }));
    // A sweep for errors leaves running orphans alone: they are to be continued, not failed.
    clock.advance(1001);
    expect(await a.sweepExpired()).toEqual([]);
    const options = { maxAttempts: 3, limit: 100 };
    const [byA, byB] = await Promise.all([
      a.takeOver({ id: "a", leaseMs: 1000 }, options),
      b.takeOver({ id: "b", leaseMs: 1000 }, options),
    ]);
    expect([...byA.claimed, ...byB.claimed].map((c) => c.runId).sort()).toEqual([...ids].sort());
    expect(new Set([...byA.claimed, ...byB.claimed].map((c) => c.attempt))).toEqual(new Set([2]));
    const record = (await a.get("alice", "orphan-0")) as RunRecord;
    expect(record).toMatchObject({ status: "running", attempt: 2 });
    // The stopped owner comes back: its end (fenced on its attempt) changes nothing; the new holder's does.
    const holder = byA.claimed.some((c) => c.runId === "orphan-0") ? "a" : "b";
    await owner.finish("orphan-0", "error", "late", {}, { ownerId: "dead-instance", attempt: 1 });
    expect((await a.get("alice", "orphan-0"))?.status).toBe("running");
    expect(await owner.renewLeases("dead-instance", ["orphan-0"], 1000)).toEqual({
      cancelRequested: [],
      ended: [{ run_id: "orphan-0", status: "taken_over" }],
    });
    await a.finish("orphan-0", "success", null, {}, { ownerId: holder, attempt: 2 });
    expect((await a.get("alice", "orphan-0"))?.status).toBe("success");
  });

  it("ends a run as ANTLER_ERR_RUN_ATTEMPTS_EXHAUSTED once its process stopped max_attempts times", async () => {
    const clock = manualClock();
    const [owner, taker] = (await instances(2, clock)) as [RunStore, RunStore];
    await owner.create(run("crashy", { id: "first", leaseMs: 1000 }));
    for (const attempt of [2, 3]) {
      clock.advance(1001);
      const round = await taker.takeOver({ id: `taker-${attempt}`, leaseMs: 1000 }, { maxAttempts: 3, limit: 10 });
      expect(round.claimed.map((c) => [c.runId, c.attempt])).toEqual([["crashy", attempt]]);
    }
    clock.advance(1001);
    const last = await taker.takeOver({ id: "taker-4", leaseMs: 1000 }, { maxAttempts: 3, limit: 10 });
    expect(last).toEqual({ claimed: [], exhausted: ["crashy"] });
    const record = (await taker.get("alice", "crashy")) as RunRecord;
    expect(record.status).toBe("error");
    expect(record.error).toMatch(/^ANTLER_ERR_RUN_ATTEMPTS_EXHAUSTED: the process running this run stopped 3 time\(s\)/);
    expect(record.error).toContain("runs.max_attempts is 3");
  });

  it("reads sweep lazily: get and list report an expired queued run as an error, and only once; a running one stays running", async () => {
    const clock = manualClock();
    const [owner, reader] = (await instances(2, clock)) as [RunStore, RunStore];
    await owner.create({ ...run("r1", { id: "dead-instance", leaseMs: 1000 }), status: "pending" });
    await owner.create(run("r2", { id: "dead-instance", leaseMs: 1000 }));
    expect((await reader.get("alice", "r1"))?.status).toBe("pending");
    clock.advance(1001);
    expect((await reader.get("alice", "r2"))?.status).toBe("running");
    expect((await reader.get("alice", "r1", { sweep: false }))?.status).toBe("pending");
    const [got, listed] = await Promise.all([reader.get("alice", "r1"), owner.list("alice", "t-r1")]);
    expect(got).toMatchObject({ status: "error", error: expect.stringContaining("the process running this run stopped") });
    expect(listed).toEqual([got]);
    expect(await reader.sweepExpired()).toEqual([]);
  });

  it("never sweeps a lease renewed in time, nor a run without a lease", async () => {
    const clock = manualClock();
    const [owner, sweeper] = (await instances(2, clock)) as [RunStore, RunStore];
    await owner.create(run("live", { id: "me", leaseMs: 1000 }));
    await owner.create(run("unleased"));
    for (let beat = 0; beat < 5; beat++) {
      clock.advance(900);
      expect(await owner.renewLeases("me", ["live"], 1000)).toEqual({ cancelRequested: [], ended: [] });
      expect(await sweeper.sweepExpired()).toEqual([]);
    }
    clock.advance(24 * 3600_000);
    const round = await sweeper.takeOver({ id: "sweeper", leaseMs: 1000 }, { maxAttempts: 3, limit: 10 });
    expect(round.claimed.map((c) => c.runId)).toEqual(["live"]);
    expect((await sweeper.get("alice", "unleased"))?.status).toBe("running");
  });

  it("a heartbeat renews only its own running runs and reports cancel requests and runs ended elsewhere", async () => {
    const clock = manualClock();
    const [owner, other] = (await instances(2, clock)) as [RunStore, RunStore];
    for (const id of ["keep", "stop", "swept"]) await owner.create(run(id, { id: "me", leaseMs: 1000 }));
    await other.create(run("theirs", { id: "them", leaseMs: 1000 }));
    expect(await other.requestCancel("stop")).toBe(true);
    expect(await other.requestCancel("stop")).toBe(true);
    await other.finish("swept", "error", "swept");
    expect(await owner.renewLeases("me", ["keep", "stop", "swept", "gone", "theirs"], 5000)).toEqual({
      cancelRequested: ["stop"],
      ended: expect.arrayContaining([
        { run_id: "swept", status: "error" },
        { run_id: "gone", status: "deleted" },
      ]),
    });
    clock.advance(1001);
    // "theirs" was not renewed by "me" (another owner's run), so it alone expired.
    expect(await other.sweepExpired({ as: "cancelled" })).toEqual(["theirs"]);
    expect(await other.requestCancel("theirs")).toBe(false);
  });

  it("of stores on separate handles starting a run on one thread at once, exactly one starts; the rest get THREAD_BUSY naming it", async () => {
    const clock = manualClock();
    const stores = await instances(4, clock);
    const attempts = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        (stores[i % stores.length] as RunStore).startExclusive({ ...run(`r${i}`, { id: `i${i % 4}`, leaseMs: 1000 }), threadId: "shared" }),
      ),
    );
    const started = attempts.filter((a): a is PromiseFulfilledResult<RunRecord> => a.status === "fulfilled");
    expect(started).toHaveLength(1);
    for (const attempt of attempts) {
      if (attempt.status === "fulfilled") continue;
      expect(attempt.reason).toMatchObject({
        code: "ANTLER_ERR_THREAD_BUSY",
        details: { thread_id: "shared", running_run_id: started[0]?.value.run_id },
      });
    }
  });

  it("a queued run is promoted only when the thread is free and every earlier queued run has gone first", async () => {
    const clock = manualClock();
    const [a, b] = (await instances(2, clock)) as [RunStore, RunStore];
    const holder = await a.startExclusive(run("holder", { id: "a", leaseMs: 1000 }));
    clock.advance(1);
    const first = await b.create({ ...run("first", { id: "b", leaseMs: 1000 }), threadId: holder.thread_id, status: "pending" });
    clock.advance(1);
    const second = await a.create({ ...run("second", { id: "a", leaseMs: 1000 }), threadId: holder.thread_id, status: "pending" });
    expect(await b.promote(first)).toEqual({ kind: "waiting" });
    await a.finish("holder", "success");
    expect(await a.promote(second)).toEqual({ kind: "waiting" });
    expect(await b.promote(first)).toEqual({ kind: "started" });
    await b.finish("first", "success");
    expect(await a.promote(second)).toEqual({ kind: "started" });
  });

  it("a queued run whose owner died stops holding the thread once its lease expires", async () => {
    const clock = manualClock();
    const [a] = (await instances(1, clock)) as [RunStore];
    await a.create({ ...run("dead-queued", { id: "dead", leaseMs: 1000 }), threadId: "q", status: "pending" });
    await expect(a.startExclusive({ ...run("fresh", { id: "a", leaseMs: 1000 }), threadId: "q" })).rejects.toMatchObject({
      code: "ANTLER_ERR_THREAD_BUSY",
    });
    clock.advance(1001);
    expect((await a.startExclusive({ ...run("fresh", { id: "a", leaseMs: 1000 }), threadId: "q" })).status).toBe("running");
    expect((await a.get("alice", "dead-queued"))?.status).toBe("error");
  });

  it("an orphan cancelled on request ends cancelled, without an error text", async () => {
    const clock = manualClock();
    const [owner, canceller] = (await instances(2, clock)) as [RunStore, RunStore];
    await owner.create(run("r1", { id: "dead-instance", leaseMs: 1000 }));
    expect(await canceller.sweepExpired({ runIds: ["r1"], as: "cancelled" })).toEqual([]);
    clock.advance(1001);
    expect(await canceller.sweepExpired({ runIds: ["r1"], as: "cancelled" })).toEqual(["r1"]);
    expect(await canceller.get("alice", "r1")).toMatchObject({ status: "cancelled", error: null });
  });

  it("notes a non-idempotent call once: a later attempt finds it interrupted, a fenced-out owner cannot start one, a paused one is forgotten", async () => {
    const clock = manualClock();
    const database = await place()();
    opened.push(database);
    await runMigrations(database, runRecordMigrations);
    const runs = createRunStore(database, { now: clock.now });
    const db = database.db as never;
    await runs.create(run("r1", { id: "a", leaseMs: 1000 }));
    const start = (toolCallId: string, fence: { ownerId: string; attempt: number }) =>
      startToolCall(db, { runId: "r1", toolCallId, tool: "charge", fence, now: clock.now() });
    expect(await start("call_1", { ownerId: "a", attempt: 1 })).toBe("start");
    expect(await start("call_2", { ownerId: "a", attempt: 1 })).toBe("start");
    await forgetToolCall(db, "r1", "call_2");
    clock.advance(1001);
    expect((await runs.takeOver({ id: "b", leaseMs: 1000 }, { maxAttempts: 3, limit: 10 })).claimed).toHaveLength(1);
    // The stopped owner may not start anything any more; the new one finds call_1 started by the earlier attempt.
    expect(await start("call_3", { ownerId: "a", attempt: 1 })).toBe("fenced");
    expect(await start("call_1", { ownerId: "b", attempt: 2 })).toBe("interrupted");
    expect(await start("call_2", { ownerId: "b", attempt: 2 })).toBe("start");
    // A finished run drops its notes.
    await runs.finish("r1", "success", null, {}, { ownerId: "b", attempt: 2 });
    const left = await database.db
      .withTables<{ antler_run_tool_calls: { run_id: string } }>()
      .selectFrom("antler_run_tool_calls")
      .select("run_id")
      .execute();
    expect(left).toEqual([]);
  });

  it("runs/002 gives rows already running one grace lease, after which they are swept", async () => {
    const open = place();
    const database = await open();
    opened.push(database);
    const first = runRecordMigrations.filter((m) => m.name === "runs/001-create");
    expect(await runMigrations(database, first)).toEqual(["runs/001-create"]);
    const legacy = database.db.withTables<{
      antler_runs: Omit<RunsTable, "owner_id" | "lease_until" | "cancel_requested_at" | "interrupt" | "resume_by" | "attempt">;
    }>();
    const at = new Date().toISOString();
    await legacy
      .insertInto(RUNS_TABLE)
      .values({
        run_id: "old",
        thread_id: "t",
        user_id: "alice",
        status: "running",
        trace_id: "x",
        model: "m",
        kwargs: "{}",
        error: null,
        created_at: at,
        updated_at: at,
      })
      .execute();
    expect(await runMigrations(database, runRecordMigrations)).toEqual([
      "runs/002-leases",
      "runs/003-one-running-per-thread",
      "runs/004-pauses",
      "runs/005-cost",
      "runs/006-takeover",
      "runs/007-start-input",
    ]);
    const inAMinute = createRunStore(database, { now: () => new Date(Date.now() + 60_000) });
    expect((await inAMinute.get("alice", "old"))?.status).toBe("running");
    const inADay = createRunStore(database, { now: () => new Date(Date.now() + 24 * 3600_000) });
    expect((await inADay.takeOver({ id: "new", leaseMs: 1000 }, { maxAttempts: 1, limit: 10 })).exhausted).toEqual(["old"]);
    expect((await inADay.get("alice", "old"))?.status).toBe("error");
  });

  it("runs/003 leaves one running row per thread (the newest) so its unique index can be built", async () => {
    const open = place();
    const database = await open();
    opened.push(database);
    const upTo002 = runRecordMigrations.filter((m) => m.name === "runs/001-create" || m.name === "runs/002-leases");
    await runMigrations(database, upTo002);
    const rows = database.db.withTables<{ antler_runs: Omit<RunsTable, "interrupt" | "resume_by" | "attempt"> }>();
    for (const [runId, at] of [
      ["older", "2026-01-01T00:00:00.000Z"],
      ["newer", "2026-01-01T00:00:01.000Z"],
    ] as const) {
      await rows
        .insertInto(RUNS_TABLE)
        .values({
          run_id: runId,
          thread_id: "t",
          user_id: "alice",
          status: "running",
          trace_id: "x",
          model: "m",
          kwargs: "{}",
          error: null,
          created_at: at,
          updated_at: at,
          owner_id: null,
          lease_until: null,
          cancel_requested_at: null,
        })
        .execute();
    }
    expect(await runMigrations(database, runRecordMigrations)).toEqual([
      "runs/003-one-running-per-thread",
      "runs/004-pauses",
      "runs/005-cost",
      "runs/006-takeover",
      "runs/007-start-input",
    ]);
    const store = createRunStore(database);
    expect((await store.get("alice", "newer"))?.status).toBe("running");
    expect(await store.get("alice", "older")).toMatchObject({ status: "error", error: expect.stringContaining("runs/003") });
    await expect(
      store.create({ runId: "third", threadId: "t", userId: "alice", traceId: "x", model: "m", kwargs: {} }),
    ).rejects.toMatchObject({
      code: "ANTLER_ERR_THREAD_BUSY",
      details: { running_run_id: "newer" },
    });
  });
}

describe("run records on SQLite", () => {
  runStoreContract(() => {
    const baseDir = tempDir();
    return () => createDatabase({ backend: "sqlite" }, { baseDir });
  });
});

describeWithPostgres("run records on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_runs" });
  runStoreContract(() => () => createDatabase({ backend: "postgres", postgres_url: url }, { baseDir: tempDir(), schema: schema.name }));
});
