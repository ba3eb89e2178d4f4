import { ErrorCodes, ensureTraceContext, isAntlerError } from "@antler/kernel";
import { runPluginConformance } from "@antler/kernel/testing";
import { type LoopbackApi, type LoopbackReply, startLoopbackApi } from "@antler/model-kit/testing";
import { collectStream, type ModelEntry, providerTestKit } from "@antler/plugin-runtime/testing";
import { HumanMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import ollamaPlugin from "../src/index.js";

/** One scripted assistant turn of the fake Ollama server. */
interface Turn {
  thinking?: string;
  text?: string;
  toolCall?: { name: string; arguments: Record<string, unknown> };
  /** Several calls in one line, as Ollama sends parallel tool calls. */
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
  usage?: { prompt_eval_count: number; eval_count: number };
}

type ChatBody = {
  model: string;
  stream: boolean;
  think?: unknown;
  messages: Array<Record<string, unknown>>;
  tools?: unknown[];
  options?: Record<string, unknown>;
};

/** Words with their trailing space, as a model streams them. */
const pieces = (text: string) => text.match(/\S+\s*/g) ?? [];

/**
 * Ollama's `POST /api/chat` as the `ollama` client reads it: NDJSON lines of `{ model, created_at, message, done }`,
 * thinking and content as separate deltas, tool calls whole in one line, and the counts on the final `done` line.
 */
function ndjsonTurn(body: ChatBody, turn: Turn): LoopbackReply {
  const line = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    `${JSON.stringify({ model: body.model, created_at: new Date(0).toISOString(), message: { role: "assistant", content: "", ...message }, done: false, ...extra })}\n`;
  const chunks: string[] = [];
  for (const p of pieces(turn.thinking ?? "")) chunks.push(line({ thinking: p }));
  for (const p of pieces(turn.text ?? "")) chunks.push(line({ content: p }));
  if (turn.toolCall) chunks.push(line({ tool_calls: [{ function: turn.toolCall }] }));
  if (turn.toolCalls) chunks.push(line({ tool_calls: turn.toolCalls.map((f) => ({ function: f })) }));
  const usage = turn.usage ?? { prompt_eval_count: 11, eval_count: 7 };
  chunks.push(
    line(
      {},
      { done: true, done_reason: "stop", total_duration: 1000, load_duration: 10, prompt_eval_duration: 100, eval_duration: 200, ...usage },
    ),
  );
  return { headers: { "content-type": "application/x-ndjson" }, chunks };
}

function ollamaServer(turns: Array<Turn | { status: number; error: string }>): Promise<LoopbackApi> {
  return startLoopbackApi((req, i) => {
    const turn = turns[i];
    if (req.method !== "POST" || req.path !== "/api/chat" || !turn)
      return { status: 404, json: { error: `no route or turn for ${req.path} #${i}` } };
    if ("status" in turn) return { status: turn.status, json: { error: turn.error } };
    return ndjsonTurn(req.body as ChatBody, turn);
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function serve(turns: Parameters<typeof ollamaServer>[0]): Promise<LoopbackApi> {
  const s = await ollamaServer(turns);
  cleanups.push(() => s.close());
  return s;
}

const entry = (s: LoopbackApi, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  name: "local",
  provider: "ollama",
  model: "qwen3:8b",
  base_url: s.url,
  ...extra,
});

const { kernelWith, clientWith } = providerTestKit(ollamaPlugin, { onClose: (close) => cleanups.push(close) });

const bodyOf = (s: LoopbackApi, i: number) => s.requests[i]?.body as ChatBody;

runPluginConformance(ollamaPlugin);

describe("@antler/plugin-ollama", () => {
  it("streams an answer through an Antler run over /api/chat NDJSON, with the run's usage from the final line", async () => {
    const s = await serve([{ text: "Red deer shed antlers in late winter.", usage: { prompt_eval_count: 42, eval_count: 9 } }]);
    const client = await clientWith(entry(s));
    const events = await collectStream(client.stream("When do red deer shed antlers?", { threadId: "t1" }));
    const texts = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" && e.data.content ? [e.data.content] : []));
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join("")).toBe("Red deer shed antlers in late winter.");
    expect(events.at(-1)).toMatchObject({ type: "end", data: { usage: { input_tokens: 42, output_tokens: 9, total_tokens: 51 } } });
    expect(s.requests[0]).toMatchObject({ method: "POST", path: "/api/chat" });
    expect(bodyOf(s, 0)).toMatchObject({ model: "qwen3:8b", stream: true });
    expect(bodyOf(s, 0).messages.at(-1)).toEqual({ role: "user", content: "When do red deer shed antlers?" });
  });

  it("runs a tool call round trip in an Antler run: the tool is offered, called, and its result sent back as a tool message", async () => {
    const s = await serve([{ toolCall: { name: "get_weather", arguments: { city: "Oslo" } } }, { text: "It is sunny in Oslo." }]);
    const client = await clientWith(entry(s));
    expect(await client.chat("Weather in Oslo?", { threadId: "t2" })).toBe("It is sunny in Oslo.");
    const offered = (bodyOf(s, 0).tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(offered).toContain("get_weather");
    const second = bodyOf(s, 1).messages;
    expect(second.find((m) => m.role === "assistant")).toMatchObject({
      tool_calls: [{ function: { name: "get_weather", arguments: { city: "Oslo" } } }],
    });
    expect(second.find((m) => m.role === "tool")).toMatchObject({ content: "sunny in Oslo" });
    const thread = await client.getThread("t2");
    expect(thread.messages.find((m) => m.type === "tool")).toMatchObject({ content: "sunny in Oslo", status: "success" });
  });

  it("keeps parallel tool calls sent in one NDJSON line apart: each runs with its own arguments", async () => {
    const s = await serve([
      {
        toolCalls: [
          { name: "get_weather", arguments: { city: "Oslo" } },
          { name: "get_weather", arguments: { city: "Rome" } },
        ],
      },
      { text: "Both sunny." },
    ]);
    const client = await clientWith(entry(s));
    expect(await client.chat("Weather in Oslo and Rome?", { threadId: "tp" })).toBe("Both sunny.");
    const results = bodyOf(s, 1)
      .messages.filter((m) => m.role === "tool")
      .map((m) => m.content);
    expect(results.sort()).toEqual(["sunny in Oslo", "sunny in Rome"]);
    const calls = (bodyOf(s, 1).messages.find((m) => m.role === "assistant")?.tool_calls ?? []) as Array<{
      function: { arguments: unknown };
    }>;
    expect(calls.map((c) => c.function.arguments)).toEqual([{ city: "Oslo" }, { city: "Rome" }]);
  });

  it("streams thinking as reasoning (not answer text), keeps it in the thread, and does not send it back on the next turn", async () => {
    const s = await serve([
      { thinking: "The user greets me, so I greet back.", text: "Hello!" },
      { thinking: "Second question.", text: "Fine, thanks." },
    ]);
    const client = await clientWith(entry(s, { supports_thinking: true, reasoning_effort: "high" }));
    const events = await collectStream(client.stream("Hi", { threadId: "t3" }));
    const ai = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data] : []));
    const reasoning = ai.flatMap((d) => ("reasoning" in d ? [d.reasoning] : [])).join("");
    expect(reasoning).toBe("The user greets me, so I greet back.");
    expect(ai.map((d) => d.content).join("")).toBe("Hello!");
    expect(bodyOf(s, 0).think).toBe("high");
    const kept = (await client.getThread("t3")).messages.find((m) => m.type === "ai");
    expect(JSON.stringify(kept)).toContain("The user greets me, so I greet back.");

    await collectStream(client.stream("How are you?", { threadId: "t3" }));
    const history = bodyOf(s, 1).messages;
    expect(history.filter((m) => m.role !== "system").map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(history.some((m) => "thinking" in m)).toBe(false);
    const earlier = history.find((m) => m.role === "assistant");
    expect(earlier).toEqual({ role: "assistant", content: "Hello!" });
  });

  it("sends an image input as base64 in the message's images", async () => {
    const s = await serve([{ text: "A red square." }]);
    const kernel = await kernelWith([entry(s, { model: "llava", supports_vision: true })]);
    const png = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");
    const reply = await (await kernel.createModel("local")).invoke([
      new HumanMessage({
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
        ],
      }),
    ]);
    expect(reply.text).toBe("A red square.");
    expect(bodyOf(s, 0).messages).toEqual([
      { role: "user", content: "What is this?" },
      { role: "user", content: "", images: [png] },
    ]);
  });

  it("maps max_tokens, temperature and context_window to Ollama's options, and carries the trace id", async () => {
    const s = await serve([{ text: "ok" }]);
    const kernel = await kernelWith([entry(s, { max_tokens: 64, temperature: 0.3, context_window: 8192 })]);
    const model = await kernel.createModel("local");
    await ensureTraceContext("trace-ollama-1", () => model.invoke("hi"));
    expect(bodyOf(s, 0).options).toMatchObject({ num_predict: 64, temperature: 0.3, num_ctx: 8192 });
    expect(s.requests[0]?.headers["x-trace-id"]).toBe("trace-ollama-1");
  });

  it("turns a 404 (model not pulled) into MODEL_CALL_FAILED naming the model, status and trace id, with `ollama pull` as the hint", async () => {
    const s = await serve([{ status: 404, error: 'model "qwen3:8b" not found, try pulling it first' }]);
    const kernel = await kernelWith([entry(s)]);
    const model = await kernel.createModel("local");
    const error = await ensureTraceContext("trace-404", () => model.invoke("hi")).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('model "local"');
    expect(message).toContain("HTTP 404");
    expect(message).toContain("not found, try pulling it first");
    expect(message).toContain("trace-404");
    expect((error as { hint?: string }).hint).toContain("ollama pull qwen3:8b");
  });

  it("config check refuses an OpenAI-compatible /v1 base_url for provider ollama, naming the key", async () => {
    const error = await kernelWith([{ name: "local", provider: "ollama", model: "llama3.2", base_url: "http://127.0.0.1:11434/v1" }]).catch(
      (e: unknown) => e,
    );
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((error as { where?: string }).where).toBe("models[0].base_url");
    expect((error as { hint?: string }).hint).toContain("provider: openai");
  });

  it("requires the model tag", async () => {
    const kernel = await kernelWith([{ name: "local", provider: "ollama" }]);
    await expect(kernel.createModel("local")).rejects.toThrow("models[0].model");
  });
});
