import { ErrorCodes, isAntlerError } from "@antler/kernel";
import { type LoopbackApi, type LoopbackReply, startLoopbackApi } from "@antler/model-kit/testing";
import { collectStream, type ModelEntry, providerTestKit } from "@antler/plugin-runtime/testing";
import { afterEach, describe, expect, it } from "vitest";
import openaiPlugin from "../src/index.js";

/** One scripted turn of an OpenAI-compatible reasoning server. */
interface Turn {
  reasoning?: string;
  text?: string;
  toolCall?: { name: string; arguments: Record<string, unknown> };
}
type ChatBody = { model: string; stream?: boolean; messages: Array<Record<string, unknown>>; reasoning_effort?: unknown };

const pieces = (text: string) => text.match(/\S+\s*/g) ?? [];

/**
 * `POST /v1/chat/completions` streamed by a reasoning server: reasoning deltas under `field` (vLLM and OpenRouter
 * name it `reasoning`, older vLLM, SGLang and DashScope `reasoning_content`), then content, tool call pieces and
 * a usage chunk.
 */
function reasoningServer(turns: Turn[], field: string): Promise<LoopbackApi> {
  return startLoopbackApi((req, i): LoopbackReply => {
    const turn = turns[i];
    if (req.path !== "/v1/chat/completions" || !turn)
      return { status: 404, json: { error: { message: `no turn #${i}`, type: "not_found" } } };
    const body = req.body as ChatBody;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id: `chatcmpl-${i}`, object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
    const out = [chunk({ role: "assistant", content: "" })];
    for (const p of pieces(turn.reasoning ?? "")) out.push(chunk({ [field]: p }));
    for (const p of pieces(turn.text ?? "")) out.push(chunk({ content: p }));
    if (turn.toolCall) {
      out.push(
        chunk({
          tool_calls: [
            {
              index: 0,
              id: `call_${i}`,
              type: "function",
              function: { name: turn.toolCall.name, arguments: JSON.stringify(turn.toolCall.arguments) },
            },
          ],
        }),
      );
    }
    out.push(chunk({}, turn.toolCall ? "tool_calls" : "stop"));
    out.push(
      `data: ${JSON.stringify({ id: `chatcmpl-${i}`, object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage: { prompt_tokens: 15, completion_tokens: 6, total_tokens: 21 } })}\n\n`,
    );
    out.push("data: [DONE]\n\n");
    return { headers: { "content-type": "text/event-stream" }, chunks: out };
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const { kernelWith, clientWith } = providerTestKit(openaiPlugin, { onClose: (close) => cleanups.push(close) });

async function setup(turns: Turn[], field: string, options: Record<string, unknown>, extra: Partial<ModelEntry> = {}) {
  const s = await reasoningServer(turns, field);
  cleanups.push(() => s.close());
  const client = await clientWith({
    name: "qwen",
    provider: "openai",
    model: "Qwen/Qwen3-8B",
    base_url: `${s.url}/v1`,
    max_retries: 0,
    supports_thinking: true,
    options,
    ...extra,
  });
  return { s, client };
}

const assistants = (s: LoopbackApi, i: number) =>
  ((s.requests[i]?.body as ChatBody | undefined)?.messages ?? []).filter((m) => m.role === "assistant");

describe("OpenAI-compatible reasoning servers (options.reasoning_field / reasoning_passback)", () => {
  it("streams a server's `reasoning` deltas (vLLM, OpenRouter) as reasoning in an Antler run, keeps them in the thread, and sends reasoning_effort", async () => {
    const { s, client } = await setup(
      [{ reasoning: "Short greeting wanted.", text: "Hello there." }],
      "reasoning",
      { reasoning_field: "reasoning" },
      { reasoning_effort: "low" },
    );
    const events = await collectStream(client.stream("Hi", { threadId: "t1" }));
    const ai = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data] : []));
    expect(ai.flatMap((d) => ("reasoning" in d ? [d.reasoning] : [])).join("")).toBe("Short greeting wanted.");
    expect(ai.map((d) => d.content).join("")).toBe("Hello there.");
    expect(events.at(-1)).toMatchObject({ type: "end", data: { usage: { input_tokens: 15, output_tokens: 6 } } });
    expect(s.requests[0]?.body).toMatchObject({ reasoning_effort: "low" });
    const kept = (await client.getThread("t1")).messages.find((m) => m.type === "ai");
    expect(JSON.stringify(kept)).toContain("Short greeting wanted.");
  });

  it("without reasoning_field a server's `reasoning` deltas are not read (they are not reasoning_content)", async () => {
    const { client } = await setup([{ reasoning: "Hidden thought.", text: "Hi." }], "reasoning", { reasoning_passback: "none" });
    const events = await collectStream(client.stream("Hi", { threadId: "t0" }));
    const ai = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data] : []));
    expect(ai.some((d) => "reasoning" in d)).toBe(false);
  });

  it("reasoning_passback none (the default): the next turn's request carries no earlier reasoning", async () => {
    const { s, client } = await setup(
      [
        { reasoning: "First thought.", text: "One." },
        { reasoning: "Second thought.", text: "Two." },
      ],
      "reasoning_content",
      { reasoning_field: "reasoning_content" },
    );
    await client.chat("1?", { threadId: "t2" });
    await client.chat("2?", { threadId: "t2" });
    const [earlier] = assistants(s, 1);
    expect(earlier?.content).toBe("One.");
    expect(earlier).not.toHaveProperty("reasoning_content");
    expect(earlier).not.toHaveProperty("reasoning");
  });

  it("reasoning_passback all sends each assistant message's reasoning back under the server's field", async () => {
    const { s, client } = await setup(
      [
        { reasoning: "Need the tool.", toolCall: { name: "get_weather", arguments: { city: "Rome" } } },
        { reasoning: "Got it.", text: "Sunny in Rome." },
        { text: "Bye." },
      ],
      "reasoning",
      { reasoning_field: "reasoning", reasoning_passback: "all" },
    );
    await client.chat("Weather in Rome?", { threadId: "t3" });
    await client.chat("Thanks", { threadId: "t3" });
    expect(assistants(s, 1).map((m) => m.reasoning)).toEqual(["Need the tool."]);
    expect(assistants(s, 2).map((m) => m.reasoning)).toEqual(["Need the tool.", "Got it."]);
    expect(assistants(s, 2).some((m) => "reasoning_content" in m)).toBe(false);
  });

  it("config check refuses an unknown reasoning_field, and reasoning settings on a model without supports_thinking", async () => {
    const boot = (entry: ModelEntry) => kernelWith([entry]);
    const bad = await boot({
      name: "q",
      provider: "openai",
      model: "m",
      base_url: "http://127.0.0.1:1/v1",
      supports_thinking: true,
      options: { reasoning_field: "thoughts" },
    }).catch((e: unknown) => e);
    expect(isAntlerError(bad, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((bad as { where?: string }).where).toBe("models[0].options.reasoning_field");
    expect((bad as { hint?: string }).hint).toContain("reasoning_content, reasoning");
    const plain = await boot({
      name: "q",
      provider: "openai",
      model: "m",
      base_url: "http://127.0.0.1:1/v1",
      options: { reasoning_passback: "all" },
    }).catch((e: unknown) => e);
    expect(isAntlerError(plain, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((plain as Error).message).toContain("does not declare supports_thinking");
  });
});
