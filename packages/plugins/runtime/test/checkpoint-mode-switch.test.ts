import { join } from "node:path";
import { sqliteDriver } from "@antler/plugin-storage-sqlite";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import type { AntlerClient } from "../src/client/client.js";
import { weatherClient } from "./fixtures/weather.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function client(dir: string, mode: "delta" | "full") {
  const c = await weatherClient({ storage: { backend: "sqlite", checkpoint: { mode } }, cwd: dir });
  clients.push(c);
  return c;
}

function count(file: string, sql: string): number {
  const db = new (sqliteDriver())(file, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
}

/** Every checkpoint of the thread as the runtime's saver reads it: id → message contents (or what else it holds). */
async function history(c: AntlerClient, threadId: string): Promise<Map<string, unknown>> {
  const checkpointer = await c.kernel.openCheckpointer();
  try {
    const out = new Map<string, unknown>();
    for await (const tuple of checkpointer.saver.list({ configurable: { thread_id: threadId, checkpoint_ns: "" } })) {
      const messages = tuple.checkpoint.channel_values.messages;
      out.set(tuple.checkpoint.id, Array.isArray(messages) ? (messages as BaseMessage[]).map((m) => [m.getType(), m.content]) : messages);
    }
    return out;
  } finally {
    await checkpointer.close();
  }
}

describe("switching storage.checkpoint.mode from delta to full (SQLite)", () => {
  it("a thread written in delta mode reads the same state and history in full mode, and runs a turn stored whole", async () => {
    const dir = tempDir();
    const file = join(dir, ".antler", "data", "checkpoints.sqlite");
    const delta = await client(dir, "delta");
    await delta.chat("Weather in Oslo?", { threadId: "t" });
    await delta.chat("And again?", { threadId: "t" });
    await delta.idle();
    const before = (await delta.getThread("t")).messages;
    const beforeHistory = await history(delta, "default/t");
    await delta.close();
    expect(before).toHaveLength(8);
    expect(count(file, "SELECT count(*) FROM antler_messages")).toBe(8);
    const whole = "SELECT count(*) FROM checkpoints WHERE json_type(CAST(checkpoint AS TEXT), '$.channel_values.messages') = 'array'";
    expect(count(file, whole)).toBe(0);

    const full = await client(dir, "full");
    expect((await full.getThread("t")).messages).toEqual(before);
    const fullHistory = await history(full, "default/t");
    expect(fullHistory).toEqual(beforeHistory);
    // No checkpoint hands out a reference in place of its list (the first of a thread has no messages yet).
    for (const messages of fullHistory.values()) expect(messages === undefined || Array.isArray(messages)).toBe(true);

    await full.chat("Once more?", { threadId: "t" });
    await full.idle();
    const after = (await full.getThread("t")).messages;
    expect(after).toHaveLength(12);
    expect(after.slice(0, 8)).toEqual(before);
    expect(after.at(-1)).toMatchObject({ type: "ai", content: "It is Oslo: 21°C, clear." });
    // The new turn's checkpoints hold their whole list (LangGraph's format); the log got nothing new.
    expect(count(file, whole)).toBeGreaterThan(0);
    expect(count(file, "SELECT count(*) FROM antler_messages")).toBe(8);
  });

  it("compaction in full mode keeps LangGraph's whole lists: it prunes, and rewrites nothing into references", async () => {
    const dir = tempDir();
    const file = join(dir, ".antler", "data", "checkpoints.sqlite");
    const full = await client(dir, "full");
    await full.chat("Weather in Oslo?", { threadId: "w" });
    await full.idle();
    const whole = "SELECT count(*) FROM checkpoints WHERE json_type(CAST(checkpoint AS TEXT), '$.channel_values.messages') = 'array'";
    const wholeBefore = count(file, whole);
    expect(wholeBefore).toBeGreaterThan(0);
    const checkpointer = (await full.kernel.openCheckpointer()) as unknown as {
      retention: { compact(threadId: string): Promise<{ rewritten: number }> };
      close(): Promise<void>;
    };
    try {
      expect((await checkpointer.retention.compact("default/w")).rewritten).toBe(0);
    } finally {
      await checkpointer.close();
    }
    expect(count(file, whole)).toBeGreaterThan(0);
    expect(count(file, "SELECT count(*) FROM antler_messages")).toBe(0);
    expect((await full.getThread("w")).messages).toHaveLength(4);
  });

  it("deleting a thread in full mode drops its checkpoints, writes and message rows", async () => {
    const dir = tempDir();
    const file = join(dir, ".antler", "data", "checkpoints.sqlite");
    const delta = await client(dir, "delta");
    await delta.chat("Weather in Oslo?", { threadId: "gone" });
    await delta.chat("Weather in Oslo?", { threadId: "kept" });
    await delta.idle();
    await delta.close();

    const full = await client(dir, "full");
    await full.chat("And now?", { threadId: "gone" });
    await full.idle();
    await full.deleteThread("gone");
    const left = (table: string) => count(file, `SELECT count(*) FROM ${table} WHERE thread_id = 'default/gone'`);
    expect([left("checkpoints"), left("writes"), left("antler_messages")]).toEqual([0, 0, 0]);
    expect(count(file, "SELECT count(*) FROM antler_messages WHERE thread_id = 'default/kept'")).toBe(4);
    expect((await full.getThread("kept")).messages).toHaveLength(4);
  });
});
