import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StorageConfigInput } from "@antler/kernel";
import { describeWithPostgres, describeWithRedis, scriptedModelsPlugin, usePostgresSchema } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { GatewayConfigInput } from "../src/config.js";
import { GatewayErrorCodes } from "../src/errors.js";
import { type RunningGateway, startGateway } from "../src/server.js";
import { callAsAlice, type SseFrame, serveAsAlice } from "./fixtures.js";
import { folded, ids, normalized, readFrames, socketDropper, tickerTools, tickingScript } from "./run-stream-fixtures.js";

// The must-show of resumable run streams: a run's POST stream is cut by the server (its socket destroyed
// mid-run), the client reconnects with Last-Event-ID, to the same gateway or to a second one on the same
// database, and what it received in the two pieces equals, frame for frame, an uninterrupted run of the same
// script (ids, run, thread and trace ids aside). On a SQLite file and PostgreSQL with the SQL event log, and
// with Redis Streams.

interface Instance {
  gateway: RunningGateway;
  client: AntlerClient;
  call(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
}

const cleanups: Array<() => Promise<void>> = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn();
}

function sharedDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "antler-gw-resume-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function instance(dir: string, storage: StorageConfigInput, gatewayConfig: Partial<GatewayConfigInput>): Promise<Instance> {
  const client = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage,
      title: { enabled: false },
      logging: { level: "error" },
    },
    plugins: [scriptedModelsPlugin({ m: tickingScript(40, 15) }), tickerTools],
    cwd: dir,
    env: {},
    discover: false,
    runLeases: { heartbeatMs: 200, leaseMs: 5000 },
  });
  const gateway = await serveAsAlice(client, cleanups, gatewayConfig);
  return { gateway, client, call: callAsAlice(gateway) };
}

async function uninterruptedRun(gw: Instance, threadId: string): Promise<SseFrame[]> {
  expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: threadId } })).status).toBe(201);
  const response = await gw.call(`/api/threads/${threadId}/runs/stream`, { method: "POST", json: { message: "tick" } });
  expect(response.status).toBe(200);
  const { frames, error } = await readFrames(response);
  expect(error).toBeUndefined();
  return frames;
}

/** Streams a run from `owner` with on_disconnect continue and has the server destroy the socket after `dropAfter` frames. */
async function droppedRun(owner: Instance, threadId: string, dropAfter: number): Promise<{ runId: string; received: SseFrame[] }> {
  expect((await owner.call("/api/threads", { method: "POST", json: { thread_id: threadId } })).status).toBe(201);
  const dropper = socketDropper(owner.gateway, `/threads/${threadId}/runs/stream`);
  const response = await owner.call(`/api/threads/${threadId}/runs/stream`, {
    method: "POST",
    json: { message: "tick", on_disconnect: "continue" },
  });
  expect(response.status).toBe(200);
  const { frames, error } = await readFrames(response, (_frame, index) => {
    if (index === dropAfter - 1) dropper.drop();
  });
  // The body broke off: the run did not end on this connection.
  expect(error).toBeDefined();
  expect(frames.some((f) => f.event === "end")).toBe(false);
  return { runId: response.headers.get("x-run-id") as string, received: frames };
}

async function resume(gw: Instance, threadId: string, runId: string, lastEventId?: string): Promise<SseFrame[]> {
  const response = await gw.call(`/api/threads/${threadId}/runs/${runId}/stream`, {
    headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId },
  });
  expect(response.status).toBe(200);
  const { frames, error } = await readFrames(response);
  expect(error).toBeUndefined();
  return frames;
}

function expectSameRun(resumed: SseFrame[], reference: SseFrame[]): void {
  expect(ids(resumed)).toEqual(resumed.map((_, i) => i + 1));
  expect(resumed.at(-1)?.event).toBe("end");
  expect(resumed.filter((f) => f.event === "custom")).toHaveLength(40);
  // As the states a client holds: the resumed part starts with a snapshot where the reference had a patch.
  expect(normalized(folded(resumed))).toEqual(normalized(folded(reference)));
}

type Place = () => { dir: string; storage: StorageConfigInput; gateway: Partial<GatewayConfigInput> };

