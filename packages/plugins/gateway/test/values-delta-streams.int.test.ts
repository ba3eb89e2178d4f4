import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StorageConfigInput } from "@antler/kernel";
import { describeWithRedis, type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, threadStateSchema } from "@antler/plugin-runtime";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { memoryCheckpointer, seedThreadMessages } from "../../runtime/test/fixtures/seed-thread.js";
import type { GatewayConfigInput } from "../src/config.js";
import type { RunningGateway } from "../src/server.js";
import type { ValuesState } from "../src/values-delta.js";
import { callAsAlice, type SseFrame, serveAsAlice } from "./fixtures.js";
import { folded, readFrames, tickerTools } from "./run-stream-fixtures.js";

// The must-shows of delta values frames at the HTTP boundary, against a real loopback gateway: a client that
// joins late or resumes with Last-Event-ID at a random cut ends with exactly the state of the client that watched
// from the start; and a one-line answer on a long thread streams and stores a few KB, not the thread.

interface Instance {
  gateway: RunningGateway;
  client: AntlerClient;
  call(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** mulberry32: the cuts are random but the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Three rounds of ticker calls (so several values frames, each growing the thread), then an answer. */
const roundsScript: ScriptFunction = (messages) => {
  const sinceHuman = messages.slice(messages.findLastIndex((m) => m.getType() === "human") + 1);
  return sinceHuman.filter((m) => m.getType() === "tool").length < 3
    ? { toolCalls: [{ name: "ticker", args: { count: 3, delay_ms: 5 } }] }
    : { text: "All three rounds are done." };
};
const oneLine: ScriptFunction = () => ({ text: "Yes." });

async function instance(
  storage: StorageConfigInput,
  gatewayConfig: Partial<GatewayConfigInput> = {},
  checkpointer?: ReturnType<typeof memoryCheckpointer>,
): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), "antler-gw-delta-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const client = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [
        { name: "m", provider: "scripted" },
        { name: "short", provider: "scripted" },
      ],
      storage,
      title: { enabled: false },
      logging: { level: "error" },
    },
    plugins: [scriptedModelsPlugin({ m: roundsScript, short: oneLine }), tickerTools],
    cwd: dir,
    env: {},
    discover: false,
    ...(checkpointer ? { checkpointer } : {}),
  });
  const gateway = await serveAsAlice(client, cleanups, gatewayConfig);
  return { gateway, client, call: callAsAlice(gateway) };
}

async function savedState(gw: Instance, threadId: string): Promise<ValuesState> {
  const state = threadStateSchema.parse(await (await gw.call(`/api/threads/${threadId}/state?messages_limit=all`)).json());
  return { messages: state.messages };
}

/** The values states a client holds after each frame, and its last one. */
function finalState(frames: SseFrame[], start?: ValuesState): ValuesState | undefined {
  return folded(frames, start)
    .filter((f) => f.event === "values")
    .at(-1)?.data as ValuesState | undefined;
}

