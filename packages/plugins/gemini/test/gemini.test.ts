import { ErrorCodes, ensureTraceContext, isAntlerError } from "@antler/kernel";
import { runPluginConformance } from "@antler/kernel/testing";
import { type LoopbackApi, type LoopbackReply, startLoopbackApi } from "@antler/model-kit/testing";
import { collectStream, type ModelEntry, providerTestKit } from "@antler/plugin-runtime/testing";
import { HumanMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import geminiPlugin from "../src/index.js";

/** One scripted model turn of the fake Gemini API. */
interface Turn {
  thought?: string;
  text?: string;
  functionCall?: { name: string; args: Record<string, unknown>; signature?: string };
  usage?: { promptTokenCount: number; candidatesTokenCount: number; thoughtsTokenCount?: number };
}
type Part = {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: unknown;
  functionResponse?: unknown;
  inlineData?: unknown;
};
type Content = { role: string; parts: Part[] };
type GenerateBody = {
  contents: Content[];
  tools?: Array<{ functionDeclarations?: Array<{ name: string }> }>;
  generationConfig?: Record<string, unknown>;
  systemInstruction?: unknown;
};

const pieces = (text: string) => text.match(/\S+\s*/g) ?? [];

function usageOf(turn: Turn) {
  const u = turn.usage ?? { promptTokenCount: 12, candidatesTokenCount: 5 };
  return { ...u, totalTokenCount: u.promptTokenCount + u.candidatesTokenCount + (u.thoughtsTokenCount ?? 0) };
}

/** The parts of a turn as Gemini sends them: thought text parts, text, then the function call with its signature. */
function partsOf(turn: Turn, split: boolean): Part[][] {
  const chunks: Part[][] = [];
  const each = (text: string) => (split ? pieces(text) : [text]);
  if (turn.thought) for (const p of each(turn.thought)) chunks.push([{ text: p, thought: true }]);
  if (turn.text) for (const p of each(turn.text)) chunks.push([{ text: p }]);
  if (turn.functionCall) {
    const { name, args, signature } = turn.functionCall;
    chunks.push([{ functionCall: { name, args }, ...(signature ? { thoughtSignature: signature } : {}) }]);
  }
  return chunks;
}

/**
 * The Gemini API as `@google/generative-ai` reads it: `:generateContent` answers one JSON response,
 * `:streamGenerateContent?alt=sse` a `data:` event per chunk, the last with `finishReason` and `usageMetadata`.
 */
function geminiReply(path: string, stream: boolean, turn: Turn): LoopbackReply {
  const model = path.split("/").at(-1)?.split(":")[0];
  const response = (parts: Part[], last: boolean) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
    ...(last ? { usageMetadata: usageOf(turn) } : {}),
    modelVersion: model,
    responseId: "resp-1",
  });
  if (!stream) return { json: response(partsOf(turn, false).flat(), true) };
  const chunks = partsOf(turn, true);
  return {
    headers: { "content-type": "text/event-stream" },
    chunks: chunks.map((parts, i) => `data: ${JSON.stringify(response(parts, i === chunks.length - 1))}\r\n\r\n`),
  };
}

