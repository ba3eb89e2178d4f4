import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type Checkpoint, emptyCheckpoint, MemorySaver, uuid6 } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { DeltaCheckpointSaver, isMessagesRef, MemoryMessageLog } from "../src/index.js";

const thread = { configurable: { thread_id: "t", checkpoint_ns: "" } };

function checkpointWith(messages: unknown[]): Checkpoint {
  const base = emptyCheckpoint();
  return { ...base, id: uuid6(-1), channel_values: { messages }, channel_versions: { messages: 1 } };
}

async function putList(saver: DeltaCheckpointSaver, parent: string | undefined, messages: unknown[]) {
  const config = { configurable: { ...thread.configurable, ...(parent ? { checkpoint_id: parent } : {}) } };
  const next = await saver.put(config, checkpointWith(messages), { source: "loop", step: 0, parents: {} }, { messages: 1 });
  return next.configurable?.checkpoint_id as string;
}

describe("DeltaCheckpointSaver", () => {
  it("stores each message once across checkpoints and reads every checkpoint back whole", async () => {
    const inner = new MemorySaver();
    const log = new MemoryMessageLog();
    const saver = new DeltaCheckpointSaver(inner, log);
    const a = new HumanMessage({ id: "h1", content: "hi" });
    const b = new AIMessage({ id: "a1", content: "hello" });
    const first = await putList(saver, undefined, [a]);
    const second = await putList(saver, first, [a, b]);
    expect(await log.lastSeq("t", "")).toBe(1); // two rows for two messages, not three
    const stored = (await inner.getTuple({ configurable: { ...thread.configurable, checkpoint_id: second } }))?.checkpoint.channel_values
      .messages;
    expect(isMessagesRef(stored)).toBe(true);
    saver.clearCache();
    const older = await saver.getTuple({ configurable: { ...thread.configurable, checkpoint_id: first } });
    expect(((older?.checkpoint.channel_values.messages ?? []) as HumanMessage[]).map((m) => m.content)).toEqual(["hi"]);
    const latest = await saver.getTuple(thread);
    expect(((latest?.checkpoint.channel_values.messages ?? []) as HumanMessage[]).map((m) => m.content)).toEqual(["hi", "hello"]);
  });

  it("stores a replaced message as a new row and keeps the others by reference", async () => {
    const log = new MemoryMessageLog();
    const saver = new DeltaCheckpointSaver(new MemorySaver(), log);
    const a = new HumanMessage({ id: "h1", content: "hi" });
    const b = new AIMessage({ id: "a1", content: "hello" });
    const first = await putList(saver, undefined, [a, b]);
    await putList(saver, first, [new AIMessage({ id: "s1", content: "summary" }), b]);
    expect(await log.lastSeq("t", "")).toBe(2);
    const latest = await saver.getTuple(thread);
    expect(((latest?.checkpoint.channel_values.messages ?? []) as AIMessage[]).map((m) => m.content)).toEqual(["summary", "hello"]);
  });

  it('with write: "full" stores whole lists, still resolves references delta mode wrote, and deletes a thread\'s rows', async () => {
    const inner = new MemorySaver();
    const log = new MemoryMessageLog();
    const a = new HumanMessage({ id: "h1", content: "hi" });
    const b = new AIMessage({ id: "a1", content: "hello" });
    const written = await putList(new DeltaCheckpointSaver(inner, log), undefined, [a, b]);
    const full = new DeltaCheckpointSaver(inner, log, { write: "full" });
    const read = (await full.getTuple(thread))?.checkpoint.channel_values.messages as AIMessage[];
    expect(read.map((m) => m.content)).toEqual(["hi", "hello"]);
    const next = await putList(full, written, [...read, new HumanMessage({ id: "h2", content: "more" })]);
    const stored = (await inner.getTuple({ configurable: { ...thread.configurable, checkpoint_id: next } }))?.checkpoint.channel_values
      .messages as HumanMessage[];
    expect(stored.map((m) => m.content)).toEqual(["hi", "hello", "more"]);
    expect(await log.lastSeq("t", "")).toBe(1);
    await full.deleteThread("t");
    expect(await log.lastSeq("t", "")).toBe(-1);
    expect(await full.getTuple(thread)).toBeUndefined();
  });

  it("reads a checkpoint that holds its list whole (older data) as it is, and the next write stores it once", async () => {
    const inner = new MemorySaver();
    const log = new MemoryMessageLog();
    const a = new HumanMessage({ id: "h1", content: "old" });
    const legacy = await inner.put(thread, checkpointWith([a]), { source: "loop", step: 0, parents: {} });
    const saver = new DeltaCheckpointSaver(inner, log);
    const read = await saver.getTuple(thread);
    const list = read?.checkpoint.channel_values.messages as HumanMessage[];
    expect(list.map((m) => m.content)).toEqual(["old"]);
    await putList(saver, legacy.configurable?.checkpoint_id as string, [...list, new AIMessage({ id: "a1", content: "new" })]);
    expect(await log.lastSeq("t", "")).toBe(1);
    const latest = await saver.getTuple(thread);
    expect(((latest?.checkpoint.channel_values.messages ?? []) as HumanMessage[]).map((m) => m.content)).toEqual(["old", "new"]);
  });
});
