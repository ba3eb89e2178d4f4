import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  createKernel,
  ErrorCodes,
  ensureTraceContext,
  isAntlerError,
  type Kernel,
  type KernelConfigInput,
  silentLogger,
} from "@antler/kernel";
import { runPluginConformance } from "@antler/kernel/testing";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
// `langchain` is a dependency of the kernel, not of this package; reach it through the kernel's install.
import { createAgent } from "../../../kernel/node_modules/langchain/dist/index.js";
import anthropicPlugin, { DEFAULT_MAX_TOKENS } from "../src/index.js";

/** One scripted assistant turn of the fake Messages API. */
interface Turn {
  text?: string;
  toolUse?: { id: string; name: string; input: Record<string, unknown> };
  usage?: { input_tokens: number; output_tokens: number };
  /** Answer with this status and error body instead. */
  fail?: { status: number; type: string; message: string };
}

interface MessagesServer {
  url: string;
  requests: Array<{ headers: IncomingHttpHeaders; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * A loopback server speaking Anthropic's Messages API as @anthropic-ai/sdk parses it: a JSON message, or the SSE
 * event stream (message_start, content_block_start/delta/stop, message_delta with usage, message_stop).
 */
async function startMessagesServer(turns: Turn[]): Promise<MessagesServer> {
  const requests: MessagesServer["requests"] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8") || "{}") as Record<string, unknown>;
      requests.push({ headers: req.headers, body });
      const index = requests.length - 1;
      const turn = turns[index];
      if (req.url !== "/v1/messages" || !turn || turn.fail) {
        const fail = turn?.fail ?? { status: 500, type: "api_error", message: `no scripted turn for call #${index} to ${req.url}` };
        res.writeHead(fail.status, { "content-type": "application/json", "request-id": `req_${index}` });
        res.end(JSON.stringify({ type: "error", error: { type: fail.type, message: fail.message } }));
        return;
      }
      const id = `msg_${index}`;
      const usage = turn.usage ?? { input_tokens: 10, output_tokens: 5 };
      const stopReason = turn.toolUse ? "tool_use" : "end_turn";
      const content: Array<Record<string, unknown>> = [];
      if (turn.text !== undefined) content.push({ type: "text", text: turn.text });
      if (turn.toolUse) content.push({ type: "tool_use", ...turn.toolUse });
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id,
            type: "message",
            role: "assistant",
            model: body.model,
            content,
            stop_reason: stopReason,
            stop_sequence: null,
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = (event: string, data: Record<string, unknown>) =>
        res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
      send("message_start", {
        message: {
          id,
          type: "message",
          role: "assistant",
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input_tokens, output_tokens: 0 },
        },
      });
      let block = 0;
      if (turn.text !== undefined) {
        send("content_block_start", { index: block, content_block: { type: "text", text: "" } });
        send("ping", {});
        for (const piece of turn.text.match(/\s+|\S+\s*/g) ?? [])
          send("content_block_delta", { index: block, delta: { type: "text_delta", text: piece } });
        send("content_block_stop", { index: block });
        block++;
      }
      if (turn.toolUse) {
        send("content_block_start", {
          index: block,
          content_block: { type: "tool_use", id: turn.toolUse.id, name: turn.toolUse.name, input: {} },
        });
        const json = JSON.stringify(turn.toolUse.input);
        for (let at = 0; at < json.length; at += 6) {
          send("content_block_delta", { index: block, delta: { type: "input_json_delta", partial_json: json.slice(at, at + 6) } });
        }
        send("content_block_stop", { index: block });
      }
      send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
      send("message_stop", {});
      res.end();
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        for (const s of sockets) s.destroy();
      }),
  };
}

const weather = tool(async ({ city }: { city: string }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "Current weather for a city.",
  schema: z.object({ city: z.string() }),
});

type ModelEntry = NonNullable<KernelConfigInput["models"]>[number];

