import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  HumanMessageChunk,
  RemoveMessage,
  SystemMessage,
  SystemMessageChunk,
  ToolMessage,
  ToolMessageChunk,
} from "@langchain/core/messages";
import { type Checkpoint, emptyCheckpoint, JsonPlusSerializer, MemorySaver, uuid6 } from "@langchain/langgraph-checkpoint";
import { describe, expect, it, vi } from "vitest";
import { DeltaCheckpointSaver, MemoryMessageLog } from "../src/index.js";

const thread = { configurable: { thread_id: "t", checkpoint_ns: "" } };

function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = { down: value };
  return value;
}

/** Messages as a thread holds them, from the everyday to the odd. */
function corpus(): unknown[] {
  return [
    new HumanMessage({ content: "plain question", id: "h1" }),
    new HumanMessage({ content: "", id: "h-empty", name: "ann" }),
    new HumanMessage({ content: 'ünïcødé ✓ \u2028 "quotes" \\ backslash', id: "h-unicode" }),
    new HumanMessage({
      content: [
        { type: "text", text: "what is in this picture?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
      ],
      id: "h-multimodal",
    }),
    new AIMessage({
      content: "calling tools",
      id: "a-tools",
      tool_calls: [
        { id: "c1", name: "search", args: { q: "weather", n: 3, nested: { deep: [1, 2, { x: null }] } }, type: "tool_call" },
        { id: "c2", name: "add", args: { a: 1.5, b: -2 } },
      ],
      invalid_tool_calls: [{ id: "c3", name: "broken", args: "{not json", error: "bad json", type: "invalid_tool_call" }],
      usage_metadata: {
        input_tokens: 10,
        output_tokens: 5,
        total_tokens: 15,
        input_token_details: { cache_read: 4 },
        output_token_details: { reasoning: 2 },
      },
      response_metadata: { model_name: "m", finish_reason: "tool_calls", system_fingerprint: null, logprobs: { content: [] } },
      additional_kwargs: { tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: "{}" } }], refusal: null },
    }),
    new AIMessage({
      content: [
        { type: "thinking", thinking: "hmm", signature: "sig" },
        { type: "text", text: "answer", annotations: [] },
      ],
      id: "a-blocks",
      name: "lead",
    }),
    new AIMessage({ content: "no id here" }),
    new AIMessageChunk({
      content: "partial",
      id: "a-chunk",
      tool_call_chunks: [{ id: "c9", name: "add", args: '{"a":', index: 0, type: "tool_call_chunk" }],
      usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
    }),
    new ToolMessage({ content: "3", tool_call_id: "c2", name: "add", id: "t1" }),
    new ToolMessage({
      content: [{ type: "text", text: "chart drawn" }],
      tool_call_id: "c1",
      name: "chart",
      id: "t2",
      status: "error",
      artifact: { points: [1, 2, 3], kind: "line", meta: { empty: {}, list: [] } },
    }),
    new ToolMessage({ content: "with a string artifact", tool_call_id: "c4", artifact: "raw", id: "t3" }),
    new SystemMessage({ content: "you are a bench", id: "s1" }),
    new ChatMessage({ content: "from a role", role: "critic", id: "ch1" }),
    new FunctionMessage({ content: "{}", name: "fn", id: "f1" }),
    new RemoveMessage({ id: "gone" }),
    new HumanMessageChunk({ content: "human chunk", id: "hc1" }),
    new SystemMessageChunk({ content: "system chunk", id: "sc1" }),
    new ToolMessageChunk({ content: "tool chunk", tool_call_id: "c5", id: "tc1" }),
    // The odd ones, which the serializer reads: user data with an `lc` key (escaped when stored), an `undefined`
    // (stored as a marker), a Set, an unaliased snake_case key, and nesting beyond the fast path's depth.
    new ToolMessage({ content: "lc inside", tool_call_id: "c6", id: "odd-lc", artifact: { lc: 1, type: "constructor", id: ["x"] } }),
    new AIMessage({ content: "undefined inside", id: "odd-undefined", additional_kwargs: { kept: 1, dropped: undefined } }),
    new AIMessage({ content: "a set inside", id: "odd-set", response_metadata: { tags: new Set(["a"]) } }),
    new HumanMessage({ content: "snake", id: "odd-snake", tool_call_id: "t" } as never),
    new HumanMessage({ content: [{ type: "text", text: "deep", extra: nested(45) }] as never, id: "odd-deep" }),
    // Not a message at all: a dict kept in the list.
    { role: "user", content: "a dict", id: "d1" },
  ];
}

