import { ErrorCodes, isAntlerError, runMigrations } from "@antler/kernel";
import { describeWithPostgres, scriptedModelsPlugin, usePostgresSchema } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient, type AntlerClientOptions } from "../src/client/client.js";
import type { StreamEvent } from "../src/client/events.js";
import { createRunStore, runRecordMigrations } from "../src/index.js";
import { RUNS_TABLE, type RunsTable } from "../src/stores/runs.js";
import { tempDir } from "./fixtures.js";
import { createDatabase, type StorageConfigInput } from "./storage.js";

// Several AntlerClients on one database stand for gateway instances behind a load balancer: each has its own
// kernel, instance id and live runs, and they meet only through the run records.

const clients: AntlerClient[] = [];
const closers: Array<() => Promise<void>> = [];
async function closeAll(): Promise<void> {
  for (const c of clients.splice(0)) await c.close();
  for (const close of closers.splice(0)) await close();
}

interface Instance {
  client: AntlerClient;
  /** Resolves when this instance's model has been called with `text` (the run is mid model call). */
  entered(text: string): Promise<void>;
}

/** An instance whose model answers "slow ..." prompts only after a minute (cut short by a cancel). */
async function instance(dir: string, storage: StorageConfigInput, runLeases: AntlerClientOptions["runLeases"]): Promise<Instance> {
  const waiting = new Map<string, () => void>();
  const seen = new Set<string>();
  const scripted = scriptedModelsPlugin({
    m: (messages) => {
      const last = String(messages.at(-1)?.content);
      seen.add(last);
      waiting.get(last)?.();
      return last.startsWith("slow") ? { text: "never said", delayMs: 60_000 } : { text: "quick" };
    },
  });
  const client = await AntlerClient.create({
    config: { models: [{ name: "m", provider: "scripted" }], storage, title: { enabled: false } },
    plugins: [scripted],
    cwd: dir,
    env: {},
    discover: false,
    runLeases,
  });
  clients.push(client);
  // Open its storage now, one instance at a time: two SQLite handles in one process that migrate at once would
  // wait on each other's write lock inside one event loop (separate processes just wait their turn).
  await client.listThreads();
  return {
    client,
    entered: (text) => (seen.has(text) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(text, resolve))),
  };
}

/** Consumes a stream in the background; settles with its events, or with the error that ended it. */
function consume(stream: AsyncIterable<StreamEvent>): Promise<{ events: StreamEvent[]; error?: unknown }> {
  return (async () => {
    const events: StreamEvent[] = [];
    try {
      for await (const event of stream) events.push(event);
      return { events };
    } catch (error) {
      return { events, error };
    }
  })();
}

/** A handle on the instances' database, for what a test reads or plants behind their backs. Closed after the test. */
async function openShared(storage: StorageConfigInput, client: AntlerClient) {
  const database = await createDatabase(storage, { baseDir: client.kernel.paths.baseDir, schema: storage.postgres_schema });
  closers.push(() => database.close());
  await runMigrations(database, runRecordMigrations);
  return {
    /** Run records as a dead instance would have written them. */
    store: createRunStore(database),
    db: database.db.withTables<{ antler_runs: RunsTable }>(),
    async ownerOf(runId: string): Promise<string | null> {
      const row = await database.db
        .withTables<{ antler_runs: RunsTable }>()
        .selectFrom(RUNS_TABLE)
        .select("owner_id")
        .where("run_id", "=", runId)
        .executeTakeFirstOrThrow();
      return row.owner_id;
    },
    async leaseOf(runId: string): Promise<string> {
      const row = await database.db
        .withTables<{ antler_runs: RunsTable }>()
        .selectFrom(RUNS_TABLE)
        .select("lease_until")
        .where("run_id", "=", runId)
        .executeTakeFirstOrThrow();
      return row.lease_until as string;
    },
  };
}

// Quick heartbeats so cancels travel fast, and long leases: both instances share this test's one event loop, so
// one building an agent stalls the other's heartbeat, and a short lease would sweep a live run (rightly).
const QUICK = { heartbeatMs: 50, leaseMs: 5000 };

