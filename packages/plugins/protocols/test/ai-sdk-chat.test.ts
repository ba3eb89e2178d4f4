// Conformance of `POST /ai-sdk/chat` with the AI SDK's own client: `DefaultChatTransport.sendMessages` posts the
// request useChat posts and parses the stream with the SDK's chunk schema, and `readUIMessageStream` assembles the
// assistant message the way useChat does. A real gateway on loopback, SQLite storage, a scripted model.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, emitCustomEvent } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import protocols, { AI_SDK_INVALID_CHAT } from "../src/index.js";

const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef01";

const lookupTools = definePlugin({
  name: "lookup-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "lookup",
        description: "Looks a word up.",
        schema: z.object({ word: z.string() }),
        run: async ({ word }, runtime) => {
          await emitCustomEvent({ type: "lookup_progress", word, done: true }, runtime as never);
          return JSON.stringify({ word, meaning: "a test word" });
        },
      }),
    );
  },
});

/** A middleware that fails the run before the agent starts when the user asks for it: a run that ends in error. */
const failingMiddleware = definePlugin({
  name: "failing-middleware",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.middleware.add(
      {
        name: "FailOnRequest",
        create: () => ({
          name: "FailOnRequest",
          beforeAgent(state: { messages: BaseMessage[] }) {
            if (lastText(state.messages).includes("please fail")) throw new Error("the agent exploded");
            return undefined;
          },
        }),
      },
      { stage: "normal" },
    );
  },
});

function lastText(messages: BaseMessage[]): string {
  const last = messages[messages.length - 1];
  return typeof last?.content === "string" ? last.content : "";
}

/** Answers by what it was sent: a tool call for "look up", a long wait for "wait", text otherwise. */
const script = (messages: BaseMessage[]) => {
  const last = messages[messages.length - 1];
  if (last instanceof ToolMessage) return { text: "The word means: a test word.", usage: { input_tokens: 7, output_tokens: 5 } };
  if (last instanceof AIMessage) return { text: "?" };
  const text = lastText(messages);
  if (text.includes("look up")) return { toolCalls: [{ id: "call-lookup", name: "lookup", args: { word: "antler" } }] };
  if (text.includes("wait")) return { text: "too late", delayMs: 60_000 };
  return { text: `You said: ${text}` };
};

let dir: string;
let client: AntlerClient;
let gateway: RunningGateway;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "antler-ai-sdk-"));
  client = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [scriptedModelsPlugin({ m: { respond: script } }), lookupTools, failingMiddleware, protocols],
    cwd: dir,
    env: {},
    discover: false,
  });
  gateway = await startGateway({
    client,
    config: {
      port: 0,
      auth: {
        mode: "api_keys",
        api_keys: [
          { key: ALICE, user: "alice" },
          { key: BOB, user: "bob" },
        ],
      },
    },
    shutdownGraceMs: 500,
  });
});

afterAll(async () => {
  await gateway?.close();
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

function userMessage(id: string, text: string): UIMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** The transport useChat uses by default, pointed at the gateway with a key; `seen` gets each HTTP response. */
function transport(key: string, seen: Response[] = []) {
  return new DefaultChatTransport<UIMessage>({
    api: `${gateway.url}/ai-sdk/chat`,
    headers: { authorization: `Bearer ${key}` },
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      seen.push(response);
      return response;
    },
  });
}

async function send(chatId: string, messages: UIMessage[], options: { key?: string; signal?: AbortSignal; seen?: Response[] } = {}) {
  return transport(options.key ?? ALICE, options.seen).sendMessages({
    trigger: "submit-message",
    chatId,
    messageId: undefined,
    messages,
    abortSignal: options.signal,
  });
}

/** Every chunk, and the assistant message readUIMessageStream assembled from them. */
async function collect(stream: ReadableStream<UIMessageChunk>): Promise<{ chunks: UIMessageChunk[]; message: UIMessage | undefined }> {
  const [forChunks, forMessage] = stream.tee();
  const chunks: UIMessageChunk[] = [];
  const reading = (async () => {
    for await (const chunk of forChunks) chunks.push(chunk);
  })();
  let message: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream: forMessage, terminateOnError: true })) message = m;
  await reading;
  return { chunks, message };
}

type Metadata = { run_id: string; thread_id: string; trace_id: string; usage?: { total_tokens: number } };

