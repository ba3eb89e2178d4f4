// The runs half of the LangGraph Agent Server API: every run is an Antler run (`client.stream`), so it has an
// Antler run record and lands in the gateway's run event log (joins and resumes work from any instance).
import { randomUUID } from "node:crypto";
import type { StreamEvent } from "@antler/plugin-runtime";
import type { GatewayReply, GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { ensureThread, launchResume, launchRun } from "../run-launch.js";
import { drain, errorLine, protocolStreamResponse } from "../sse-stream.js";
import { resolveAssistant } from "./assistants.js";
import { errorCode, invalidRequest, LangGraphError, LangGraphErrorCodes, parseRequest, unsupported } from "./errors.js";
import { isRecord, type LangGraphRequest, type LangGraphRouteOptions, langGraphRoute, queryFlag, queryValues } from "./http.js";
import { readPendingInterrupt } from "./interrupts.js";
import { RUN_METADATA_KEY, toLangGraphRun } from "./run-json.js";
import {
  type PreparedLangGraphRun,
  parseStreamModes,
  prepareLangGraphRun,
  type StreamMode,
  SUPPORTED_STREAM_MODES,
} from "./runs-request.js";
import { LangGraphStreamEncoder } from "./stream-encoder.js";
import { type FrameGroup, parseLastEventId, type ResumePoint, renderFrameGroup } from "./stream-sse.js";
import { threadValues } from "./threads.js";

type Req = LangGraphRequest;

const listQuerySchema = z.looseObject({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
  status: z.string().optional(),
});

/** `/threads/{id}/runs/*` and the stateless `/runs/*` under `options.prefix`. */
export function runRoutes(options: LangGraphRouteOptions): GatewayRoute[] {
  const p = options.prefix;
  const { keepAliveMs } = options;
  const route = (method: "GET" | "POST" | "DELETE", path: string, summary: string, handler: (req: Req) => Promise<GatewayReply>) =>
    langGraphRoute(method, `${p}${path}`, summary, handler);
  return [
    route("POST", "/threads/:id/runs/stream", "start a run on the thread and stream it", (req) =>
      streamRun(req, req.params.id as string, keepAliveMs),
    ),
    route("POST", "/threads/:id/runs/wait", "start a run on the thread and answer its final state", (req) =>
      waitRun(req, req.params.id as string),
    ),
    route("POST", "/threads/:id/runs", "start a background run on the thread", (req) => backgroundRun(req, req.params.id as string)),
    route("GET", "/threads/:id/runs", "the thread's runs, newest first", (req) => listRuns(req)),
    route("GET", "/threads/:id/runs/:run", "one run", (req) => getRun(req)),
    route("DELETE", "/threads/:id/runs/:run", "deleting one run (refused: Antler keeps runs with their thread)", async () => {
      throw unsupported(
        "deleting a single run is not supported: Antler keeps a thread's run records until the thread is deleted",
        "Delete the thread (DELETE /threads/{id}) to remove its runs.",
        422,
      );
    }),
    route("POST", "/threads/:id/runs/:run/cancel", "cancel a run", (req) => cancelRun(req)),
    route("GET", "/threads/:id/runs/:run/join", "wait for a run to end and answer the thread's final state", (req) => joinRun(req)),
    route("GET", "/threads/:id/runs/:run/stream", "join a run's stream (Last-Event-ID resumes)", (req) => joinStream(req, keepAliveMs)),
    route("POST", "/runs/stream", "a stateless run (temporary thread) streamed", (req) => statelessStream(req, keepAliveMs)),
    route("POST", "/runs/wait", "a stateless run (temporary thread), its final state", (req) => statelessWait(req)),
    route("POST", "/runs", "a stateless background run (temporary thread)", (req) => statelessBackground(req)),
  ];
}

// ------------------------------------------------------------------ starting a run

interface LaunchedRun {
  runId: string;
  threadId: string;
  traceId: string;
  prepared: PreparedLangGraphRun;
  /** The run's events, the one pulled for admission first. */
  items: AsyncGenerator<StreamEvent>;
  /** Cancels the run (its consumer is gone, or the request said so). */
  stop(reason: string): void;
}

/** The interrupt the thread waits on (a bounded read of its last messages). */
const threadInterrupt = (req: Req, threadId: string) => readPendingInterrupt(req.client, req.userId, threadId);

/**
 * Starts the run through the embedded client (so the gateway's run event log records it) and waits until it is
 * admitted, so a refusal (a busy thread, an unknown model) is an HTTP error rather than a stream error.
 * `followRequest`: the request going away cancels the run (on_disconnect cancel).
 */
async function launch(req: Req, threadId: string, prepared: PreparedLangGraphRun, followRequest: boolean): Promise<LaunchedRun> {
  const { agent } = await resolveAssistant(req.client, req.userId, prepared.assistantId, "assistant_id");
  if (prepared.resume) {
    // A run paused for an approval continues itself (same run id) with the decision; a question is answered by a new run.
    const [latest] = await req.client.listRuns(threadId, { userId: req.userId, limit: 1 });
    if (latest?.status === "paused") {
      const run = await launchResume(
        req.client,
        { threadId, runId: latest.run_id, userId: req.userId },
        prepared.resumeValue,
        followRequest && prepared.onDisconnect === "cancel" ? req.signal : undefined,
      );
      return { runId: latest.run_id, threadId, traceId: latest.trace_id, prepared, items: run.events, stop: run.stop };
    }
  }
  if (prepared.resume && !(await threadInterrupt(req, threadId))) {
    throw new LangGraphError(409, {
      code: LangGraphErrorCodes.NOT_INTERRUPTED,
      message: `thread ${threadId} is not interrupted: there is no question to answer`,
      hint: "Send the message as input ({ messages: [...] }) instead of command.resume.",
      where: "command.resume",
    });
  }
  if (prepared.options.model !== undefined) {
    try {
      req.client.kernel.modelConfig(prepared.options.model);
    } catch (error) {
      throw invalidRequest(errorLine(error), "context.model_name", "Use a model from GET /api/models.");
    }
  }
  const runId = randomUUID();
  const run = await launchRun(
    req.client,
    prepared.message,
    { ...prepared.options, ...(agent !== undefined ? { agent } : {}), threadId, runId },
    followRequest && prepared.onDisconnect === "cancel" ? req.signal : undefined,
  );
  return { runId, threadId, traceId: req.traceId, prepared, items: run.events, stop: run.stop };
}

function runHeaders(threadId: string | null, runId: string, stream: boolean): Record<string, string> {
  const base = threadId === null ? `/runs/${runId}` : `/threads/${encodeURIComponent(threadId)}/runs/${runId}`;
  return {
    "content-location": base,
    "x-run-id": runId,
    // Where the SDK reconnects (with Last-Event-ID) when the stream breaks before the run ends; relative to its apiUrl.
    ...(stream && threadId !== null ? { location: `${base}/stream` } : {}),
  };
}

function failure(error: unknown): { code: string; message: string } {
  return { code: errorCode(error) ?? "ANTLER_ERR_INTERNAL", message: errorLine(error) };
}

/** The live run's events as frame groups, numbered like the run event log: metadata 1, the n-th event n + 1. */
function liveGroups(run: LaunchedRun, encoder: LangGraphStreamEncoder, after?: () => Promise<void>) {
  let seq = 1;
  const groups = (async function* (): AsyncGenerator<FrameGroup> {
    try {
      yield { seq: 1, frames: encoder.metadata() };
      for await (const event of run.items) {
        seq += 1;
        yield { seq, frames: encoder.encode(event) };
      }
    } finally {
      await after?.();
    }
  })();
  const fail = (error: unknown): FrameGroup => {
    const { code, message } = failure(error);
    return { seq: seq + 1, frames: encoder.error(code, message) };
  };
  return { groups, fail };
}

function streamResponse(run: LaunchedRun, threadIdForHeaders: string | null, keepAliveMs: number, after?: () => Promise<void>): Response {
  const encoder = new LangGraphStreamEncoder(run.prepared.streamModes, {
    runId: run.runId,
    threadId: run.threadId,
    subgraphs: run.prepared.subgraphs,
  });
  const { groups, fail } = liveGroups(run, encoder, after);
  return protocolStreamResponse(
    {
      items: groups,
      encode: (group) => renderFrameGroup(group, null),
      fail: (error) => renderFrameGroup(fail(error), null),
      cancel(frames) {
        // Nobody reads it any more, but the run goes on (its events still reach the log): pull it to the end.
        if (run.prepared.onDisconnect === "continue") return drain(frames);
        run.stop("client disconnected");
        void frames.return(undefined).catch(() => undefined);
      },
      keepAliveMs,
    },
    runHeaders(threadIdForHeaders, run.runId, true),
  );
}

async function streamRun(req: Req, threadId: string, keepAliveMs: number): Promise<GatewayReply> {
  const prepared = prepareLangGraphRun(req);
  await ensureThread(req, threadId, prepared.ifNotExists === "create");
  const run = await launch(req, threadId, prepared, true);
  return streamResponse(run, threadId, keepAliveMs);
}

/** Runs to the end and answers the final state as LangGraph's `runs/wait` does (`__error__` when it failed). */
async function finalState(run: LaunchedRun): Promise<Record<string, unknown>> {
  const encoder = new LangGraphStreamEncoder(["values"], { runId: run.runId, threadId: run.threadId, subgraphs: false });
  try {
    for await (const event of run.items) encoder.encode(event);
  } catch (error) {
    const { code, message } = failure(error);
    return encoder.finalValues({ error: code, message });
  }
  return encoder.finalValues();
}

async function waitRun(req: Req, threadId: string): Promise<GatewayReply> {
  const prepared = prepareLangGraphRun(req);
  await ensureThread(req, threadId, prepared.ifNotExists === "create");
  const run = await launch(req, threadId, prepared, true);
  return { status: 200, body: await finalState(run), headers: runHeaders(threadId, run.runId, false) };
}

async function backgroundRun(req: Req, threadId: string): Promise<GatewayReply> {
  const prepared = prepareLangGraphRun(req);
  await ensureThread(req, threadId, prepared.ifNotExists === "create");
  const run = await launch(req, threadId, prepared, false);
  // Nobody streams it: pull it to its end (its events still reach the log, for joins).
  drain(run.items);
  const record = await req.client.getRun(threadId, run.runId, { userId: req.userId });
  return { status: 200, body: toLangGraphRun(record), headers: runHeaders(threadId, run.runId, false) };
}

// ------------------------------------------------------------------ stateless runs

/** A stateless run goes on a thread of its own, deleted when the run ends unless `on_completion: keep`. */
async function statelessRun(req: Req, followRequest: boolean): Promise<{ run: LaunchedRun; cleanUp: () => Promise<void> }> {
  const prepared = prepareLangGraphRun(req);
  if (prepared.resume)
    throw invalidRequest("a stateless run has no interrupt to resume", "command.resume", "Resume on the thread the question was asked on.");
  const thread = await req.client.createThread({ userId: req.userId, metadata: { langgraph_stateless: true } });
  const cleanUp = async () => {
    if (prepared.onCompletion === "delete") await req.client.deleteThread(thread.thread_id, { userId: req.userId }).catch(() => undefined);
  };
  try {
    return { run: await launch(req, thread.thread_id, prepared, followRequest), cleanUp };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

async function statelessStream(req: Req, keepAliveMs: number): Promise<GatewayReply> {
  const { run, cleanUp } = await statelessRun(req, true);
  return streamResponse(run, run.prepared.onCompletion === "keep" ? run.threadId : null, keepAliveMs, cleanUp);
}

async function statelessWait(req: Req): Promise<GatewayReply> {
  const { run, cleanUp } = await statelessRun(req, true);
  try {
    return { status: 200, body: await finalState(run), headers: runHeaders(null, run.runId, false) };
  } finally {
    await cleanUp();
  }
}

async function statelessBackground(req: Req): Promise<GatewayReply> {
  const { run, cleanUp } = await statelessRun(req, false);
  const record = await req.client.getRun(run.threadId, run.runId, { userId: req.userId });
  drain(run.items, cleanUp);
  return { status: 200, body: toLangGraphRun(record), headers: runHeaders(null, run.runId, false) };
}

// ------------------------------------------------------------------ reading and cancelling runs

async function listRuns(req: Req): Promise<GatewayReply> {
  const threadId = req.params.id as string;
  const { limit = 10, offset = 0, status } = parseRequest(listQuerySchema, req.query, "query");
  const records = await req.client.listRuns(threadId, { userId: req.userId, limit, offset });
  // Only the thread's newest run can be the one that left it waiting on a question.
  const newestInterrupted = offset === 0 && records[0]?.status === "success" && (await threadInterrupt(req, threadId)) !== null;
  const runs = records.map((record, i) => toLangGraphRun(record, { endedOnInterrupt: i === 0 && newestInterrupted }));
  return { status: 200, body: status ? runs.filter((run) => run.status === status) : runs };
}

async function getRun(req: Req): Promise<GatewayReply> {
  const threadId = req.params.id as string;
  const record = await req.client.getRun(threadId, req.params.run as string, { userId: req.userId });
  return { status: 200, body: toLangGraphRun(record, { endedOnInterrupt: await endedOnInterrupt(req, threadId, record) }) };
}

async function endedOnInterrupt(req: Req, threadId: string, record: { run_id: string; status: string }): Promise<boolean> {
  if (record.status !== "success") return false;
  const [newest] = await req.client.listRuns(threadId, { userId: req.userId, limit: 1 });
  return newest?.run_id === record.run_id && (await threadInterrupt(req, threadId)) !== null;
}

const ACTIVE = new Set(["pending", "running"]);

async function cancelRun(req: Req): Promise<GatewayReply> {
  const threadId = req.params.id as string;
  const runId = req.params.run as string;
  const action = req.query.action ?? "interrupt";
  if (action === "rollback") {
    throw invalidRequest(
      'action "rollback" is not supported: Antler does not delete a cancelled run or undo what it wrote to the thread',
      "action",
      'Use action "interrupt" (the default): the run stops and the thread keeps what it wrote so far.',
    );
  }
  if (action !== "interrupt")
    throw invalidRequest(`action ${JSON.stringify(action.slice(0, 40))} is not supported; use interrupt`, "action");
  const wait = queryFlag(req, "wait");
  await req.client.cancelRun(threadId, runId, { userId: req.userId });
  if (wait) {
    // Another instance holding the run honours the cancel at its next heartbeat.
    while (ACTIVE.has((await req.client.getRun(threadId, runId, { userId: req.userId })).status)) {
      if (req.signal.aborted) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return { status: wait ? 204 : 202 };
}

/** A logged run event → the encoder's frames (the log's own errors, seq 0, carry no id). */
function loggedGroup(encoder: LangGraphStreamEncoder, event: { seq: number; event: string; data: unknown }): FrameGroup {
  if (event.event === "metadata") return { seq: event.seq, frames: encoder.metadata() };
  if (event.event === "error") {
    const data = isRecord(event.data) ? event.data : {};
    return { seq: event.seq, frames: encoder.error(String(data.code ?? "ANTLER_ERR_INTERNAL"), String(data.message ?? "the run failed")) };
  }
  return { seq: event.seq, frames: encoder.encode({ type: event.event, data: event.data } as StreamEvent) };
}

async function runStreamModes(req: Req, threadId: string, runId: string): Promise<{ modes: StreamMode[]; subgraphs: boolean }> {
  const asked = queryValues(req, "stream_mode");
  const record = await req.client.getRun(threadId, runId, { userId: req.userId });
  const stamp =
    isRecord(record.kwargs.metadata) && isRecord(record.kwargs.metadata[RUN_METADATA_KEY]) ? record.kwargs.metadata[RUN_METADATA_KEY] : {};
  const subgraphs = stamp.stream_subgraphs === true;
  const supported = SUPPORTED_STREAM_MODES as readonly string[];
  if (asked.length > 0) return { modes: parseStreamModes(asked), subgraphs };
  const stored = Array.isArray(stamp.stream_mode)
    ? stamp.stream_mode.filter((m): m is StreamMode => typeof m === "string" && supported.includes(m))
    : [];
  return { modes: stored.length > 0 ? stored : ["values"], subgraphs };
}

/**
 * `GET .../runs/{run}/stream`: the run from the gateway's run event log (any instance), live until it ends. A
 * resume replays the run from its first event (the encoder's state, e.g. `updates` diffs, depends on all of
 * them) and sends only the frames after `Last-Event-ID`: cost grows with the run, never with the thread.
 */
async function joinStream(req: Req, keepAliveMs: number): Promise<GatewayReply> {
  const threadId = req.params.id as string;
  const runId = req.params.run as string;
  const resume = parseLastEventId(req.request.headers.get("last-event-id"));
  if (resume === "invalid") {
    throw invalidRequest(
      "Last-Event-ID is not an event id of this run's stream",
      "Last-Event-ID",
      "Send the id: of the last frame received, or none.",
    );
  }
  const { modes, subgraphs } = await runStreamModes(req, threadId, runId);
  const hangUp = new AbortController();
  const follow = await req.followRun(threadId, runId, { afterSeq: 0, signal: AbortSignal.any([req.signal, hangUp.signal]) });
  const encoder = new LangGraphStreamEncoder(modes, { runId, threadId, subgraphs });
  let lastSeq = 0;
  const groups = (async function* (): AsyncGenerator<FrameGroup> {
    for await (const event of follow ?? []) {
      if (event.seq > 0) lastSeq = event.seq;
      yield loggedGroup(encoder, event);
    }
  })();
  const cancelOnDisconnect = queryFlag(req, "cancel_on_disconnect");
  const resumePoint: ResumePoint | null = resume;
  return protocolStreamResponse(
    {
      items: groups,
      encode: (group) => renderFrameGroup(group, resumePoint),
      fail: (error) =>
        renderFrameGroup(
          {
            seq: 0,
            frames: encoder.error(failure(error).code, `joining the run failed after event ${lastSeq}: ${failure(error).message}`),
          },
          resumePoint,
        ),
      cancel(frames) {
        hangUp.abort("client disconnected");
        void frames.return(undefined).catch(() => undefined);
        if (cancelOnDisconnect) void req.client.cancelRun(threadId, runId, { userId: req.userId }).catch(() => undefined);
      },
      keepAliveMs,
    },
    { "x-run-id": runId },
  );
}

/** `GET .../runs/{run}/join`: waits (through the run event log, from any instance) and answers the final state. */
async function joinRun(req: Req): Promise<GatewayReply> {
  const threadId = req.params.id as string;
  const runId = req.params.run as string;
  const encoder = new LangGraphStreamEncoder(["values"], { runId, threadId, subgraphs: false });
  let failed: { error: string; message: string } | undefined;
  try {
    const follow = await req.followRun(threadId, runId, { afterSeq: 0 });
    for await (const event of follow ?? []) {
      if (event.event === "error" && event.seq > 0) {
        const data = isRecord(event.data) ? event.data : {};
        failed = { error: String(data.code ?? "ANTLER_ERR_INTERNAL"), message: String(data.message ?? "") };
      } else if (event.event === "values" || event.event === "end") {
        encoder.encode({ type: event.event, data: event.data } as StreamEvent);
      }
    }
  } catch (error) {
    // No log for it (disabled, or pruned long after the run): a finished run's state is the thread's.
    const code = errorCode(error);
    if (code !== "ANTLER_ERR_RUN_EVENTS_DISABLED" && code !== "ANTLER_ERR_RUN_EVENTS_EXPIRED") throw error;
    const record = await req.client.getRun(threadId, runId, { userId: req.userId });
    if (ACTIVE.has(record.status)) throw error;
    encoder.encode({ type: "values", data: threadValues(await req.client.getThread(threadId, { userId: req.userId })) });
  }
  return { status: 200, body: encoder.finalValues(failed) };
}
