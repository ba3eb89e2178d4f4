// Conformance of `POST /ai-sdk/chat` with the AI SDK's own client: `DefaultChatTransport.sendMessages` posts the
// request useChat posts and parses the stream with the SDK's chunk schema, and `readUIMessageStream` assembles the
// assistant message the way useChat does. A real gateway on loopback, SQLite storage, a scripted model.
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { RunningGateway } from "@antler/plugin-gateway";
import type { AntlerClient } from "@antler/plugin-runtime";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { AI_SDK_INVALID_CHAT } from "../src/index.js";
import {
  ALICE,
  BOB,
  failingMiddleware,
  lastText,
  lookupReply,
  lookupTools,
  type ProtocolsGateway,
  startProtocolsGateway,
} from "./fixtures.js";

/** Holds of the `hold` tool by key: a run waits in the tool until the test releases it. */
const holds = new Map<string, { released: Promise<void>; release: () => void }>();
function hold(key: string): () => void {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  holds.set(key, { released, release });
  return release;
}

const holdTool = definePlugin({
  name: "hold-tool",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "hold",
        description: "Waits until the test releases it.",
        schema: z.object({ key: z.string() }),
        run: async ({ key }) => {
          await holds.get(key)?.released;
          return "released";
        },
      }),
    );
  },
});

/**
 * Answers by what it was sent: a tool call for "look up", a held tool call for "hold <key>", reasoning then text for
 * "think", a long wait for "wait", text otherwise.
 */
const script = (messages: BaseMessage[]) => {
  const last = messages[messages.length - 1];
  if (last instanceof ToolMessage && last.name === "hold") return { text: "Released after the hold." };
  const text = lastText(messages);
  const shared = lookupReply(messages, text);
  if (shared) return shared;
  const held = /hold (\S+)/.exec(text);
  if (held) return { toolCalls: [{ id: `call-hold-${held[1]}`, name: "hold", args: { key: held[1] } }] };
  if (text.includes("think")) return { reasoning: "The user wants thought. Let me think it over.", text: "Thought it through." };
  if (text.includes("wait")) return { text: "too late", delayMs: 60_000 };
  return { text: `You said: ${text}` };
};

let harness: ProtocolsGateway;
let client: AntlerClient;
let gateway: RunningGateway;

beforeAll(async () => {
  harness = await startProtocolsGateway({
    prefix: "antler-ai-sdk-",
    script,
    plugins: [lookupTools, holdTool, failingMiddleware(lastText)],
  });
  ({ client, gateway } = harness);
});

afterAll(async () => {
  for (const { release } of holds.values()) release();
  await harness?.close();
});

function userMessage(id: string, text: string): UIMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** The transport useChat uses by default, pointed at the gateway with a key; `seen` gets each HTTP response. */
function transport(key: string, seen: Response[] = [], body?: Record<string, unknown>) {
  return new DefaultChatTransport<UIMessage>({
    api: `${gateway.url}/ai-sdk/chat`,
    headers: { authorization: `Bearer ${key}` },
    ...(body ? { body } : {}),
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      seen.push(response);
      return response;
    },
  });
}

