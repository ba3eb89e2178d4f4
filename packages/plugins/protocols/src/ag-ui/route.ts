import { isAntlerError } from "@antler/kernel";
import { defineGatewayRoute, type GatewayRequest, type GatewayRoute, gatewayErrorReply } from "@antler/plugin-gateway/routes";
import type { RunCallOptions, StreamEvent } from "@antler/plugin-runtime";
import { type ProtocolEvent, RunEventMapper } from "../run-events.js";
import { AgUiEncoder, type AgUiEvent, agUiState } from "./encoder.js";
import { type AgUiRunInput, agUiRunInputSchema, agUiTurn } from "./request.js";

/** The code of a 400 for a run request Antler cannot take (last message not the user's text, a `resume`). */
export const AG_UI_INVALID_INPUT = "ANTLER_ERR_AG_UI_INVALID_INPUT";
const THREAD_NOT_FOUND = "ANTLER_ERR_THREAD_NOT_FOUND";
const RUN_NOT_FOUND = "ANTLER_ERR_RUN_NOT_FOUND";
const RUN_CANCELLED = "ANTLER_ERR_RUN_CANCELLED";
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
  try {
    await req.client.getThreadRecord(threadId, { userId: req.userId });
  } catch (error) {
    // A conversation's first message opens its thread; one with history must continue a thread the caller owns.
    if (!isAntlerError(error, THREAD_NOT_FOUND) || !turn.newThread) throw error;
    await req.client.createThread({ threadId, userId: req.userId });
  }
  // The state the snapshot starts from; the thread cannot change before the run is admitted on it.
  const thread = await req.client.getThread(threadId, { userId: req.userId, messages: { limit: 0 } });
  const { runId, requestedRunId } = await chooseRunId(req, threadId);
  const props = req.body.forwardedProps ?? {};
  const hangUp = new AbortController();
  let admitted: () => void = () => {};
  const admission = new Promise<void>((resolve) => {
    admitted = resolve;
  });
  const runOptions: RunCallOptions = {
    threadId,
    runId,
    userId: req.userId,
    ...(req.principal.role !== undefined ? { userRole: req.principal.role } : {}),
    traceId: req.traceId,
    ...(props.model !== undefined ? { model: props.model } : {}),
    ...(props.agent_name !== undefined ? { agent: props.agent_name } : {}),
    ...(props.thinking_enabled !== undefined ? { thinking: props.thinking_enabled } : {}),
    ...(props.context !== undefined ? { context: props.context } : {}),
    ...(props.metadata !== undefined ? { metadata: props.metadata } : {}),
    // HttpAgent's abortRun aborts the fetch: the request's signal (or the body's cancel) cancels the run.
    signal: AbortSignal.any([req.signal, hangUp.signal]),
    onAdmitted: () => admitted(),
  };
  const events = req.client.stream(turn.text, runOptions);
  // Pull until the run is admitted, so a refusal (a busy thread, an unknown model) is a coded HTTP error.
  const firstStep = events.next();
  firstStep.catch(() => undefined);
  await Promise.race([admission, firstStep]);
  const mapper = new RunEventMapper({ runId, threadId, traceId: req.traceId });
  const encoder = new AgUiEncoder(
    { runId, threadId, traceId: req.traceId, ...(requestedRunId ? { requestedRunId } : {}) },
    agUiState(thread),
  );
  const items = (async function* (): AsyncGenerator<StreamEvent> {
    const step = await firstStep;
    if (step.done) return;
    yield step.value;
    yield* events;
  })();
  const encode = (protocolEvents: ProtocolEvent[]) => protocolEvents.flatMap((e) => encoder.encode(e));
  const body = agUiEventStream({
    start: encode(mapper.start()),
    items,
    encode: (event) => encode(mapper.map(event)),
    fail: (error) => {
      const code = isAntlerError(error) ? error.code : "ANTLER_ERR_INTERNAL";
      const message = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
      return encode(mapper.fail(code, message));
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
      "x-run-id": runId,
    },
  });
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

interface EventStreamOptions {
  start: AgUiEvent[];
  items: AsyncGenerator<StreamEvent>;
  encode(event: StreamEvent): AgUiEvent[];
  fail(error: unknown): AgUiEvent[];
  cancel(): void;
  keepAliveMs: number;
}

const textEncoder = new TextEncoder();
const frame = (event: AgUiEvent) => textEncoder.encode(`data: ${JSON.stringify(event)}\n\n`);

/** The SSE body HttpAgent parses: one `data: <event>` frame per AG-UI event, comment lines while quiet. */
function agUiEventStream(options: EventStreamOptions): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (events: AgUiEvent[]) => {
        if (!closed) for (const event of events) controller.enqueue(frame(event));
      };
      timer = setInterval(() => {
        if (!closed) controller.enqueue(textEncoder.encode(": keep-alive\n\n"));
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
      controller.close();
    },
    cancel() {
      closed = true;
      clearInterval(timer);
      options.cancel();
    },
  });
}
