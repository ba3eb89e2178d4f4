import { afterEach, describe, expect, it } from "vitest";
import { type OpenAICompatibleServer, type OpenAIServerOptions, startOpenAICompatibleServer } from "../src/testing/index.js";

const servers: OpenAICompatibleServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(options: OpenAIServerOptions): Promise<OpenAICompatibleServer> {
  const server = await startOpenAICompatibleServer(options);
  servers.push(server);
  return server;
}

function post(server: OpenAICompatibleServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** The JSON payloads of an SSE body, and whether it ended with `[DONE]`. */
async function sse(response: Response): Promise<{ events: Array<Record<string, unknown>>; done: boolean }> {
  const text = await response.text();
  const data = text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice("data: ".length));
  return { events: data.filter((d) => d !== "[DONE]").map((d) => JSON.parse(d)), done: data.at(-1) === "[DONE]" };
}

type ErrorJson = { error: { message: string } };
type CompletionJson = { choices: Array<{ message: { content: string | null } }> };
/** A JSON body, typed by the test that knows its shape. */
const json = async <T>(res: Response): Promise<T> => (await res.json()) as T;

type Delta = { content?: string; tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }> };
const deltaOf = (event: Record<string, unknown>) => ((event.choices as Array<{ delta: Delta }>)[0]?.delta ?? {}) as Delta;

describe("startOpenAICompatibleServer", () => {
  it("listens on 127.0.0.1 with an ephemeral port and a /v1 base URL", async () => {
    const server = await start({});
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(server.url).not.toMatch(/:0\/v1$/);
  });

  it("gives replies ids no other server (a restarted one) gives, so a saved thread never merges a new reply into an old one", async () => {
    const ids = new Set<string>();
    for (let restart = 0; restart < 2; restart++) {
      const server = await start({ script: [{ text: "one" }, { text: "two" }] });
      for (let call = 0; call < 2; call++) {
        const body = await json<{ id: string }>(await post(server, { messages: [{ role: "user", content: "hi" }] }));
        expect(body.id).toMatch(/^chatcmpl-scripted-[0-9a-f]{8}-\d$/);
        ids.add(body.id);
      }
      await server.close();
    }
    expect(ids.size).toBe(4);
  });

  it("answers a chat completion with the scripted message, tool calls and usage", async () => {
    const server = await start({
      script: [{ text: "Hi!", toolCalls: [{ name: "lookup", args: { q: "x" } }], usage: { input_tokens: 11, output_tokens: 3 } }],
    });
    const res = await post(server, { model: "gpt-test", messages: [{ role: "user", content: "hello" }] });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "gpt-test",
      choices: [
        {
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: "Hi!",
            tool_calls: [{ id: "call_0_0", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }],
          },
        },
      ],
      usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
    });
  });

  it("streams text deltas, then tool call deltas in pieces, then [DONE]", async () => {
    const server = await start({
      script: [{ text: "one two three", toolCalls: [{ name: "search", args: { query: "long enough query" } }] }],
    });
    const res = await post(server, { model: "m", stream: true, messages: [{ role: "user", content: "go" }] });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const { events, done } = await sse(res);
    expect(done).toBe(true);
    const deltas = events.map(deltaOf);
    expect(deltas.map((d) => d.content).filter(Boolean)).toEqual(["one ", "two ", "three"]);
    const toolDeltas = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({ index: 0, id: "call_0_0", function: { name: "search", arguments: "" } });
    expect(toolDeltas.length).toBeGreaterThan(2);
    expect(toolDeltas.every((t) => t.index === 0)).toBe(true);
    expect(toolDeltas.map((t) => t.function?.arguments ?? "").join("")).toBe('{"query":"long enough query"}');
    expect((events.at(-1)?.choices as Array<{ finish_reason: string }> | undefined)?.[0]?.finish_reason).toBe("tool_calls");
  });

  it("sends a usage chunk with empty choices only when stream_options.include_usage is set", async () => {
    const server = await start({ script: [{ text: "a", usage: { input_tokens: 5, output_tokens: 1 } }, { text: "b" }] });
    const withUsage = await sse(await post(server, { stream: true, stream_options: { include_usage: true }, messages: [] }));
    expect(withUsage.events.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } });
    const without = await sse(await post(server, { stream: true, messages: [] }));
    expect(without.events.some((e) => "usage" in e)).toBe(false);
  });

  it("lists models", async () => {
    const server = await start({ models: ["alpha", "beta"] });
    const body = await json<{ object: string; data: Array<{ id: string }> }>(await fetch(`${server.url}/models`));
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.id)).toEqual(["alpha", "beta"]);
  });

  it("lets a handler answer with a raw status and body, e.g. a 429", async () => {
    const server = await start({
      handler: (_body, callIndex) =>
        callIndex === 0
          ? { status: 429, body: { error: { message: "slow down", type: "rate_limit_error" } }, headers: { "retry-after": "1" } }
          : { text: "ok" },
    });
    const limited = await post(server, { messages: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect((await json<ErrorJson>(limited)).error.message).toBe("slow down");
    expect((await json<CompletionJson>(await post(server, { messages: [] }))).choices[0]?.message.content).toBe("ok");
  });

  it("answers an error step with a 500 and a past-the-script call with a 500 naming the call", async () => {
    const server = await start({ script: [{ error: "model melted" }] });
    const failed = await post(server, { messages: [] });
    expect(failed.status).toBe(500);
    expect((await json<ErrorJson>(failed)).error.message).toBe("model melted");
    expect(server.unanswered).toEqual([]);
    const past = await post(server, { messages: [] });
    expect(past.status).toBe(500);
    expect((await json<ErrorJson>(past)).error.message).toContain("#1 (the script has 1 step(s)): add a step");
    // What a test checks when every call was meant to be scripted: the run itself only shows an apology.
    expect(server.unanswered).toEqual([1]);
  });

  it("records every request with its headers and parsed body", async () => {
    const server = await start({ script: [{ text: "x" }] });
    await post(server, { model: "m", messages: [{ role: "user", content: "hi" }] }, { "x-trace-id": "abc" });
    await fetch(`${server.url}/models`);
    expect(server.requests.map((r) => [r.method, r.path])).toEqual([
      ["POST", "/v1/chat/completions"],
      ["GET", "/v1/models"],
    ]);
    expect(server.requests[0]?.headers["x-trace-id"]).toBe("abc");
    expect(server.requests[0]?.body).toEqual({ model: "m", messages: [{ role: "user", content: "hi" }] });
  });

  it("closes promptly even with a request in flight on an open connection", async () => {
    const server = await startOpenAICompatibleServer({ script: [{ text: "too late", delayMs: 30_000 }] });
    const inFlight = post(server, { messages: [] }).then(
      () => "answered",
      () => "cut off",
    );
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const started = performance.now();
    await server.close();
    // Well short of the 30 s delay, with room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await inFlight).toBe("cut off");
    await expect(fetch(`${server.url}/models`)).rejects.toThrow();
  });
});