function crossInstanceContract(place: () => { dir: string; storage: StorageConfigInput }) {
  // Registered after the suite's schema hooks, so it runs before the schema is dropped.
  afterEach(closeAll);

  it("a run streaming on A is cancelled through B: A's stream ends cancelled and the record says so", async () => {
    const { dir, storage } = place();
    const a = await instance(dir, storage, QUICK);
    const b = await instance(dir, storage, QUICK);
    const streamed = consume(a.client.stream("slow one", { threadId: "t1", runId: "run-a" }));
    await a.entered("slow one");
    expect(await b.client.cancelRun("t1", "run-a")).toEqual({ run_id: "run-a", thread_id: "t1", status: "cancelled" });
    const { events, error } = await streamed;
    expect(isAntlerError(error, ErrorCodes.RUN_CANCELLED)).toBe(true);
    expect(events.some((e) => e.type === "end")).toBe(false);
    expect(a.client.activeRuns).toBe(0);
    for (const c of [a.client, b.client]) expect((await c.getRun("t1", "run-a")).status).toBe("cancelled");
    // The thread goes on, on either instance.
    expect(await b.client.chat("next", { threadId: "t1" })).toBe("quick");
  });

  it("a cancel that the owner has not honoured within the wait answers running; the owner still stops the run", async () => {
    const { dir, storage } = place();
    const a = await instance(dir, storage, { heartbeatMs: 1000, leaseMs: 5000 });
    const b = await instance(dir, storage, { ...QUICK, cancelWaitMs: 1 });
    const streamed = consume(a.client.stream("slow two", { threadId: "t2", runId: "run-late" }));
    await a.entered("slow two");
    expect(await b.client.cancelRun("t2", "run-late")).toEqual({ run_id: "run-late", thread_id: "t2", status: "running" });
    const { error } = await streamed;
    expect(isAntlerError(error, ErrorCodes.RUN_CANCELLED)).toBe(true);
    expect((await b.client.getRun("t2", "run-late")).status).toBe("cancelled");
    await expect(b.client.cancelRun("t2", "run-late")).rejects.toThrow("already ended with status cancelled");
  });

  it("never sweeps a live owner's run, however often other instances read and sweep", async () => {
    const { dir, storage } = place();
    const leases = { heartbeatMs: 50, leaseMs: 1000 };
    const a = await instance(dir, storage, leases);
    const b = await instance(dir, storage, leases);
    const onA = consume(a.client.stream("slow on A", { threadId: "t3", runId: "run-a" }));
    // B has a live run too, so its heartbeat sweeps as well as its reads.
    const onB = consume(b.client.stream("slow on B", { threadId: "t3b", runId: "run-b" }));
    await Promise.all([a.entered("slow on A"), b.entered("slow on B")]);
    const shared = await openShared(storage, a.client);
    const first = await shared.leaseOf("run-a");
    const seen = new Set<string>();
    // Until A has renewed its lease three lengths past the first one, B keeps looking (each look may sweep).
    await expect
      .poll(
        async () => {
          seen.add((await b.client.getRun("t3", "run-a")).status);
          for (const r of await b.client.listRuns("t3")) seen.add(r.status);
          return Date.parse(await shared.leaseOf("run-a")) - Date.parse(first);
        },
        { timeout: 20_000, interval: 20 },
      )
      .toBeGreaterThan(3 * leases.leaseMs);
    expect([...seen]).toEqual(["running"]);
    await a.client.cancelRun("t3", "run-a");
    await b.client.cancelRun("t3b", "run-b");
    expect((await onA).error).toBeDefined();
    expect((await onB).error).toBeDefined();
  });

  it("a run left by a process that died before its first checkpoint is taken over and run from its recorded input, same run and trace id", async () => {
    const { dir, storage } = place();
    const b = await instance(dir, storage, QUICK);
    await b.client.createThread({ threadId: "t4" });
    // What a SIGKILLed instance leaves behind: a running row under its id whose lease nobody renews.
    const dead = (await openShared(storage, b.client)).store;
    const orphan = (runId: string, threadId: string) =>
      dead.create({
        runId,
        threadId,
        userId: "default",
        traceId: `trace-${runId}`,
        model: "m",
        kwargs: { input: "hello again", input_message_id: `msg-${runId}` },
        owner: { id: "dead", leaseMs: 150 },
      });
    // Without a heartbeat here nobody takes it over; a cancel still ends it.
    await orphan("orphan-cancel", "t4");
    expect(await b.client.cancelRun("t4", "orphan-cancel")).toEqual({ run_id: "orphan-cancel", thread_id: "t4", status: "cancelled" });
    await orphan("orphan-read", "t4");
    expect((await b.client.getRun("t4", "orphan-read")).status).toBe("running");
    const release = await b.client.sweepWhileIdle();
    try {
      await expect.poll(async () => (await b.client.getRun("t4", "orphan-read")).status, { timeout: 10_000, interval: 20 }).toBe("success");
    } finally {
      release();
    }
    expect(await b.client.getRun("t4", "orphan-read")).toMatchObject({ attempt: 2, trace_id: "trace-orphan-read", error: null });
    const thread = await b.client.getThread("t4");
    expect(thread.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hello again"],
      ["ai", "quick"],
    ]);
    expect(thread.messages[0]?.id).toBe("msg-orphan-read");
  });

  it("an owner whose run was taken over meanwhile (it stalled past its lease) stops the run and writes nothing more to it", async () => {
    const { dir, storage } = place();
    const a = await instance(dir, storage, QUICK);
    const shared = await openShared(storage, a.client);
    const onA = consume(a.client.stream("slow six", { threadId: "t6", runId: "stalled" }));
    await a.entered("slow six");
    // What another instance's takeover writes once A's lease has run out.
    await shared.db.updateTable(RUNS_TABLE).set({ owner_id: "other-instance", attempt: 2 }).where("run_id", "=", "stalled").execute();
    const ended = await onA;
    expect(ended.error).toBeDefined();
    expect(String((ended.error as Error).message ?? ended.error)).toMatch(/cancelled|taken over|ended elsewhere/);
    // A's end did not touch the record: it is the new owner's.
    const record = await shared.store.get("default", "stalled", { sweep: false });
    expect(record).toMatchObject({ status: "running", attempt: 2 });
    expect(await shared.ownerOf("stalled")).toBe("other-instance");
  });

  it("an instance with live runs takes over other instances' orphans in its heartbeat; with max_attempts 1 it ends them as errors", async () => {
    const { dir, storage } = place();
    const b = await instance(dir, storage, QUICK);
    const once = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage, title: { enabled: false } },
      plugins: [scriptedModelsPlugin({ m: () => ({ text: "quick" }) })],
      cwd: dir,
      env: {},
      discover: false,
      runLeases: QUICK,
      maxAttempts: 1,
    });
    clients.push(once);
    const dead = (await openShared(storage, b.client)).store;
    const plant = (runId: string) =>
      dead.create({ runId, threadId: runId, userId: "default", traceId: "x", model: "m", kwargs: {}, owner: { id: "dead", leaseMs: 50 } });
    await plant("orphan");
    const onB = consume(b.client.stream("slow five", { threadId: "t5b" }));
    await b.entered("slow five");
    // Read without the lazy sweep, so only B's heartbeat can have moved it.
    await expect
      .poll(async () => (await dead.get("default", "orphan", { sweep: false }))?.status, { timeout: 10_000, interval: 20 })
      .toBe("success");
    await b.client.cancelAll();
    expect((await onB).error).toBeDefined();
    // B (max_attempts 3) leaves; only the max_attempts 1 instance is left to find the next orphan.
    clients.splice(clients.indexOf(b.client), 1);
    await b.client.close();
    await plant("crashy");
    const release = await once.sweepWhileIdle();
    try {
      await expect
        .poll(async () => (await dead.get("default", "crashy", { sweep: false }))?.status, { timeout: 10_000, interval: 20 })
        .toBe("error");
    } finally {
      release();
    }
    expect((await dead.get("default", "crashy"))?.error).toMatch(/^ANTLER_ERR_RUN_ATTEMPTS_EXHAUSTED: /);
  });
}

describe("runs across instances on one SQLite file", () => {
  crossInstanceContract(() => ({ dir: tempDir(), storage: { backend: "sqlite" } }));
});

describeWithPostgres("runs across instances on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_runs_x" });
  crossInstanceContract(() => ({ dir: tempDir(), storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name } }));
});

describe("run lease timings", () => {
  it("refuses a lease no longer than the heartbeat, naming the option", async () => {
    await expect(
      AntlerClient.create({ discover: false, env: {}, cwd: tempDir(), runLeases: { heartbeatMs: 1000, leaseMs: 1000 } }),
    ).rejects.toThrow("runLeases.leaseMs (1000) must be longer than heartbeatMs (1000)");
    await expect(AntlerClient.create({ discover: false, env: {}, cwd: tempDir(), runLeases: { heartbeatMs: 0 } })).rejects.toThrow(
      "runLeases.heartbeatMs must be a positive number of milliseconds",
    );
  });
});
