import { ErrorCodes, ensureTraceContext, isAntlerError } from "@antler/kernel";
import { runPluginConformance } from "@antler/kernel/testing";
import { type LoopbackApi, type LoopbackReply, startLoopbackApi } from "@antler/model-kit/testing";
import { collectStream, type ModelEntry, providerTestKit } from "@antler/plugin-runtime/testing";
import { HumanMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import azurePlugin, { createAzureOpenAIPlugin, DEFAULT_API_VERSION } from "../src/index.js";

/** One scripted assistant turn of the fake Azure OpenAI deployment. */
interface Turn {
  text?: string;
  toolCall?: { name: string; arguments: Record<string, unknown> };
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number; reasoning_tokens?: number };
}
type Failure = { status: number; code: string; message: string };
type ChatBody = { stream?: boolean; messages: Array<Record<string, unknown>>; tools?: unknown[]; reasoning_effort?: unknown };

const pieces = (text: string) => text.match(/\S+\s*/g) ?? [];

function usageOf(turn: Turn) {
  const u = turn.usage ?? { prompt_tokens: 20, completion_tokens: 10 };
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
  };
}

/**
 * Azure's chat completions as it streams them: a first chunk with empty `choices` and `prompt_filter_results`,
 * then deltas with `content_filter_results`, tool calls in pieces, and a final chunk with `usage` and no choices.
 */
function sseTurn(turn: Turn, index: number): LoopbackReply {
  const id = `chatcmpl-az${index}`;
  const frame = (payload: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model: "gpt-4o-2024-11-20", ...payload })}\n\n`;
  const choice = (delta: Record<string, unknown>, finish: string | null = null) =>
    frame({ choices: [{ index: 0, delta, finish_reason: finish, content_filter_results: {} }] });
  const out = [
    `data: ${JSON.stringify({ id: "", object: "", created: 0, model: "", choices: [], prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] })}\n\n`,
    choice({ role: "assistant", content: "" }),
  ];
  for (const p of pieces(turn.text ?? "")) out.push(choice({ content: p }));
  if (turn.toolCall) {
    const args = JSON.stringify(turn.toolCall.arguments);
    out.push(
      choice({ tool_calls: [{ index: 0, id: `call_${index}`, type: "function", function: { name: turn.toolCall.name, arguments: "" } }] }),
    );
    for (let at = 0; at < args.length; at += 6)
      out.push(choice({ tool_calls: [{ index: 0, function: { arguments: args.slice(at, at + 6) } }] }));
  }
  out.push(choice({}, turn.toolCall ? "tool_calls" : "stop"));
  out.push(frame({ choices: [], usage: usageOf(turn) }));
  out.push("data: [DONE]\n\n");
  return { headers: { "content-type": "text/event-stream" }, chunks: out };
}

function jsonTurn(turn: Turn, index: number): LoopbackReply {
  return {
    json: {
      id: `chatcmpl-az${index}`,
      object: "chat.completion",
      created: 1,
      model: "gpt-4o-2024-11-20",
      choices: [{ index: 0, message: { role: "assistant", content: turn.text ?? "" }, finish_reason: "stop", content_filter_results: {} }],
      usage: usageOf(turn),
    },
  };
}

const ROUTE = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;

function azureServer(turns: Array<Turn | Failure>): Promise<LoopbackApi> {
  return startLoopbackApi((req, i) => {
    const turn = turns[i];
    if (req.method !== "POST" || !ROUTE.test(req.path) || !turn)
      return { status: 404, json: { error: { code: "DeploymentNotFound", message: `no route or turn for ${req.path} #${i}` } } };
    if (!req.query.get("api-version"))
      return {
        status: 400,
        json: { error: { code: "MissingApiVersionParameter", message: "The api-version query parameter (?api-version=) is required." } },
      };
    if ("status" in turn) return { status: turn.status, json: { error: { code: turn.code, message: turn.message } } };
    return (req.body as ChatBody).stream ? sseTurn(turn, i) : jsonTurn(turn, i);
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function serve(turns: Array<Turn | Failure>): Promise<LoopbackApi> {
  const s = await azureServer(turns);
  cleanups.push(() => s.close());
  return s;
}

const entry = (s: LoopbackApi, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  name: "az",
  provider: "azure-openai",
  model: "gpt-4o",
  base_url: s.url,
  api_key: "azure-key-1",
  max_retries: 0,
  options: { deployment: "prod-gpt4o", api_version: "2024-10-21" },
  ...extra,
});

const { kernelWith, clientWith } = providerTestKit(azurePlugin, { onClose: (close) => cleanups.push(close) });

const bodyOf = (s: LoopbackApi, i: number) => s.requests[i]?.body as ChatBody;

runPluginConformance(azurePlugin);

