import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import { type SerializedMessages, type StreamEvent, StreamTranslator, serializeMessage, type ValuesEvent } from "../src/client/events.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

function valuesOf(events: StreamEvent[]): ValuesEvent["data"][] {
  return events.filter((e): e is ValuesEvent => e.type === "values").map((e) => e.data);
}

describe("values events serialize each message once", () => {
  it("give the same messages as serializing every message of each state, across edits, removals and runs", () => {
    const cache: SerializedMessages = new WeakMap();
    const history = [new HumanMessage({ content: "hi", id: "h1" }), new AIMessage({ content: "hello", id: "a1" })];
    const input = new HumanMessage({ content: "chart please", id: "h2" });
    const call = new AIMessage({ content: "", id: "a2", tool_calls: [{ id: "c1", name: "chart", args: { kind: "line" } }] });
    const result = new ToolMessage({ content: "drawn", id: "t1", tool_call_id: "c1", name: "chart", artifact: { points: [1] } });
    const answer = new AIMessage({ content: [{ type: "text", text: "Here." }], id: "a3", additional_kwargs: { refusal: undefined, x: 1 } });
    // The same id, a new object: a message replaced in state (the way the reducer replaces one).
    const edited = new AIMessage({ content: "hello again", id: "a1" });
    const more = new AIMessage({ content: "later", id: "a4" });
    const states: BaseMessage[][] = [
      [...history, input],
      [...history, input, call],
      [...history, input, call, result],
      [...history, input, call, result, answer],
      [history[0] as BaseMessage, edited, input, call, result, answer],
      [edited, input, call, answer],
      [edited, input, call, answer, more],
      [edited, input, call, answer, more],
    ];
    const first = new StreamTranslator({ inputMessageId: "h2", serialized: cache });
    const events = states.flatMap((messages) => first.translate("values", { messages }));
    const seen = valuesOf(events);
    // A second run over the thread as the first left it, sharing the cache as a client's runs do.
    const next = new HumanMessage({ content: "again", id: "h3" });
    const second = new StreamTranslator({ inputMessageId: "h3", serialized: cache });
    const thread = [edited, input, call, answer, more, next];
    const laterEvents = second.translate("values", { messages: thread });
    expect(seen.map((v) => v.messages)).toEqual(states.map((s) => s.map(serializeMessage)));
    expect(valuesOf(laterEvents)[0]?.messages).toEqual(thread.map(serializeMessage));
    // Each tool call, tool result and unstreamed text of the run goes out once, the thread's history never.
    expect(events.filter((e) => e.type === "messages-tuple").map((e) => e.data)).toEqual([
      { type: "ai", id: "a2", content: "", tool_calls: [{ id: "c1", name: "chart", args: { kind: "line" } }] },
      { type: "tool", id: "t1", tool_call_id: "c1", name: "chart", content: "drawn", status: "success", artifact: { points: [1] } },
      { type: "ai", id: "a3", content: "Here." },
      { type: "ai", id: "a4", content: "later" },
    ]);
    expect(laterEvents.filter((e) => e.type === "messages-tuple")).toEqual([]);
    expect(seen[4]?.messages[1]?.content).toBe("hello again");
    expect(first.finalText).toBe("later");
    expect(second.finalText).toBe("");
  });
});

describe("AntlerClient.stream values", () => {
  it("carry the thread's whole state at each step, as the thread reads afterwards, turn after turn", async () => {
    const scripted = scriptedModelsPlugin({
      m: [{ toolCalls: [{ name: "write_todos", args: { todos: [] }, id: "w1" }] }, { text: "first" }, { text: "second" }],
    });
    const c = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [scripted],
      cwd: tempDir(),
      env: {},
      discover: false,
    });
    clients.push(c);
    for (const [turn, text] of [
      [1, "first"],
      [2, "second"],
    ] as const) {
      const events: StreamEvent[] = [];
      for await (const event of c.stream(`question ${turn}`, { threadId: "v1" })) events.push(event);
      const values = valuesOf(events);
      expect(values.length).toBeGreaterThan(1);
      const thread = await c.getThread("v1");
      expect(values.at(-1)?.messages).toEqual(thread.messages);
      expect(thread.messages.at(-1)?.content).toBe(text);
      // Every snapshot is a prefix-wise growth of the thread: earlier events are not changed by later ones.
      for (let i = 1; i < values.length; i++) {
        const before = values[i - 1]?.messages ?? [];
        expect(values[i]?.messages.slice(0, before.length)).toEqual(before);
      }
    }
  });
});
