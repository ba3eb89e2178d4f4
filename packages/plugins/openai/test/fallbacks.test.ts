import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCodes, ensureTraceContext, isAntlerError, modelCallStamp } from "@antler/kernel";
import { type OpenAICompatibleServer, type OpenAIServerOptions, startOpenAICompatibleServer } from "@antler/kernel/testing";
import type { ModelAttempt } from "@antler/model-kit";
import { type ModelEntry, providerTestKit } from "@antler/plugin-runtime/testing";
import type { AIMessageChunk } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import openaiPlugin from "../src/index.js";

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

const entry = (name: string, s: OpenAICompatibleServer, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  name,
  provider: "openai",
  model: `${name}-id`,
  base_url: s.url,
  api_key: "sk-test",
  max_retries: 0,
  ...extra,
});

const completions = (s: OpenAICompatibleServer) => s.requests.filter((r) => r.path === "/v1/chat/completions");
const error = (status: number, message: string, headers?: Record<string, string>) => ({
  status,
  body: { error: { message, type: status === 429 ? "rate_limit_error" : "server_error" } },
  ...(headers ? { headers } : {}),
});

async function drain(model: { stream(input: string): Promise<AsyncIterable<AIMessageChunk>> }, input: string): Promise<AIMessageChunk[]> {
  const chunks: AIMessageChunk[] = [];
  for await (const chunk of await model.stream(input)) chunks.push(chunk);
  return chunks;
}

