import { type Checkpointer, createKernel, type Kernel } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { DeltaCheckpointSaver, isMessagesRef } from "@antler/storage-kit";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { afterEach, expect, it } from "vitest";

const kernels: Kernel[] = [];
const checkpointers: Checkpointer[] = [];
afterEach(async () => {
  for (const checkpointer of checkpointers.splice(0)) await checkpointer.close();
  for (const kernel of kernels.splice(0)) await kernel.close();
});

/** A checkpointer opened the way the runtime opens it: from `storage` config, through the postgres plugin. */
async function openCheckpointer(storage: Record<string, unknown>): Promise<Checkpointer> {
  const kernel = await createKernel({ config: { storage }, env: {}, discover: false });
  kernels.push(kernel);
  const checkpointer = await kernel.openCheckpointer();
  checkpointers.push(checkpointer);
  return checkpointer;
}

/** A real LangGraph graph: each turn appends the user's message, then one node answers it. */
function chatGraph(saver: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("answer", (state) => ({ messages: [new AIMessage(`answer ${state.messages.length}`)] }))
    .addEdge(START, "answer")
    .addEdge("answer", END)
    .compile({ checkpointer: saver });
}

function contents(messages: readonly BaseMessage[]): string[] {
  return messages.map((m) => String(m.content));
}

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describeWithPostgres("PostgreSQL delta checkpoints (storage.checkpoint.mode)", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_pg_delta" });
  const storage = (mode?: "delta" | "full") => ({
    backend: "postgres",
    postgres_url: url,
    postgres_schema: schema.name,
    ...(mode ? { checkpoint: { mode } } : {}),
  });
  const messageRows = async (threadId: string) =>
    Number(
      (
        await query<{ n: string }>(url, `SELECT count(*)::text AS n FROM "${schema.name}".antler_messages WHERE thread_id = $1`, [threadId])
      )[0]?.n,
    );
  const messageBlobs = (threadId: string) =>
    query<{ blob: Buffer }>(
      url,
      `SELECT blob FROM "${schema.name}".checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' AND blob IS NOT NULL`,
      [threadId],
    );

  it("stores each message once: rows grow by a turn's new messages and no checkpoint blob holds the list", async () => {
    const checkpointer = await openCheckpointer(storage());
    expect(checkpointer.saver).toBeInstanceOf(DeltaCheckpointSaver);
    const graph = chatGraph(checkpointer.saver);
    const config = { configurable: { thread_id: "grow" } };
    for (let turn = 1; turn <= 8; turn++) {
      await graph.invoke({ messages: [new HumanMessage(`question ${turn}`)] }, config);
      // Two new messages a turn (the question and the answer), whatever the thread's length.
      expect(await messageRows("grow")).toBe(2 * turn);
    }
    const blobs = await messageBlobs("grow");
    expect(blobs.length).toBeGreaterThanOrEqual(16);
    for (const { blob } of blobs) {
      const value = JSON.parse(blob.toString("utf8")) as unknown;
      expect(isMessagesRef(value)).toBe(true);
      // An append-only thread is one range, so the blob stays the same few bytes at every length.
      expect(blob.length).toBeLessThan(100);
    }
    const state = await graph.getState(config);
    expect(contents(state.values.messages)).toEqual(
      Array.from({ length: 8 }, (_, i) => [`question ${i + 1}`, `answer ${2 * i + 1}`]).flat(),
    );
  });

  it("resolves history and older checkpoints, also from a second process's saver that has seen nothing", async () => {
    const first = await openCheckpointer(storage());
    const graph = chatGraph(first.saver);
    const config = { configurable: { thread_id: "history" } };
    for (let turn = 1; turn <= 3; turn++) await graph.invoke({ messages: [new HumanMessage(`q${turn}`)] }, config);

    const second = await openCheckpointer(storage());
    const reader = chatGraph(second.saver);
    const history = [];
    for await (const snapshot of reader.getStateHistory(config)) history.push(snapshot);
    // Three turns of three checkpoints each (empty input, input, answer); newest first.
    expect(history.map((s) => s.values.messages?.length ?? 0)).toEqual([6, 5, 4, 4, 3, 2, 2, 1, 0]);
    const afterFirstTurn = history.at(-3);
    const older = await reader.getState({
      configurable: { thread_id: "history", checkpoint_id: afterFirstTurn?.config.configurable?.checkpoint_id },
    });
    expect(contents(older.values.messages)).toEqual(["q1", "answer 1"]);
    // Time travel: a new turn forked from that older checkpoint stores only its own new messages.
    await reader.invoke({ messages: [new HumanMessage("fork")] }, older.config);
    expect(await messageRows("history")).toBe(8);
    expect(contents((await reader.getState(config)).values.messages)).toEqual(["q1", "answer 1", "fork", "answer 3"]);
  });

  it("drops a thread's message rows with the thread", async () => {
    const checkpointer = await openCheckpointer(storage());
    const graph = chatGraph(checkpointer.saver);
    await graph.invoke({ messages: [new HumanMessage("hi")] }, { configurable: { thread_id: "gone" } });
    await graph.invoke({ messages: [new HumanMessage("hi")] }, { configurable: { thread_id: "kept" } });
    expect(await messageRows("gone")).toBe(2);
    await checkpointer.saver.deleteThread("gone");
    expect(await messageRows("gone")).toBe(0);
    expect(await messageRows("kept")).toBe(2);
    expect(await checkpointer.saver.getTuple({ configurable: { thread_id: "gone" } })).toBeUndefined();
  });

  it("keeps LangGraph's own format with mode: full, and a delta checkpointer then opens and extends those threads", async () => {
    const full = await openCheckpointer(storage("full"));
    // Still wrapped, so references delta mode wrote resolve; its writes hold whole lists.
    expect((full.saver as DeltaCheckpointSaver).inner).toBeInstanceOf(PostgresSaver);
    const config = { configurable: { thread_id: "full" } };
    const fullGraph = chatGraph(full.saver);
    await fullGraph.invoke({ messages: [new HumanMessage("one")] }, config);
    await fullGraph.invoke({ messages: [new HumanMessage("two")] }, config);
    expect(contents((await fullGraph.getState(config)).values.messages)).toEqual(["one", "answer 1", "two", "answer 3"]);
    expect(await messageRows("full")).toBe(0);
    const longest = Math.max(...(await messageBlobs("full")).map(({ blob }) => (JSON.parse(blob.toString("utf8")) as unknown[]).length));
    expect(longest).toBe(4);

    const delta = await openCheckpointer(storage("delta"));
    const deltaGraph = chatGraph(delta.saver);
    expect(contents((await deltaGraph.getState(config)).values.messages)).toEqual(["one", "answer 1", "two", "answer 3"]);
    await deltaGraph.invoke({ messages: [new HumanMessage("three")] }, config);
    expect(contents((await deltaGraph.getState(config)).values.messages)).toEqual([
      "one",
      "answer 1",
      "two",
      "answer 3",
      "three",
      "answer 5",
    ]);
    // The whole-list thread's messages are stored once by its first delta write, then only new ones.
    expect(await messageRows("full")).toBe(6);
  });
});
