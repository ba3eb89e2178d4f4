import { ErrorCodes, ensureTraceContext, isAntlerError } from "@antler/kernel";
import { runPluginConformance } from "@antler/kernel/testing";
import { type LoopbackApi, type LoopbackReply, startLoopbackApi } from "@antler/model-kit/testing";
import { collectStream, type ModelEntry, providerTestKit } from "@antler/plugin-runtime/testing";
import { afterEach, describe, expect, it } from "vitest";
import deepseekPlugin from "../src/index.js";

/** One scripted assistant turn of the fake DeepSeek API. */
interface Turn {
  reasoning?: string;
  text?: string;
  toolCall?: { name: string; arguments: Record<string, unknown> };
  usage?: { prompt_tokens: number; completion_tokens: number; reasoning_tokens?: number };
}
type Failure = { status: number; message: string; type: string };
type ChatBody = {
  model: string;
  stream?: boolean;
  messages: Array<Record<string, unknown>>;
  tools?: unknown[];
  thinking?: unknown;
  reasoning_effort?: unknown;
};

const pieces = (text: string) => text.match(/\S+\s*/g) ?? [];

/**
 * DeepSeek's `POST /chat/completions` streamed as DeepSeek sends it: `reasoning_content` deltas first (with
 * `content: null`), then `content` deltas (with `reasoning_content: null`), tool calls in pieces, and usage with
 * the finishing chunk (cache hit/miss and reasoning token counts included).
 */
function sseTurn(body: ChatBody, turn: Turn, index: number): LoopbackReply {
  const id = `chatcmpl-${index}`;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: body.model, system_fingerprint: "fp_test", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
  const out = [chunk({ role: "assistant", content: "" })];
  for (const p of pieces(turn.reasoning ?? "")) out.push(chunk({ content: null, reasoning_content: p }));
  for (const p of pieces(turn.text ?? "")) out.push(chunk({ content: p, reasoning_content: null }));
  if (turn.toolCall) {
    const args = JSON.stringify(turn.toolCall.arguments);
    out.push(
      chunk({ tool_calls: [{ index: 0, id: `call_${index}`, type: "function", function: { name: turn.toolCall.name, arguments: "" } }] }),
    );
    for (let at = 0; at < args.length; at += 5)
      out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(at, at + 5) } }] }));
  }
  const u = turn.usage ?? { prompt_tokens: 20, completion_tokens: 10 };
  const usage = {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
    prompt_cache_hit_tokens: 0,
    prompt_cache_miss_tokens: u.prompt_tokens,
  };
  out.push(chunk({ content: "" }, turn.toolCall ? "tool_calls" : "stop", usage));
  out.push("data: [DONE]\n\n");
  return { headers: { "content-type": "text/event-stream" }, chunks: out };
}

