import { existsSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { threadPaths } from "@antler/kernel";
import { loadAuthoring } from "@antler/kernel/authoring";
import { ScriptedChatModel, scriptedModelsPlugin } from "@antler/kernel/testing";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AntlerClient, createAntlerAgent } from "../src/index.js";
import { saveUpload } from "../src/stores/uploads.js";
import { createPresentFilesTool } from "../src/tools/present-files.js";
import { tempDir } from "./fixtures.js";

// These tests hand tools to LangChain with no kernel started, so they load LangChain for the authoring helpers first.
beforeAll(() => loadAuthoring());

const add = tool(({ a, b }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});
// One tool call, then an answer, with token usage: every default middleware has something to look at.
const toolThenAnswer = () =>
  new ScriptedChatModel((messages) =>
    ToolMessage.isInstance(messages.at(-1))
      ? { text: "3", usage: { input_tokens: 20, output_tokens: 5 } }
      : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 10, output_tokens: 3 } },
  );
const ask = (
  thread: string,
  user = "ann",
): [{ messages: HumanMessage[] }, { configurable: { thread_id: string }; context: { thread_id: string; user_id: string } }] => [
  { messages: [new HumanMessage("What is 1 + 2?")] },
  { configurable: { thread_id: thread }, context: { thread_id: thread, user_id: user } },
];

describe("thread folders are made by the first write", () => {
  it("a run with the full default pipeline that writes nothing creates no folder at all", async () => {
    const baseDir = tempDir();
    const { agent } = createAntlerAgent({ model: toolThenAnswer(), tools: [add], baseDir, checkpointer: new MemorySaver() });
    await agent.invoke(...ask("quiet"));
    await agent.invoke(...ask("quiet"));
    expect(existsSync(join(baseDir, "users"))).toBe(false);
  });

  it("an upload to a fresh thread makes the uploads folder, and the next turn announces the file", async () => {
    const baseDir = tempDir();
    const paths = threadPaths(baseDir, "ann", "fresh");
    const source = join(tempDir(), "data.csv");
    writeFileSync(source, "a,b\n1,2\n");
    const record = await saveUpload(paths, source);
    expect(record.virtual_path).toBe("/mnt/user-data/uploads/data.csv");
    expect(await readFile(join(paths.uploads, "data.csv"), "utf8")).toBe("a,b\n1,2\n");
    const seen: string[] = [];
    const model = new ScriptedChatModel((messages) => {
      seen.push(messages.map((m) => String(m.content)).join("\n"));
      return { text: "ok" };
    });
    const { agent } = createAntlerAgent({ model, baseDir });
    await agent.invoke(...ask("fresh"));
    expect(seen[0]).toContain("/mnt/user-data/uploads/data.csv (8 bytes)");
  });

  it("present_files on a thread with no outputs folder yet refuses the file as missing instead of failing the run", async () => {
    const baseDir = tempDir();
    const presented = createPresentFilesTool({ baseDir });
    const result = await presented.invoke(
      { type: "tool_call", id: "c1", name: presented.name, args: { filepaths: ["/mnt/user-data/outputs/report.md"] } },
      { context: { thread_id: "fresh", user_id: "ann" } },
    );
    expect(JSON.stringify(result)).toMatch(/report\.md/);
    expect(JSON.stringify(result)).toMatch(/does not exist|missing|not found/i);
    expect(existsSync(join(baseDir, "users"))).toBe(false);
  });
});

describe("an idle thread's checkpoint holds only what was set", () => {
  it("stores no entry for state fields nobody wrote, and a written field round-trips through the checkpoint", async () => {
    const saver = new MemorySaver();
    const { agent } = createAntlerAgent({ model: toolThenAnswer(), tools: [add], baseDir: tempDir(), checkpointer: saver });
    await agent.invoke(...ask("idle"));
    const tuple = await saver.getTuple({ configurable: { thread_id: "idle" } });
    const stored = Object.keys(tuple?.checkpoint.channel_values ?? {}).filter((k) => !k.startsWith("__") && !k.includes(":"));
    // token_usage is the one thread field this turn wrote; title, thread_data, todos, artifacts ... were not.
    expect(stored.sort()).toEqual(["messages", "token_usage"]);
    expect(JSON.stringify(tuple?.checkpoint.channel_values)).not.toContain('"undefined"');
    const state = (await (agent as unknown as { getState(c: unknown): Promise<{ values: Record<string, unknown> }> }).getState({
      configurable: { thread_id: "idle" },
    })) as { values: Record<string, unknown> };
    expect(state.values.token_usage).toEqual({ input_tokens: 30, output_tokens: 8, total_tokens: 38 });
    expect(state.values.title).toBeUndefined();
    expect(state.values.artifacts).toBeUndefined();
    // The next turn adds to the restored value.
    await agent.invoke(...ask("idle"));
    const again = await (agent as unknown as { getState(c: unknown): Promise<{ values: Record<string, unknown> }> }).getState({
      configurable: { thread_id: "idle" },
    });
    expect(again.values.token_usage).toEqual({ input_tokens: 60, output_tokens: 16, total_tokens: 76 });
  });

  it("writes each model reply to the thread once, even when a middleware also updates state in that step", async () => {
    // TokenUsage updates token_usage after every model call; the reply must not be written a second time with it.
    const saver = new MemorySaver();
    const { agent } = createAntlerAgent({ model: toolThenAnswer(), tools: [add], baseDir: tempDir(), checkpointer: saver });
    const result = (await agent.invoke(...ask("once"))) as { messages: { getType(): string }[] };
    expect(result.messages.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
    const writes = Object.values(saver.writes).flatMap((byTask) => Object.values(byTask));
    const messageWrites = writes.filter(([, channel]) => channel === "messages");
    expect(messageWrites).toHaveLength(4); // the question, the tool call, the tool result, the answer
  });
});

describe("a turn's start reads the thread's latest checkpoint, never its history", () => {
  it("reads the same number of checkpoints at the 3rd and the 12th turn (no ancestor walk), with the title and every default middleware on", async () => {
    // Reducer fields written `undefined` (artifacts, todos, ...) are left out of checkpoints. LangGraph took such
    // a field for one stored as deltas and rebuilt it by reading every ancestor checkpoint: one more read per turn
    // of history, at every turn.
    let reads = 0;
    class CountingSaver extends MemorySaver {
      override async getTuple(config: Parameters<MemorySaver["getTuple"]>[0]) {
        reads++;
        return super.getTuple(config);
      }
      // The SQLite and PostgreSQL savers walk ancestors with one getTuple each; MemorySaver has a shortcut.
      override getDeltaChannelHistory = BaseCheckpointSaver.prototype.getDeltaChannelHistory;
    }
    const c = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" } },
      plugins: [scriptedModelsPlugin({ m: { respond: () => ({ text: "Fine." }) } })],
      checkpointer: new CountingSaver(),
      cwd: tempDir(),
      env: {},
      discover: false,
    });
    try {
      const readsPerTurn: number[] = [];
      for (let turn = 1; turn <= 12; turn++) {
        const before = reads;
        await c.chat(`hello ${turn}`, { threadId: "long" });
        readsPerTurn.push(reads - before);
      }
      const thread = await c.getThread("long");
      expect(thread.title).toBeTruthy(); // the title middleware ran (its write is what left the fields unset)
      expect(readsPerTurn[11]).toBe(readsPerTurn[2]);
    } finally {
      await c.close();
    }
  });
});
