import type { RunRecord, StreamEvent } from "@antler/plugin-runtime";
import {
  defineGatewayRoute,
  type FollowedRunEvent,
  type GatewayRequest,
  type GatewayRoute,
  gatewayErrorReply,
} from "@antler/plugin-runtime/routes";
import { callerRunOptions, ensureThread, type LaunchedRun, launchResume, launchRun } from "../run-launch.js";
import { drain } from "../sse-stream.js";
import { type AiSdkChatRequest, aiSdkChatRequestSchema, chatInput } from "./request.js";
import { RunEndedError, uiMessageStreamResponse } from "./stream.js";

export { UI_MESSAGE_STREAM_HEADER } from "./stream.js";

/** The code of a 400 for a chat request Antler cannot take (wrong last message, no text, regenerate). */
export const AI_SDK_INVALID_CHAT = "ANTLER_ERR_AI_SDK_INVALID_CHAT";
/** The code of a 409 for approval responses on a chat whose latest run is not paused. */
const RUN_NOT_PAUSED = "ANTLER_ERR_RUN_NOT_PAUSED";

export interface AiSdkRouteOptions {
  /** Where the routes live, e.g. `/ai-sdk`: the chat endpoint is `<prefix>/chat`. */
  prefix: string;
  /** A comment line this often keeps proxies from closing a quiet stream (a long tool call). */
  keepAliveMs: number;
}

/**
 * `useChat`'s `DefaultChatTransport` endpoints: `POST <prefix>/chat` starts one Antler run per request, `GET
 * <prefix>/chat/:id/stream` rejoins the chat's active run (`resume: true`), `DELETE <prefix>/chat/:id/stream`
 * cancels it.
 */
export function aiSdkRoutes(options: AiSdkRouteOptions): GatewayRoute[] {
  const { prefix, keepAliveMs } = options;
  return [
    defineGatewayRoute({
      method: "POST",
      path: `${prefix}/chat`,
      mount: "root",
      summary: "AI SDK UI message stream: the chat id is the thread, the last user message starts a run (useChat's DefaultChatTransport).",
      body: aiSdkChatRequestSchema,
      handler: (req) => startChat(req, keepAliveMs),
    }),
    defineGatewayRoute({
      method: "GET",
      path: `${prefix}/chat/:id/stream`,
      mount: "root",
      summary: "AI SDK resumable stream: the chat's active run replayed from its start and followed live; 204 when none.",
      handler: (req) => resumeChat(req, keepAliveMs),
    }),
    defineGatewayRoute({
      method: "DELETE",
      path: `${prefix}/chat/:id/stream`,
      mount: "root",
      summary: "Cancels the chat's active run (stop for a resumed stream); 204 when none.",
      handler: (req) => stopChat(req),
    }),
  ];
}

async function startChat(req: GatewayRequest<AiSdkChatRequest>, keepAliveMs: number) {
  const input = chatInput(req.body);
  if (!input.ok) return gatewayErrorReply(400, { code: AI_SDK_INVALID_CHAT, message: input.message, hint: input.hint, where: input.where });
  const threadId = req.body.id;
  // A chat's first message opens its thread; a chat with history must continue a thread the caller owns.
  await ensureThread(req, threadId, "text" in input && input.newChat);
  const keepRunning = req.body.on_disconnect === "continue";
  // Stop in useChat aborts the fetch: the request's signal (or the body's cancel) cancels the run, unless the
  // chat asked for the run to go on without it (`on_disconnect: "continue"`, for `resume: true`).
  const cancelWith = keepRunning ? undefined : req.signal;
  let runId: string;
  let traceId = req.traceId;
  let run: LaunchedRun;
  if ("resume" in input) {
    // Approval responses continue the paused run (same run id, so the same assistant message) with the decisions.
    const [latest] = await req.client.listRuns(threadId, { userId: req.userId, limit: 1 });
    if (latest?.status !== "paused") {
      return gatewayErrorReply(409, {
        code: RUN_NOT_PAUSED,
        message: `chat ${threadId} has no run paused for approval${latest ? ` (its latest run is ${latest.status})` : ""}`,
        hint: "Send approval responses only for tool parts in the approval-requested state; otherwise send the user's message.",
        where: `messages[${req.body.messages.length - 1}]`,
      });
    }
    runId = latest.run_id;
    traceId = latest.trace_id;
    run = await launchResume(req.client, { threadId, runId, userId: req.userId }, input.resume, cancelWith);
  } else {
    runId = crypto.randomUUID();
    run = await launchRun(req.client, input.text, { ...callerRunOptions(req), threadId, runId }, cancelWith);
  }
  return uiMessageStreamResponse({
    run: { runId, threadId, traceId },
    events: run.events,
    onCancel: (frames) => {
      // Nobody reads it any more; a run that goes on is read to its end, so its events still reach the log.
      if (keepRunning) return drain(frames);
      run.stop("client disconnected");
    },
    keepAliveMs,
  });
}

/**
 * `reconnectToStream`: the thread's active run from the gateway's run event log (any instance), replayed from its
 * start, as the transport expects by default (`resumeStreamIsReplay`): the client rebuilds the whole assistant
 * message. Hanging up only stops following; the run goes on.
 */
async function resumeChat(req: GatewayRequest, keepAliveMs: number) {
  const threadId = req.params.id ?? "";
  const run = await activeRun(req, threadId);
  if (!run) return { status: 204 };
  const hangUp = new AbortController();
  const followed = await req.followRun(threadId, run.run_id, { afterSeq: 0, signal: AbortSignal.any([req.signal, hangUp.signal]) });
  // The run ended between the two reads and left nothing to replay.
  if (followed === null) return { status: 204 };
  return uiMessageStreamResponse({
    run: { runId: run.run_id, threadId, traceId: run.trace_id },
    events: streamEvents(followed),
    onCancel: () => {
      hangUp.abort("client disconnected");
    },
    keepAliveMs,
  });
}

async function stopChat(req: GatewayRequest) {
  const threadId = req.params.id ?? "";
  const run = await activeRun(req, threadId);
  if (!run) return { status: 204 };
  return { status: 200, body: await req.client.cancelRun(threadId, run.run_id, { userId: req.userId }) };
}

/**
 * The run that holds the user's thread (or waits for it), newest first: THREAD_NOT_FOUND (404) for a thread the
 * user does not own.
 */
async function activeRun(req: GatewayRequest, threadId: string): Promise<RunRecord | undefined> {
  const runs = await req.client.listRuns(threadId, { userId: req.userId, limit: 20 });
  return runs.find((run) => run.status === "running") ?? runs.find((run) => run.status === "pending");
}

/** A followed run's logged events as the run's own stream gives them: its `error` event becomes the error it ended with. */
async function* streamEvents(followed: AsyncGenerator<FollowedRunEvent>): AsyncGenerator<StreamEvent> {
  for await (const { event, data } of followed) {
    if (event === "metadata") continue;
    if (event === "error") {
      const error = (data ?? {}) as { code?: unknown; message?: unknown };
      throw new RunEndedError(
        typeof error.code === "string" ? error.code : "ANTLER_ERR_INTERNAL",
        typeof error.message === "string" ? error.message : "the run failed",
      );
    }
    yield { type: event, data } as StreamEvent;
  }
}