function checkpointWith(messages: unknown[]): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages }, channel_versions: { messages: 1 } };
}

async function readBack(saver: DeltaCheckpointSaver, messages: unknown[]): Promise<unknown[]> {
  await saver.put(thread, checkpointWith(messages), { source: "loop", step: 0, parents: {} }, { messages: 1 });
  saver.clearCache();
  const tuple = await saver.getTuple(thread);
  return tuple?.checkpoint.channel_values.messages as unknown[];
}

describe("reading stored messages", () => {
  it("gives what the serializer gives for every message, class, field and kwarg alike", async () => {
    const serde = new JsonPlusSerializer();
    const messages = corpus();
    const expected = await Promise.all(messages.map(async (m) => serde.loadsTyped(...(await serde.dumpsTyped(m)))));
    const saver = new DeltaCheckpointSaver(new MemorySaver(), new MemoryMessageLog());
    const actual = await readBack(saver, messages);
    expect(actual).toHaveLength(expected.length);
    for (let i = 0; i < expected.length; i++) {
      const want = expected[i] as BaseMessage;
      const got = actual[i] as BaseMessage;
      const what = `item ${i} (${(messages[i] as { id?: string }).id})`;
      expect(got?.constructor, what).toBe(want?.constructor);
      expect(got, what).toStrictEqual(want);
      expect(got?.lc_kwargs, what).toStrictEqual(want?.lc_kwargs);
      expect(JSON.stringify(got), what).toBe(JSON.stringify(want));
    }
  });

  it("builds plain messages itself and leaves the rest to the serializer", async () => {
    const saver = new DeltaCheckpointSaver(new MemorySaver(), new MemoryMessageLog());
    const loads = vi.spyOn(saver.serde, "loadsTyped");
    const plain = [new HumanMessage({ content: "q", id: "p1" }), new AIMessage({ content: "a", id: "p2", tool_calls: [] })];
    await readBack(saver, plain);
    const text = (data: Uint8Array | string) => (typeof data === "string" ? data : new TextDecoder().decode(data));
    const forMessages = () => loads.mock.calls.filter(([, data]) => /"p[123]"/.test(text(data)));
    expect(forMessages()).toEqual([]);
    const odd = new ToolMessage({ content: "x", tool_call_id: "c", id: "p3", artifact: { lc: 2 } });
    const read = await readBack(saver, [...plain, odd]);
    expect(forMessages()).toHaveLength(1);
    expect((read[2] as ToolMessage).artifact).toEqual({ lc: 2 });
  });

  it("leaves every row to a serializer other than LangGraph's own", async () => {
    class CountingSerializer extends JsonPlusSerializer {
      reads = 0;
      override async loadsTyped(type: string, data: Uint8Array | string) {
        this.reads++;
        return super.loadsTyped(type, data);
      }
    }
    const inner = new MemorySaver(new CountingSerializer());
    const saver = new DeltaCheckpointSaver(inner, new MemoryMessageLog());
    const read = await readBack(saver, [new HumanMessage({ content: "q", id: "c1" })]);
    expect((read[0] as HumanMessage).content).toBe("q");
    expect((saver.serde as CountingSerializer).reads).toBeGreaterThan(0);
  });
});
