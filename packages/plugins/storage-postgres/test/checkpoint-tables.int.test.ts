import { isAntlerError } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { isMessagesRef } from "@antler/storage-kit";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type Checkpoint, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import { PostgresCheckpointTables } from "../src/retention.js";

const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end();
});

describeWithPostgres("PostgresCheckpointTables.rewrite", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_pg_rewrite" });

  async function open() {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pools.push(pool);
    const saver = new PostgresSaver(pool, undefined, { schema: schema.name });
    await saver.setup();
    return { pool, saver, tables: new PostgresCheckpointTables(pool, schema.name, saver.serde) };
  }

  const config = (id?: string) => ({ configurable: { thread_id: "t", checkpoint_ns: "", ...(id ? { checkpoint_id: id } : {}) } });

  it("replaces the messages blob every checkpoint of that version shares, in place, leaving other channels and rows alone", async () => {
    const { pool, saver, tables } = await open();
    const list = [new HumanMessage({ id: "h1", content: "hi" }), new AIMessage({ id: "a1", content: "hello" })];
    const first: Checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: { messages: list, title: "Greeting" },
      channel_versions: { messages: 1, title: 1 },
    };
    await saver.put(config(), first, { source: "loop", step: 0, parents: {} }, { messages: 1, title: 1 });
    // A child that changes nothing names the same blob versions.
    const second: Checkpoint = { ...first, id: uuid6(-1) };
    await saver.put(config(first.id), second, { source: "loop", step: 1, parents: {} }, {});
    const blobs = async () =>
      (
        await pool.query<{ channel: string; version: string; blob: Buffer }>(
          `SELECT channel, version, blob FROM "${schema.name}".checkpoint_blobs ORDER BY channel, version`,
        )
      ).rows.map((row) => [row.channel, row.version, row.blob.toString("utf8")]);
    const titleBefore = (await blobs()).find(([channel]) => channel === "title");

    const ref = { __antler_messages: 1, n: 2, r: [0, 2] };
    const tuple = await saver.getTuple(config(first.id));
    const sharing = await tables.rewrite(
      "t",
      "",
      null,
      { ...(tuple?.checkpoint as Checkpoint), channel_values: { ...tuple?.checkpoint.channel_values, messages: ref } },
      tuple?.metadata ?? { source: "loop", step: 0, parents: {} },
    );
    // Both checkpoints now read the reference.
    expect(sharing).toBe(2);
    const after = await blobs();
    expect(after).toHaveLength(2);
    expect(after.find(([channel]) => channel === "title")).toEqual(titleBefore);
    for (const id of [first.id, second.id]) {
      const read = await saver.getTuple(config(id));
      expect(isMessagesRef(read?.checkpoint.channel_values.messages)).toBe(true);
      expect(read?.checkpoint.channel_values.title).toBe("Greeting");
    }
    expect((await saver.getTuple(config(second.id)))?.parentConfig?.configurable?.checkpoint_id).toBe(first.id);
  });

  it("refuses a checkpoint that is no longer stored, with a coded error", async () => {
    const { tables } = await open();
    const missing: Checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: { messages: [] },
      channel_versions: { messages: 1 },
    };
    const error = await tables.rewrite("t", "", null, missing, { source: "loop", step: 0, parents: {} }).catch((e: unknown) => e);
    expect(isAntlerError(error)).toBe(true);
    expect(String((error as Error).message)).toContain(`cannot rewrite checkpoint ${missing.id} of thread t: it is no longer stored`);
  });
});