function resumableStreams(place: Place) {
  // Registered after any schema hooks of the suite, so instances close before a schema is dropped.
  afterEach(cleanUp);

  it("a POST stream the server cuts mid-run, resumed with Last-Event-ID on the same gateway, equals an uninterrupted run", async () => {
    const { dir, storage, gateway } = place();
    const gw = await instance(dir, storage, gateway);
    const reference = await uninterruptedRun(gw, "t-reference");
    const { runId, received } = await droppedRun(gw, "t-dropped", 10);
    const rest = await resume(gw, "t-dropped", runId, received.at(-1)?.id);
    expectSameRun([...received, ...rest], reference);
  });

  it("the same run resumed on a second gateway instance while it runs on the first equals an uninterrupted run, and a full join there replays it", async () => {
    const { dir, storage, gateway } = place();
    const owner = await instance(dir, storage, gateway);
    const other = await instance(dir, storage, gateway);
    const reference = await uninterruptedRun(owner, "t-reference");
    const { runId, received } = await droppedRun(owner, "t-dropped", 10);
    // Still running on the owner: the second instance follows it through the log until it ends.
    expect(((await (await other.call(`/api/threads/t-dropped/runs/${runId}`)).json()) as { status: string }).status).toBe("running");
    const rest = await resume(other, "t-dropped", runId, received.at(-1)?.id);
    const resumed = [...received, ...rest];
    expectSameRun(resumed, reference);
    // A joiner from the start, after the end, gets the finished run completely, ids included.
    expect(folded(await resume(other, "t-dropped", runId))).toEqual(folded(resumed));
  });
}

/** The SQL log keeps a finished run in a few rows (blocks), and reads them back as the events they hold. */
function compactedRuns(place: Place) {
  afterEach(cleanUp);

  it("a finished run's events are folded into one row; joins from the start and from inside it, and the sweep, see every event", async () => {
    const { dir, storage, gateway } = place();
    const gw = await instance(dir, storage, gateway);
    const reference = await uninterruptedRun(gw, "t-folded");
    const { run_id: runId } = (reference[0] as SseFrame).data as { run_id: string };
    // The run's record ends after the log has its last event (and has started folding it).
    await expect
      .poll(async () => ((await (await gw.call(`/api/threads/t-folded/runs/${runId}`)).json()) as { status: string }).status)
      .toBe("success");
    await gw.gateway.runEvents?.idle();
    const database = await gw.client.kernel.openDatabase();
    cleanups.push(() => database.close());
    const rows = await database.db
      .withTables<{ antler_run_events: { run_id: string; seq: number; event_count: number; event: string } }>()
      .selectFrom("antler_run_events")
      .select(["seq", "event_count", "event"])
      .where("run_id", "=", runId)
      .execute();
    // One row, deflated (a run's events repeat its ids and keys).
    expect(rows.map((r) => [Number(r.seq), Number(r.event_count), r.event])).toEqual([[1, reference.length, "*z"]]);

    expect(folded(await resume(gw, "t-folded", runId))).toEqual(folded(reference));
    const from = 37;
    const rest = await resume(gw, "t-folded", runId, String(from));
    expect(ids(rest)).toEqual(reference.slice(from).map((_, i) => from + 1 + i));
    expect(folded([...reference.slice(0, from), ...rest])).toEqual(folded(reference));
    expect(
      (await gw.call(`/api/threads/t-folded/runs/${runId}/stream`, { headers: { "last-event-id": String(reference.length) } })).status,
    ).toBe(204);
    // Retention counts events, not rows.
    expect(await gw.gateway.runEvents?.sweep(Date.now() + 48 * 3_600_000)).toBe(reference.length);
    expect((await gw.call(`/api/threads/t-folded/runs/${runId}/stream`)).status).toBe(410);
  });

  it("a join between the two steps of a fold (block written, the rows it covers not yet gone) sees each event once", async () => {
    const { dir, storage, gateway } = place();
    const gw = await instance(dir, storage, gateway);
    const reference = await uninterruptedRun(gw, "t-half");
    const { run_id: runId } = (reference[0] as SseFrame).data as { run_id: string };
    await expect
      .poll(async () => ((await (await gw.call(`/api/threads/t-half/runs/${runId}`)).json()) as { status: string }).status)
      .toBe("success");
    await gw.gateway.runEvents?.idle();
    const database = await gw.client.kernel.openDatabase();
    cleanups.push(() => database.close());
    // Put back the single rows the block replaced, as they are between the fold's update and its delete.
    const table = database.db.withTables<{
      antler_run_events: { run_id: string; seq: number; event_count: number; event: string; data: string; created_at: string };
    }>();
    const events = reference.slice(1).map((frame, i) => ({
      run_id: runId,
      seq: i + 2,
      event_count: 1,
      event: frame.event,
      data: JSON.stringify(frame.data),
      created_at: new Date().toISOString(),
    }));
    await table.insertInto("antler_run_events").values(events).execute();
    expect(folded(await resume(gw, "t-half", runId))).toEqual(folded(reference));
    const rest = await resume(gw, "t-half", runId, "5");
    expect(ids(rest)).toEqual(reference.slice(5).map((_, i) => 6 + i));
  });
}