function geminiServer(turns: Array<Turn | { status: number; message: string; code: string }>): Promise<LoopbackApi> {
  return startLoopbackApi((req, i) => {
    const turn = turns[i];
    const route = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/.exec(req.path);
    if (req.method !== "POST" || !route || !turn)
      return { status: 404, json: { error: { code: 404, message: `no route or turn for ${req.path} #${i}`, status: "NOT_FOUND" } } };
    if ("status" in turn) return { status: turn.status, json: { error: { code: turn.status, message: turn.message, status: turn.code } } };
    const stream = route[1] === "streamGenerateContent";
    if (stream && req.query.get("alt") !== "sse")
      return { status: 400, json: { error: { code: 400, message: "expected alt=sse", status: "INVALID_ARGUMENT" } } };
    return geminiReply(req.path, stream, turn);
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function serve(turns: Parameters<typeof geminiServer>[0]): Promise<LoopbackApi> {
  const s = await geminiServer(turns);
  cleanups.push(() => s.close());
  return s;
}

const entry = (s: LoopbackApi, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  name: "gem",
  provider: "gemini",
  model: "gemini-2.5-flash",
  base_url: s.url,
  api_key: "test-key",
  max_retries: 0,
  ...extra,
});

const { kernelWith, clientWith } = providerTestKit(geminiPlugin, { onClose: (close) => cleanups.push(close) });

const bodyOf = (s: LoopbackApi, i: number) => s.requests[i]?.body as GenerateBody;
const modelParts = (s: LoopbackApi, i: number) =>
  bodyOf(s, i)
    .contents.filter((c) => c.role === "model")
    .flatMap((c) => c.parts);

runPluginConformance(geminiPlugin);

describe("@antler/plugin-gemini", () => {
  it("streams thoughts as reasoning and the answer as text through an Antler run over streamGenerateContent?alt=sse, with usage", async () => {
    const s = await serve([
      {
        thought: "A greeting; answer briefly.",
        text: "Hello from Gemini.",
        usage: { promptTokenCount: 40, candidatesTokenCount: 4, thoughtsTokenCount: 6 },
      },
    ]);
    const client = await clientWith(entry(s, { supports_thinking: true, reasoning_effort: "low" }));
    const events = await collectStream(client.stream("Hi", { threadId: "t1" }));
    const ai = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data] : []));
    expect(ai.flatMap((d) => ("reasoning" in d ? [d.reasoning] : [])).join("")).toBe("A greeting; answer briefly.");
    const texts = ai.flatMap((d) => (d.content ? [d.content] : []));
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join("")).toBe("Hello from Gemini.");
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "end", data: { usage: { input_tokens: 40 } } });
    expect(end?.type === "end" && end.data.usage.total_tokens).toBe(50);
    expect(s.requests[0]?.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    expect(s.requests[0]?.query.get("alt")).toBe("sse");
    expect(s.requests[0]?.headers["x-goog-api-key"]).toBe("test-key");
    expect(bodyOf(s, 0).generationConfig).toMatchObject({ thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } });
  });

  it("runs a function call round trip in an Antler run: declared, called, and answered with a functionResponse", async () => {
    const s = await serve([{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }, { text: "It is sunny in Oslo." }]);
    const client = await clientWith(entry(s));
    expect(await client.chat("Weather in Oslo?", { threadId: "t2" })).toBe("It is sunny in Oslo.");
    const declared = (bodyOf(s, 0).tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name);
    expect(declared).toContain("get_weather");
    const contents = bodyOf(s, 1).contents;
    expect(contents.flatMap((c) => c.parts).find((p) => p.functionCall)).toMatchObject({
      functionCall: { name: "get_weather", args: { city: "Oslo" } },
    });
    const response = contents.find((c) => c.parts.some((p) => p.functionResponse));
    expect(response?.role).toBe("user");
    expect(response?.parts[0]).toEqual({ functionResponse: { name: "get_weather", response: { result: "sunny in Oslo" } } });
  });

  it("sends thoughts back with the function call's thoughtSignature, within the tool-call turn and on the next turn", async () => {
    const s = await serve([
      { thought: "I should check the weather.", functionCall: { name: "get_weather", args: { city: "Oslo" }, signature: "sig-A" } },
      { thought: "Tool says sunny.", text: "Sunny in Oslo." },
      { text: "Probably sunny again." },
    ]);
    const client = await clientWith(entry(s, { supports_thinking: true, reasoning_effort: "medium" }));
    await client.chat("Weather in Oslo?", { threadId: "t3" });
    await client.chat("And tomorrow?", { threadId: "t3" });
    for (const i of [1, 2]) {
      const parts = modelParts(s, i);
      expect(parts.find((p) => p.functionCall)).toEqual({
        functionCall: { name: "get_weather", args: { city: "Oslo" } },
        thoughtSignature: "sig-A",
      });
      const thoughts = parts.filter((p) => p.thought).map((p) => p.text);
      expect(thoughts.join("")).toContain("I should check the weather.");
    }
    // Thought text never leaks into the answer parts.
    expect(
      modelParts(s, 2)
        .filter((p) => !p.thought && p.text)
        .map((p) => p.text)
        .join(""),
    ).toBe("Sunny in Oslo.");
  });

  it("sends an image input as inlineData to generateContent", async () => {
    const s = await serve([{ text: "A red square." }]);
    const model = await (await kernelWith([entry(s, { supports_vision: true })])).createModel("gem");
    const png = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");
    const reply = await model.invoke([
      new HumanMessage({
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
        ],
      }),
    ]);
    expect(reply.text).toBe("A red square.");
    expect(s.requests[0]?.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(bodyOf(s, 0).contents).toEqual([
      { role: "user", parts: [{ text: "What is this?" }, { inlineData: { mimeType: "image/png", data: png } }] },
    ]);
    expect(reply.usage_metadata).toMatchObject({ input_tokens: 12, output_tokens: 5, total_tokens: 17 });
  });

  it("maps reasoning_effort to thinkingLevel on gemini-3 models, and carries the trace id on each request", async () => {
    const s = await serve([{ text: "ok" }]);
    const model = await (
      await kernelWith([entry(s, { model: "gemini-3-pro-preview", supports_thinking: true, reasoning_effort: "high" })])
    ).createModel("gem");
    await ensureTraceContext("trace-gem-1", () => model.invoke("hi"));
    expect(bodyOf(s, 0).generationConfig).toMatchObject({ thinkingConfig: { includeThoughts: true, thinkingLevel: "high" } });
    expect(s.requests[0]?.headers["x-trace-id"]).toBe("trace-gem-1");
  });

  it("turns a 429 (quota exhausted) into MODEL_CALL_FAILED naming the model, status and trace id, with a quota hint", async () => {
    const s = await serve([{ status: 429, message: "Resource has been exhausted (e.g. check quota).", code: "RESOURCE_EXHAUSTED" }]);
    const model = await (await kernelWith([entry(s)])).createModel("gem");
    const error = await ensureTraceContext("trace-429", () => model.invoke("hi")).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('model "gem"');
    expect(message).toContain("HTTP 429");
    expect(message).toContain("Resource has been exhausted");
    expect(message).toContain("trace-429");
    expect((error as { hint?: string }).hint).toContain("quota");
  });

  it("without api_key or base_url takes GOOGLE_API_KEY; without any key fails naming models[i].api_key", async () => {
    await expect(
      (await kernelWith([{ name: "gem", provider: "gemini", model: "gemini-2.5-flash" }], { env: { GOOGLE_API_KEY: "k" } })).createModel(
        "gem",
      ),
    ).resolves.toBeDefined();
    const error = await (await kernelWith([{ name: "gem", provider: "gemini", model: "gemini-2.5-flash" }]))
      .createModel("gem")
      .catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((error as { where?: string }).where).toBe("models[0].api_key");
  });
});
