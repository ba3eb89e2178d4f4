import type { AIMessageChunk } from "@langchain/core/messages";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedChatModel, scriptedModel } from "../src/testing/index.js";

const weather = tool(async ({ city }: { city: string }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "Current weather for a city.",
  schema: z.object({ city: z.string() }),
});

async function collect(stream: AsyncIterable<AIMessageChunk>): Promise<AIMessageChunk[]> {
  const chunks: AIMessageChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe("ScriptedChatModel", () => {
  it("answers invoke with the scripted text, an id <idPrefix>-<call index> and the usage", async () => {
    const model = scriptedModel([{ text: "hello there", usage: { input_tokens: 7, output_tokens: 2 } }, { text: "again" }]);
    const reply = await model.invoke("hi");
    expect(reply.content).toBe("hello there");
    expect(reply.id).toBe(`${model.idPrefix}-0`);
    expect(reply.usage_metadata).toEqual({ input_tokens: 7, output_tokens: 2, total_tokens: 9 });
    expect((await model.invoke("more")).id).toBe(`${model.idPrefix}-1`);
  });

  it("gives each instance its own readable id prefix unless the script names one", async () => {
    const [a, b] = [scriptedModel([]), scriptedModel([])];
    expect(a.idPrefix).toMatch(/^scripted-[0-9a-f]{8}$/);
    expect(b.idPrefix).toMatch(/^scripted-[0-9a-f]{8}$/);
    expect(a.idPrefix).not.toBe(b.idPrefix);
    const named = new ScriptedChatModel({ steps: [{ text: "x" }, { text: "y", id: "mine" }], idPrefix: "lead" });
    expect([(await named.invoke("1")).id, (await named.invoke("2")).id]).toEqual(["lead-0", "mine"]);
  });

  it("gives tool calls deterministic ids call_<n>_<i> unless the step names one", async () => {
    const model = scriptedModel([
      { text: "one" },
      {
        toolCalls: [
          { name: "a", args: { x: 1 } },
          { name: "b", args: {}, id: "mine" },
        ],
      },
    ]);
    await model.invoke("first");
    const reply = await model.invoke("second");
    expect(reply.tool_calls?.map((c) => [c.name, c.args, c.id])).toEqual([
      ["a", { x: 1 }, "call_1_0"],
      ["b", {}, "mine"],
    ]);
  });

  it("streams text word by word under one message id, with usage only on the last chunk", async () => {
    const model = scriptedModel([{ text: "The quick brown fox", usage: { input_tokens: 3, output_tokens: 4 } }]);
    const chunks = await collect(await model.stream("go"));
    expect(chunks.filter((c) => c.text !== "").map((c) => c.text)).toEqual(["The ", "quick ", "brown ", "fox"]);
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set([`${model.idPrefix}-0`]));
    expect(chunks.slice(0, -1).every((c) => c.usage_metadata === undefined)).toBe(true);
    expect(chunks.at(-1)?.usage_metadata).toEqual({ input_tokens: 3, output_tokens: 4, total_tokens: 7 });
  });

  it("streams tool calls as tool_call_chunks that aggregate into whole tool calls", async () => {
    const model = scriptedModel([{ text: "Checking.", toolCalls: [{ name: "get_weather", args: { city: "Paris", days: 2 } }] }]);
    const chunks = await collect(await model.stream("weather?"));
    expect(chunks.some((c) => (c.tool_call_chunks?.length ?? 0) > 0)).toBe(true);
    const merged = chunks.reduce((a, b) => a.concat(b));
    expect(merged.tool_calls).toEqual([{ type: "tool_call", name: "get_weather", args: { city: "Paris", days: 2 }, id: "call_0_0" }]);
    expect(merged.text).toBe("Checking.");
  });

  it("records every call with its messages and the names of the bound tools", async () => {
    const model = scriptedModel([{ text: "a" }, { text: "b" }]);
    await model.invoke([new HumanMessage("plain")]);
    await model.bindTools([weather]).invoke([new HumanMessage("with tools")]);
    expect(model.callCount).toBe(2);
    expect(model.calls.map((c) => c.messages.map((m) => m.text))).toEqual([["plain"], ["with tools"]]);
    expect(model.calls.map((c) => c.tools)).toEqual([[], ["get_weather"]]);
  });

  it("asks a script function with the messages and the call index", async () => {
    const model = new ScriptedChatModel({
      steps: [{ text: "from the list" }],
      respond: (messages, callIndex) => ({ text: `call ${callIndex} saw ${messages.at(-1)?.text}` }),
    });
    expect((await model.invoke("x")).text).toBe("from the list");
    expect((await model.invoke("ping")).text).toBe("call 1 saw ping");
  });

  it("throws a step's error, given as a string or an Error", async () => {
    const boom = new TypeError("typed failure");
    const model = scriptedModel([{ error: "scripted failure" }, { error: boom }]);
    await expect(model.invoke("a")).rejects.toThrow("scripted failure");
    await expect(model.invoke("b")).rejects.toBe(boom);
  });

  it("names the call index when the script runs out", async () => {
    const model = scriptedModel([{ text: "only one" }]);
    await model.invoke("a");
    await expect(model.invoke("second question")).rejects.toThrow(/call #1 .*1 step/);
  });

  it("waits delayMs on a timer, so concurrent calls overlap instead of queueing", async () => {
    const model = new ScriptedChatModel(() => ({ text: "late", delayMs: 150 }));
    // A timer lets the event loop turn while the calls wait; a blocking wait would not.
    let loopTurned = false;
    setTimeout(() => {
      loopTurned = true;
    }, 0);
    // What each call saw when it finished: how many calls had begun by then, and whether the loop had turned.
    const atFinish: Array<{ begun: number; loopTurned: boolean }> = [];
    await Promise.all(
      Array.from({ length: 5 }, (_, i) => model.invoke(`q${i}`).then(() => atFinish.push({ begun: model.callCount, loopTurned }))),
    );
    // Every call had begun its delay before the first one finished: they overlapped.
    expect(atFinish).toEqual(Array.from({ length: 5 }, () => ({ begun: 5, loopTurned: true })));
  });

  it("cuts a delay short when the call is aborted", async () => {
    const model = scriptedModel([{ text: "never", delayMs: 10_000 }]);
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 30);
    await expect(model.invoke("wait", { signal: controller.signal })).rejects.toThrow(/abort/i);
    // Well short of the 10 s delay, with room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("drives a createAgent tool round trip: the tool runs and the model sees its result", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }, { text: "It is sunny in Oslo." }]);
    const agent = createAgent({ model, tools: [weather] });
    const result = await agent.invoke({ messages: [new HumanMessage("Weather in Oslo?")] });
    expect(result.messages.at(-1)?.text).toBe("It is sunny in Oslo.");
    expect(model.calls[0]?.tools).toEqual(["get_weather"]);
    const toolMessage = model.calls[1]?.messages.find((m): m is ToolMessage => ToolMessage.isInstance(m));
    expect(toolMessage?.tool_call_id).toBe("call_0_0");
    expect(toolMessage?.text).toBe("sunny in Oslo");
  });

  it("keeps both replies when two scripted models answer on one thread (their reply ids differ)", async () => {
    // A lead and a subagent, or two clients on one checkpointer: each model's first reply lands in the same thread.
    const checkpointer = new MemorySaver();
    const thread = { configurable: { thread_id: "shared" } };
    const lead = createAgent({ model: scriptedModel([{ text: "from the lead" }]), tools: [], checkpointer });
    const other = createAgent({ model: scriptedModel([{ text: "from the other model" }]), tools: [], checkpointer });
    await lead.invoke({ messages: [new HumanMessage("first")] }, thread);
    const { messages } = await other.invoke({ messages: [new HumanMessage("second")] }, thread);
    expect(messages.map((m) => [m.getType(), m.text])).toEqual([
      ["human", "first"],
      ["ai", "from the lead"],
      ["human", "second"],
      ["ai", "from the other model"],
    ]);
  });

  it("streams deltas to an agent's messages stream", async () => {
    const model = scriptedModel([{ text: "one two three four" }]);
    const agent = createAgent({ model, tools: [] });
    const texts: string[] = [];
    for await (const [chunk] of await agent.stream({ messages: [new HumanMessage("count")] }, { streamMode: "messages" })) {
      if (chunk.text) texts.push(chunk.text);
    }
    expect(texts).toEqual(["one ", "two ", "three ", "four"]);
  });
});
