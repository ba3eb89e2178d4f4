import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { splitTextDeltas } from "./replay.js";
import { type ScriptedStep, scriptedToolCallId } from "./scripted-model.js";

/** The parts of a Chat Completions request body the server reads; everything else is kept as sent. */
export const chatCompletionRequestSchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown().optional() })).default([]),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  tools: z.array(z.unknown()).optional(),
});

export type ChatCompletionRequest = z.output<typeof chatCompletionRequestSchema>;

/** A raw HTTP answer, to simulate provider failures (401, 429, 500) or odd bodies. */
export interface OpenAIServerReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type OpenAIServerHandler = (
  body: ChatCompletionRequest,
  callIndex: number,
) => ScriptedStep | OpenAIServerReply | Promise<ScriptedStep | OpenAIServerReply>;

export interface OpenAIServerOptions {
  /** Answers for chat completion calls 0, 1, 2, ... */
  script?: readonly ScriptedStep[];
  /** Answers calls past the script (or all calls); may return `{ status, body }` instead of a step. */
  handler?: OpenAIServerHandler;
  /** Ids listed by `GET /v1/models`. Default `["scripted-model"]`. */
  models?: readonly string[];
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body, or `undefined` for requests without one. */
  readonly body: unknown;
}

export interface OpenAICompatibleServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /**
   * Chat completion calls the script (and handler) had no answer for, by call index. Each was answered 500, which a
   * run shows as the model's apology and a CLI exits 0 on, so a test that meant to script every call checks
   * `expect(server.unanswered).toEqual([])`.
   */
  readonly unanswered: number[];
  /** Resolves when the server is closed and every connection (keep-alive included) is destroyed. */
  close(): Promise<void>;
}

