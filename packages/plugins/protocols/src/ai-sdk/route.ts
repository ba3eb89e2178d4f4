import { isAntlerError } from "@antler/kernel";
import { defineGatewayRoute, type GatewayRequest, type GatewayRoute, gatewayErrorReply } from "@antler/plugin-gateway/routes";
import type { StreamEvent } from "@antler/plugin-runtime";
import { RunEventMapper } from "../run-events.js";
import { encodeUiMessageChunks } from "./encoder.js";
import { type AiSdkChatRequest, aiSdkChatRequestSchema, chatInput } from "./request.js";

/** The header the AI SDK's transport checks to know it reads a UI message stream, and its version. */
export const UI_MESSAGE_STREAM_HEADER = "x-vercel-ai-ui-message-stream";
/** The code of a 400 for a chat request Antler cannot take (wrong last message, no text, regenerate). */
export const AI_SDK_INVALID_CHAT = "ANTLER_ERR_AI_SDK_INVALID_CHAT";
const THREAD_NOT_FOUND = "ANTLER_ERR_THREAD_NOT_FOUND";
const RUN_CANCELLED = "ANTLER_ERR_RUN_CANCELLED";

export interface AiSdkRouteOptions {
  /** Where the routes live, e.g. `/ai-sdk`: the chat endpoint is `<prefix>/chat`. */
  prefix: string;
  /** A comment line this often keeps proxies from closing a quiet stream (a long tool call). */
  keepAliveMs: number;
}

/** `POST <prefix>/chat`: `useChat`'s `DefaultChatTransport` endpoint, one Antler run per request. */
export function aiSdkRoutes(options: AiSdkRouteOptions): GatewayRoute[] {
  return [
    defineGatewayRoute({
      method: "POST",
      path: `${options.prefix}/chat`,
      mount: "root",
      summary: "AI SDK UI message stream: the chat id is the thread, the last user message starts a run (useChat's DefaultChatTransport).",
      body: aiSdkChatRequestSchema,
      handler: (req) => startChat(req, options.keepAliveMs),
    }),
  ];
}

async function startChat(req: GatewayRequest<AiSdkChatRequest>, keepAliveMs: number) {
  const input = chatInput(req.body);
  if (!input.ok) return gatewayErrorReply(400, { code: AI_SDK_INVALID_CHAT, message: input.message, hint: input.hint, where: input.where });
  const threadId = req.body.id;
  try {
    await req.client.getThreadRecord(threadId, { userId: req.userId });
  } catch (error) {
    // A chat's first message opens its thread; a chat with history must continue a thread the caller owns.
    if (!isAntlerError(error, THREAD_NOT_FOUND) || !input.newChat) throw error;
    await req.client.createThread({ threadId, userId: req.userId });
  }
  const runId = crypto.randomUUID();
  const hangUp = new AbortController();
  let admitted: () => void = () => {};
  const admission = new Promise<void>((resolve) => {
    admitted = resolve;
  });
  const events = req.client.stream(input.text, {
    threadId,
    runId,
    userId: req.userId,
    ...(req.principal.role !== undefined ? { userRole: req.principal.role } : {}),
    traceId: req.traceId,
    // Stop in useChat aborts the fetch: the request's signal (or the body's cancel) cancels the run.
    signal: AbortSignal.any([req.signal, hangUp.signal]),
    onAdmitted: () => admitted(),
  });
  // Pull until the run is admitted, so a refusal (a busy thread, capacity) is a coded HTTP error, not a stream error.
  const firstStep = events.next();
  firstStep.catch(() => undefined);
  await Promise.race([admission, firstStep]);
  const mapper = new RunEventMapper({ runId, threadId, traceId: req.traceId });
  const items = (async function* (): AsyncGenerator<StreamEvent> {
    const step = await firstStep;
    if (step.done) return;
    yield step.value;
    yield* events;
  })();
  const body = uiMessageStreamBody({
    start: mapper.start().flatMap(encodeUiMessageChunks),
    items,
    encode: (event) => mapper.map(event).flatMap(encodeUiMessageChunks),
    fail: (error) => {
      const code = isAntlerError(error) ? error.code : "ANTLER_ERR_INTERNAL";
      const message = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
      return mapper.fail(code, message).flatMap(encodeUiMessageChunks);
    },
    cancel: () => {
      hangUp.abort("client disconnected");
      void events.return(undefined).catch(() => undefined);
    },
    keepAliveMs,
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      [UI_MESSAGE_STREAM_HEADER]: "v1",
      "x-run-id": runId,
    },
  });
}

interface StreamBodyOptions {
  start: unknown[];
  items: AsyncGenerator<StreamEvent>;
  encode(event: StreamEvent): unknown[];
  fail(error: unknown): unknown[];
  cancel(): void;
  keepAliveMs: number;
}

const encoder = new TextEncoder();
const frame = (chunk: unknown) => encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`);

/** The SSE body: `data: <chunk>` per UI message chunk, `data: [DONE]` last, comment lines while quiet. */
function uiMessageStreamBody(options: StreamBodyOptions): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (chunks: unknown[]) => {
        if (!closed) for (const chunk of chunks) controller.enqueue(frame(chunk));
      };
      timer = setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(": keep-alive\n\n"));
      }, options.keepAliveMs);
      send(options.start);
      try {
        for await (const event of options.items) send(options.encode(event));
      } catch (error) {
        // A cancel the client asked for (it hung up) has nobody left to tell.
        if (!(closed && isAntlerError(error, RUN_CANCELLED))) send(options.fail(error));
      } finally {
        clearInterval(timer);
      }
      if (closed) return;
      closed = true;
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      controller.close();
    },
    cancel() {
      closed = true;
      clearInterval(timer);
      options.cancel();
    },
  });
}
