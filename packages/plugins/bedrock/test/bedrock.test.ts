import { ErrorCodes, ensureTraceContext, isAntlerError } from "@antler/kernel";
import { runPluginConformance } from "@antler/kernel/testing";
import type { LoopbackApi } from "@antler/model-kit/testing";
import type { EndEvent } from "@antler/plugin-runtime";
import { collectStream, type ModelEntry, providerTestKit } from "@antler/plugin-runtime/testing";
import { HumanMessage } from "@langchain/core/messages";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import bedrockPlugin, { reasoningFields } from "../src/index.js";
import { bedrockServer, type ConverseBody, type Failure, routeOf, SIGV4, type StreamFailure, type Turn } from "./bedrock-wire.js";

const cleanups: Array<() => Promise<void>> = [];

// The standard AWS chain reads the process environment first: these are the test's credentials.
beforeEach(() => {
  vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
  vi.stubEnv("AWS_SESSION_TOKEN", "session-token-example");
  vi.stubEnv("AWS_PROFILE", "");
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  vi.unstubAllEnvs();
});

async function serve(turns: Array<Turn | Failure | StreamFailure>): Promise<LoopbackApi> {
  const s = await bedrockServer(turns);
  cleanups.push(() => s.close());
  return s;
}

const CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0";
const entry = (s: LoopbackApi, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  name: "br",
  provider: "bedrock",
  model: CLAUDE,
  base_url: s.url,
  max_retries: 0,
  options: { region: "eu-west-1" },
  ...extra,
});

const { kernelWith, clientWith } = providerTestKit(bedrockPlugin, { onClose: (close) => cleanups.push(close) });

const bodyOf = (s: LoopbackApi, i: number) => s.requests[i]?.body as ConverseBody;

runPluginConformance(bedrockPlugin);

