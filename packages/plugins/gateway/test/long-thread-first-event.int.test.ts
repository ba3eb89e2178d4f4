import { performance } from "node:perf_hooks";
import type { StorageConfigInput } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { seedThreadMessages } from "../../runtime/test/fixtures/seed-thread.js";
import { type callAsAlice, serveScriptedAsAlice } from "./fixtures.js";

// Issue 25's must-show at the HTTP boundary: on a real loopback gateway, a thread seeded to 1,000 messages answers
// its next run's first event as fast as a fresh thread does (median ratio ≤ 2×, and under 1 s), on SQLite and on
// PostgreSQL. The first event is the run's first frame after the `metadata` preamble (which the gateway sends on
// admission, before the run reads the thread): the `values` frame of the thread as the run found it.
//
// The long thread's messages are seeded through a second handle on the same storage, so its first run reads and
// decodes all of them (once per process: the checkpointer keeps a thread's list decoded). That first run is the
// warm-up; the samples are its next runs, interleaved with runs on fresh threads.

const SEEDED = 1000;
const SAMPLES = 5;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function gatewayOn(storage: StorageConfigInput) {
  const { client, call } = await serveScriptedAsAlice(storage, cleanups, { script: () => ({ text: "Yes." }), prefix: "antler-gw-long-" });
  return { client, call };
}

/** Milliseconds from the POST to the end of the run's first frame after `metadata`; reads the stream to its end. */
async function firstEventMs(call: ReturnType<typeof callAsAlice>, threadId: string): Promise<number> {
  const started = performance.now();
  const response = await call(`/api/threads/${threadId}/runs/stream`, { method: "POST", json: { message: "and now?" } });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  let firstEvent: number | undefined;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    // Frames end with a blank line; the second complete frame is the run's first event.
    if (firstEvent === undefined && text.split("\n\n").length > 2) firstEvent = performance.now() - started;
  }
  const events = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
  expect(events.slice(0, 2)).toEqual(["metadata", "values"]);
  expect(events.at(-1)).toBe("end");
  return firstEvent as number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

function firstEventStaysFlat(storage: () => StorageConfigInput) {
  it(`answers the first event of a run on a ${SEEDED}-message thread in under 1 s, within 2× a fresh thread's (medians of ${SAMPLES})`, async () => {
    const gw = await gatewayOn(storage());
    const newThread = async (name: string, seeded: number) => {
      expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: name } })).status).toBe(201);
      if (seeded > 0) await seedThreadMessages(gw.client, "alice", name, seeded);
      return name;
    };
    // Warm-up: the agent is built, the code paths compiled, the connections open; the long thread read once.
    await firstEventMs(gw.call, await newThread("warm-fresh", 0));
    const longThread = await newThread("long", SEEDED);
    const coldRead = await firstEventMs(gw.call, longThread);
    // Interleaved: a run on a new fresh thread, then the long thread's next run, and again.
    const fresh: number[] = [];
    const long: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      fresh.push(await firstEventMs(gw.call, await newThread(`fresh-${i}`, 0)));
      long.push(await firstEventMs(gw.call, longThread));
    }
    const ms = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(", ");
    const measured = `long ${ms(long)} ms; fresh ${ms(fresh)} ms; the long thread's first run (its cold read) ${coldRead.toFixed(1)} ms`;
    expect(median(long), measured).toBeLessThan(1000);
    expect(median(long) / median(fresh), measured).toBeLessThanOrEqual(2);
    // The run went on from the seeded history.
    const state = (await (await gw.call(`/api/threads/${longThread}/state`)).json()) as { messages_total: number };
    expect(state.messages_total).toBe(SEEDED + 2 * (SAMPLES + 1));
  });
}

describe("first event of a run on a long thread (SQLite)", () => {
  firstEventStaysFlat(() => ({ backend: "sqlite" }));
});

describeWithPostgres("first event of a run on a long thread (PostgreSQL)", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_gw_long" });
  firstEventStaysFlat(() => ({ backend: "postgres", postgres_url: url, postgres_schema: schema.name }));
});