describe("@antler/plugin-azure-openai", () => {
  it("streams an answer through an Antler run from the deployment's path with the api-version and api-key, with usage", async () => {
    const s = await serve([{ text: "Hello from Azure.", usage: { prompt_tokens: 31, completion_tokens: 5, cached_tokens: 8 } }]);
    const client = await clientWith(entry(s));
    const events = await collectStream(client.stream("Hi", { threadId: "t1" }));
    const texts = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" && e.data.content ? [e.data.content] : []));
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join("")).toBe("Hello from Azure.");
    expect(events.at(-1)).toMatchObject({ type: "end", data: { usage: { input_tokens: 31, output_tokens: 5, total_tokens: 36 } } });
    const req = s.requests[0];
    expect(req?.path).toBe("/openai/deployments/prod-gpt4o/chat/completions");
    expect(req?.query.get("api-version")).toBe("2024-10-21");
    expect(req?.headers["api-key"]).toBe("azure-key-1");
    expect(req?.headers.authorization).toBeUndefined();
    expect(bodyOf(s, 0)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
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

  it("sends an image input as an image_url part, and reports the call's usage with cached input tokens", async () => {
    const s = await serve([{ text: "A red square.", usage: { prompt_tokens: 300, completion_tokens: 4, cached_tokens: 256 } }]);
    const model = await (await kernelWith([entry(s, { supports_vision: true })])).createModel("az");
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
    expect(bodyOf(s, 0).messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
        ],
      },
    ]);
    expect(reply.usage_metadata).toMatchObject({ input_tokens: 300, output_tokens: 4, input_token_details: { cache_read: 256 } });
  });

  it("authenticates with an Entra ID token from the plugin's token provider, asked per request, and sends no api-key", async () => {
    const s = await serve([{ text: "one" }, { text: "two" }]);
    let issued = 0;
    const plugin = createAzureOpenAIPlugin({ tokenProvider: async () => `entra-token-${++issued}` });
    const { api_key: _key, ...noKey } = entry(s, { options: { deployment: "prod-gpt4o", auth: "entra_id" } });
    const model = await (
      await kernelWith([noKey as ModelEntry], { plugin, env: { AZURE_OPENAI_API_KEY: "must-not-be-sent" } })
    ).createModel("az");
    await model.invoke("a");
    await model.invoke("b");
    expect(s.requests.map((r) => r.headers.authorization)).toEqual(["Bearer entra-token-1", "Bearer entra-token-2"]);
    expect(s.requests.map((r) => r.headers["api-key"])).toEqual([undefined, undefined]);
    // No api_version in the entry: the documented default.
    expect(s.requests[0]?.query.get("api-version")).toBe(DEFAULT_API_VERSION);
  });

  it("sends reasoning_effort as the request field, and carries the trace id as X-Trace-Id", async () => {
    const s = await serve([{ text: "ok", usage: { prompt_tokens: 10, completion_tokens: 30, reasoning_tokens: 24 } }]);
    const model = await (
      await kernelWith([
        entry(s, {
          model: "o4-mini",
          supports_thinking: true,
          reasoning_effort: "low",
          options: { deployment: "reasoner", api_version: "2025-04-01-preview" },
        }),
      ])
    ).createModel("az");
    const reply = await ensureTraceContext("trace-az-1", () => model.invoke("hi"));
    expect(bodyOf(s, 0).reasoning_effort).toBe("low");
    expect(s.requests[0]?.path).toBe("/openai/deployments/reasoner/chat/completions");
    expect(s.requests[0]?.headers["x-trace-id"]).toBe("trace-az-1");
    expect(reply.usage_metadata?.output_token_details).toMatchObject({ reasoning: 24 });
  });

  it("turns a 401 into MODEL_CALL_FAILED naming the model, status and trace id, with a key hint", async () => {
    const s = await serve([{ status: 401, code: "401", message: "Access denied due to invalid subscription key or wrong API endpoint." }]);
    const model = await (await kernelWith([entry(s)])).createModel("az");
    const error = await ensureTraceContext("trace-401", () => model.invoke("hi")).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('model "az"');
    expect(message).toContain("HTTP 401");
    expect(message).toContain("invalid subscription key");
    expect(message).toContain("trace-401");
    expect((error as { hint?: string }).hint).toContain("models[0].api_key");
  });

  it("turns a content-filter 400 into MODEL_CALL_FAILED with a content-filter hint", async () => {
    const s = await serve([
      {
        status: 400,
        code: "content_filter",
        message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
      },
    ]);
    const model = await (await kernelWith([entry(s)])).createModel("az");
    const error = await model.invoke("hi").catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    expect((error as Error).message).toContain("HTTP 400");
    expect((error as { hint?: string }).hint).toContain("content filter");
  });

  it("config check refuses a malformed api_version and an unknown auth, naming the key, without building a client", async () => {
    const bad = (options: Record<string, unknown>) =>
      kernelWith([{ name: "az", provider: "azure-openai", model: "gpt-4o", base_url: "https://r.openai.azure.com", options }]).catch(
        (e: unknown) => e,
      );
    const version = await bad({ api_version: "latest" });
    expect(isAntlerError(version, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((version as { where?: string }).where).toBe("models[0].options.api_version");
    const auth = await bad({ auth: "password" });
    expect((auth as { where?: string }).where).toBe("models[0].options.auth");
  });

  it("without a key fails naming models[i].api_key; without an endpoint, naming models[i].base_url", async () => {
    const noKey = await (
      await kernelWith([{ name: "az", provider: "azure-openai", model: "gpt-4o", base_url: "https://r.openai.azure.com" }])
    )
      .createModel("az")
      .catch((e: unknown) => e);
    expect(isAntlerError(noKey, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((noKey as { where?: string }).where).toBe("models[0].api_key");
    const noEndpoint = await (await kernelWith([{ name: "az", provider: "azure-openai", model: "gpt-4o", api_key: "k" }]))
      .createModel("az")
      .catch((e: unknown) => e);
    expect((noEndpoint as { where?: string }).where).toBe("models[0].base_url");
  });
});
