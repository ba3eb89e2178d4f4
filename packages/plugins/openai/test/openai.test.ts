import { ErrorCodes, ensureTraceContext, isAntlerError } from "@antler/kernel";
import {
  type OpenAICompatibleServer,
  type OpenAIServerOptions,
  runPluginConformance,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { type ModelEntry, providerTestKit } from "@antler/plugin-runtime/testing";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
// `langchain` is a dependency of the kernel, not of this package; reach it through the kernel's install.
import { createAgent } from "../../../kernel/node_modules/langchain/dist/index.js";
import openaiPlugin from "../src/index.js";

const weather = tool(async ({ city }: { city: string }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "Current weather for a city.",
  schema: z.object({ city: z.string() }),
});

const servers: OpenAICompatibleServer[] = [];
const kernelCloses: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(kernelCloses.splice(0).map((close) => close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(options: OpenAIServerOptions): Promise<OpenAICompatibleServer> {
  const s = await startOpenAICompatibleServer(options);
  servers.push(s);
  return s;
}

const { kernelWith } = providerTestKit(openaiPlugin, { onClose: (close) => kernelCloses.push(close) });

/** A kernel with one `provider: openai` entry pointing at `s`, and its model. */
async function modelFor(s: OpenAICompatibleServer, extra: Partial<ModelEntry> = {}): Promise<BaseChatModel> {
  const kernel = await kernelWith([
    { name: "gpt", provider: "openai", model: "gpt-test", base_url: s.url, api_key: "sk-test", max_retries: 0, ...extra },
  ]);
  return kernel.createModel();
}

type ChatBody = {
  model: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages: Array<Record<string, unknown>>;
  tools?: unknown[];
};
const bodyOf = (s: OpenAICompatibleServer, i: number) => s.requests.filter((r) => r.path === "/v1/chat/completions")[i]?.body as ChatBody;

runPluginConformance(openaiPlugin);

describe("@antler/plugin-openai", () => {
  it("loads through createKernel and builds a working model with kernel.createModel()", async () => {
    const s = await server({ script: [{ text: "Hello from the loopback server." }] });
    const kernel = await kernelWith([{ name: "gpt", provider: "openai", model: "gpt-test", base_url: s.url, api_key: "sk-test" }]);
    expect(kernel.plugins.map((p) => p.name)).toContain("@antler/plugin-openai");
    const reply = await (await kernel.createModel()).invoke("hi");
    expect(reply.text).toBe("Hello from the loopback server.");
  });

  it("sends a plain invoke over HTTP with the model id, the key and the messages", async () => {
    const s = await server({ script: [{ text: "pong" }] });
    const model = await modelFor(s);
    expect((await model.invoke([new HumanMessage("ping")])).text).toBe("pong");
    expect(s.requests[0]?.headers.authorization).toBe("Bearer sk-test");
    expect(bodyOf(s, 0)).toMatchObject({ model: "gpt-test", messages: [{ role: "user", content: "ping" }] });
  });

  it("streams text as several deltas and asks for usage in the stream", async () => {
    const s = await server({ script: [{ text: "one two three four five" }] });
    const model = await modelFor(s);
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await model.stream("count")) chunks.push(chunk);
    expect(chunks.filter((c) => c.text).map((c) => c.text)).toEqual(["one ", "two ", "three ", "four ", "five"]);
    expect(bodyOf(s, 0)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("reports usage metadata, invoked and streamed", async () => {
    const s = await server({
      script: [
        { text: "a", usage: { input_tokens: 12, output_tokens: 4 } },
        { text: "b", usage: { input_tokens: 30, output_tokens: 2 } },
      ],
    });
    const model = await modelFor(s);
    expect((await model.invoke("x")).usage_metadata).toMatchObject({ input_tokens: 12, output_tokens: 4, total_tokens: 16 });
    let merged: AIMessageChunk | undefined;
    for await (const chunk of await model.stream("y")) merged = merged ? merged.concat(chunk) : chunk;
    expect(merged?.usage_metadata).toMatchObject({ input_tokens: 30, output_tokens: 2, total_tokens: 32 });
  });

  it("runs a tool call round trip inside createAgent with a real tool", async () => {
    const s = await server({
      script: [{ toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }, { text: "It is sunny in Oslo." }],
    });
    const agent = createAgent({ model: await modelFor(s), tools: [weather] });
    const result = await agent.invoke({ messages: [new HumanMessage("Weather in Oslo?")] });
    expect(result.messages.at(-1)?.text).toBe("It is sunny in Oslo.");
    expect(bodyOf(s, 0).tools).toMatchObject([{ type: "function", function: { name: "get_weather" } }]);
    const second = bodyOf(s, 1).messages;
    expect(second.find((m) => m.role === "assistant")).toMatchObject({
      tool_calls: [{ id: "call_0_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
    });
    expect(second.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_0_0", content: "sunny in Oslo" });
  });

  it("parses streamed tool call deltas inside a streaming agent", async () => {
    const s = await server({ script: [{ toolCalls: [{ name: "get_weather", args: { city: "Lima" } }] }, { text: "Sunny in Lima." }] });
    const agent = createAgent({ model: await modelFor(s), tools: [weather] });
    const texts: string[] = [];
    for await (const [chunk] of await agent.stream({ messages: [new HumanMessage("Lima?")] }, { streamMode: "messages" })) {
      if (chunk.text && chunk.getType() === "ai") texts.push(chunk.text);
    }
    expect(texts).toEqual(["Sunny ", "in ", "Lima."]);
    expect(bodyOf(s, 0).stream).toBe(true);
    expect(bodyOf(s, 1).messages.find((m) => m.role === "tool")).toMatchObject({ content: "sunny in Lima" });
  });

  it("sends the bound trace id as X-Trace-Id on every request", async () => {
    const s = await server({ script: [{ text: "a" }, { text: "b" }] });
    const model = await modelFor(s);
    await ensureTraceContext("trace-openai-1", async () => {
      await model.invoke("x");
      for await (const _ of await model.stream("y")) {
        // drain
      }
    });
    expect(s.requests.map((r) => r.headers["x-trace-id"])).toEqual(["trace-openai-1", "trace-openai-1"]);
  });

  it("turns a 401 into MODEL_CALL_FAILED naming the model and trace id, with the key to check", async () => {
    const s = await server({
      handler: () => ({
        status: 401,
        body: { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } },
      }),
    });
    const model = await modelFor(s);
    const error = await ensureTraceContext("trace-401", () => model.invoke("hi")).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('model "gpt"');
    expect(message).toContain("HTTP 401");
    expect(message).toContain("Incorrect API key provided");
    expect(message).toContain("trace-401");
    expect(message).toContain("models[0].api_key");
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it("wraps provider failures inside createAgent too (after bindTools)", async () => {
    const s = await server({ handler: () => ({ status: 500, body: { error: { message: "boom", type: "server_error" } } }) });
    const agent = createAgent({ model: await modelFor(s), tools: [weather] });
    const error = await ensureTraceContext("trace-agent-500", () => agent.invoke({ messages: [new HumanMessage("hi")] })).catch(
      (e: unknown) => e,
    );
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    expect((error as Error).message).toContain("trace-agent-500");
    expect(bodyOf(s, 0).tools).toHaveLength(1);
  });

  it("applies timeout_seconds to the HTTP call", async () => {
    const s = await server({ script: [{ text: "slow", delayMs: 30_000 }] });
    const model = await modelFor(s, { timeout_seconds: 0.2 });
    const started = performance.now();
    const error = await model.invoke("hi").catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    // Well short of the 30 s the answer is held back, with room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("passes options through as extra ChatOpenAI fields, and sampling settings from the entry", async () => {
    const s = await server({ script: [{ text: "ok" }] });
    const model = await modelFor(s, { temperature: 0.3, max_tokens: 64, options: { topP: 0.25 } });
    await model.invoke("hi");
    expect(bodyOf(s, 0)).toMatchObject({ temperature: 0.3, max_tokens: 64, top_p: 0.25 });
  });

  it("without api_key or base_url, takes OPENAI_API_KEY from the environment", async () => {
    const kernel = await kernelWith([{ name: "gpt", provider: "openai", model: "gpt-test" }], { env: { OPENAI_API_KEY: "sk-env" } });
    await expect(kernel.createModel()).resolves.toBeDefined();
  });

  it("without any key, fails naming models[i].api_key and OPENAI_API_KEY", async () => {
    const kernel = await kernelWith([
      { name: "other", provider: "openai", model: "x", api_key: "k" },
      { name: "gpt", provider: "openai", model: "gpt-test" },
    ]);
    const error = await kernel.createModel("gpt").catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((error as Error).message).toContain("models[1].api_key");
    expect((error as Error).message).toContain("OPENAI_API_KEY");
  });

  it("requires the model id", async () => {
    const kernel = await kernelWith([{ name: "gpt", provider: "openai", api_key: "k" }]);
    await expect(kernel.createModel()).rejects.toThrow("models[0].model");
  });

  it("a run's thinking switch reaches an OpenAI-compatible request through the when_thinking_* blocks' extra body fields", async () => {
    const s = await server({ script: [{ text: "thought" }, { text: "quick" }] });
    const kwargs = (on: boolean) => ({ modelKwargs: { chat_template_kwargs: { enable_thinking: on } } });
    const kernel = await kernelWith([
      {
        name: "qwen",
        provider: "openai",
        model: "qwen3",
        base_url: s.url,
        max_retries: 0,
        supports_thinking: true,
        options: { topP: 0.5 },
        when_thinking_enabled: { options: kwargs(true) },
        when_thinking_disabled: { options: kwargs(false) },
      },
    ]);
    await (await kernel.createModel("qwen", { thinking: true })).invoke("think");
    await (await kernel.createModel("qwen", { thinking: false })).invoke("answer");
    expect(bodyOf(s, 0)).toMatchObject({ top_p: 0.5, chat_template_kwargs: { enable_thinking: true } });
    expect(bodyOf(s, 1)).toMatchObject({ top_p: 0.5, chat_template_kwargs: { enable_thinking: false } });
  });

  it("when_thinking_enabled can carry OpenAI's reasoning settings; thinking off sends none", async () => {
    const s = await server({ script: [{ text: "reasoned" }, { text: "plain" }] });
    const kernel = await kernelWith([
      {
        name: "o4",
        provider: "openai",
        model: "o4-mini",
        base_url: s.url,
        api_key: "sk-test",
        max_retries: 0,
        supports_thinking: true,
        when_thinking_enabled: { options: { reasoning: { effort: "high" } } },
      },
    ]);
    await (await kernel.createModel("o4", { thinking: true })).invoke("think");
    await (await kernel.createModel("o4", { thinking: false })).invoke("answer");
    expect(bodyOf(s, 0)).toMatchObject({ reasoning_effort: "high" });
    expect(bodyOf(s, 1)).not.toHaveProperty("reasoning_effort");
  });

  it("maps the entry's reasoning_effort to OpenAI's reasoning effort; a thinking-off run sends none", async () => {
    const s = await server({ script: [{ text: "reasoned" }, { text: "plain" }] });
    const kernel = await kernelWith([
      {
        name: "o4",
        provider: "openai",
        model: "o4-mini",
        base_url: s.url,
        api_key: "sk-test",
        max_retries: 0,
        supports_thinking: true,
        reasoning_effort: "minimal",
      },
    ]);
    await (await kernel.createModel("o4", { thinking: true })).invoke("think");
    await (await kernel.createModel("o4", { thinking: false })).invoke("answer");
    expect(bodyOf(s, 0)).toMatchObject({ reasoning_effort: "minimal" });
    expect(bodyOf(s, 1)).not.toHaveProperty("reasoning_effort");
  });

  it("sends options.reasoning to a model that declares supports_thinking, and refuses it on one that does not", async () => {
    const s = await server({ script: [{ text: "reasoned" }] });
    await (await modelFor(s, { model: "o4-mini", supports_thinking: true, options: { reasoning: { effort: "low" } } })).invoke("think");
    expect(bodyOf(s, 0)).toMatchObject({ reasoning_effort: "low" });
    const kernel = await kernelWith([
      { name: "gpt", provider: "openai", model: "gpt-test", api_key: "k", options: { reasoning: { effort: "low" } } },
    ]);
    const error = await kernel.createModel().catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((error as Error).message).toContain("sets options.reasoning but does not declare supports_thinking");
  });
});