describe("@antler/plugin-bedrock", () => {
  it("streams an answer over ConverseStream (event-stream frames) through an Antler run, SigV4-signed from the env chain, with usage", async () => {
    const s = await serve([{ text: "Hello from Bedrock.", usage: { inputTokens: 33, outputTokens: 6 } }]);
    const client = await clientWith([entry(s)]);
    const events = await collectStream(client.stream("Hi", { threadId: "t1" }));
    const texts = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" && e.data.content ? [e.data.content] : []));
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join("")).toBe("Hello from Bedrock.");
    expect((events.at(-1) as EndEvent).data.usage).toMatchObject({ input_tokens: 33, output_tokens: 6, total_tokens: 39 });
    const req = s.requests[0];
    expect(req?.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/converse-stream`);
    const auth = SIGV4.exec(String(req?.headers.authorization));
    expect(auth?.groups).toMatchObject({ keyId: "AKIDEXAMPLE", region: "eu-west-1", service: "bedrock" });
    // Over HTTP/2 the signed host is the :authority pseudo-header.
    const signed = auth?.groups?.signed?.split(";");
    expect(signed).toEqual(
      expect.arrayContaining([":authority", "content-type", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"]),
    );
    expect(req?.headers["x-amz-date"]).toMatch(new RegExp(`^${auth?.groups?.date}T\\d{6}Z$`));
    expect(req?.headers["x-amz-security-token"]).toBe("session-token-example");
    expect(bodyOf(s, 0).messages).toEqual([{ role: "user", content: [{ text: "Hi" }] }]);
  });

  it("runs a toolUse / toolResult round trip in an Antler run", async () => {
    const s = await serve([{ toolUse: { name: "get_weather", input: { city: "Oslo" } } }, { text: "It is sunny in Oslo." }]);
    const client = await clientWith([entry(s)]);
    expect(await client.chat("Weather in Oslo?", { threadId: "t2" })).toBe("It is sunny in Oslo.");
    expect(bodyOf(s, 0).toolConfig?.tools.map((t) => t.toolSpec.name)).toContain("get_weather");
    const [, assistant, result] = bodyOf(s, 1).messages;
    expect(assistant).toEqual({
      role: "assistant",
      content: [{ toolUse: { toolUseId: "tooluse_0", name: "get_weather", input: { city: "Oslo" } } }],
    });
    expect(result).toEqual({
      role: "user",
      content: [{ toolResult: { toolUseId: "tooluse_0", content: [{ text: "sunny in Oslo" }] } }],
    });
  });

  it("streams Claude's reasoning as reasoning and sends it back with its signature before the toolUse on the next call", async () => {
    const s = await serve([
      {
        reasoning: { text: "The user wants weather; call the tool.", signature: "sig-B1" },
        toolUse: { name: "get_weather", input: { city: "Oslo" } },
      },
      { text: "Sunny in Oslo." },
    ]);
    const client = await clientWith([entry(s, { supports_thinking: true, reasoning_effort: "low", max_tokens: 4096 })]);
    const events = await collectStream(client.stream("Weather in Oslo?", { threadId: "t-think" }));
    const ai = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data] : []));
    expect(ai.flatMap((d) => ("reasoning" in d ? [d.reasoning] : [])).join("")).toBe("The user wants weather; call the tool.");
    expect(ai.map((d) => d.content).join("")).toBe("Sunny in Oslo.");
    const assistant = bodyOf(s, 1).messages.find((m) => m.role === "assistant");
    expect(assistant?.content).toEqual([
      { reasoningContent: { reasoningText: { text: "The user wants weather; call the tool.", signature: "sig-B1" } } },
      { toolUse: { toolUseId: "tooluse_1", name: "get_weather", input: { city: "Oslo" } } },
    ]);
  });

  it("sends an image input as an image block over Converse (JSON), with the call's usage", async () => {
    const s = await serve([{ text: "A red square.", usage: { inputTokens: 1200, outputTokens: 4, cacheReadInputTokens: 1000 } }]);
    const model = await (await kernelWith([entry(s, { supports_vision: true })])).createModel("br");
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
    expect(routeOf(s.requests[0] as never)).toEqual({ modelId: CLAUDE, stream: false });
    expect(bodyOf(s, 0).messages[0]?.content).toEqual([{ text: "What is this?" }, { image: { format: "png", source: { bytes: png } } }]);
    // Bedrock counts cache reads apart from inputTokens; LangChain's input_tokens is their sum.
    expect(reply.usage_metadata).toMatchObject({ input_tokens: 2200, output_tokens: 4, input_token_details: { cache_read: 1000 } });
  });

  it("maps reasoning_effort to each family's knob in additionalModelRequestFields, and carries the trace id (signed)", async () => {
    const s = await serve([{ text: "ok" }]);
    const model = await (
      await kernelWith([entry(s, { supports_thinking: true, reasoning_effort: "medium", max_tokens: 16000 })])
    ).createModel("br");
    await ensureTraceContext("trace-br-1", () => model.invoke("hi"));
    expect(bodyOf(s, 0).additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 8192 } });
    expect(bodyOf(s, 0).inferenceConfig).toMatchObject({ maxTokens: 16000 });
    expect(s.requests[0]?.headers["x-trace-id"]).toBe("trace-br-1");
    expect(SIGV4.exec(String(s.requests[0]?.headers.authorization))?.groups?.signed?.split(";")).toContain("x-trace-id");
    expect(reasoningFields("us.amazon.nova-premier-v1:0", "minimal")).toEqual({
      reasoningConfig: { type: "enabled", maxReasoningEffort: "low" },
    });
    expect(reasoningFields("openai.gpt-oss-120b-1:0", "high")).toEqual({ reasoning_effort: "high" });
  });

  it("a run's own reasoning_effort reaches the wire as the family's knob, in place of the entry's", async () => {
    const s = await serve([{ text: "one" }, { text: "two" }]);
    const client = await clientWith([entry(s, { supports_thinking: true, reasoning_effort: "low", max_tokens: 20000 })]);
    await client.chat("a", { threadId: "t-effort", reasoningEffort: "high" });
    await client.chat("b", { threadId: "t-effort" });
    expect([0, 1].map((i) => bodyOf(s, i).additionalModelRequestFields)).toEqual([
      { thinking: { type: "enabled", budget_tokens: 16384 } },
      { thinking: { type: "enabled", budget_tokens: 2048 } },
    ]);
  });

  it("turns an AccessDeniedException (403) into MODEL_CALL_FAILED naming the model, status and trace id, with a hint", async () => {
    const s = await serve([
      { status: 403, type: "AccessDeniedException", message: "You don't have access to the model with the specified model ID." },
    ]);
    const model = await (await kernelWith([entry(s)])).createModel("br");
    const error = await ensureTraceContext("trace-403", () => model.invoke("hi")).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('model "br"');
    expect(message).toContain("HTTP 403");
    expect(message).toContain("You don't have access to the model");
    expect(message).toContain("trace-403");
    expect((error as { hint?: string }).hint).toContain("bedrock:InvokeModel");
  });

  it("primary 429 with Retry-After, then 500; the fallback answers; the run records both attempts of the primary", async () => {
    const primary = await serve([
      {
        status: 429,
        type: "ThrottlingException",
        message: "Too many requests, please wait before trying again.",
        headers: { "retry-after": "1" },
      },
      { status: 500, type: "InternalServerException", message: "The server encountered an internal error." },
    ]);
    const backup = await serve([{ text: "The backup answers." }]);
    const client = await clientWith([
      entry(primary, { name: "primary", fallbacks: ["backup"], retry: { attempts: 1, backoff_seconds: 20 } }),
      entry(backup, { name: "backup", model: "amazon.nova-lite-v1:0" }),
    ]);
    const started = Date.now();
    const events = await collectStream(client.stream("hi", { threadId: "t-fb", runId: "r-fb" }));
    const attempts = events.flatMap((e) => (e.type === "custom" && e.data.type === "model_attempt" ? [e.data] : []));
    expect(attempts.map((a) => [a.model, a.attempt, a.outcome, a.status, a.next, a.wait_ms, a.wait_source])).toEqual([
      ["primary", 1, "error", 429, "retry", 1000, "retry_after"],
      ["primary", 2, "error", 500, "fallback", undefined, undefined],
      ["backup", 3, "success", undefined, undefined, undefined, undefined],
    ]);
    // Retry-After's second, not the 20 s backoff.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(primary.requests).toHaveLength(2);
    expect(routeOf(backup.requests[0] as never)).toEqual({ modelId: "amazon.nova-lite-v1:0", stream: true });
    const text = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data.content] : [])).join("");
    expect(text).toBe("The backup answers.");
    const record = await client.getRun("t-fb", "r-fb");
    expect(record.status).toBe("success");
    expect(record.model_attempts.map((a) => [a.model, a.reason, a.status, a.next])).toEqual([
      ["primary", "rate_limited", 429, "retry"],
      ["primary", "server_error", 500, "fallback"],
      ["backup", undefined, undefined, undefined],
    ]);
  });

  it("a throttlingException inside a started ConverseStream, before any output, falls back like a 429", async () => {
    const primary = await serve([{ streamException: "throttlingException", message: "Too many tokens, please wait before trying again." }]);
    const backup = await serve([{ text: "Backup here." }]);
    const client = await clientWith([
      entry(primary, { name: "primary", fallbacks: ["backup"] }),
      entry(backup, { name: "backup", model: "amazon.nova-lite-v1:0" }),
    ]);
    const events = await collectStream(client.stream("hi", { threadId: "t-sx", runId: "r-sx" }));
    const attempts = events.flatMap((e) => (e.type === "custom" && e.data.type === "model_attempt" ? [e.data] : []));
    expect(attempts.map((a) => [a.model, a.outcome, a.reason, a.next])).toEqual([
      ["primary", "error", "rate_limited", "fallback"],
      ["backup", "success", undefined, undefined],
    ]);
    expect(events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "ai" ? [e.data.content] : [])).join("")).toBe(
      "Backup here.",
    );
  });

  it("config check refuses reasoning_effort on a family without a known knob, and a malformed region, naming the key", async () => {
    const check = (extra: Partial<ModelEntry>) =>
      kernelWith([{ name: "br", provider: "bedrock", model: "meta.llama3-70b-instruct-v1:0", ...extra }]).catch((e: unknown) => e);
    const effort = await check({ supports_thinking: true, reasoning_effort: "high" });
    expect(isAntlerError(effort, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((effort as { where?: string }).where).toBe("models[0].reasoning_effort");
    const region = await check({ options: { region: "Frankfurt" } });
    expect((region as { where?: string }).where).toBe("models[0].options.region");
  });

  it("takes the region from AWS_REGION, fails without one naming options.region, and refuses an api_key", async () => {
    const base = { name: "br", provider: "bedrock", model: CLAUDE };
    await expect((await kernelWith([base], { env: { AWS_REGION: "us-west-2" } })).createModel("br")).resolves.toBeDefined();
    const noRegion = await (await kernelWith([base])).createModel("br").catch((e: unknown) => e);
    expect(isAntlerError(noRegion, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((noRegion as { where?: string }).where).toBe("models[0].options.region");
    const withKey = await (await kernelWith([{ ...base, api_key: "k" }], { env: { AWS_REGION: "us-west-2" } }))
      .createModel("br")
      .catch((e: unknown) => e);
    expect((withKey as { where?: string }).where).toBe("models[0].api_key");
  });
});
