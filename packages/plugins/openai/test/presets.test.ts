import { ErrorCodes, ensureTraceContext, isAntlerError } from "@antler/kernel";
import { type LoopbackApi, type LoopbackReply, startLoopbackApi } from "@antler/model-kit/testing";
import type { EndEvent } from "@antler/plugin-runtime";
import { collectStream, type ModelEntry, providerTestKit } from "@antler/plugin-runtime/testing";
import { HumanMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import openaiPlugin from "../src/index.js";

/** One scripted turn of a vendor's Chat Completions API. */
interface Turn {
  reasoning?: { field: string; text: string };
  text?: string;
  toolCall?: { name: string; arguments: Record<string, unknown> };
}
type Failure = { status: number; message: string };
type ChatBody = { model: string; stream?: boolean; messages: Array<Record<string, unknown>>; tools?: unknown[] } & Record<string, unknown>;

const pieces = (text: string) => text.match(/\S+\s*/g) ?? [];
const USAGE = { prompt_tokens: 18, completion_tokens: 7, total_tokens: 25 };

/** `POST /v1/chat/completions` as the three vendors stream it (OpenAI's chunk format, usage in a last chunk). */
function vendorServer(turns: Array<Turn | Failure>): Promise<LoopbackApi> {
  return startLoopbackApi((req, i): LoopbackReply => {
    const turn = turns[i];
    if (req.path !== "/v1/chat/completions" || !turn)
      return { status: 404, json: { error: { message: `no turn #${i}`, type: "not_found" } } };
    if ("status" in turn)
      return { status: turn.status, json: { error: { message: turn.message, type: "invalid_request_error", code: null } } };
    const body = req.body as ChatBody;
    const frame = (payload: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id: `cmpl-${i}`, object: "chat.completion.chunk", created: 0, model: body.model, ...payload })}\n\n`;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      frame({ choices: [{ index: 0, delta, finish_reason: finish }] });
    if (!body.stream) {
      return {
        json: {
          id: `cmpl-${i}`,
          object: "chat.completion",
          created: 0,
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content: turn.text ?? "" }, finish_reason: "stop" }],
          usage: USAGE,
        },
      };
    }
    const out = [chunk({ role: "assistant", content: "" })];
    if (turn.reasoning) for (const p of pieces(turn.reasoning.text)) out.push(chunk({ [turn.reasoning.field]: p }));
    for (const p of pieces(turn.text ?? "")) out.push(chunk({ content: p }));
    if (turn.toolCall) {
      const args = JSON.stringify(turn.toolCall.arguments);
      out.push(
        chunk({ tool_calls: [{ index: 0, id: `call_${i}`, type: "function", function: { name: turn.toolCall.name, arguments: args } }] }),
      );
    }
    out.push(chunk({}, turn.toolCall ? "tool_calls" : "stop"));
    out.push(frame({ choices: [], usage: USAGE }));
    out.push("data: [DONE]\n\n");
    return { headers: { "content-type": "text/event-stream" }, chunks: out };
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function serve(turns: Array<Turn | Failure>): Promise<LoopbackApi> {
  const s = await vendorServer(turns);
  cleanups.push(() => s.close());
  return s;
}

const { kernelWith, clientWith } = providerTestKit(openaiPlugin, { onClose: (close) => cleanups.push(close) });

const bodyOf = (s: LoopbackApi, i: number) => s.requests[i]?.body as ChatBody;

const VENDORS = [
  { provider: "mistral", model: "mistral-small-latest", url: "https://api.mistral.ai/v1", keyEnv: "MISTRAL_API_KEY" },
  { provider: "groq", model: "openai/gpt-oss-120b", url: "https://api.groq.com/openai/v1", keyEnv: "GROQ_API_KEY" },
  { provider: "xai", model: "grok-3-mini", url: "https://api.x.ai/v1", keyEnv: "XAI_API_KEY" },
] as const;

describe.each(VENDORS)("provider $provider (OpenAI-compatible preset)", ({ provider, model, url, keyEnv }) => {
  const entry = (s: LoopbackApi, extra: Partial<ModelEntry> = {}): ModelEntry => ({
    name: provider,
    provider,
    model,
    base_url: `${s.url}/v1`,
    api_key: `${provider}-key`,
    max_retries: 0,
    ...extra,
  });

  it("streams an answer through an Antler run with usage, the key as a bearer token", async () => {
    const s = await serve([{ text: `Hello from ${provider}.` }]);
    const client = await clientWith(entry(s));
    const events = await collectStream(client.stream("Hi", { threadId: "t1" }));
    const texts = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" && e.data.content ? [e.data.content] : []));
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join("")).toBe(`Hello from ${provider}.`);
    expect((events.at(-1) as EndEvent).data.usage).toMatchObject({ input_tokens: 18, output_tokens: 7, total_tokens: 25 });
    expect(s.requests[0]?.headers.authorization).toBe(`Bearer ${provider}-key`);
    expect(bodyOf(s, 0)).toMatchObject({ model, stream: true });
  });

  it("runs a tool call round trip in an Antler run", async () => {
    const s = await serve([{ toolCall: { name: "get_weather", arguments: { city: "Oslo" } } }, { text: "Sunny in Oslo." }]);
    const client = await clientWith(entry(s));
    expect(await client.chat("Weather in Oslo?", { threadId: "t2" })).toBe("Sunny in Oslo.");
    expect((bodyOf(s, 0).tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toContain("get_weather");
    expect(bodyOf(s, 1).messages.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_0", content: "sunny in Oslo" });
  });

  it("sends an image input as an image_url part", async () => {
    const s = await serve([{ text: "A red square." }]);
    const m = await (await kernelWith([entry(s, { supports_vision: true })])).createModel(provider);
    const png = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");
    const reply = await m.invoke([
      new HumanMessage({
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
        ],
      }),
    ]);
    expect(reply.text).toBe("A red square.");
    expect(bodyOf(s, 0).messages[0]?.content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
    ]);
  });

  it(`turns a 401 into MODEL_CALL_FAILED whose hint names ${keyEnv}`, async () => {
    const s = await serve([{ status: 401, message: "Invalid API key" }]);
    const m = await (await kernelWith([entry(s)])).createModel(provider);
    const error = await ensureTraceContext("trace-401", () => m.invoke("hi")).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    expect((error as Error).message).toContain(`model "${provider}"`);
    expect((error as Error).message).toContain("HTTP 401");
    expect((error as Error).message).toContain("trace-401");
    expect((error as { hint?: string }).hint).toContain(keyEnv);
  });

  it(`without base_url calls ${url} with ${keyEnv}, and never with OPENAI_API_KEY`, async () => {
    const seen: Array<{ url: string; auth: string | null }> = [];
    const recording: typeof fetch = async (input, init) => {
      seen.push({ url: String(input instanceof Request ? input.url : input), auth: new Headers(init?.headers).get("authorization") });
      return new Response(JSON.stringify({ error: { message: "recorded", type: "test" } }), { status: 400 });
    };
    const base = { name: provider, provider, model, max_retries: 0, options: { configuration: { fetch: recording } } } as ModelEntry;
    const m = await (await kernelWith([base], { env: { [keyEnv]: "vendor-key", OPENAI_API_KEY: "openai-key" } })).createModel(provider);
    await m.invoke("hi").catch(() => undefined);
    expect(seen).toEqual([{ url: `${url}/chat/completions`, auth: "Bearer vendor-key" }]);
    const missing = await (await kernelWith([{ name: provider, provider, model }], { env: { OPENAI_API_KEY: "openai-key" } }))
      .createModel(provider)
      .catch((e: unknown) => e);
    expect(isAntlerError(missing, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((missing as { hint?: string }).hint).toContain(keyEnv);
  });
});

describe("presets' reasoning", () => {
  it("groq: reasoning_effort on the wire for gpt-oss, and the `reasoning` field streamed as reasoning", async () => {
    const s = await serve([{ reasoning: { field: "reasoning", text: "Short question, short answer." }, text: "Yes." }]);
    const client = await clientWith({
      name: "groq",
      provider: "groq",
      model: "openai/gpt-oss-20b",
      base_url: `${s.url}/v1`,
      api_key: "k",
      supports_thinking: true,
      reasoning_effort: "minimal",
    });
    const events = await collectStream(client.stream("Well?", { threadId: "r1" }));
    const ai = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data] : []));
    expect(ai.flatMap((d) => ("reasoning" in d ? [d.reasoning] : [])).join("")).toBe("Short question, short answer.");
    expect(ai.map((d) => d.content).join("")).toBe("Yes.");
    expect(bodyOf(s, 0).reasoning_effort).toBe("low");
  });

  it("xai: grok-3-mini's reasoning_content streamed as reasoning, effort sent as low/high", async () => {
    const s = await serve([{ reasoning: { field: "reasoning_content", text: "Thinking it over." }, text: "Done." }]);
    const client = await clientWith({
      name: "xai",
      provider: "xai",
      model: "grok-3-mini",
      base_url: `${s.url}/v1`,
      api_key: "k",
      supports_thinking: true,
      reasoning_effort: "medium",
    });
    const events = await collectStream(client.stream("Go", { threadId: "r2" }));
    const ai = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data] : []));
    expect(ai.flatMap((d) => ("reasoning" in d ? [d.reasoning] : [])).join("")).toBe("Thinking it over.");
    expect(bodyOf(s, 0).reasoning_effort).toBe("high");
  });

  it("mistral: effort maps to high/none; config check refuses an effort on magistral and on grok-4, naming the key", async () => {
    const s = await serve([{ text: "ok" }]);
    const m = await (
      await kernelWith([
        {
          name: "m",
          provider: "mistral",
          model: "mistral-small-latest",
          base_url: `${s.url}/v1`,
          api_key: "k",
          supports_thinking: true,
          reasoning_effort: "low",
        },
      ])
    ).createModel("m");
    await m.invoke("hi");
    expect(bodyOf(s, 0).reasoning_effort).toBe("none");
    for (const [provider, model] of [
      ["mistral", "magistral-medium-latest"],
      ["xai", "grok-4"],
    ]) {
      const error = await kernelWith([
        { name: "r", provider, model, supports_thinking: true, reasoning_effort: "high" } as ModelEntry,
      ]).catch((e: unknown) => e);
      expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
      expect((error as { where?: string }).where).toBe("models[0].reasoning_effort");
    }
  });
});