const servers: MessagesServer[] = [];
const kernels: Kernel[] = [];
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((k) => k.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(turns: Turn[]): Promise<MessagesServer> {
  const s = await startMessagesServer(turns);
  servers.push(s);
  return s;
}

async function kernelWith(models: ModelEntry[], env: Record<string, string> = {}): Promise<Kernel> {
  const kernel = await createKernel({ plugins: [anthropicPlugin], config: { models }, discover: false, env, logger: silentLogger() });
  kernels.push(kernel);
  return kernel;
}

async function modelFor(s: MessagesServer, extra: Partial<ModelEntry> = {}): Promise<BaseChatModel> {
  const kernel = await kernelWith([
    { name: "claude", provider: "anthropic", model: "claude-test", base_url: s.url, api_key: "sk-ant-test", max_retries: 0, ...extra },
  ]);
  return kernel.createModel();
}

type Block = { type: string; [key: string]: unknown };
type Message = { role: string; content: string | Block[] };

/** The tool_result block of the last message of a recorded request. */
function lastToolResult(body: Record<string, unknown> | undefined): Block | undefined {
  const content = (body?.messages as Message[] | undefined)?.at(-1)?.content;
  return Array.isArray(content) ? content.find((b) => b.type === "tool_result") : undefined;
}

runPluginConformance(anthropicPlugin);

describe("@antler/plugin-anthropic", () => {
  it("loads through createKernel and answers a plain invoke over the Messages API", async () => {
    const s = await serve([{ text: "Hello from Claude." }]);
    const kernel = await kernelWith([
      { name: "claude", provider: "anthropic", model: "claude-test", base_url: s.url, api_key: "sk-ant-test" },
    ]);
    expect(kernel.plugins.map((p) => p.name)).toContain("@antler/plugin-anthropic");
    const reply = await (await kernel.createModel()).invoke([new HumanMessage("hi")]);
    expect(reply.text).toBe("Hello from Claude.");
    expect(s.requests[0]?.headers["x-api-key"]).toBe("sk-ant-test");
    expect(s.requests[0]?.body).toMatchObject({
      model: "claude-test",
      max_tokens: DEFAULT_MAX_TOKENS,
      messages: [{ role: "user", content: "hi" }],
    });
  });

  it("streams text as several deltas with usage from message_start and message_delta", async () => {
    const s = await serve([{ text: "alpha beta gamma", usage: { input_tokens: 21, output_tokens: 7 } }]);
    const model = await modelFor(s);
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await model.stream("go")) chunks.push(chunk);
    expect(chunks.filter((c) => c.text).map((c) => c.text)).toEqual(["alpha ", "beta ", "gamma"]);
    const merged = chunks.reduce((a, b) => a.concat(b));
    expect(merged.usage_metadata).toMatchObject({ input_tokens: 21, output_tokens: 7, total_tokens: 28 });
    expect(s.requests[0]?.body.stream).toBe(true);
  });

  it("runs a tool_use round trip inside createAgent with a real tool", async () => {
    const s = await serve([
      { text: "Checking.", toolUse: { id: "toolu_01", name: "get_weather", input: { city: "Oslo" } } },
      { text: "It is sunny in Oslo." },
    ]);
    const agent = createAgent({ model: await modelFor(s), tools: [weather] });
    const result = await agent.invoke({ messages: [new HumanMessage("Weather in Oslo?")] });
    expect(result.messages.at(-1)?.text).toBe("It is sunny in Oslo.");
    expect(s.requests[0]?.body.tools).toMatchObject([{ name: "get_weather", input_schema: { type: "object" } }]);
    const messages = s.requests[1]?.body.messages as Message[];
    const assistantBlocks = messages.find((m) => m.role === "assistant")?.content as Block[];
    expect(assistantBlocks).toContainEqual(
      expect.objectContaining({ type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Oslo" } }),
    );
    expect(lastToolResult(s.requests[1]?.body)).toMatchObject({ tool_use_id: "toolu_01", content: "sunny in Oslo" });
  });

  it("parses a streamed tool_use block (input_json_delta pieces) inside a streaming agent", async () => {
    const s = await serve([{ toolUse: { id: "toolu_02", name: "get_weather", input: { city: "Lima" } } }, { text: "Sunny in Lima." }]);
    const agent = createAgent({ model: await modelFor(s), tools: [weather] });
    const texts: string[] = [];
    for await (const [chunk] of await agent.stream({ messages: [new HumanMessage("Lima?")] }, { streamMode: "messages" })) {
      if (chunk.getType() === "ai" && chunk.text) texts.push(chunk.text);
    }
    expect(texts).toEqual(["Sunny ", "in ", "Lima."]);
    expect(lastToolResult(s.requests[1]?.body)).toMatchObject({ tool_use_id: "toolu_02", content: "sunny in Lima" });
  });

  it("sends the bound trace id as X-Trace-Id on every request", async () => {
    const s = await serve([{ text: "a" }, { text: "b" }]);
    const model = await modelFor(s);
    await ensureTraceContext("trace-anthropic-1", async () => {
      await model.invoke("x");
      for await (const _ of await model.stream("y")) {
        // drain
      }
    });
    expect(s.requests.map((r) => r.headers["x-trace-id"])).toEqual(["trace-anthropic-1", "trace-anthropic-1"]);
  });

  it("turns a 401 into MODEL_CALL_FAILED naming the model and trace id, with the key to check", async () => {
    const s = await serve([{ fail: { status: 401, type: "authentication_error", message: "invalid x-api-key" } }]);
    const model = await modelFor(s);
    const error = await ensureTraceContext("trace-401", () => model.invoke("hi")).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('model "claude"');
    expect(message).toContain("HTTP 401");
    expect(message).toContain("invalid x-api-key");
    expect(message).toContain("trace-401");
    expect(message).toContain("models[0].api_key");
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it("wraps failures while streaming too", async () => {
    const s = await serve([{ fail: { status: 529, type: "overloaded_error", message: "Overloaded" } }]);
    const model = await modelFor(s);
    const error = await ensureTraceContext("trace-stream", async () => {
      for await (const _ of await model.stream("hi")) {
        // drain
      }
    }).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    expect((error as Error).message).toContain("trace-stream");
  });

  it("takes max_tokens and temperature from the entry", async () => {
    const s = await serve([{ text: "ok" }]);
    await (await modelFor(s, { max_tokens: 256, temperature: 0.2 })).invoke("hi");
    expect(s.requests[0]?.body).toMatchObject({ max_tokens: 256, temperature: 0.2 });
  });

  it("passes options.thinking through when supports_thinking is set", async () => {
    const s = await serve([{ text: "thought about it" }]);
    const model = await modelFor(s, { supports_thinking: true, options: { thinking: { type: "enabled", budget_tokens: 1024 } } });
    await model.invoke("think");
    expect(s.requests[0]?.body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
  });

  it("a run's thinking switch reaches the request: when_thinking_enabled sends the thinking block, thinking off sends none", async () => {
    const s = await serve([{ text: "thought" }, { text: "quick" }]);
    const kernel = await kernelWith([
      {
        name: "claude",
        provider: "anthropic",
        model: "claude-test",
        base_url: s.url,
        api_key: "sk-ant-test",
        max_retries: 0,
        supports_thinking: true,
        when_thinking_enabled: { max_tokens: 4096, options: { thinking: { type: "enabled", budget_tokens: 1024 } } },
      },
    ]);
    await (await kernel.createModel("claude", { thinking: true })).invoke("think");
    await (await kernel.createModel("claude", { thinking: false })).invoke("answer");
    expect(s.requests[0]?.body).toMatchObject({ max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 1024 } });
    expect(s.requests[1]?.body.max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(s.requests[1]?.body).not.toHaveProperty("thinking");
  });

  it("rejects options.thinking on a model that does not declare supports_thinking", async () => {
    const kernel = await kernelWith([
      {
        name: "claude",
        provider: "anthropic",
        model: "claude-test",
        api_key: "k",
        options: { thinking: { type: "enabled", budget_tokens: 1024 } },
      },
    ]);
    const error = await kernel.createModel().catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((error as Error).message).toContain("models[0].options.thinking");
  });

  it("without api_key or base_url, takes ANTHROPIC_API_KEY from the environment", async () => {
    const kernel = await kernelWith([{ name: "claude", provider: "anthropic", model: "claude-test" }], { ANTHROPIC_API_KEY: "sk-ant-env" });
    await expect(kernel.createModel()).resolves.toBeDefined();
  });

  it("without any key, fails naming models[i].api_key and ANTHROPIC_API_KEY", async () => {
    const kernel = await kernelWith([{ name: "claude", provider: "anthropic", model: "claude-test" }]);
    const error = await kernel.createModel().catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect((error as Error).message).toContain("models[0].api_key");
    expect((error as Error).message).toContain("ANTHROPIC_API_KEY");
  });
});