async function send(
  chatId: string,
  messages: UIMessage[],
  options: { key?: string; signal?: AbortSignal; seen?: Response[]; body?: Record<string, unknown> } = {},
) {
  return transport(options.key ?? ALICE, options.seen, options.body).sendMessages({
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
    // The call's input streams first: its name, then its JSON arguments text in pieces.
    expect(types.indexOf("tool-input-start")).toBeGreaterThan(-1);
    expect(types.indexOf("tool-input-start")).toBeLessThan(types.indexOf("tool-input-delta"));
    expect(types.lastIndexOf("tool-input-delta")).toBeLessThan(types.indexOf("tool-input-available"));
    expect(chunks.find((c) => c.type === "tool-input-start")).toMatchObject({ toolCallId: "call-lookup", toolName: "lookup" });
    const inputText = chunks.flatMap((c) => (c.type === "tool-input-delta" ? [c.inputTextDelta] : [])).join("");
    expect(JSON.parse(inputText)).toEqual({ word: "antler" });

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

  it("streams a thinking model's reasoning as a reasoning part before the answer's text", async () => {
    const { chunks, message } = await collect(await send("chat-think", [userMessage("u1", "think about it")]));
    const types = chunks.map((c) => c.type);
    expect(types.indexOf("reasoning-start")).toBeGreaterThan(-1);
    expect(types.indexOf("reasoning-start")).toBeLessThan(types.indexOf("reasoning-delta"));
    expect(types.lastIndexOf("reasoning-delta")).toBeLessThan(types.indexOf("reasoning-end"));
    expect(types.indexOf("reasoning-end")).toBeLessThan(types.indexOf("text-start"));
    const parts = message?.parts.filter((p) => p.type !== "step-start");
    expect(parts?.[0]).toMatchObject({ type: "reasoning", text: "The user wants thought. Let me think it over.", state: "done" });
    expect(parts?.[1]).toMatchObject({ type: "text", text: "Thought it through.", state: "done" });
    // The reasoning stays out of the answer's text everywhere else: the thread's message holds the text alone.
    const thread = await client.getThread("chat-think", { userId: "alice" });
    expect(thread.messages.filter((m) => m.type === "ai").map((m) => m.content)).toEqual(["Thought it through."]);
  });
});

/** Reads chunks until one of `type` arrives; returns those read. */
async function readUntil(reader: ReadableStreamDefaultReader<UIMessageChunk>, type: string): Promise<UIMessageChunk[]> {
  const seen: UIMessageChunk[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before a ${type} chunk: ${JSON.stringify(seen.map((c) => c.type))}`);
    seen.push(value);
    if (value.type === type) return seen;
  }
}

function raw(method: string, path: string, key: string, init: RequestInit = {}) {
  return fetch(`${gateway.url}${path}`, {
    ...init,
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(init.headers as Record<string, string>) },
  });
}

describe("resumable streams at /ai-sdk/chat/:id/stream", () => {
  it("rejoins a run after the page went away (on_disconnect continue) and replays its whole message, then follows it live", async () => {
    const release = hold("resume");
    const reload = new AbortController();
    const first = await send("chat-resume", [userMessage("u1", "hold resume")], {
      signal: reload.signal,
      body: { on_disconnect: "continue" },
    });
    const before = await readUntil(first.getReader(), "tool-input-available");
    const runId = (before[0] as Extract<UIMessageChunk, { type: "start" }>).messageId;
    reload.abort();

    const resumed = await transport(ALICE).reconnectToStream({ chatId: "chat-resume" });
    expect(resumed).not.toBeNull();
    release();
    const { chunks, message } = await collect(resumed as ReadableStream<UIMessageChunk>);
    // The replay starts at the run's start, so the client rebuilds the same assistant message (id = run id).
    expect(chunks[0]).toMatchObject({ type: "start", messageId: runId });
    expect(chunks.at(-1)?.type).toBe("finish");
    expect(message?.id).toBe(runId);
    expect(message?.parts.find((p) => p.type === "tool-hold")).toMatchObject({ state: "output-available", input: { key: "resume" } });
    expect(message?.parts.filter((p) => p.type === "text")).toMatchObject([{ text: "Released after the hold." }]);
    // The replay ends at the logged `end` event, which the run writes before its record says so: wait for the record.
    await vi.waitFor(async () => expect((await client.getRun("chat-resume", runId as string, { userId: "alice" })).status).toBe("success"));
  });

  it("answers 204 (reconnectToStream gives null) for a chat with no active run, and 404 for an unknown or another user's chat", async () => {
    await collect(await send("chat-idle", [userMessage("u1", "hello")]));
    expect(await transport(ALICE).reconnectToStream({ chatId: "chat-idle" })).toBeNull();
    for (const [key, chatId] of [
      [ALICE, "chat-nobody"],
      [BOB, "chat-idle"],
    ] as const) {
      const response = await raw("GET", `/ai-sdk/chat/${chatId}/stream`, key);
      expect(response.status).toBe(404);
      expect(response.headers.get("x-trace-id")).toBeTruthy();
      expect(await response.json()).toMatchObject({ error: { code: "ANTLER_ERR_THREAD_NOT_FOUND" } });
    }
    await expect(transport(BOB).reconnectToStream({ chatId: "chat-idle" })).rejects.toThrow(/THREAD_NOT_FOUND/);
  });

  it("cancels the chat's active run on DELETE, which its open stream reports as its error", async () => {
    hold("stop");
    const first = await send("chat-delete", [userMessage("u1", "hold stop")], { body: { on_disconnect: "continue" } });
    const reader = first.getReader();
    const runId = ((await readUntil(reader, "tool-input-available"))[0] as Extract<UIMessageChunk, { type: "start" }>).messageId as string;
    expect((await raw("DELETE", "/ai-sdk/chat/chat-delete/stream", BOB)).status).toBe(404);
    const stopped = await raw("DELETE", "/ai-sdk/chat/chat-delete/stream", ALICE);
    expect(stopped.status).toBe(200);
    expect(await stopped.json()).toMatchObject({ run_id: runId, thread_id: "chat-delete" });
    const rest: UIMessageChunk[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest.push(value);
    }
    expect(rest.at(-1)).toMatchObject({ type: "error", errorText: expect.stringContaining("ANTLER_ERR_RUN_CANCELLED") });
    expect((await client.getRun("chat-delete", runId, { userId: "alice" })).status).toBe("cancelled");
    expect((await raw("DELETE", "/ai-sdk/chat/chat-delete/stream", ALICE)).status).toBe(204);
    expect((await raw("GET", "/ai-sdk/chat/chat-delete/stream", ALICE)).status).toBe(204);
  });
});

describe("bad input at /ai-sdk/chat", () => {
  it("answers 409 ANTLER_ERR_THREAD_BUSY for a message to a chat whose run is still going", async () => {
    const release = hold("busy");
    const first = await send("chat-busy", [userMessage("u1", "hold busy")]);
    const reader = first.getReader();
    await readUntil(reader, "tool-input-available");
    const history = [userMessage("u1", "hold busy"), { id: "a1", role: "assistant", parts: [] }, userMessage("u2", "and now?")];
    const busy = await raw("POST", "/ai-sdk/chat", ALICE, { body: JSON.stringify({ id: "chat-busy", messages: history }) });
    expect(busy.status).toBe(409);
    expect(busy.headers.get("x-trace-id")).toBeTruthy();
    expect(await busy.json()).toMatchObject({ error: { code: "ANTLER_ERR_THREAD_BUSY" } });
    await expect(send("chat-busy", history as UIMessage[])).rejects.toThrow(/THREAD_BUSY/);
    release();
    for (;;) if ((await reader.read()).done) break;
  });

  it("names the field of a body that does not validate", async () => {
    const response = await raw("POST", "/ai-sdk/chat", ALICE, {
      body: JSON.stringify({ id: "chat-field", messages: [userMessage("u1", "hi")], on_disconnect: "sometimes" }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("x-trace-id")).toBeTruthy();
    expect(JSON.stringify(await response.json())).toContain("on_disconnect");
  });

  it("answers 413 for a body over the gateway's JSON limit, with or without a Content-Length", async () => {
    const big = JSON.stringify({ id: "chat-big", messages: [userMessage("u1", "x".repeat(1024 * 1024 + 10))] });
    const declared = await raw("POST", "/ai-sdk/chat", ALICE, { body: big });
    expect(declared.status).toBe(413);
    expect(declared.headers.get("x-trace-id")).toBeTruthy();
    expect(await declared.json()).toMatchObject({ error: { code: "ANTLER_ERR_GATEWAY_PAYLOAD_TOO_LARGE" } });
    const bytes = new TextEncoder().encode(big);
    const chunked = await raw("POST", "/ai-sdk/chat", ALICE, {
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.slice(at, at + 64 * 1024));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await chunked.json()).toMatchObject({ error: { code: "ANTLER_ERR_GATEWAY_PAYLOAD_TOO_LARGE" } });
    expect(await client.listThreads({ userId: "alice" }).then((t) => t.some((x) => x.thread_id === "chat-big"))).toBe(false);
  });
});