describe("resumable run streams: SQLite file, SQL event log", () => {
  resumableStreams(() => ({ dir: sharedDir(), storage: { backend: "sqlite" }, gateway: {} }));
});

describe("compacted run events: SQLite file", () => {
  compactedRuns(() => ({ dir: sharedDir(), storage: { backend: "sqlite" }, gateway: {} }));
});

describeWithPostgres("resumable run streams: PostgreSQL, SQL event log", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_gw_resume" });
  resumableStreams(() => ({
    dir: sharedDir(),
    storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name },
    gateway: {},
  }));
});

describeWithPostgres("compacted run events: PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_gw_fold" });
  compactedRuns(() => ({
    dir: sharedDir(),
    storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name },
    gateway: {},
  }));
});

describeWithRedis("resumable run streams: Redis Streams event log", (url) => {
  /** A key prefix of this test's own; its keys are deleted afterwards. */
  const redisBridge = (extra: Record<string, unknown> = {}) => {
    const prefix = `antler-test-${randomUUID()}:`;
    cleanups.push(async () => {
      const redis = new Redis(url);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });
    return { stream_bridge: { type: "redis" as const, redis_url: url, key_prefix: prefix }, ...extra };
  };
  resumableStreams(() => ({ dir: sharedDir(), storage: { backend: "sqlite" }, gateway: redisBridge() }));

  it("writes each run to a stream of its own whose entry ids are the SSE ids, expiring after retention_hours; then a join is a coded 410", async () => {
    const gateway = redisBridge({ run_events: { retention_hours: 1 / 3600 } });
    const gw = await instance(sharedDir(), { backend: "sqlite" }, gateway);
    const frames = await uninterruptedRun(gw, "t-expiring");
    const runId = ((frames[0] as SseFrame).data as { run_id: string }).run_id;
    const redis = new Redis(url);
    try {
      const key = `${gateway.stream_bridge.key_prefix}run-events:${runId}`;
      const entries = (await redis.xrange(key, "-", "+")) as Array<[string, string[]]>;
      expect(entries.map(([id]) => id)).toEqual(frames.map((f) => `0-${f.id}`));
      expect(await redis.ttl(key)).toBeGreaterThan(0);
      await expect.poll(() => redis.exists(key), { timeout: 5000, interval: 100 }).toBe(0);
    } finally {
      await redis.quit();
    }
    const gone = await gw.call(`/api/threads/t-expiring/runs/${runId}/stream`);
    expect(gone.status).toBe(410);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe(GatewayErrorCodes.RUN_EVENTS_EXPIRED);
  });

  it("a gateway whose Redis cannot be reached does not start, and says which setting to fix", async () => {
    const dir = sharedDir();
    const client = await AntlerClient.create({
      config: { base_dir: dir, models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, logging: { level: "error" } },
      plugins: [scriptedModelsPlugin({ m: tickingScript() })],
      cwd: dir,
      env: {},
      discover: false,
    });
    cleanups.push(() => client.close());
    await expect(
      startGateway({
        client,
        config: { port: 0, auth: { mode: "none" }, stream_bridge: { type: "redis", redis_url: "redis://user:s3cret@127.0.0.1:1" } },
      }),
    ).rejects.toThrow(/cannot reach Redis at 127\.0\.0\.1:1 .*stream_bridge/s);
  });
});