describe("the AI SDK UI message stream at /ai-sdk/chat", () => {
  it("streams a tool call to output-available and the answer's text, with run id, trace id and usage in the metadata", async () => {
    const seen: Response[] = [];
    const { chunks, message } = await collect(await send("chat-tool", [userMessage("u1", "please look up antler")], { seen }));
    expect(seen[0]?.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect(seen[0]?.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const types = chunks.map((c) => c.type);
    expect(types[0]).toBe("start");
    expect(types.at(-1)).toBe("finish");
    expect(types).toContain("text-delta");
    expect(types.indexOf("tool-input-available")).toBeLessThan(types.indexOf("tool-output-available"));

    const tool = message?.parts.find((p) => p.type === "tool-lookup");
    expect(tool).toMatchObject({
      toolCallId: "call-lookup",
      state: "output-available",
      input: { word: "antler" },
      output: { word: "antler", meaning: "a test word" },
    });
    // A custom event is a data part named for its type.
    expect(message?.parts.find((p) => p.type === "data-lookup_progress")).toMatchObject({
      data: { type: "lookup_progress", word: "antler", done: true },
    });
    const text = message?.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text);
    expect(text).toEqual(["The word means: a test word."]);

    const metadata = message?.metadata as Metadata;
    expect(metadata.thread_id).toBe("chat-tool");
    expect(metadata.usage?.total_tokens).toBe(12);
    const run = await client.getRun("chat-tool", metadata.run_id, { userId: "alice" });
    expect(run.status).toBe("success");
    expect(run.trace_id).toBe(metadata.trace_id);
    expect(seen[0]?.headers.get("x-trace-id")).toBe(metadata.trace_id);
  });

  it("continues the chat's thread with only the last user message as new input", async () => {
    const first = await collect(await send("chat-two", [userMessage("u1", "hello")]));
    expect(first.message?.parts.find((p) => p.type === "text")).toMatchObject({ text: "You said: hello" });
    const history = [userMessage("u1", "hello"), first.message as UIMessage, userMessage("u2", "again")];
    const second = await collect(await send("chat-two", history));
    expect(second.message?.parts.find((p) => p.type === "text")).toMatchObject({ text: "You said: again" });
    const thread = await client.getThread("chat-two", { userId: "alice" });
    expect(thread.messages.filter((m) => m.type === "human").map((m) => m.content)).toEqual(["hello", "again"]);
  });

  it("reports a failed run as the stream's error part, with the error's code and the trace id", async () => {
    const chunks: UIMessageChunk[] = [];
    for await (const chunk of await send("chat-fail", [userMessage("u1", "please fail")])) chunks.push(chunk);
    const start = chunks[0] as Extract<UIMessageChunk, { type: "start" }>;
    const { run_id, trace_id } = start.messageMetadata as Metadata;
    const error = chunks.at(-1) as Extract<UIMessageChunk, { type: "error" }>;
    expect(error.type).toBe("error");
    expect(error.errorText).toContain("the agent exploded");
    expect(error.errorText).toMatch(/^ANTLER_ERR_[A-Z_]+: /);
    expect(error.errorText).toContain(trace_id);
    expect((await client.getRun("chat-fail", run_id, { userId: "alice" })).status).toBe("error");
  });

  it("cancels the run when the client stops (aborts the request)", async () => {
    const stop = new AbortController();
    const stream = await send("chat-stop", [userMessage("u1", "wait for it")], { signal: stop.signal });
    const reader = stream.getReader();
    const start = (await reader.read()).value as Extract<UIMessageChunk, { type: "start" }>;
    expect(start.type).toBe("start");
    const runId = (start.messageMetadata as Metadata).run_id;
    expect((await client.getRun("chat-stop", runId, { userId: "alice" })).status).toBe("running");
    stop.abort();
    await reader.read().catch(() => undefined);
    await vi.waitFor(async () => expect((await client.getRun("chat-stop", runId, { userId: "alice" })).status).toBe("cancelled"), {
      timeout: 10_000,
      interval: 50,
    });
  });

  it("answers 404 in the gateway's error shape for an unknown thread and for another user's, with X-Trace-Id", async () => {
    await collect(await send("chat-alice", [userMessage("u1", "mine")]));
    const history = [userMessage("u1", "mine"), { id: "a1", role: "assistant", parts: [] }, userMessage("u2", "more")];
    for (const [key, chatId] of [
      [ALICE, "chat-never-started"],
      [BOB, "chat-alice"],
    ] as const) {
      const response = await fetch(`${gateway.url}/ai-sdk/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ id: chatId, messages: history, trigger: "submit-message" }),
      });
      expect(response.status).toBe(404);
      expect(response.headers.get("x-trace-id")).toBeTruthy();
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("ANTLER_ERR_THREAD_NOT_FOUND");
    }
    // The transport surfaces it as an error, as useChat's `error`.
    await expect(send("chat-alice", history as UIMessage[], { key: BOB })).rejects.toThrow(/THREAD_NOT_FOUND|not found/);
  });

  it("answers 400 for a malformed body and for a chat that does not end with the user's text", async () => {
    const post = (body: unknown) =>
      fetch(`${gateway.url}/ai-sdk/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const malformed = await post({ id: "chat-bad", messages: "hello" });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get("x-trace-id")).toBeTruthy();
    expect(((await malformed.json()) as { error: { code: string } }).error.code).toMatch(/^ANTLER_ERR_/);

    const endsWithAssistant = await post({ id: "chat-bad", messages: [{ id: "a", role: "assistant", parts: [] }] });
    expect(endsWithAssistant.status).toBe(400);
    expect(await endsWithAssistant.json()).toMatchObject({ error: { code: AI_SDK_INVALID_CHAT, where: "messages[0].role" } });

    const noText = await post({
      id: "chat-bad",
      messages: [{ id: "u", role: "user", parts: [{ type: "file", url: "x", mediaType: "text/plain" }] }],
    });
    expect(noText.status).toBe(400);
    expect(await noText.json()).toMatchObject({ error: { code: AI_SDK_INVALID_CHAT, where: "messages[0].parts" } });
  });
});
