import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, expect, it } from "vitest";
import type { AntlerClient } from "../src/client/client.js";
import { schemaQuery, weatherClient } from "./fixtures/weather.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

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

describeWithPostgres("switching storage.checkpoint.mode from delta to full (PostgreSQL)", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_mode_switch" });

  const count = schemaQuery(url, () => schema.name);

  async function client(mode: "delta" | "full") {
    const c = await weatherClient({
      storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name, checkpoint: { mode } },
      cwd: tempDir(),
    });
    clients.push(c);
    return c;
  }

  // Messages blobs that hold a whole list (LangGraph's format) rather than a reference into antler_messages.
  const wholeBlobs = `SELECT count(*) FROM $schema.checkpoint_blobs
    WHERE channel = 'messages' AND type = 'json' AND jsonb_typeof(convert_from(blob, 'UTF8')::jsonb) = 'array'`;

  it("a thread written in delta mode reads the same state and history in full mode, and runs a turn stored whole", async () => {
    const delta = await client("delta");
    await delta.chat("Weather in Oslo?", { threadId: "t" });
    await delta.chat("And again?", { threadId: "t" });
    await delta.idle();
    const before = (await delta.getThread("t")).messages;
    const beforeHistory = await history(delta, "default/t");
    await delta.close();
    expect(before).toHaveLength(8);
    expect(await count("SELECT count(*) FROM $schema.antler_messages")).toBe(8);
    expect(await count(wholeBlobs)).toBe(0);

    const full = await client("full");
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
    expect(await count(wholeBlobs)).toBeGreaterThan(0);
    expect(await count("SELECT count(*) FROM $schema.antler_messages")).toBe(8);
  });

  it("deleting a thread in full mode drops its checkpoints, blobs, writes and message rows", async () => {
    const delta = await client("delta");
    await delta.chat("Weather in Oslo?", { threadId: "gone" });
    await delta.chat("Weather in Oslo?", { threadId: "kept" });
    await delta.idle();
    await delta.close();

    const full = await client("full");
    await full.chat("And now?", { threadId: "gone" });
    await full.idle();
    await full.deleteThread("gone");
    const left = (table: string) => count(`SELECT count(*) FROM $schema.${table} WHERE thread_id = 'default/gone'`);
    expect([
      await left("checkpoints"),
      await left("checkpoint_blobs"),
      await left("checkpoint_writes"),
      await left("antler_messages"),
    ]).toEqual([0, 0, 0, 0]);
    expect(await count("SELECT count(*) FROM $schema.antler_messages WHERE thread_id = 'default/kept'")).toBe(4);
    expect((await full.getThread("kept")).messages).toHaveLength(4);
  });
});
