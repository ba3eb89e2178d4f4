import { isAntlerError } from "@antler/kernel";
import { defineGatewayRoute, type GatewayRequest, type GatewayRoute, gatewayErrorReply } from "@antler/plugin-gateway/routes";
import { type ProtocolEvent, RunEventMapper } from "../run-events.js";
import { callerRunOptions, ensureThread, launchRun } from "../run-launch.js";
import { errorLine, protocolStreamResponse } from "../sse-stream.js";
import { AgUiEncoder, agUiState } from "./encoder.js";
import { type AgUiRunInput, agUiRunInputSchema, agUiTurn } from "./request.js";

/** The code of a 400 for a run request Antler cannot take (last message not the user's text, a `resume`). */
export const AG_UI_INVALID_INPUT = "ANTLER_ERR_AG_UI_INVALID_INPUT";
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
  // A conversation's first message opens its thread; one with history must continue a thread the caller owns.
  await ensureThread(req, threadId, turn.newThread);
  // The state the snapshot starts from; the thread cannot change before the run is admitted on it.
  const thread = await req.client.getThread(threadId, { userId: req.userId, messages: { limit: 0 } });
  const { runId, requestedRunId } = await chooseRunId(req, threadId);
  const props = req.body.forwardedProps ?? {};
  const run = await launchRun(
    req.client,
    turn.text,
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
  const mapper = new RunEventMapper({ runId, threadId, traceId: req.traceId });
  const encoder = new AgUiEncoder(
    { runId, threadId, traceId: req.traceId, ...(requestedRunId ? { requestedRunId } : {}) },
    agUiState(thread),
  );
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
