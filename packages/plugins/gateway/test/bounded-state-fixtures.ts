import type { StorageConfigInput } from "@antler/kernel";
import { threadStateSchema } from "@antler/plugin-runtime";
import { expect, it } from "vitest";
import { countingDeltaCheckpointer, seedThreadMessages } from "../../runtime/test/fixtures/seed-thread.js";
import { STATE_MESSAGES_PAGE } from "../src/app.js";
import { type callAsAlice, serveScriptedAsAlice } from "./fixtures.js";

// Shared by the bounded GET /state tests on memory and SQLite (bounded-state.test.ts) and PostgreSQL
// (bounded-state-pg.int.test.ts). The caller runs `cleanups` after each test.

export const cleanups: Array<() => Promise<void>> = [];

export const SEEDED = 1200;

export async function serve(storage: StorageConfigInput, checkpointer?: ReturnType<typeof countingDeltaCheckpointer>["saver"]) {
  const { client, call } = await serveScriptedAsAlice(storage, cleanups, {
    script: () => ({ text: "ok" }),
    prefix: "antler-gw-bounded-",
    checkpointer,
  });
  return { client, call };
}

export async function getState(call: ReturnType<typeof callAsAlice>, path: string) {
  const response = await call(path);
  expect(response.status).toBe(200);
  const text = await response.text();
  return { bytes: Buffer.byteLength(text), state: threadStateSchema.parse(JSON.parse(text)) };
}

export function pagingBackwards(label: string, storage: () => StorageConfigInput, counted: boolean) {
  it(`answers the last page by default, and paging backwards reaches every message exactly once (${label})`, async () => {
    const counting = counted ? countingDeltaCheckpointer() : undefined;
    const { client, call } = await serve(storage(), counting?.saver);
    for (const [threadId, count] of [
      ["long", SEEDED],
      ["short", STATE_MESSAGES_PAGE + 10],
    ] as const) {
      expect((await call("/api/threads", { method: "POST", json: { thread_id: threadId } })).status).toBe(201);
      await seedThreadMessages(client, "alice", threadId, count, counting?.saver);
    }

    const readBefore = counting?.rowsRead() ?? 0;
    const last = await getState(call, "/api/threads/long/state");
    // One page: the last 50 messages, with the count and the page's position.
    expect(last.state.messages).toHaveLength(STATE_MESSAGES_PAGE);
    expect(last.state.messages_total).toBe(SEEDED);
    expect(last.state.messages_offset).toBe(SEEDED - STATE_MESSAGES_PAGE);
    expect(last.state.messages.at(-1)?.id).toBe(`seed-a${SEEDED - 1}`);
    if (counting) expect(counting.rowsRead() - readBefore).toBe(STATE_MESSAGES_PAGE);
    // Bounded in bytes: the same size as the last page of a thread of 60 (only the digits of ids differ).
    const short = await getState(call, "/api/threads/short/state");
    expect(last.bytes).toBeLessThan(12 * 1024);
    expect(Math.abs(last.bytes - short.bytes)).toBeLessThan(STATE_MESSAGES_PAGE * 8);

    // Backwards with `before`, pages of 173 (not a divisor), to the first message.
    const seen: string[] = [];
    let before: number | undefined = last.state.messages_offset;
    seen.unshift(...last.state.messages.map((m) => m.id as string));
    let pages = 1;
    while (before !== undefined && before > 0) {
      const page = await getState(call, `/api/threads/long/state?messages_limit=173&before=${before}`);
      expect(page.state.messages.length).toBeLessThanOrEqual(173);
      expect(page.state.messages_offset).toBe(Math.max(0, before - 173));
      seen.unshift(...page.state.messages.map((m) => m.id as string));
      before = page.state.messages_offset;
      pages++;
    }
    const expected = Array.from({ length: SEEDED }, (_, i) => (i % 2 === 0 ? `seed-h${i}` : `seed-a${i}`));
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(SEEDED);
    expect(pages).toBe(1 + Math.ceil((SEEDED - STATE_MESSAGES_PAGE) / 173));

    // Everything, when asked for explicitly.
    const all = await getState(call, "/api/threads/long/state?messages_limit=all");
    expect(all.state.messages.map((m) => m.id)).toEqual(expected);
    expect(all.state.messages_offset).toBe(0);
  });
}
