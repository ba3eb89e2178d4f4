import { afterEach, describe, expect, it } from "vitest";
import { countingDeltaCheckpointer, seedThreadMessages } from "../../runtime/test/fixtures/seed-thread.js";
import { cleanups, getState, pagingBackwards, SEEDED, serve } from "./bounded-state-fixtures.js";

// GET /state and the thread list read a bounded amount at the HTTP boundary: the last page of messages by
// default, paged backwards with `before`, and no messages at all for the list.

afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe("GET /api/threads/{id}/state reads the last page of a 1,200-message thread", () => {
  pagingBackwards("memory", () => ({ backend: "memory" }), true);
  pagingBackwards("sqlite", () => ({ backend: "sqlite" }), false);

  it("the thread list carries no messages and reads none", async () => {
    const counting = countingDeltaCheckpointer();
    const { client, call } = await serve({ backend: "memory" }, counting.saver);
    expect((await call("/api/threads", { method: "POST", json: { thread_id: "long" } })).status).toBe(201);
    await seedThreadMessages(client, "alice", "long", SEEDED, counting.saver);
    const before = counting.rowsRead();
    const response = await call("/api/threads");
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(counting.rowsRead()).toBe(before);
    expect(text).not.toContain("messages");
    expect(Buffer.byteLength(text)).toBeLessThan(1024);
  });

  it("refuses a bad page with a 400 that names the parameter", async () => {
    const { call } = await serve({ backend: "memory" });
    expect((await call("/api/threads", { method: "POST", json: { thread_id: "t" } })).status).toBe(201);
    for (const query of ["messages_limit=0", "messages_limit=lots", "messages_limit=5000", "before=-1"]) {
      const response = await call(`/api/threads/t/state?${query}`);
      expect(response.status, query).toBe(400);
      const body = (await response.json()) as { error: { message: string } };
      expect(JSON.stringify(body), query).toContain(query.split("=")[0] as string);
    }
    // A `before` past the end is the end; an empty thread has an empty page.
    const empty = await getState(call, "/api/threads/t/state?before=99");
    expect(empty.state.messages).toEqual([]);
    expect(empty.state.messages_total).toBe(0);
  });
});