describe("model fallbacks and retries (kernel wrapper, OpenAI wire API)", () => {
  it("retries a 429 after the Retry-After it asks for, then falls back on a 500, and the fallback answers", async () => {
    const primary = await server({
      script: [],
      handler: (_body, i) => (i === 0 ? error(429, "slow down", { "retry-after": "1" }) : error(500, "primary broke")),
    });
    const backup = await server({ script: [{ text: "from the backup", usage: { input_tokens: 10, output_tokens: 5 } }] });
    const kernel = await kernelWith([
      entry("primary", primary, { fallbacks: ["backup"], retry: { attempts: 1, backoff_seconds: 30, max_wait_seconds: 5 } }),
      entry("backup", backup),
    ]);
    const model = await kernel.createModel("primary");
    const reply = await ensureTraceContext("trace-fallback", () => model.invoke("hi"));
    expect(reply.text).toBe("from the backup");
    // The order the servers saw: primary twice (429, then 500 on the retry), then the backup once.
    expect(completions(primary)).toHaveLength(2);
    expect(completions(backup)).toHaveLength(1);
    expect(completions(backup)[0]?.body).toMatchObject({ model: "backup-id" });
    expect(modelCallStamp(reply)).toMatchObject({ model: "backup", cost_usd: null, attempts: 3 });
  });

  it("records each attempt with its reason, status and the wait Retry-After asked for (not the backoff)", async () => {
    const primary = await server({ handler: (_b, i) => (i === 0 ? error(429, "slow down", { "retry-after": "1" }) : error(503, "down")) });
    const backup = await server({ script: [{ text: "ok" }] });
    const kernel = await kernelWith([
      entry("primary", primary, { fallbacks: ["backup"], retry: { attempts: 1, backoff_seconds: 30 } }),
      entry("backup", backup),
    ]);
    const model = await kernel.createModel("primary");
    const events: ModelAttempt[] = [];
    const { dispatched } = await collectAttempts(model, events);
    expect(dispatched.text).toBe("ok");
    expect(
      events.map(({ model, attempt, outcome, reason, status, next, next_model, wait_ms, wait_source }) => ({
        model,
        attempt,
        outcome,
        reason,
        status,
        next,
        next_model,
        wait_ms,
        wait_source,
      })),
    ).toEqual([
      {
        model: "primary",
        attempt: 1,
        outcome: "error",
        reason: "rate_limited",
        status: 429,
        next: "retry",
        next_model: "primary",
        wait_ms: 1000,
        wait_source: "retry_after",
      },
      {
        model: "primary",
        attempt: 2,
        outcome: "error",
        reason: "server_error",
        status: 503,
        next: "fallback",
        next_model: "backup",
        wait_ms: undefined,
        wait_source: undefined,
      },
      {
        model: "backup",
        attempt: 3,
        outcome: "success",
        reason: undefined,
        status: undefined,
        next: undefined,
        next_model: undefined,
        wait_ms: undefined,
        wait_source: undefined,
      },
    ]);
  });

  it("moves on to the fallback at once when Retry-After asks for more than max_wait_seconds", async () => {
    const primary = await server({
      handler: () => error(429, "come back tomorrow", { "retry-after": new Date(Date.now() + 3_600_000).toUTCString() }),
    });
    const backup = await server({ script: [{ text: "ok" }] });
    const kernel = await kernelWith([
      entry("primary", primary, { fallbacks: ["backup"], retry: { attempts: 3, max_wait_seconds: 10 } }),
      entry("backup", backup),
    ]);
    const events: ModelAttempt[] = [];
    await collectAttempts(await kernel.createModel("primary"), events);
    expect(completions(primary)).toHaveLength(1);
    expect(events[0]).toMatchObject({ model: "primary", status: 429, next: "fallback", next_model: "backup" });
  });

  it("with fallbacks and no max_retries, the SDK does not retry on its own: the primary is asked once before the fallback", async () => {
    const primary = await server({ handler: () => error(500, "down") });
    const backup = await server({ script: [{ text: "ok" }] });
    const { max_retries: _unset, ...primaryEntry } = entry("primary", primary, { fallbacks: ["backup"] });
    const kernel = await kernelWith([primaryEntry, entry("backup", backup)]);
    expect((await (await kernel.createModel("primary")).invoke("hi")).text).toBe("ok");
    expect(completions(primary)).toHaveLength(1);
  });

  it("does not retry or fall back on a 400: the request itself is wrong", async () => {
    const primary = await server({ handler: () => error(400, "bad request") });
    const backup = await server({ script: [{ text: "never" }] });
    const kernel = await kernelWith([
      entry("primary", primary, { fallbacks: ["backup"], retry: { attempts: 2 } }),
      entry("backup", backup),
    ]);
    const failure = await (await kernel.createModel("primary")).invoke("hi").catch((e: unknown) => e);
    expect(isAntlerError(failure, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    expect(completions(primary)).toHaveLength(1);
    expect(completions(backup)).toHaveLength(0);
  });

  it("fails with MODEL_CALL_FAILED listing every attempt when the fallbacks fail too", async () => {
    const primary = await server({ handler: () => error(500, "primary down") });
    const backup = await server({ handler: () => error(502, "backup down") });
    const kernel = await kernelWith([entry("primary", primary, { fallbacks: ["backup"] }), entry("backup", backup)]);
    const failure = await ensureTraceContext("trace-all-down", () => kernel.createModel("primary").then((m) => m.invoke("hi"))).catch(
      (e: unknown) => e,
    );
    expect(isAntlerError(failure, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    const message = (failure as Error).message;
    expect(message).toContain("after 2 attempts (primary: HTTP 500, backup: HTTP 502)");
    expect(message).toContain("trace-all-down");
    expect((failure as { details: { attempts: ModelAttempt[] } }).details.attempts.map((a) => [a.model, a.next])).toEqual([
      ["primary", "fallback"],
      ["backup", "give_up"],
    ]);
  });

  it("falls back on a refusal (content filter) without retrying the refusing model", async () => {
    const primary = await server({
      handler: () => ({
        status: 200,
        body: {
          id: "chatcmpl-refused",
          object: "chat.completion",
          created: 0,
          model: "primary-id",
          choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "content_filter" }],
        },
      }),
    });
    const backup = await server({ script: [{ text: "answered" }] });
    const kernel = await kernelWith([
      entry("primary", primary, { fallbacks: ["backup"], retry: { attempts: 2 } }),
      entry("backup", backup),
    ]);
    const events: ModelAttempt[] = [];
    const { dispatched } = await collectAttempts(await kernel.createModel("primary"), events);
    expect(dispatched.text).toBe("answered");
    expect(completions(primary)).toHaveLength(1);
    expect(events[0]).toMatchObject({ model: "primary", outcome: "refused", reason: "refusal", next: "fallback" });
  });

  it("streams: a failure before the first token switches to the fallback, and only the fallback's text is streamed", async () => {
    const primary = await server({ handler: () => error(500, "down") });
    const backup = await server({ script: [{ text: "one two three", usage: { input_tokens: 3, output_tokens: 3 } }] });
    const kernel = await kernelWith([entry("primary", primary, { fallbacks: ["backup"] }), entry("backup", backup)]);
    const chunks = await drain(await kernel.createModel("primary"), "count");
    expect(chunks.map((c) => c.text).join("")).toBe("one two three");
    const merged = chunks.reduce((a, b) => a.concat(b));
    expect(modelCallStamp(merged)).toMatchObject({ model: "backup", attempts: 2 });
    expect(merged.usage_metadata).toMatchObject({ input_tokens: 3, output_tokens: 3 });
  });

  it("an entry without fallbacks, retries, limits or pricing gets the provider's model unwrapped", async () => {
    const s = await server({ script: [{ text: "plain" }] });
    const kernel = await kernelWith([entry("plain", s)]);
    const model = await kernel.createModel("plain");
    expect(model.constructor.name).not.toBe("ResilientChatModel");
    expect(modelCallStamp(await model.invoke("hi"))).toBeUndefined();
  });
});

describe("model limits (kernel wrapper, OpenAI wire API)", () => {
  it("max_concurrency holds across concurrent calls: the server never sees more than N in flight", async () => {
    let inFlight = 0;
    let most = 0;
    const s = await server({
      handler: async (_b, i) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await sleep(40);
        inFlight -= 1;
        return { text: `answer ${i}` };
      },
    });
    const kernel = await kernelWith([entry("gpt", s, { max_concurrency: 2 })]);
    const model = await kernel.createModel("gpt");
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => model.invoke(`q${i}`)));
    expect(replies).toHaveLength(6);
    expect(completions(s)).toHaveLength(6);
    expect(most).toBe(2);
  });

  it("requests_per_minute: past the window with queue_timeout_seconds 0 the call fails as rate limited and moves to the fallback", async () => {
    const s = await server({ handler: () => ({ text: "primary" }) });
    const backup = await server({ handler: () => ({ text: "backup" }) });
    const kernel = await kernelWith([
      entry("gpt", s, { requests_per_minute: 2, queue_timeout_seconds: 0, fallbacks: ["backup"] }),
      entry("backup", backup),
    ]);
    const model = await kernel.createModel("gpt");
    const texts = [];
    for (let i = 0; i < 3; i++) texts.push((await model.invoke(`q${i}`)).text);
    expect(texts).toEqual(["primary", "primary", "backup"]);
    expect(completions(s)).toHaveLength(2);
  });

  it("requests_per_minute without fallbacks: the third call in the minute fails with MODEL_CALL_FAILED caused by MODEL_RATE_LIMITED", async () => {
    const s = await server({ handler: () => ({ text: "ok" }) });
    const kernel = await kernelWith([entry("gpt", s, { requests_per_minute: 2, queue_timeout_seconds: 0 })]);
    const model = await kernel.createModel("gpt");
    await model.invoke("a");
    await model.invoke("b");
    const failure = await model.invoke("c").catch((e: unknown) => e);
    expect(isAntlerError(failure, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    expect(isAntlerError((failure as Error).cause, ErrorCodes.MODEL_RATE_LIMITED)).toBe(true);
    expect(completions(s)).toHaveLength(2);
  });
});

/** Invokes `model` and collects the attempts its reply's stamp records (the `model_attempt` events' payloads). */
async function collectAttempts(
  model: { invoke(input: string): Promise<AIMessageChunk> },
  into: ModelAttempt[],
): Promise<{ dispatched: AIMessageChunk }> {
  const dispatched = await model.invoke("hi");
  into.push(...((modelCallStamp(dispatched)?.attempt_log ?? []) as readonly unknown[] as ModelAttempt[]));
  return { dispatched };
}