function isReply(value: ScriptedStep | OpenAIServerReply): value is OpenAIServerReply {
  return typeof (value as OpenAIServerReply).status === "number";
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function errorBody(message: string, type: string): unknown {
  return { error: { message, type, param: null, code: null } };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

// A rough, deterministic stand-in for a tokenizer (about four characters per token) for steps without usage.
function estimateTokens(value: unknown): number {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "");
  return Math.ceil(text.length / 4);
}

interface Completion {
  id: string;
  created: number;
  model: string;
  text: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

function completionFor(step: ScriptedStep, body: ChatCompletionRequest, callIndex: number, idPrefix: string): Completion {
  const toolCalls = (step.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? scriptedToolCallId(callIndex, i),
    name: call.name,
    arguments: JSON.stringify(call.args),
  }));
  const prompt = step.usage?.input_tokens ?? estimateTokens(body.messages);
  const completion =
    step.usage?.output_tokens ?? estimateTokens(step.text ?? "") + estimateTokens(toolCalls.map((c) => c.arguments).join(""));
  return {
    id: step.id ?? `${idPrefix}-${callIndex}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? "scripted-model",
    text: step.text ?? (toolCalls.length ? null : ""),
    toolCalls,
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

function completionJson(c: Completion): unknown {
  return {
    id: c.id,
    object: "chat.completion",
    created: c.created,
    model: c.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: c.text,
          refusal: null,
          ...(c.toolCalls.length
            ? { tool_calls: c.toolCalls.map((t) => ({ id: t.id, type: "function", function: { name: t.name, arguments: t.arguments } })) }
            : {}),
        },
        logprobs: null,
        finish_reason: c.toolCalls.length ? "tool_calls" : "stop",
      },
    ],
    usage: c.usage,
  };
}

/** The SSE `data:` payloads of a streamed completion, in the order OpenAI sends them (without `[DONE]`). */
function completionChunks(c: Completion, includeUsage: boolean): unknown[] {
  const base = { id: c.id, object: "chat.completion.chunk", created: c.created, model: c.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const out: unknown[] = [chunk({ role: "assistant", content: "" })];
  for (const delta of splitTextDeltas(c.text ?? "")) out.push(chunk({ content: delta }));
  c.toolCalls.forEach((call, index) => {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    // Arguments arrive in pieces, as real servers send them; clients must concatenate by index.
    for (let at = 0; at < call.arguments.length; at += 8) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(at, at + 8) } }] }));
    }
  });
  out.push(chunk({}, c.toolCalls.length ? "tool_calls" : "stop"));
  if (includeUsage) out.push({ ...base, choices: [], usage: c.usage });
  return out;
}

/**
 * Starts a loopback server that speaks the OpenAI Chat Completions API (JSON and SSE streaming, tool calls,
 * usage) with answers from a script, so the real OpenAI client path can be tested offline.
 */
export async function startOpenAICompatibleServer(options: OpenAIServerOptions = {}): Promise<OpenAICompatibleServer> {
  const requests: RecordedRequest[] = [];
  const unanswered: number[] = [];
  const sockets = new Set<Socket>();
  let calls = 0;
  // New per server: a server started again (a restarted `antler serve`) must not reuse the reply ids a saved thread
  // already holds, or LangGraph's message reducer would merge the new replies into the old ones.
  const idPrefix = `chatcmpl-scripted-${randomUUID().slice(0, 8)}`;

  const answer = async (body: ChatCompletionRequest, callIndex: number): Promise<ScriptedStep | OpenAIServerReply | undefined> => {
    const scripted = options.script?.[callIndex];
    if (scripted) return scripted;
    return options.handler ? await options.handler(body, callIndex) : undefined;
  };

  const handleCompletion = async (req: IncomingMessage, res: ServerResponse, raw: unknown): Promise<void> => {
    const parsed = chatCompletionRequestSchema.safeParse(raw);
    if (!parsed.success) {
      sendJson(
        res,
        400,
        errorBody(`invalid chat completion request: ${parsed.error.issues[0]?.message ?? "bad body"}`, "invalid_request_error"),
      );
      return;
    }
    const body = parsed.data;
    const callIndex = calls++;
    const result = await answer(body, callIndex);
    if (!result) {
      unanswered.push(callIndex);
      const steps = options.script?.length ?? 0;
      sendJson(
        res,
        500,
        errorBody(
          `no scripted answer for chat completion call #${callIndex} (the script has ${steps} step(s)${options.handler ? " and the handler gave none" : ""}): add a step`,
          "server_error",
        ),
      );
      return;
    }
    if (isReply(result)) {
      sendJson(res, result.status, result.body, result.headers);
      return;
    }
    if (result.delayMs !== undefined && result.delayMs > 0) {
      const gone = new AbortController();
      req.socket.once("close", () => gone.abort());
      const waited = await sleep(result.delayMs, true, { signal: gone.signal }).catch(() => false);
      if (!waited) return;
    }
    if (result.error !== undefined) {
      sendJson(res, 500, errorBody(typeof result.error === "string" ? result.error : result.error.message, "server_error"));
      return;
    }
    const completion = completionFor(result, body, callIndex, idPrefix);
    if (!body.stream) {
      sendJson(res, 200, completionJson(completion));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    for (const payload of completionChunks(completion, body.stream_options?.include_usage === true)) {
      res.write(`data: ${JSON.stringify(payload)}\n\n`);
    }
    res.end("data: [DONE]\n\n");
  };

  const server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
      const text = await readBody(req);
      let body: unknown;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch {
          requests.push({ method: req.method ?? "GET", path, headers: req.headers, body: text });
          sendJson(res, 400, errorBody("request body is not JSON", "invalid_request_error"));
          return;
        }
      }
      requests.push({ method: req.method ?? "GET", path, headers: req.headers, body });
      if (req.method === "POST" && path === "/v1/chat/completions") return handleCompletion(req, res, body);
      if (req.method === "GET" && path === "/v1/models") {
        const ids = options.models ?? ["scripted-model"];
        sendJson(res, 200, { object: "list", data: ids.map((id) => ({ id, object: "model", created: 0, owned_by: "antler-test" })) });
        return;
      }
      sendJson(res, 404, errorBody(`no route for ${req.method} ${path}`, "invalid_request_error"));
    })().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(`test server failed: ${(err as Error)?.message ?? String(err)}`, "server_error"));
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    unanswered,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets would hold close() open until they time out; nothing of value is in flight.
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