function joinAndResume(storage: () => StorageConfigInput, gatewayConfig: () => Partial<GatewayConfigInput>) {
  it("property: joins and resumes at random cuts, during the run and after it, end with the watcher's state (seeded)", async () => {
    const gw = await instance(storage(), gatewayConfig());
    const threadId = "t-delta";
    expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: threadId } })).status).toBe(201);
    // The thread has a history (so a snapshot needs the thread as the run found it) and an earlier run.
    await seedThreadMessages(gw.client, "alice", threadId, 40);
    expect(
      (await gw.call(`/api/threads/${threadId}/runs/wait`, { method: "POST", json: { message: "warm up", model: "short" } })).status,
    ).toBe(200);
    const before = await savedState(gw, threadId);

    const random = seeded(0xde17a);
    const response = await gw.call(`/api/threads/${threadId}/runs/stream`, { method: "POST", json: { message: "go", model: "m" } });
    const runId = response.headers.get("x-run-id") as string;
    // While the run streams, joiners start at random frames: some from the start, some after the frame just seen.
    const seen: SseFrame[] = [];
    const live: Array<Promise<{ start?: ValuesState; frames: SseFrame[] }>> = [];
    const watched = await readFrames(response, (frame, index) => {
      seen.push(frame);
      if (random() > 0.3) return;
      const resumeAfter = random() < 0.5 ? undefined : frame.id;
      live.push(
        (async () => {
          const answer = await gw.call(`/api/threads/${threadId}/runs/${runId}/stream`, {
            headers: resumeAfter === undefined ? {} : { "last-event-id": resumeAfter },
          });
          expect(answer.status).toBe(200);
          const start = resumeAfter === undefined ? undefined : finalState(seen.slice(0, index + 1), before);
          return { ...(start ? { start } : {}), frames: (await readFrames(answer)).frames };
        })(),
      );
    });
    expect(watched.error).toBeUndefined();
    const expected = finalState(watched.frames, before);
    expect(watched.frames.filter((f) => f.event === "values").length).toBeGreaterThanOrEqual(6);
    expect(expected?.messages).toEqual((await savedState(gw, threadId)).messages);
    expect(live.length).toBeGreaterThan(0);
    for (const joined of await Promise.all(live)) expect(finalState(joined.frames, joined.start)).toEqual(expected);

    // After the run: every cut, each a resume from the state the watcher held there, and late joiners.
    const last = watched.frames.length;
    for (let trial = 0; trial < 40; trial++) {
      const cut = 1 + Math.floor(random() * (last - 1));
      const answer = await gw.call(`/api/threads/${threadId}/runs/${runId}/stream`, { headers: { "last-event-id": String(cut) } });
      expect(answer.status).toBe(200);
      const rest = (await readFrames(answer)).frames;
      expect(rest.map((f) => f.id)).toEqual(watched.frames.slice(cut).map((f) => f.id));
      expect(
        finalState(rest, finalState(watched.frames.slice(0, cut), before)) ?? finalState(watched.frames.slice(0, cut), before),
      ).toEqual(expected);
    }
    const late = (await readFrames(await gw.call(`/api/threads/${threadId}/runs/${runId}/stream`))).frames;
    expect(finalState(late)).toEqual(expected);
  });
}

describe("delta values frames: SQLite, SQL event log", () => {
  joinAndResume(
    () => ({ backend: "sqlite" }),
    () => ({}),
  );
});

describeWithRedis("delta values frames: Redis Streams event log", (url) => {
  joinAndResume(
    () => ({ backend: "sqlite" }),
    () => {
      const prefix = `antler-test-${randomUUID()}:`;
      cleanups.push(async () => {
        const redis = new Redis(url);
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      });
      return { stream_bridge: { type: "redis", redis_url: url, key_prefix: prefix } };
    },
  );
});

describe("a one-line answer on a long thread costs what it adds", () => {
  for (const backend of ["sqlite", "memory"] as const) {
    it(`streams under 8 KB at 1,000 messages, and its logged rows do not grow with the thread (storage ${backend})`, async () => {
      // With storage memory the test holds the checkpointer, to seed it.
      const saver = backend === "memory" ? memoryCheckpointer() : undefined;
      const gw = await instance({ backend }, {}, saver);
      const costs: Array<{ messages: number; streamed: number; logged: number }> = [];
      for (const messages of [10, 1000]) {
        const threadId = `t-${messages}`;
        expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: threadId } })).status).toBe(201);
        await seedThreadMessages(gw.client, "alice", threadId, messages, saver);
        const response = await gw.call(`/api/threads/${threadId}/runs/stream`, {
          method: "POST",
          json: { message: "ok?", model: "short" },
        });
        const runId = response.headers.get("x-run-id") as string;
        const streamed = (await response.arrayBuffer()).byteLength;
        const rows = await gw.gateway.runEvents?.store.read(runId, 0, 10_000);
        expect(rows?.at(-1)?.event).toBe("end");
        const logged = (rows ?? []).reduce((sum, row) => sum + row.event.length + Buffer.byteLength(row.json), 0);
        costs.push({ messages, streamed, logged });
        expect((await savedState(gw, threadId)).messages).toHaveLength(messages + 2);
      }
      const [short, long] = costs as [(typeof costs)[0], (typeof costs)[0]];
      expect(long.streamed).toBeLessThanOrEqual(8 * 1024);
      // Only the digits of the base count and the run's ids may differ: a few bytes, not the 998 extra messages.
      expect(Math.abs(long.logged - short.logged)).toBeLessThan(64);
      expect(Math.abs(long.streamed - short.streamed)).toBeLessThan(64);
    });
  }
});
