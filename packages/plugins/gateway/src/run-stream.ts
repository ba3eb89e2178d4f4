import { ErrorCodes, isAntlerError, type Logger } from "@antler/kernel";
import { type AntlerClient, type RunCallOptions, RuntimeErrorCodes, type StreamEvent } from "@antler/plugin-runtime";
import type { Context, Hono } from "hono";
import type { GatewayConfig } from "./config.js";
import type { GatewayEnv } from "./env.js";
import { GatewayErrorCodes, HttpError } from "./errors.js";
import { followRun } from "./follow-run.js";
import { cancelOnHangUp, enqueueAndFollow } from "./queued-runs.js";
import { runErrorData } from "./run-events/frames.js";
import type { RunEventLog } from "./run-events/log.js";
import type { LoggedEvent } from "./run-events/store.js";
import { ValuesStreamEncoder } from "./run-events/values-stream.js";
import { sseBody, sseFrame, sseFrameRaw } from "./sse.js";

interface PreparedRun {
  message: string;
  onDisconnect: "cancel" | "continue";
  options: RunCallOptions & { runId: string; threadId: string };
}

export interface RunStreamRouteOptions {
  client: AntlerClient;
  config: GatewayConfig;
  logger: Logger;
  prepareRun(c: Context<GatewayEnv>): Promise<PreparedRun>;
  runEvents: RunEventLog | null;
  user(c: Context<GatewayEnv>): string;
}

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
} as const;

/**
 * `POST /api/threads/{id}/runs/stream` (start a run and stream it) and `GET /api/threads/{id}/runs/{run}/stream`
 * (join a running or finished run from any instance, after `Last-Event-ID`). Both number a run's frames the same
 * way: the metadata frame is id 1, then each event in order, so an id from one is a resume point for the other.
 */
export function mountRunStreamRoutes(app: Hono<GatewayEnv>, options: RunStreamRouteOptions): void {
  const { client, config, logger, prepareRun, runEvents, user } = options;
  const keepAliveMs = config.sse_keepalive_seconds * 1000;

  app.post("/api/threads/:id/runs/stream", async (c) => {
    const full = valuesMode(c) === "full";
    const { message, onDisconnect, options: runOptions } = await prepareRun(c);
    const traceId = c.get("traceId");
    const { runId, threadId } = runOptions;
    if (!config.runs.execute) return queuedRunStream(c, options, { message, onDisconnect, runOptions, full });
    // With on_disconnect "cancel" (default), the peer going away (request signal) or the body being cancelled
    // aborts the run: an async generator cannot be closed while a step is pending, so the signal is what reaches
    // the model call in flight. With "continue" only a shutdown or a cancel request stops it.
    const hangUp = new AbortController();
    let admitted: () => void = () => {};
    const admission = new Promise<void>((resolve) => {
      admitted = resolve;
    });
    const events = client.stream(message, {
      ...runOptions,
      signal: onDisconnect === "continue" ? hangUp.signal : AbortSignal.any([c.req.raw.signal, hangUp.signal]),
      onAdmitted: () => admitted(),
    });
    // Pull until the run is admitted (started or queued), so a refusal on a busy thread is a plain 409 with
    // the coded body rather than an error frame after a 200. The step pulled here is sent first.
    const firstStep = events.next();
    firstStep.catch(() => undefined);
    await Promise.race([admission, firstStep]);
    const values = new ValuesStreamEncoder({ digest: false });
    const items = (async function* () {
      const step = await firstStep;
      if (step.done) return;
      yield step.value;
      yield* events;
    })();
    const body = sseBody<StreamEvent>({
      preamble: sseFrame("metadata", { run_id: runId, thread_id: threadId, trace_id: traceId }, 1),
      items,
      // The metadata frame is 1, so the n-th event is n + 1: the numbers the run event log gives them. `values`
      // go out as patches (the log computes the same ones from the same events).
      frame: (event, seq) =>
        event.type === "values" && !full
          ? sseFrame("values", { patch: values.encode(event.data).patch }, seq + 1)
          : sseFrame(event.type, event.data, seq + 1),
      onError(error, seq) {
        if (!isAntlerError(error, ErrorCodes.RUN_CANCELLED) && !isAntlerError(error, RuntimeErrorCodes.RUN_HANDED_OVER))
          logger.error({ err: error, trace_id: traceId, run_id: runId }, "run failed mid-stream");
        return sseFrame("error", runErrorData(error, runId, traceId), seq + 1);
      },
      onCancel() {
        if (onDisconnect === "continue") {
          // Nobody reads it any more, but the run goes on (its events still reach the log): pull it to the end.
          void (async () => {
            for (;;) if ((await items.next()).done) return;
          })().catch(() => undefined);
          return;
        }
        // The peer went away: closing the generator cancels the run (its finally aborts and records it).
        hangUp.abort("client disconnected");
        void events.return(undefined).catch(() => undefined);
      },
      keepAliveMs,
    });
    return new Response(body, {
      status: 200,
      headers: {
        ...SSE_HEADERS,
        "x-run-id": runId,
        "content-location": `/api/threads/${encodeURIComponent(threadId)}/runs/${runId}`,
      },
    });
  });

  app.get("/api/threads/:id/runs/:run/stream", async (c) => {
    const runId = c.req.param("run");
    const hangUp = new AbortController();
    const follow = await followRun(
      { client, runEvents },
      {
        userId: user(c),
        threadId: c.req.param("id"),
        runId,
        afterSeq: lastEventId(c),
        full: valuesMode(c) === "full",
        signal: AbortSignal.any([c.req.raw.signal, hangUp.signal]),
      },
    );
    // Nothing after that id and the run is over: 204 tells an EventSource to stop reconnecting.
    if (follow.kind === "caught-up") return c.body(null, 204, { "x-run-id": runId });
    const { items, traceId } = follow;
    const body = sseBody<LoggedEvent>({
      preamble: "",
      items,
      // Frames the joiner makes itself (a gap, an incomplete log) carry no id: they are not events of the run.
      frame: (event) => sseFrameRaw(event.event, event.json, event.seq > 0 ? event.seq : undefined),
      onError(error) {
        logger.error({ err: error, run_id: runId }, "joining a run's events failed");
        return sseFrame("error", runErrorData(error, runId, traceId));
      },
      onCancel() {
        hangUp.abort("client disconnected");
        void items.return(undefined).catch(() => undefined);
      },
      keepAliveMs,
    });
    return new Response(body, { status: 200, headers: { ...SSE_HEADERS, "x-run-id": runId } });
  });
}

