import { isAntlerError } from "@antler/kernel";
import { defineGatewayRoute, type GatewayRequest, type GatewayRoute, gatewayErrorReply } from "@antler/plugin-runtime/routes";
import { type ProtocolEvent, RunEventMapper } from "../run-events.js";
import { callerRunOptions, ensureThread, type LaunchedRun, launchResume, launchRun } from "../run-launch.js";
import { errorLine, protocolStreamResponse } from "../sse-stream.js";
import { AgUiEncoder, agUiState } from "./encoder.js";
import { type AgUiRunInput, agUiRunInputSchema, agUiTurn } from "./request.js";

/** The code of a 400 for a run request Antler cannot take (last message not the user's text, a bad `resume`). */
export const AG_UI_INVALID_INPUT = "ANTLER_ERR_AG_UI_INVALID_INPUT";
/** The code of a 409 for a `resume` on a thread whose latest run is not paused. */
const RUN_NOT_PAUSED = "ANTLER_ERR_RUN_NOT_PAUSED";
const RUN_NOT_FOUND = "ANTLER_ERR_RUN_NOT_FOUND";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface AgUiRouteOptions {
  /** Where the routes live, e.g. `/ag-ui`: `HttpAgent`'s `url` is the gateway's origin plus this prefix. */
  prefix: string;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  keepAliveMs: number;
}

/**
 * `POST <prefix>`: AG-UI's run endpoint, what `HttpAgent` posts `RunAgentInput` to (its `url` is the endpoint
 * itself). One Antler run per request; `threadId` is the Antler thread.
 */
export function agUiRoutes(options: AgUiRouteOptions): GatewayRoute[] {
  return [
    defineGatewayRoute({
      method: "POST",
      path: options.prefix,
      mount: "root",
      summary: "AG-UI: RunAgentInput in, AG-UI events as SSE out; threadId is the thread, the last user message starts a run (HttpAgent).",
      body: agUiRunInputSchema,
      handler: (req) => startRun(req, options.keepAliveMs),
    }),
  ];
}

async function startRun(req: GatewayRequest<AgUiRunInput>, keepAliveMs: number) {
  const turn = agUiTurn(req.body);
  if (!turn.ok) return gatewayErrorReply(400, { code: AG_UI_INVALID_INPUT, message: turn.message, hint: turn.hint, where: turn.where });
  const { threadId } = req.body;
  // A conversation's first message opens its thread; one with history (or a resume) must continue the caller's thread.
  await ensureThread(req, threadId, "text" in turn && turn.newThread);
  // The state the snapshot starts from; the thread cannot change before the run is admitted on it.
  const thread = await req.client.getThread(threadId, { userId: req.userId, messages: { limit: 0 } });
  let launched: { run: LaunchedRun; runId: string; traceId: string; requestedRunId?: string };
  if ("resume" in turn) {
    // Answers to a paused run's interrupts continue that run (same run and trace id) with the decisions.
    const [latest] = await req.client.listRuns(threadId, { userId: req.userId, limit: 1 });
    if (latest?.status !== "paused") {
      return gatewayErrorReply(409, {
        code: RUN_NOT_PAUSED,
        message: `thread ${threadId} has no run paused for approval${latest ? ` (its latest run is ${latest.status})` : ""}`,
        hint: "Send resume only after a RUN_FINISHED whose outcome is interrupt; otherwise send the user's message.",
        where: "resume",
      });
    }
    const run = await launchResume(req.client, { threadId, runId: latest.run_id, userId: req.userId }, turn.resume, req.signal);
    launched = { run, runId: latest.run_id, traceId: latest.trace_id, requestedRunId: req.body.runId };
  } else {
    launched = await launchTurn(req, threadId, turn.text);
  }
  const { run, runId, traceId, requestedRunId } = launched;
  const mapper = new RunEventMapper({ runId, threadId, traceId });
  const encoder = new AgUiEncoder({ runId, threadId, traceId, ...(requestedRunId ? { requestedRunId } : {}) }, agUiState(thread));
  /** The SSE text HttpAgent parses: one `data: <event>` frame per AG-UI event. */
  const frames = (protocolEvents: ProtocolEvent[]) => {
    let text = "";
    for (const event of protocolEvents.flatMap((e) => encoder.encode(e))) text += `data: ${JSON.stringify(event)}\n\n`;
    return text;
  };
  return protocolStreamResponse(
    {
      items: run.events,
      start: () => frames(mapper.start()),
      encode: (event) => frames(mapper.map(event)),
      fail: (error) => frames(mapper.fail(isAntlerError(error) ? error.code : "ANTLER_ERR_INTERNAL", errorLine(error))),
      cancel: () => run.stop("client disconnected"),
      keepAliveMs,
    },
    { "x-run-id": runId },
  );
}

/** A new run from the user's message, with the `forwardedProps` Antler reads. */
async function launchTurn(req: GatewayRequest<AgUiRunInput>, threadId: string, text: string) {
  const { runId, requestedRunId } = await chooseRunId(req, threadId);
  const props = req.body.forwardedProps ?? {};
  const run = await launchRun(
    req.client,
    text,
    {
      ...callerRunOptions(req),
      threadId,
      runId,
      ...(props.model !== undefined ? { model: props.model } : {}),
      ...(props.agent_name !== undefined ? { agent: props.agent_name } : {}),
      ...(props.thinking_enabled !== undefined ? { thinking: props.thinking_enabled } : {}),
      ...(props.context !== undefined ? { context: props.context } : {}),
      ...(props.metadata !== undefined ? { metadata: props.metadata } : {}),
    },
    // HttpAgent's abortRun aborts the fetch: the request's signal (or the body's cancel) cancels the run.
    req.signal,
  );
  return { run, runId, traceId: req.traceId, ...(requestedRunId ? { requestedRunId } : {}) };
}

/**
 * The request's `runId` when it can be an Antler run id (a UUID, as HttpAgent makes, not yet a run of this user's
 * thread), else a fresh one; RUN_STARTED then names the requested id in its metadata.
 */
async function chooseRunId(req: GatewayRequest<AgUiRunInput>, threadId: string): Promise<{ runId: string; requestedRunId?: string }> {
  const requested = req.body.runId;
  if (UUID.test(requested)) {
    const taken = await req.client.getRun(threadId, requested, { userId: req.userId }).then(
      () => true,
      (error: unknown) => {
        if (isAntlerError(error, RUN_NOT_FOUND)) return false;
        throw error;
      },
    );
    if (!taken) return { runId: requested.toLowerCase() };
  }
  return { runId: crypto.randomUUID(), requestedRunId: requested };
}
