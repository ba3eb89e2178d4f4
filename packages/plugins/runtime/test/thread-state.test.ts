// Thread state outside runs: history of checkpoints, state at a checkpoint, updating state, copying a thread and
// merging its metadata. SQLite storage with the delta checkpointer, a scripted model that calls a tool each turn.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { threadPaths } from "@antler/kernel";
import { afterEach, describe, expect, it } from "vitest";
import type { AntlerClient } from "../src/client/client.js";
import { weatherClient } from "./fixtures/weather.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function open() {
  const cwd = tempDir();
  const client = await weatherClient({ storage: { backend: "sqlite" }, cwd });
  clients.push(client);
  return { client };
}

const texts = (messages: Array<{ type: string; content: string }>) => messages.map((m) => `${m.type}: ${m.content}`);

describe("thread state outside runs", () => {
  it("lists a thread's checkpoints newest first, pages with before, and reads the state at one of them", async () => {
    const { client } = await open();
    await client.createThread({ threadId: "t1", userId: "alice" });
    await client.invoke("weather in Oslo?", { threadId: "t1", userId: "alice" });
    const history = await client.getThreadHistory("t1", { userId: "alice", limit: 100 });
    expect(history.length).toBeGreaterThan(2);
    const [latest, previous] = history;
    expect(latest?.values.messages.at(-1)).toMatchObject({ type: "ai", content: "It is Oslo: 21°C, clear." });
    expect(latest?.next).toEqual([]);
    expect(latest?.parent_checkpoint_id).toBe(previous?.checkpoint_id);
    expect(latest?.metadata.source).toBe("loop");
    expect(history.at(-1)?.parent_checkpoint_id).toBeNull();
    // Newest first, each older one holding no more messages.
    for (let i = 1; i < history.length; i++) {
      expect((history[i]?.values.messages.length ?? 0) <= (history[i - 1]?.values.messages.length ?? 0)).toBe(true);
    }
    const page = await client.getThreadHistory("t1", { userId: "alice", limit: 2, before: latest?.checkpoint_id as string });
    expect(page.map((c) => c.checkpoint_id)).toEqual(history.slice(1, 3).map((c) => c.checkpoint_id));

    const atPrevious = await client.getThreadState("t1", { userId: "alice", checkpointId: previous?.checkpoint_id as string });
    expect(atPrevious.values.messages).toEqual(previous?.values.messages);
    expect(atPrevious.next.length).toBeGreaterThan(0);
    expect((await client.getThreadState("t1", { userId: "alice" })).checkpoint_id).toBe(latest?.checkpoint_id);
    await expect(client.getThreadState("t1", { userId: "alice", checkpointId: "no-such" })).rejects.toMatchObject({
      code: "ANTLER_ERR_CHECKPOINT_NOT_FOUND",
    });
    await expect(client.getThreadHistory("t1", { userId: "bob" })).rejects.toMatchObject({ code: "ANTLER_ERR_THREAD_NOT_FOUND" });
  });

  it("updates state through the reducers: a message appended, one replaced by id, and the next run sees them", async () => {
    const { client } = await open();
    await client.invoke("weather in Oslo?", { threadId: "t2", userId: "alice" });
    const before = await client.getThreadState("t2", { userId: "alice" });
    const first = before.values.messages[0];
    const { checkpoint_id } = await client.updateThreadState("t2", {
      userId: "alice",
      values: {
        messages: [
          { type: "human", id: first?.id, content: "weather in Bergen?" },
          { type: "ai", content: "Noted." },
        ],
        title: "Edited",
      },
    });
    const after = await client.getThreadState("t2", { userId: "alice" });
    expect(after.checkpoint_id).toBe(checkpoint_id);
    expect(after.parent_checkpoint_id).toBe(before.checkpoint_id);
    expect(after.metadata.source).toBe("update");
    expect(after.values.title).toBe("Edited");
    expect(texts(after.values.messages)).toEqual(["human: weather in Bergen?", ...texts(before.values.messages.slice(1)), "ai: Noted."]);
    await client.invoke("and now?", { threadId: "t2", userId: "alice" });
    const thread = await client.getThread("t2", { userId: "alice" });
    expect(texts(thread.messages).slice(0, after.values.messages.length)).toEqual(texts(after.values.messages));

    await expect(
      client.updateThreadState("t2", { userId: "alice", values: { messages: [] }, asNode: "no_such_node" }),
    ).rejects.toMatchObject({
      code: "ANTLER_ERR_STATE_CONFLICT",
    });
  });

  it("copies a thread to a new one: messages, state, metadata, title and files, and the copy runs on its own", async () => {
    const { client } = await open();
    await client.createThread({ threadId: "src", userId: "alice", metadata: { project: "x" } });
    await client.invoke("weather in Oslo?", { threadId: "src", userId: "alice" });
    const base = client.kernel.paths.baseDir;
    mkdirSync(threadPaths(base, "alice", "src").outputs, { recursive: true });
    writeFileSync(`${threadPaths(base, "alice", "src").outputs}/report.md`, "# report");

    const copy = await client.copyThread("src", { userId: "alice", newThreadId: "dst" });
    expect(copy).toMatchObject({ thread_id: "dst", metadata: { project: "x" } });
    const source = await client.getThread("src", { userId: "alice" });
    const copied = await client.getThread("dst", { userId: "alice" });
    expect(copied.messages).toEqual(source.messages);
    expect(existsSync(`${threadPaths(base, "alice", "dst").outputs}/report.md`)).toBe(true);
    // One checkpoint, a fork; the copy's next turn does not touch the source.
    const history = await client.getThreadHistory("dst", { userId: "alice" });
    expect(history.map((c) => c.metadata.source)).toEqual(["fork"]);
    await client.invoke("weather in Rome?", { threadId: "dst", userId: "alice" });
    expect((await client.getThread("dst", { userId: "alice" })).messages.length).toBeGreaterThan(source.messages.length);
    expect((await client.getThread("src", { userId: "alice" })).messages).toEqual(source.messages);

    await expect(client.copyThread("src", { userId: "alice", newThreadId: "dst" })).rejects.toMatchObject({
      code: "ANTLER_ERR_STATE_CONFLICT",
    });
    await expect(client.copyThread("src", { userId: "bob" })).rejects.toMatchObject({ code: "ANTLER_ERR_THREAD_NOT_FOUND" });
  });

  it("merges metadata into a thread's, removing keys set to null and never keeping a trace id", async () => {
    const { client } = await open();
    await client.createThread({ threadId: "m", userId: "alice", metadata: { a: 1, b: 2 } });
    const updated = await client.updateThread("m", { userId: "alice", metadata: { b: null, c: 3, trace_id: "x" } });
    expect(updated.metadata).toEqual({ a: 1, c: 3 });
    expect((await client.getThreadRecord("m", { userId: "alice" })).metadata).toEqual({ a: 1, c: 3 });
    await expect(client.updateThread("m", { userId: "bob", metadata: {} })).rejects.toMatchObject({ code: "ANTLER_ERR_THREAD_NOT_FOUND" });
  });
});