function deepseekServer(turns: Array<Turn | Failure>): Promise<LoopbackApi> {
  return startLoopbackApi((req, i) => {
    const turn = turns[i];
    if (req.method !== "POST" || req.path !== "/chat/completions" || !turn) {
      return {
        status: 404,
        json: { error: { message: `no route or turn for ${req.path} #${i}`, type: "invalid_request_error", param: null, code: null } },
      };
    }
    if ("status" in turn)
      return {
        status: turn.status,
        json: { error: { message: turn.message, type: turn.type, param: null, code: "invalid_request_error" } },
      };
    const body = req.body as ChatBody;
    if (!body.stream) throw new Error("these tests stream every call");
    return sseTurn(body, turn, i);
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function serve(turns: Array<Turn | Failure>): Promise<LoopbackApi> {
  const s = await deepseekServer(turns);
  cleanups.push(() => s.close());
  return s;
}

const entry = (s: LoopbackApi, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  name: "ds",
  provider: "deepseek",
  model: "deepseek-chat",
  base_url: s.url,
  api_key: "sk-test",
  max_retries: 0,
  ...extra,
});

const { kernelWith, clientWith } = providerTestKit(deepseekPlugin, { onClose: (close) => cleanups.push(close) });

const bodyOf = (s: LoopbackApi, i: number) => s.requests[i]?.body as ChatBody;
const assistants = (s: LoopbackApi, i: number) => bodyOf(s, i).messages.filter((m) => m.role === "assistant");

runPluginConformance(deepseekPlugin);

describe("@antler/plugin-deepseek", () => {
  it("streams reasoning as reasoning and the answer as text through an Antler run, with the run's usage", async () => {
    const s = await serve([
      {
        reasoning: "The user wants a color. Blue is common.",
        text: "Blue is a fine choice.",
        usage: { prompt_tokens: 30, completion_tokens: 12, reasoning_tokens: 8 },
      },
    ]);
    const client = await clientWith(entry(s, { supports_thinking: true, reasoning_effort: "high" }));
    const events = await collectStream(client.stream("Pick a color.", { threadId: "t1" }));
    const ai = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data] : []));
    const reasoning = ai.flatMap((d) => ("reasoning" in d ? [d.reasoning] : []));
    expect(reasoning.length).toBeGreaterThan(1);
    expect(reasoning.join("")).toBe("The user wants a color. Blue is common.");
    expect(ai.map((d) => d.content).join("")).toBe("Blue is a fine choice.");
    expect(events.at(-1)).toMatchObject({ type: "end", data: { usage: { input_tokens: 30, output_tokens: 12, total_tokens: 42 } } });
    expect(bodyOf(s, 0)).toMatchObject({ model: "deepseek-chat", stream: true, thinking: { type: "enabled" }, reasoning_effort: "high" });
    const kept = (await client.getThread("t1")).messages.find((m) => m.type === "ai");
    expect(JSON.stringify(kept)).toContain("The user wants a color. Blue is common.");
  });

  it("runs a tool call round trip in an Antler run, with the tool result sent back under its call id", async () => {
    const s = await serve([{ toolCall: { name: "get_weather", arguments: { city: "Oslo" } } }, { text: "It is sunny in Oslo." }]);
    const client = await clientWith(entry(s));
    expect(await client.chat("Weather in Oslo?", { threadId: "t2" })).toBe("It is sunny in Oslo.");
    expect((bodyOf(s, 0).tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toContain("get_weather");
    const second = bodyOf(s, 1).messages;
    expect(second.find((m) => m.role === "assistant")).toMatchObject({
      tool_calls: [{ id: "call_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
    });
    expect(second.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_0", content: "sunny in Oslo" });
  });

  it("sends reasoning_content back on every assistant message of a tool-call turn, and leaves it out after a turn without tools", async () => {
    const s = await serve([
      { reasoning: "I need the weather tool.", toolCall: { name: "get_weather", arguments: { city: "Oslo" } } },
      { reasoning: "The tool says sunny.", text: "Sunny in Oslo." },
      { reasoning: "Same place, plain answer.", text: "Likely sunny again." },
      { reasoning: "A thank-you.", text: "You're welcome." },
    ]);
    const client = await clientWith(entry(s, { supports_thinking: true }));
    await client.chat("Weather in Oslo?", { threadId: "t3" });
    await client.chat("And tomorrow?", { threadId: "t3" });
    await client.chat("Thanks!", { threadId: "t3" });

    // Inside the tool-call turn: the call's reasoning goes back with the tool result.
    expect(assistants(s, 1)).toEqual([
      expect.objectContaining({ reasoning_content: "I need the weather tool.", tool_calls: expect.any(Array) }),
    ]);
    // The next user turn: both assistant messages of the tool-call turn keep their reasoning.
    expect(assistants(s, 2).map((m) => m.reasoning_content)).toEqual(["I need the weather tool.", "The tool says sunny."]);
    // After a turn without tool calls: that turn's reasoning is left out, the tool-call turn's still goes.
    const third = assistants(s, 3);
    expect(third.map((m) => m.reasoning_content)).toEqual(["I need the weather tool.", "The tool says sunny.", undefined]);
    expect(third[2]).not.toHaveProperty("reasoning_content");
    expect(third[2]?.content).toBe("Likely sunny again.");
  });

  it("carries the trace id as X-Trace-Id and the key as a bearer token", async () => {
    const s = await serve([{ text: "ok" }]);
    const model = await (await kernelWith([entry(s)])).createModel("ds");
    await ensureTraceContext("trace-ds-1", async () => {
      for await (const _ of await model.stream("hi")) {
        // drain
      }
    });
    expect(s.requests[0]?.headers["x-trace-id"]).toBe("trace-ds-1");
    expect(s.requests[0]?.headers.authorization).toBe("Bearer sk-test");
  });

  it("turns a 402 (insufficient balance) into MODEL_CALL_FAILED naming the model, status and trace id, with a top-up hint", async () => {
    const s = await serve([{ status: 402, message: "Insufficient Balance", type: "unknown_error" }]);
    const model = await (await kernelWith([entry(s)])).createModel("ds");
    const error = await ensureTraceContext("trace-402", () => model.invoke("hi")).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('model "ds"');
    expect(message).toContain("HTTP 402");
    expect(message).toContain("Insufficient Balance");
    expect(message).toContain("trace-402");
    expect((error as { hint?: string }).hint).toContain("top it up");
  });

  it("config check refuses supports_vision (DeepSeek's chat API takes no images), naming the key", async () => {
    const error = await kernelWith([{ name: "ds", provider: "deepseek", model: "deepseek-chat", supports_vision: true }]).catch(
      (e: unknown) => e,
    );
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((error as { where?: string }).where).toBe("models[0].supports_vision");
  });

  it("without api_key or base_url takes DEEPSEEK_API_KEY; without any key fails naming models[i].api_key", async () => {
    await expect(
      (
        await kernelWith([{ name: "ds", provider: "deepseek", model: "deepseek-chat" }], { env: { DEEPSEEK_API_KEY: "sk-env" } })
      ).createModel("ds"),
    ).resolves.toBeDefined();
    const error = await (await kernelWith([{ name: "ds", provider: "deepseek", model: "deepseek-chat" }]))
      .createModel("ds")
      .catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((error as Error).message).toContain("has no API key");
    expect((error as { where?: string }).where).toBe("models[0].api_key");
  });
});