/**
 * `runs.execute: false`: the run is queued for an executor (`antler worker`) and this response follows it from the run
 * event log, frame for frame what a join from the start sends (the metadata frame is 1).
 */
async function queuedRunStream(
  c: Context<GatewayEnv>,
  options: RunStreamRouteOptions,
  run: Omit<PreparedRun, "options"> & { runOptions: PreparedRun["options"]; full: boolean },
): Promise<Response> {
  const { client, config, logger, runEvents } = options;
  const { runId, threadId } = run.runOptions;
  const userId = options.user(c);
  const hangUp = new AbortController();
  const { signal: _signal, onAdmitted: _onAdmitted, ...queued } = run.runOptions;
  const { items, traceId } = await enqueueAndFollow(
    { client, runEvents },
    run.message,
    { ...queued, userId },
    { full: run.full, signal: AbortSignal.any([c.req.raw.signal, hangUp.signal]) },
  );
  if (run.onDisconnect === "cancel") cancelOnHangUp(client, hangUp.signal, { userId, threadId, runId });
  const body = sseBody<LoggedEvent>({
    preamble: "",
    items,
    frame: (event) => sseFrameRaw(event.event, event.json, event.seq > 0 ? event.seq : undefined),
    onError(error) {
      logger.error({ err: error, run_id: runId }, "following a queued run's events failed");
      return sseFrame("error", runErrorData(error, runId, traceId));
    },
    onCancel() {
      hangUp.abort("client disconnected");
      void items.return(undefined).catch(() => undefined);
    },
    keepAliveMs: config.sse_keepalive_seconds * 1000,
  });
  return new Response(body, {
    status: 200,
    headers: { ...SSE_HEADERS, "x-run-id": runId, "content-location": `/api/threads/${encodeURIComponent(threadId)}/runs/${runId}` },
  });
}

/** `?values=full`: every `values` frame the whole state, as before the delta form (for old clients). */
function valuesMode(c: Context<GatewayEnv>): "delta" | "full" {
  const mode = c.req.query("values");
  if (mode === undefined || mode === "" || mode === "delta") return "delta";
  if (mode === "full") return "full";
  throw new HttpError(
    400,
    GatewayErrorCodes.INVALID_REQUEST,
    `values=${JSON.stringify(mode.slice(0, 40))} is not a values frame form`,
    "Leave it out for patches (the default), or send values=full for whole states in every values frame.",
  );
}

/** `Last-Event-ID` (header, as EventSource sends it) or `last_event_id` (query, for clients that cannot set headers). */
function lastEventId(c: Context<GatewayEnv>): number {
  const header = c.req.header("last-event-id")?.trim();
  const raw = header ? header : c.req.query("last_event_id")?.trim();
  if (raw === undefined || raw === "") return 0;
  if (!/^\d{1,15}$/.test(raw)) {
    throw new HttpError(
      400,
      GatewayErrorCodes.INVALID_REQUEST,
      `Last-Event-ID ${JSON.stringify(raw.slice(0, 40))} is not an event id of a run stream`,
      "Send the `id:` of the last event you received (a whole number), or none to replay the run from the start.",
    );
  }
  return Number(raw);
}
